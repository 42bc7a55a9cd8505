//! The thread-safe, fork-safe ObjectId generator and the process-wide default one.

use std::sync::OnceLock;

use idforge_core::objectid::{ObjectId, ObjectIdGen};
use idforge_core::tick::Next;

use crate::clock::{Clock, SystemClock};
use crate::entropy;
use crate::error::{Error, Result};
use crate::policy::{self, Policy};
use crate::reseed::ForkGuard;

/// How far a burst of over 2^24 ids in one second may borrow into the next seconds.
const MAX_LEAD_SECS: u32 = 1;

/// MongoDB ObjectIds: one coarse clock read and one CAS per id.
///
/// In a forked child the 5 process bytes and the counter start are drawn again before the first
/// id, so parent and child never share them.
#[derive(Debug)]
pub struct ObjectIds<C: Clock = SystemClock> {
    generator: ObjectIdGen,
    clock: C,
    fork: ForkGuard,
}

fn random_seed() -> Result<([u8; 5], u32)> {
    let mut b = [0u8; 8];
    entropy::fill(&mut b)?;
    Ok((
        [b[0], b[1], b[2], b[3], b[4]],
        u32::from_le_bytes([b[5], b[6], b[7], 0]),
    ))
}

impl ObjectIds {
    /// A generator with fresh random process bytes on the system clock.
    pub fn new() -> Result<ObjectIds> {
        ObjectIds::with_clock(SystemClock::shared())
    }
}

impl<C: Clock> ObjectIds<C> {
    /// A generator on another clock (tests).
    pub fn with_clock(clock: C) -> Result<ObjectIds<C>> {
        let (process, counter) = random_seed()?;
        Ok(ObjectIds {
            generator: ObjectIdGen::new(process, counter, MAX_LEAD_SECS),
            clock,
            fork: ForkGuard::new()?,
        })
    }

    /// The next ObjectId.
    #[inline]
    pub fn next(&self) -> Result<ObjectId> {
        self.next_with(|id| id)
    }

    /// Hands the next ObjectId to `f` and returns what it returns. For bindings that copy the
    /// id into memory of their own: `f` runs on each path where an id is made, so on the fast
    /// path the id goes from registers to its destination without a round trip through a
    /// `Result` in memory (a copy out of one stalled on store-to-load forwarding).
    #[inline]
    pub fn next_with<R>(&self, f: impl FnOnce(ObjectId) -> R) -> Result<R> {
        self.fork.check(|| {
            let (process, counter) = random_seed()?;
            self.generator.reseed(process, counter);
            Ok(())
        })?;
        // The ObjectId field is 32-bit seconds; truncation past 2106 is the format's own.
        match self.generator.next(self.clock.now_secs() as u32) {
            Next::Id(id) => Ok(f(id)),
            Next::Pending { .. } => Ok(f(self.wait()?)),
        }
    }

    /// Over 2^24 ids a second for longer than the lead: wait for the clock (at most ~1 s).
    #[cold]
    fn wait(&self) -> Result<ObjectId> {
        let policy = Policy::Wait {
            budget: std::time::Duration::from_millis(2_000),
        };
        policy::run(&self.clock, policy.max_wait(), |now_ms| {
            Ok::<_, Error>(self.generator.next((now_ms / 1000) as u32))
        })
    }
}

/// A fresh ObjectId from the process-wide generator (what `ObjectId()` does in the bindings).
#[inline]
pub fn object_id() -> Result<ObjectId> {
    object_id_with(|id| id)
}

/// [`object_id`] handed to `f`, as [`ObjectIds::next_with`].
#[inline]
pub fn object_id_with<R>(f: impl FnOnce(ObjectId) -> R) -> Result<R> {
    match SHARED.get() {
        Some(g) => g.next_with(f),
        None => shared()?.next_with(f),
    }
}

static SHARED: OnceLock<ObjectIds> = OnceLock::new();

/// Builds the process-wide generator (seeding it from the OS) on first use; kept out of line
/// so the seeding code does not weigh on every call.
#[cold]
#[inline(never)]
fn shared() -> Result<&'static ObjectIds> {
    let g = ObjectIds::new()?;
    Ok(SHARED.get_or_init(|| g))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use std::collections::HashSet;
    use std::sync::Arc;

    #[test]
    fn ids_carry_the_clock_seconds_and_are_unique_across_threads() {
        let g = Arc::new(ObjectIds::with_clock(ManualClock::new(1_700_000_000_123)).unwrap());
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let g = g.clone();
                std::thread::spawn(move || {
                    (0..50_000).map(|_| g.next().unwrap()).collect::<Vec<_>>()
                })
            })
            .collect();
        let mut seen = HashSet::new();
        for h in handles {
            for id in h.join().unwrap() {
                assert_eq!(id.timestamp(), 1_700_000_000);
                assert!(seen.insert(id));
            }
        }
    }

    #[test]
    fn two_generators_have_different_process_bytes() {
        let a = ObjectIds::new().unwrap().next().unwrap().bytes();
        let b = ObjectIds::new().unwrap().next().unwrap().bytes();
        assert_ne!(a[4..9], b[4..9]);
        assert_ne!(object_id().unwrap(), object_id().unwrap());
    }
}
