//! The one way the server locks its mutexes.

use std::sync::{Mutex, MutexGuard};

/// Locks a mutex; a panic while it was held cannot leave the maps half-updated (every update is
/// a few plain assignments), so a poisoned lock is used as is.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
