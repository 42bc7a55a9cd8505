//! Fork detection: a `pthread_atfork` child hook bumps a process generation, and every
//! generator compares it with the one it was made in (one relaxed load per call).

use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use idforge_core::Error as CoreError;

use crate::error::Result;

static GENERATION: AtomicU64 = AtomicU64::new(0);
static REGISTER: Once = Once::new();
static FAILED: AtomicBool = AtomicBool::new(false);

extern "C" fn in_child() {
    // Async-signal-safe: a single atomic add, no allocation, no locks.
    GENERATION.fetch_add(1, Ordering::SeqCst);
}

/// Installs the hook (once per process) and returns the current generation. Fails only if the
/// hook cannot be installed (out of memory): without it a child would not be detected.
pub fn register() -> Result<u64> {
    REGISTER.call_once(|| {
        #[allow(unsafe_code)]
        // SAFETY: `in_child` is an `extern "C" fn()` that only performs an atomic add, which is
        // safe in the child of a multi-threaded fork; NULL prepare/parent hooks are allowed.
        let rc = unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
        if rc != 0 {
            FAILED.store(true, Ordering::SeqCst);
        }
    });
    if FAILED.load(Ordering::SeqCst) {
        return Err(CoreError::Io("pthread_atfork failed: fork safety unavailable").into());
    }
    Ok(current())
}

/// The process generation: 0 in the original process, +1 in each generation of forked child.
#[inline]
pub fn current() -> u64 {
    GENERATION.load(Ordering::Relaxed)
}
