//! The thread-safe, fork-aware UUIDv7 and ULID generators.

use std::path::PathBuf;
use std::time::Duration;

use idforge_core::Error as CoreError;
use idforge_core::stamp::{Stamp, StampGen};
use idforge_core::tick::Next;
use idforge_core::ulid::Ulid;
use idforge_core::uuid7::Uuid7;

use crate::clock::{Clock, SystemClock};
use crate::error::Result;
use crate::fork;
use crate::policy::{self, Policy};
use crate::rng::{self, Random};
use crate::state_file::StateFile;

/// UUIDv7s (RFC 9562): `Send + Sync`, strictly increasing. See [`TimeOrdered`].
pub type Uuid7s<C = SystemClock> = TimeOrdered<Uuid7, C>;

/// ULIDs in the spec's monotonic mode: `Send + Sync`, strictly increasing. See
/// [`TimeOrdered`].
pub type Ulids<C = SystemClock> = TimeOrdered<Ulid, C>;

/// What a 128-bit time-ordered id needs from the runtime: its time, for the state file.
pub trait TimeOrderedId: Stamp + Send + Sync {
    /// Unix milliseconds.
    fn time_ms(&self) -> u64;
}

impl TimeOrderedId for Uuid7 {
    fn time_ms(&self) -> u64 {
        Uuid7::time_ms(self)
    }
}

impl TimeOrderedId for Ulid {
    fn time_ms(&self) -> u64 {
        Ulid::time_ms(self)
    }
}

/// A generator of 128-bit time-ordered ids ([`Uuid7s`], [`Ulids`]): Unix milliseconds, an
/// 18-bit counter that starts each millisecond at a random value below 2^17 (at least 131,072
/// ids per millisecond before borrowing the next), and 56 (UUIDv7) or 62 (ULID) random bits
/// from a per-thread ChaCha12 stream.
///
/// Ids of one generator strictly increase, from any number of threads: a clock that steps back
/// keeps counting in the last millisecond, within the [`Policy`]'s lead. With a state file
/// (see [`with_state_file`](Self::with_state_file)) they also increase across restarts, even
/// if the clock was stepped back while the process was down: the file holds a time up to 10 s
/// ahead of the ids, lowered to the last id's time when the generator is dropped, so a restart
/// after a clean exit continues at once and one after a crash may wait (or, past the policy's
/// lead, fail with `CLOCK_BEHIND`) until the clock passes the mark. One generator owns a state
/// file at a time (it locks `<file>.lock`): another on the same file, in this process or
/// another, fails with `IO` while the first lives. A forked child draws new random bits, so it
/// never repeats its parent's ids; a generator with a state file fails in the child with
/// `FORKED` (the file belongs to the parent): build another there, with a file of its own.
///
/// Under a borrowing policy of at least 50 ms (the default), ids read the coarse clock
/// ([`Clock::recent_ms`]), so their time trails the clock by up to a kernel tick (1-10 ms).
#[derive(Debug)]
pub struct TimeOrdered<T: TimeOrderedId, C: Clock = SystemClock> {
    generator: StampGen<T>,
    clock: C,
    policy: Policy,
    recent: bool,
    born_in: u64,
    state: Option<StateFile>,
}

/// The last millisecond a UUIDv7 or ULID carries (48 bits): a state file's mark past it is
/// refused, since no id could follow it.
const MAX_TIME_MS: u64 = Uuid7::MAX_TIME_MS;
const _: () = assert!(Ulid::MAX_TIME_MS == MAX_TIME_MS);

/// The least lead under which the coarse clock is read (as [`Snowflake`](crate::Snowflake)).
const RECENT_MIN_LEAD: Duration = Duration::from_millis(50);

impl<T: TimeOrderedId> TimeOrdered<T> {
    /// A generator on the system clock with the default policy (borrow up to 1 s).
    pub fn new() -> Result<TimeOrdered<T>> {
        TimeOrdered::build(Policy::default(), None, SystemClock::shared())
    }

    /// A generator that persists a high-water time in `path`, so its ids keep increasing after
    /// a restart even if the clock was stepped back meanwhile.
    pub fn with_state_file(path: impl Into<PathBuf>) -> Result<TimeOrdered<T>> {
        TimeOrdered::build(Policy::default(), Some(path.into()), SystemClock::shared())
    }
}

impl<T: TimeOrderedId, C: Clock> TimeOrdered<T, C> {
    /// A generator with every option: the clock policy, an optional state file, the clock.
    pub fn build(policy: Policy, state_file: Option<PathBuf>, clock: C) -> Result<Self> {
        let born_in = fork::register()?;
        let lead_ms = policy.max_lead().as_millis().min(u128::from(u64::MAX)) as u64;
        let generator = StampGen::new(lead_ms, rng::u64()?)?;
        let state = match state_file {
            None => None,
            Some(path) => {
                let (file, held_ms) =
                    StateFile::open_within(path, StateFile::DEFAULT_WINDOW_MS, MAX_TIME_MS)?;
                generator.resume_after_ms(held_ms);
                file.cover(clock.now_ms().max(held_ms))?;
                Some(file)
            }
        };
        Ok(TimeOrdered {
            generator,
            recent: policy.max_lead() >= RECENT_MIN_LEAD,
            clock,
            policy,
            born_in,
            state,
        })
    }

    /// The next id.
    #[inline]
    pub fn next(&self) -> Result<T> {
        self.next_drawn(rng::u64()?)
    }

    /// The next id, its random bits drawn from `random` instead of this thread's stream: for
    /// a caller that owns a stream already (see [`Random`]).
    #[inline]
    pub fn next_with(&self, random: &mut Random) -> Result<T> {
        self.next_drawn(random.next_u64()?)
    }

    #[inline]
    fn next_drawn(&self, random: u64) -> Result<T> {
        if self.state.is_none() {
            let now = if self.recent {
                self.clock.recent_ms()
            } else {
                self.clock.now_ms()
            };
            if let Ok(Next::Id(id)) = self.generator.next(now, random) {
                return Ok(id);
            }
        }
        self.next_slow(random)
    }

    #[cold]
    #[inline(never)]
    fn next_slow(&self, random: u64) -> Result<T> {
        self.check_fork()?;
        let id = policy::run(&self.clock, self.policy.max_wait(), |now| {
            Ok(self.generator.next(now, random)?)
        })?;
        self.persist(&id)?;
        Ok(id)
    }

    /// Fills `out` with fresh ids in increasing order: one clock read and one CAS per run of
    /// ids sharing a millisecond. On error, the ids written before it are valid and issued.
    pub fn next_many(&self, out: &mut [T]) -> Result<()> {
        self.check_fork()?;
        let mut done = 0;
        while done < out.len() {
            let rest = &mut out[done..];
            let mut failed = None;
            let n = policy::run(&self.clock, self.policy.max_wait(), |now| {
                Ok(self.generator.next_run(now, rest, || {
                    rng::u64().unwrap_or_else(|e| {
                        failed = Some(e);
                        0
                    })
                })?)
            })?;
            if let Some(e) = failed {
                return Err(e);
            }
            self.persist(&rest[n - 1])?;
            done += n;
        }
        Ok(())
    }

    /// The policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// The high-water time persisted in the state file, if one is configured.
    pub fn persisted_ms(&self) -> Option<u64> {
        self.state.as_ref().map(StateFile::persisted_ms)
    }

    /// Covers `id`'s time in the state file, when there is one.
    fn persist(&self, id: &T) -> Result<()> {
        if let Some(state) = &self.state {
            let time_ms = id.time_ms();
            state.cover(time_ms)?;
        }
        Ok(())
    }

    /// Without a state file a forked child goes on (its random bits are its own); with one it
    /// stops, since the file is its parent's.
    #[inline]
    fn check_fork(&self) -> Result<()> {
        if self.state.is_some() && fork::current() != self.born_in {
            return Err(CoreError::Forked.into());
        }
        Ok(())
    }
}

impl<T: TimeOrderedId, C: Clock> Drop for TimeOrdered<T, C> {
    fn drop(&mut self) {
        // Settle the mark to the last id's time, so a restart soon after continues at once
        // instead of waiting out the window. Not in a forked child: its copy of the generator
        // is behind its parent's, which still writes the file.
        if let Some(state) = self
            .state
            .as_ref()
            .filter(|_| fork::current() == self.born_in)
        {
            let _ = state.settle(self.generator.high_water_ms());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::error::ErrorCode;
    use std::sync::Arc;

    #[test]
    fn ids_increase_and_carry_the_clock_time() {
        let clock = Arc::new(ManualClock::new(1_700_000_000_000));
        let g: Uuid7s<_> = TimeOrdered::build(Policy::default(), None, clock.clone()).unwrap();
        let a = g.next().unwrap();
        let b = g.next().unwrap();
        assert!(b > a);
        assert_eq!(a.time_ms(), 1_700_000_000_000);
        clock.set(1_700_000_000_000 - 500);
        let c = g.next().unwrap();
        assert!(c > b, "a clock stepped back keeps counting");
        let mut many = [a; 1000];
        g.next_many(&mut many).unwrap();
        assert!(many.windows(2).all(|w| w[0] < w[1]) && many[0] > c);
    }

    #[test]
    fn state_file_survives_a_clock_stepped_back_across_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ulid.state");
        let clock = Arc::new(ManualClock::new(1_700_000_000_000));
        let last = {
            let g: Ulids<_> =
                TimeOrdered::build(Policy::default(), Some(path.clone()), clock.clone()).unwrap();
            g.next().unwrap()
        };
        clock.set(1_700_000_000_000 - 3_600_000);
        let policy = Policy::Wait {
            budget: Duration::ZERO,
        };
        let err = TimeOrdered::<Ulid, _>::build(policy, Some(path.clone()), clock.clone())
            .unwrap()
            .next()
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::ClockBehind, "no id behind the mark");
        let g: Ulids<_> = TimeOrdered::build(
            Policy::Borrow {
                max_lead: Duration::from_secs(7200),
            },
            Some(path),
            clock,
        )
        .unwrap();
        assert!(g.next().unwrap() > last);
    }

    #[test]
    fn a_clean_exit_settles_the_mark_so_a_restart_continues_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("uuid7.state");
        let clock = Arc::new(ManualClock::new(1_700_000_000_000));
        let open = || {
            let policy = Policy::Wait {
                budget: Duration::ZERO,
            };
            TimeOrdered::<Uuid7, _>::build(policy, Some(path.clone()), clock.clone()).unwrap()
        };
        let g = open();
        let last = g.next().unwrap();
        assert!(g.persisted_ms().unwrap() >= last.time_ms() + 5_000);
        drop(g);
        assert_eq!(
            StateFile::read_mark(&path).unwrap(),
            last.time_ms(),
            "settled to the last id's millisecond"
        );
        clock.advance(1);
        assert!(open().next().unwrap() > last, "no wait at all");
    }

    #[test]
    fn a_mark_past_48_bits_is_refused_and_the_file_keeps_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("uuid7.state");
        let clock = Arc::new(ManualClock::new(1_700_000_000_000));
        // Past what a UUIDv7 or ULID can carry; the last one would wrap with the window added.
        for held in [1 << 48, u64::MAX - 5] {
            StateFile::write_mark_to(&path, held).unwrap();
            let err = TimeOrdered::<Uuid7, _>::build(
                Policy::default(),
                Some(path.clone()),
                clock.clone(),
            )
            .unwrap_err();
            assert_eq!(err.code(), ErrorCode::TimeOutOfRange, "mark {held}");
            let err =
                TimeOrdered::<Ulid, _>::build(Policy::default(), Some(path.clone()), clock.clone())
                    .unwrap_err();
            assert_eq!(err.code(), ErrorCode::TimeOutOfRange, "mark {held}");
            assert_eq!(StateFile::read_mark(&path).unwrap(), held, "not written");
        }
    }

    #[test]
    fn a_mark_the_generator_cannot_reach_is_not_lowered_by_a_drop() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ulid.state");
        let clock = Arc::new(ManualClock::new(1_700_000_000_000));
        // Within 48 bits, but past the 2^45 ms the generator stamps.
        let held = (1 << 46) + 123;
        StateFile::write_mark_to(&path, held).unwrap();
        let g: Ulids<_> =
            TimeOrdered::build(Policy::default(), Some(path.clone()), clock.clone()).unwrap();
        assert!(g.next().is_err(), "no id can follow the mark");
        drop(g);
        assert!(
            StateFile::read_mark(&path).unwrap() >= held,
            "the drop never lowers the mark"
        );
    }

    #[test]
    fn a_second_generator_on_a_state_file_is_refused_while_the_first_lives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("uuid7.state");
        let clock = Arc::new(ManualClock::new(1_700_000_000_000));
        let open =
            || TimeOrdered::<Uuid7, _>::build(Policy::default(), Some(path.clone()), clock.clone());
        let first = open().unwrap();
        let last = first.next().unwrap();
        let err = open().unwrap_err();
        assert_eq!(err.code(), ErrorCode::Io);
        assert!(err.to_string().contains("in use"), "{err}");
        drop(first);
        clock.advance(1);
        assert!(open().unwrap().next().unwrap() > last);
    }
}
