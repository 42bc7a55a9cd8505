//! The generator behind the 128-bit time-ordered ids ([`Uuid7`](crate::uuid7::Uuid7) and
//! [`Ulid`](crate::ulid::Ulid)): Unix milliseconds, an 18-bit counter, random bits.
//!
//! RFC 9562 section 6.2, method 1 (a fixed-length dedicated counter): the counter starts each
//! millisecond at a value below 2^17 drawn from the millisecond by a keyed hash (the key is the
//! caller's randomness), so at least 131,072 ids fit in a millisecond before the counter
//! borrows the next one; the rest of the id is random. The (ms, counter) pair comes from one
//! lock-free [`TickState`], so no two calls of a generator share it and ids of one generator
//! strictly increase, across clock steps back (it keeps counting) and restarts (resume after a
//! persisted millisecond). Ids of different generators (processes, forked children) differ by
//! their random bits.
//!
//! One word and one `fetch_add` per id, where the ULID spec's monotonic mode (increment the
//! previous 80-bit random value) needs a 128-bit state behind a lock.

use crate::error::{Error, Result};
use crate::tick::{Next, SeqStart, Tick, TickState};

/// Bits of the per-millisecond counter.
pub const COUNTER_BITS: u32 = 18;
/// Milliseconds a generator can stamp: 45 bits reach the year 3084 and keep the packed
/// (time, counter) state within the 63 bits [`TickState`] allows; ids beyond are
/// [`Error::TimeOutOfRange`].
const TIME_BITS: u32 = 45;

/// A 128-bit id made of a millisecond, a counter and random bits.
pub trait Stamp: Copy {
    /// The id for Unix millisecond `time_ms` (below 2^45), counter `counter` (below
    /// 2^[`COUNTER_BITS`]) and the random bits `random` (the low bits are used).
    fn stamp(time_ms: u64, counter: u32, random: u64) -> Self;
}

/// A thread-safe, lock-free generator of `T` ids; time and randomness are passed in.
#[derive(Debug)]
pub struct StampGen<T> {
    state: TickState,
    made: core::marker::PhantomData<fn() -> T>,
}

impl<T: Stamp> StampGen<T> {
    /// A generator that may run up to `max_lead_ms` ahead of the clock, with the secret `key`
    /// (random) that draws each millisecond's first counter value.
    pub fn new(max_lead_ms: u64, key: u64) -> Result<StampGen<T>> {
        Ok(StampGen {
            state: TickState::new(TIME_BITS, COUNTER_BITS, max_lead_ms)?
                .with_start(SeqStart::Keyed(key)),
            made: core::marker::PhantomData,
        })
    }

    /// The next id at Unix millisecond `now_ms`, with `random` for its random bits.
    ///
    /// [`Next::Pending`] means the generator is `max_lead_ms` ahead of `now_ms` (a used-up
    /// counter or a clock that stepped back); a clock past 2^45 ms is
    /// [`Error::TimeOutOfRange`].
    #[inline]
    pub fn next(&self, now_ms: u64, random: u64) -> Result<Next<T>> {
        match self.state.next(now_ms) {
            Tick::Ready { tick, seq } => Ok(Next::Id(T::stamp(tick, seq as u32, random))),
            other => not_ready(other, now_ms),
        }
    }

    /// Fills the start of `out` with consecutive ids of one millisecond (one CAS), drawing each
    /// id's random bits from `random`; returns how many (at least 1 unless `out` is empty).
    #[inline]
    pub fn next_run(
        &self,
        now_ms: u64,
        out: &mut [T],
        mut random: impl FnMut() -> u64,
    ) -> Result<Next<usize>> {
        if out.is_empty() {
            return Ok(Next::Id(0));
        }
        match self.state.next_run(now_ms, out.len() as u64) {
            Ok((tick, first, count)) => {
                let count = count as usize;
                for (i, slot) in out[..count].iter_mut().enumerate() {
                    *slot = T::stamp(tick, (first + i as u64) as u32, random());
                }
                Ok(Next::Id(count))
            }
            Err(other) => not_ready(other, now_ms),
        }
    }

    /// Makes every later id lie after millisecond `ms` (a persisted high-water mark).
    pub fn resume_after_ms(&self, ms: u64) {
        self.state.resume_after(ms);
    }

    /// The millisecond of the next id this generator could issue; every id so far lies in it
    /// or before it. Persist this to resume after a restart.
    pub fn high_water_ms(&self) -> u64 {
        self.state.high_water_tick()
    }
}

#[cold]
fn not_ready<T>(tick: Tick, now_ms: u64) -> Result<Next<T>> {
    match tick {
        Tick::Pending { until_tick } => Ok(Next::Pending {
            until_ms: until_tick,
        }),
        _ => Err(Error::TimeOutOfRange { time_ms: now_ms }),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::ulid::{Ulid, UlidGen};
    use crate::uuid7::{Uuid7, Uuid7Gen};

    #[test]
    fn ids_increase_within_and_across_milliseconds() {
        let g = Uuid7Gen::new(1_000, 99).unwrap();
        let mut last: Option<Uuid7> = None;
        for ms in [1_000u64, 1_000, 1_001, 1_001, 1_001, 1_500] {
            let Ok(Next::Id(id)) = g.next(ms, u64::MAX) else {
                panic!()
            };
            assert!(Uuid7::is_v7(id.as_u128()));
            assert_eq!(id.time_ms(), ms);
            assert!(last < Some(id));
            last = Some(id);
        }
        // A clock that steps back keeps counting in the last millisecond.
        let Ok(Next::Id(back)) = g.next(900, 0) else {
            panic!()
        };
        assert_eq!(back.time_ms(), 1_500);
        assert!(last < Some(back));
    }

    #[test]
    fn first_counter_lies_in_the_lower_half() {
        let g = UlidGen::new(0, 5).unwrap();
        for ms in 1..100 {
            let Ok(Next::Id(id)) = g.next(ms, 0) else {
                panic!()
            };
            assert!(id.random() >> 62 < 1 << 17, "counter {}", id.random() >> 62);
        }
    }

    #[test]
    fn a_used_up_counter_borrows_then_waits() {
        let g = UlidGen::new(1, 3).unwrap();
        let mut out = [Ulid::from_u128(0); 4096];
        let mut made = 0;
        let mut last = Ulid::from_u128(0);
        // Millisecond 10 from its keyed start, then all of 11 (lead 1), then Pending.
        loop {
            assert!(made <= 2 << 18, "never pending");
            match g.next_run(10, &mut out, || 7) {
                Ok(Next::Id(n)) => {
                    for id in &out[..n] {
                        assert!(*id > last);
                        last = *id;
                    }
                    made += n;
                }
                Ok(Next::Pending { until_ms }) => {
                    assert_eq!(until_ms, 11);
                    break;
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(last.time_ms(), 11, "borrowed one millisecond");
        assert_eq!(last.random() >> 62, (1 << 18) - 1, "used all of it");
        assert!(
            made > (1 << 18) + (1 << 17),
            "at least half of millisecond 10"
        );
        assert_eq!(g.next(10, 0), Ok(Next::Pending { until_ms: 11 }));
        assert!(g.high_water_ms() >= 11);
    }

    #[test]
    fn resume_and_range() {
        let g = Uuid7Gen::new(0, 1).unwrap();
        g.resume_after_ms(5_000);
        assert_eq!(g.next(4_000, 0), Ok(Next::Pending { until_ms: 5_001 }));
        let Ok(Next::Id(id)) = g.next(5_001, 0) else {
            panic!()
        };
        assert_eq!(id.time_ms(), 5_001);
        assert_eq!(
            g.next(1 << 45, 0),
            Err(Error::TimeOutOfRange { time_ms: 1 << 45 })
        );
        let mut empty: [Uuid7; 0] = [];
        assert_eq!(g.next_run(6_000, &mut empty, || 0), Ok(Next::Id(0)));
    }
}
