//! A connection that belongs to one process: a forked child gets a fresh, empty slot.
//!
//! A child must never talk on its parent's socket (the two would read each other's replies),
//! and may find the parent's lock held by a thread that does not exist in the child. So on the
//! first use after a fork the slot is replaced, and the parent's copy is leaked rather than
//! dropped: closing a database connection may send a goodbye on the parent's session.

use std::sync::{Arc, Mutex, MutexGuard};

use arc_swap::ArcSwap;

use crate::error::Result;
use crate::fork;

#[derive(Debug)]
struct Slot<T> {
    generation: u64,
    conn: Mutex<Option<T>>,
}

/// An optional connection `T`, private to the process that made it.
#[derive(Debug)]
pub(crate) struct PerProcess<T> {
    slot: ArcSwap<Slot<T>>,
}

impl<T> PerProcess<T> {
    /// An empty slot (installs the fork hook).
    pub(crate) fn new() -> Result<PerProcess<T>> {
        let generation = fork::register()?;
        Ok(PerProcess {
            slot: ArcSwap::from_pointee(Slot {
                generation,
                conn: Mutex::new(None),
            }),
        })
    }

    /// Runs `f` with this process's connection slot locked.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Option<T>) -> R) -> R {
        let slot = self.current();
        let mut guard: MutexGuard<'_, Option<T>> = slot.conn.lock().unwrap_or_else(|p| {
            // A panic mid-request left the connection in an unknown state (a reply unread):
            // start afresh rather than read another request's reply.
            let mut guard = p.into_inner();
            *guard = None;
            guard
        });
        f(&mut guard)
    }

    /// Runs `f` with this process's connection slot locked, unless it is in use: then `None`.
    #[cfg(feature = "sql")] // the SQL pool's; no other source keeps more than one connection
    pub(crate) fn try_with<R>(&self, f: impl FnOnce(&mut Option<T>) -> R) -> Option<R> {
        let slot = self.current();
        let mut guard = match slot.conn.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(p)) => {
                let mut guard = p.into_inner();
                *guard = None; // as in `with`
                guard
            }
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        Some(f(&mut guard))
    }

    /// 1 when this process holds a connection that `is_open` accepts, or one is in use right
    /// now (the slot is locked), else 0: for counters, so it never waits.
    pub(crate) fn peek(&self, is_open: impl FnOnce(&Option<T>) -> bool) -> usize {
        let slot = self.current();
        match slot.conn.try_lock() {
            Ok(guard) => usize::from(is_open(&guard)),
            Err(std::sync::TryLockError::Poisoned(p)) => usize::from(is_open(&p.into_inner())),
            Err(std::sync::TryLockError::WouldBlock) => 1,
        }
    }

    fn current(&self) -> Arc<Slot<T>> {
        let now = fork::current();
        loop {
            let slot = self.slot.load_full();
            if slot.generation == now {
                return slot;
            }
            let fresh = Arc::new(Slot {
                generation: now,
                conn: Mutex::new(None),
            });
            let prev = arc_swap::Guard::into_inner(self.slot.compare_and_swap(&slot, fresh));
            if Arc::ptr_eq(&prev, &slot) {
                // The store's reference to the parent's slot: leaked, so the slot is never
                // dropped (nor its lock or connection touched) in this process.
                std::mem::forget(prev);
            }
        }
    }
}
