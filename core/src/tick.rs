//! The lock-free (tick, sequence) state shared by snowflake and flake-128.
//!
//! One `AtomicU64` holds the next free value `tick << seq_bits | seq`. Taking an id is one CAS:
//! `max(now_tick << seq_bits, next)`. A full sequence carries into the next tick (borrowing the near
//! future) and a clock that went back keeps counting from the last value, so values only ever grow.
//! Both are bounded by `max_lead`: the state may run at most that many ticks ahead of the clock;
//! past it the caller is told to wait ([`Tick::Pending`]).

use crate::error::{Error, Result};
use crate::sync::{AtomicU64, Ordering};

/// The outcome of asking a clock-driven generator for an id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next<T> {
    /// A fresh id.
    Id(T),
    /// No id was taken: the generator is at its lead limit; try again at `until_ms` (Unix ms).
    Pending {
        /// The clock time, in Unix milliseconds, from which a call can succeed.
        until_ms: u64,
    },
}

/// What [`TickState::next`] hands back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tick {
    /// A (tick, sequence) pair that no other call received.
    Ready {
        /// The tick of the id (may be ahead of the clock by up to `max_lead`).
        tick: u64,
        /// The sequence within that tick.
        seq: u64,
    },
    /// Nothing was taken: the state is more than `max_lead` ahead of `now_tick`.
    Pending {
        /// The first clock tick at which a call can succeed.
        until_tick: u64,
    },
    /// Nothing was taken: every tick the field can hold is used up.
    Exhausted,
}

/// Where a tick's sequence starts when the clock moves into it.
///
/// A run into the next tick because the sequence is used up (borrowing the near future) always
/// continues at 0; only a tick the clock itself reached starts at this value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SeqStart {
    /// At 0: the most ids per tick (the whole sequence) before borrowing the next one; at low
    /// rates most ids end in the same low bits.
    #[default]
    Zero,
    /// At a value drawn from the tick by a keyed hash, below half the sequence's range: at low
    /// rates `id % n` spreads evenly, and every tick still holds at least half its range (a
    /// quarter on average is skipped). The key is the caller's randomness (a per-generator
    /// secret), so starts are unpredictable without it.
    Keyed(u64),
}

impl SeqStart {
    /// The first sequence of `tick` for a `seq_bits`-bit sequence.
    #[inline]
    pub fn of(self, tick: u64, seq_bits: u32) -> u64 {
        match self {
            SeqStart::Zero => 0,
            SeqStart::Keyed(key) if seq_bits > 1 => {
                mix(tick ^ key) & ((1u64 << (seq_bits - 1)) - 1)
            }
            SeqStart::Keyed(_) => 0,
        }
    }
}

/// SplitMix64's finalizer: every input bit affects every output bit.
#[inline]
const fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Lock-free monotonic (tick, sequence) allocator.
#[derive(Debug)]
pub struct TickState {
    next: AtomicU64,
    seq_bits: u32,
    seq_mask: u64,
    max_tick: u64,
    max_lead: u64,
    start: SeqStart,
}

impl TickState {
    /// A state for ticks of `tick_bits` bits and sequences of `seq_bits` bits, allowed to run
    /// `max_lead` ticks ahead of the clock. `tick_bits + seq_bits` must be at most 63, so the
    /// packed value can always be incremented without wrapping.
    pub fn new(tick_bits: u32, seq_bits: u32, max_lead: u64) -> Result<TickState> {
        if tick_bits == 0 || tick_bits + seq_bits > 63 {
            return Err(Error::InvalidLayout(
                "time bits + sequence bits must be between 1 and 63",
            ));
        }
        Ok(TickState {
            next: AtomicU64::new(0),
            seq_bits,
            seq_mask: (1u64 << seq_bits) - 1,
            max_tick: (1u64 << tick_bits) - 1,
            max_lead,
            start: SeqStart::Zero,
        })
    }

    /// The same state with each tick's sequence starting at `start` (default [`SeqStart::Zero`]).
    pub fn with_start(mut self, start: SeqStart) -> TickState {
        self.start = start;
        self
    }

    /// Where each tick's sequence starts.
    pub fn start(&self) -> SeqStart {
        self.start
    }

    /// The largest tick the state can hand out.
    pub fn max_tick(&self) -> u64 {
        self.max_tick
    }

    /// How many ticks the state may run ahead of the clock.
    pub fn max_lead(&self) -> u64 {
        self.max_lead
    }

    /// Takes the next (tick, sequence) given the clock's current tick.
    ///
    /// One `fetch_add` in the common case. Every value comes from an RMW on the one word, so no
    /// two callers get the same value: a value below the clock's tick is dropped (the state is
    /// raised to the clock with `fetch_max` and the call retries), and a value past the lead is
    /// given back only if nobody took a value since (`CAS(v + 1 -> v)`), else it is a gap. A
    /// give-back can only return a value its own caller never handed out, so the state never
    /// falls to or below a value that was.
    #[inline]
    pub fn next(&self, now_tick: u64) -> Tick {
        if now_tick > self.max_tick {
            return Tick::Exhausted;
        }
        let floor = now_tick << self.seq_bits;
        loop {
            // Relaxed: uniqueness comes from the single word's total modification order; no
            // other memory is published through it.
            let v = self.next.fetch_add(1, Ordering::Relaxed);
            if v < floor {
                // Every caller raising the state into this tick computes the same start.
                let first = floor | self.start.of(now_tick, self.seq_bits);
                self.next.fetch_max(first, Ordering::Relaxed);
                continue;
            }
            let tick = v >> self.seq_bits;
            if tick > self.max_tick || tick - now_tick > self.max_lead {
                let _ = self
                    .next
                    .compare_exchange(v + 1, v, Ordering::Relaxed, Ordering::Relaxed);
                if tick > self.max_tick {
                    return Tick::Exhausted;
                }
                return Tick::Pending {
                    until_tick: tick - self.max_lead,
                };
            }
            return Tick::Ready {
                tick,
                seq: v & self.seq_mask,
            };
        }
    }

    /// Takes up to `max` consecutive sequences of one tick with a single CAS (for batch calls).
    /// Returns the run's tick, its first sequence and its length (at least 1), or what
    /// [`next`](Self::next) would have returned instead of an id.
    #[inline]
    pub fn next_run(&self, now_tick: u64, max: u64) -> Result<(u64, u64, u64), Tick> {
        if now_tick > self.max_tick {
            return Err(Tick::Exhausted);
        }
        let floor = now_tick << self.seq_bits;
        // Relaxed is enough: uniqueness comes from RMWs on this single word, whose
        // modification order is total; no other memory is published through it.
        let mut cur = self.next.load(Ordering::Relaxed);
        loop {
            let cand = if floor > cur {
                floor | self.start.of(now_tick, self.seq_bits)
            } else {
                cur
            };
            let tick = cand >> self.seq_bits;
            if tick > self.max_tick {
                return Err(Tick::Exhausted);
            }
            if tick - now_tick > self.max_lead {
                return Err(Tick::Pending {
                    until_tick: tick - self.max_lead,
                });
            }
            let seq = cand & self.seq_mask;
            let room = self.seq_mask - seq + 1;
            let count = if max < room { max.max(1) } else { room };
            // cand + count <= (tick + 1) << seq_bits <= 2^63: no wrap.
            match self.next.compare_exchange_weak(
                cur,
                cand + count,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok((tick, seq, count)),
                Err(seen) => cur = seen,
            }
        }
    }

    /// Makes every later value lie in a tick after `tick` (used after a restart, with the
    /// persisted high-water tick). Never moves the state backwards.
    pub fn resume_after(&self, tick: u64) {
        let floor = if tick >= self.max_tick {
            (self.max_tick + 1) << self.seq_bits
        } else {
            (tick + 1) << self.seq_bits
        };
        self.next.fetch_max(floor, Ordering::Relaxed);
    }

    /// The tick of the next value this state could hand out; every value handed out so far lies
    /// in this tick or an earlier one. This is what to persist as a high-water mark.
    pub fn high_water_tick(&self) -> u64 {
        self.next.load(Ordering::Relaxed) >> self.seq_bits
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn sequence_then_carry_then_pending() {
        let s = TickState::new(10, 2, 1).unwrap();
        for seq in 0..4 {
            assert_eq!(s.next(5), Tick::Ready { tick: 5, seq });
        }
        // Sequence full: borrows tick 6 (lead 1 allowed).
        assert_eq!(s.next(5), Tick::Ready { tick: 6, seq: 0 });
        for _ in 0..3 {
            assert!(matches!(s.next(5), Tick::Ready { tick: 6, .. }));
        }
        // Tick 7 would be 2 ahead of the clock.
        assert_eq!(s.next(5), Tick::Pending { until_tick: 6 });
        assert_eq!(s.next(6), Tick::Ready { tick: 7, seq: 0 });
    }

    #[test]
    fn clock_back_keeps_counting() {
        let s = TickState::new(10, 4, 0).unwrap();
        assert_eq!(s.next(100), Tick::Ready { tick: 100, seq: 0 });
        assert_eq!(s.next(90), Tick::Pending { until_tick: 100 });
        assert_eq!(s.next(100), Tick::Ready { tick: 100, seq: 1 });
        assert_eq!(s.next(101), Tick::Ready { tick: 101, seq: 0 });
    }

    #[test]
    fn exhausted_at_the_end_of_the_field() {
        let s = TickState::new(3, 1, 10).unwrap();
        assert_eq!(s.next(8), Tick::Exhausted);
        assert_eq!(s.next(7), Tick::Ready { tick: 7, seq: 0 });
        assert_eq!(s.next(7), Tick::Ready { tick: 7, seq: 1 });
        assert_eq!(s.next(7), Tick::Exhausted);
    }

    #[test]
    fn resume_after_skips_past_the_persisted_tick() {
        let s = TickState::new(20, 8, 1000).unwrap();
        s.resume_after(500);
        assert_eq!(s.next(10), Tick::Ready { tick: 501, seq: 0 });
        s.resume_after(5); // never backwards
        assert_eq!(s.next(10), Tick::Ready { tick: 501, seq: 1 });
        assert_eq!(s.high_water_tick(), 501);
    }

    #[test]
    fn runs_stay_within_one_tick_and_continue_the_sequence() {
        let s = TickState::new(10, 3, 1).unwrap();
        assert_eq!(s.next_run(4, 5), Ok((4, 0, 5)));
        assert_eq!(s.next_run(4, 5), Ok((4, 5, 3)), "only 3 left in tick 4");
        assert_eq!(s.next(4), Tick::Ready { tick: 5, seq: 0 });
        assert_eq!(s.next_run(4, 100), Ok((5, 1, 7)));
        assert_eq!(s.next_run(4, 1), Err(Tick::Pending { until_tick: 5 }));
        assert_eq!(s.next_run(9, 0), Ok((9, 0, 1)), "a run has at least one id");
    }

    #[test]
    fn keyed_starts_stay_in_the_lower_half_and_keep_increasing() {
        let s = TickState::new(20, 6, 0)
            .unwrap()
            .with_start(SeqStart::Keyed(42));
        let mut last = None;
        let mut starts = [false; 32];
        for tick in 1..200 {
            let Tick::Ready { tick: t, seq } = s.next(tick) else {
                panic!("no id at {tick}")
            };
            assert_eq!((t, seq), (tick, SeqStart::Keyed(42).of(tick, 6)));
            assert!(seq < 32, "starts lie below half the range");
            starts[seq as usize] = true;
            let Ok((t2, seq2, _)) = s.next_run(tick, 1) else {
                panic!()
            };
            assert_eq!((t2, seq2), (tick, seq + 1));
            assert!(last < Some((t, seq)));
            last = Some((t2, seq2));
        }
        assert!(starts.iter().filter(|&&b| b).count() > 20, "starts vary");
        // A run that reaches a new tick starts there too.
        let r = TickState::new(20, 6, 0)
            .unwrap()
            .with_start(SeqStart::Keyed(7));
        assert_eq!(r.next_run(9, 3), Ok((9, SeqStart::Keyed(7).of(9, 6), 3)));
        assert_eq!(SeqStart::Keyed(7).of(9, 1), 0);
        assert_eq!(SeqStart::Keyed(7).of(9, 0), 0);
        assert_eq!(SeqStart::Zero.of(9, 12), 0);
    }

    #[test]
    fn rejects_widths_that_could_wrap() {
        assert!(TickState::new(48, 16, 0).is_err());
        assert!(TickState::new(0, 16, 0).is_err());
        assert!(TickState::new(47, 16, 0).is_ok());
    }
}
