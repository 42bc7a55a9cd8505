//! Re-initialising per-process state in a forked child, once, without locks (a lock held by a
//! parent thread at fork time would stay locked forever in the child).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::Result;
use crate::fork;

/// Marks a reseed in progress.
const BUSY: u64 = u64::MAX;

/// The fork generation a generator's per-process state belongs to.
#[derive(Debug)]
pub(crate) struct ForkGuard {
    generation: AtomicU64,
}

impl ForkGuard {
    /// A guard for state made in this process.
    pub(crate) fn new() -> Result<ForkGuard> {
        Ok(ForkGuard {
            generation: AtomicU64::new(fork::register()?),
        })
    }

    /// Whether the state belongs to this process (nothing forked since, or the reseed is
    /// done): two loads and a compare, for fast paths that handle a fork out of line.
    #[inline]
    pub(crate) fn is_current(&self) -> bool {
        self.generation.load(Ordering::Acquire) == fork::current()
    }

    /// Runs `reseed` once per new fork generation before any caller goes on; one relaxed load
    /// when nothing forked.
    #[inline]
    pub(crate) fn check(&self, reseed: impl FnOnce() -> Result<()>) -> Result<()> {
        let now = fork::current();
        if self.generation.load(Ordering::Acquire) == now {
            return Ok(());
        }
        self.slow(now, reseed)
    }

    #[cold]
    fn slow(&self, now: u64, reseed: impl FnOnce() -> Result<()>) -> Result<()> {
        loop {
            let seen = self.generation.load(Ordering::Acquire);
            if seen == now {
                return Ok(());
            }
            if seen == BUSY {
                std::thread::yield_now();
                continue;
            }
            if self
                .generation
                .compare_exchange(seen, BUSY, Ordering::Acquire, Ordering::Acquire)
                .is_ok()
            {
                let result = reseed();
                // On failure, restore the old generation so the next call tries again.
                let done = if result.is_ok() { now } else { seen };
                self.generation.store(done, Ordering::Release);
                return result;
            }
        }
    }
}
