//! Fork detection: a `pthread_atfork` child hook bumps a process generation, and every
//! generator compares it with the one it was made in (one relaxed load per call).
//!
//! Windows has no `fork`: a new process starts from its program, never as a copy of a running
//! one, so no generator is ever duplicated and the generation stays 0.

#[cfg(unix)]
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use idforge_core::Error as CoreError;

use crate::error::Result;

static GENERATION: AtomicU64 = AtomicU64::new(0);
#[cfg(unix)]
static REGISTER: Once = Once::new();
static FAILED: AtomicBool = AtomicBool::new(false);

/// Set while a `fork()` is being prepared: [`quiesced`] sections wait before they start.
static FORKING: AtomicBool = AtomicBool::new(false);
/// How many [`quiesced`] sections are running.
static ACTIVE: AtomicU64 = AtomicU64::new(0);

#[cfg_attr(not(unix), allow(dead_code))]
extern "C" fn prepare() {
    // Let running quiesced sections finish (they are bounded by their own timeouts), so none is
    // cut in half by the fork.
    FORKING.store(true, Ordering::SeqCst);
    let mut pause = std::time::Duration::from_micros(10);
    while ACTIVE.load(Ordering::SeqCst) != 0 {
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(1));
    }
}

#[cfg_attr(not(unix), allow(dead_code))]
extern "C" fn in_parent() {
    FORKING.store(false, Ordering::SeqCst);
}

#[cfg_attr(not(unix), allow(dead_code))]
extern "C" fn in_child() {
    // Async-signal-safe: atomic stores and an add, no allocation, no locks.
    ACTIVE.store(0, Ordering::SeqCst);
    FORKING.store(false, Ordering::SeqCst);
    GENERATION.fetch_add(1, Ordering::SeqCst);
}

/// Runs `f` where no `fork()` can happen in the middle: a fork waits until `f` returns, and `f`
/// waits for a fork under way. For calls into C libraries that must not be forked while inside
/// (SQLite: its process-wide lock and file state would be copied half-updated). Call
/// [`register`] first.
pub(crate) fn quiesced<R>(f: impl FnOnce() -> R) -> R {
    struct Active;
    impl Drop for Active {
        fn drop(&mut self) {
            ACTIVE.fetch_sub(1, Ordering::SeqCst);
        }
    }
    loop {
        while FORKING.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        if !FORKING.load(Ordering::SeqCst) {
            break;
        }
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
    }
    let _active = Active;
    f()
}

/// Installs the hook (once per process) and returns the current generation. Fails only if the
/// hook cannot be installed (out of memory): without it a child would not be detected.
pub fn register() -> Result<u64> {
    #[cfg(unix)]
    REGISTER.call_once(|| {
        #[allow(unsafe_code)]
        // SAFETY: the hooks are `extern "C" fn()`s that never unwind; `in_child` only performs
        // atomic operations, which is safe in the child of a multi-threaded fork; `prepare`
        // runs before the fork in the forking thread and only sleeps and reads atomics.
        let rc = unsafe { libc::pthread_atfork(Some(prepare), Some(in_parent), Some(in_child)) };
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
