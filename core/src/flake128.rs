//! Boundary-style 128-bit flake ids: 64-bit Unix milliseconds | 48-bit worker | 16-bit sequence.
//!
//! The time is unaltered Unix milliseconds in the top bits, so the number, its big-endian bytes
//! and its padded base62 form all sort by time.
//!
//! # Base62 and Boundary
//!
//! Boundary's Erlang `flake` (`flake_util:as_list/2`, taken from Riak) writes digit values 0–9
//! as `0-9`, 10–35 as `A-Z` and 36–61 as `a-z`: the same `0-9A-Za-z` alphabet as ours, but
//! without padding (its README shows 18-character ids such as `8HFaR8qWtRlGDHnO57`). We pad to
//! [`Flake128::BASE62_LEN`] characters so that string order equals numeric order, and the
//! parser also accepts Boundary's unpadded form: both denote the same number.

use crate::encode::{base62, hex};
use crate::error::{Error, Result};
use crate::sync::{AtomicU64, Ordering};
use crate::tick::{Next, Tick, TickState};

/// A 128-bit flake id. Orders by value, which is time first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Flake128(u128);

u128_views!(Flake128);
text_traits!(Flake128, Flake128::BASE62_LEN, to_base62, parse_base62);

impl Flake128 {
    /// The largest worker id (48 bits, the size of a MAC address).
    pub const MAX_WORKER: u64 = (1 << 48) - 1;
    /// Bytes in the binary form.
    pub const LEN: usize = 16;
    /// Characters in the padded base62 form (62^22 > 2^128).
    pub const BASE62_LEN: usize = base62::U128_LEN;
    /// Characters in the hex form.
    pub const HEX_LEN: usize = hex::U128_LEN;

    /// The id for these fields; a worker over [`Flake128::MAX_WORKER`] is
    /// [`Error::NodeOutOfRange`].
    #[inline]
    pub const fn from_parts(time_ms: u64, worker: u64, seq: u16) -> Result<Flake128> {
        if worker > Self::MAX_WORKER {
            return Err(Error::NodeOutOfRange {
                node: worker,
                max: Self::MAX_WORKER,
            });
        }
        Ok(Self::compose(time_ms, worker, seq))
    }

    /// Packs fields already known to fit.
    #[inline]
    const fn compose(time_ms: u64, worker: u64, seq: u16) -> Flake128 {
        Flake128((time_ms as u128) << 64 | (worker as u128) << 16 | seq as u128)
    }

    /// Unix milliseconds.
    #[inline]
    pub const fn time_ms(&self) -> u64 {
        (self.0 >> 64) as u64
    }

    /// The worker id (48 bits).
    #[inline]
    pub const fn worker(&self) -> u64 {
        (self.0 >> 16) as u64 & Self::MAX_WORKER
    }

    /// The sequence within the millisecond.
    #[inline]
    pub const fn seq(&self) -> u16 {
        self.0 as u16
    }

    /// The id with this value; every `u128` is a valid flake.
    #[inline]
    pub const fn from_u128(value: u128) -> Flake128 {
        Flake128(value)
    }

    /// The id from its 16 big-endian bytes.
    #[inline]
    pub const fn from_bytes(bytes: [u8; 16]) -> Flake128 {
        Flake128(u128::from_be_bytes(bytes))
    }

    /// The id in a 16-byte slice; any other length is [`Error::InvalidLength`].
    pub fn try_from_slice(bytes: &[u8]) -> Result<Flake128> {
        crate::encode::array16(bytes).map(Self::from_bytes)
    }

    /// Writes the 22-character padded base62 form into `out` and returns it.
    #[inline]
    pub fn to_base62<'a>(&self, out: &'a mut [u8; Self::BASE62_LEN]) -> &'a str {
        base62::encode_u128(self.0, out)
    }

    /// Parses 1 to 22 base62 characters: our padded form or Boundary's unpadded one.
    pub fn parse_base62(s: &str) -> Result<Flake128> {
        base62::decode_u128(s.as_bytes()).map(Flake128)
    }

    /// Writes the 32 lower-case hex characters into `out` and returns them.
    #[inline]
    pub fn to_hex<'a>(&self, out: &'a mut [u8; Self::HEX_LEN]) -> &'a str {
        hex::encode_u128(self.0, out)
    }

    /// Parses exactly 32 hex characters, in either case.
    pub fn parse_hex(s: &str) -> Result<Flake128> {
        if s.len() != Self::HEX_LEN {
            return Err(Error::InvalidHex("expected 32 hex characters"));
        }
        hex::decode_u128(s.as_bytes()).map(Flake128)
    }
}

/// Milliseconds the generator can stamp: 47 bits reach the year 6429, and keep the packed
/// (time, sequence) state within the 63 bits [`TickState`] allows.
const TIME_BITS: u32 = 47;
const SEQ_BITS: u32 = 16;

/// A thread-safe, lock-free flake-128 generator.
///
/// Ids strictly increase for a given worker: a full sequence borrows the next millisecond and a
/// clock that steps back keeps counting from the last id, both at most `max_lead_ms` ahead of
/// the clock; past that [`Flake128Gen::next`] returns [`Next::Pending`] instead of an id.
#[derive(Debug)]
pub struct Flake128Gen {
    state: TickState,
    /// Atomic so that a forked child can switch to its own worker through `&self`.
    worker: AtomicU64,
}

impl Flake128Gen {
    /// A generator for `worker` that may run up to `max_lead_ms` ahead of the clock.
    pub fn new(worker: u64, max_lead_ms: u64) -> Result<Flake128Gen> {
        check_worker(worker)?;
        Ok(Flake128Gen {
            state: TickState::new(TIME_BITS, SEQ_BITS, max_lead_ms)?,
            worker: AtomicU64::new(worker),
        })
    }

    /// The worker stamped into new ids.
    pub fn worker(&self) -> u64 {
        self.worker.load(Ordering::Relaxed)
    }

    /// Switches to another worker, for example in a forked child: the child continues the
    /// parent's (time, sequence) state, so it needs a worker of its own to stay distinct.
    pub fn set_worker(&self, worker: u64) -> Result<()> {
        check_worker(worker)?;
        self.worker.store(worker, Ordering::Relaxed);
        Ok(())
    }

    /// The next id, given the current Unix time in milliseconds.
    ///
    /// [`Next::Pending`] means the generator is `max_lead_ms` ahead of `now_ms`; a clock past
    /// what 47 bits of milliseconds can hold is [`Error::TimeOutOfRange`].
    #[inline]
    pub fn next(&self, now_ms: u64) -> Result<Next<Flake128>> {
        match self.state.next(now_ms) {
            Tick::Ready { tick, seq } => Ok(Next::Id(Flake128::compose(
                tick,
                self.worker.load(Ordering::Relaxed),
                seq as u16,
            ))),
            Tick::Pending { until_tick } => Ok(Next::Pending {
                until_ms: until_tick,
            }),
            Tick::Exhausted => Err(Error::TimeOutOfRange { time_ms: now_ms }),
        }
    }

    /// Makes every later id lie after millisecond `ms` (the persisted high-water mark after a
    /// restart). Never moves backwards.
    pub fn resume_after_ms(&self, ms: u64) {
        self.state.resume_after(ms);
    }

    /// The millisecond of the next id this generator could issue; every id so far is in it or
    /// before it. Persist this to resume after a restart.
    pub fn high_water_ms(&self) -> u64 {
        self.state.high_water_tick()
    }
}

fn check_worker(worker: u64) -> Result<()> {
    if worker > Flake128::MAX_WORKER {
        return Err(Error::NodeOutOfRange {
            node: worker,
            max: Flake128::MAX_WORKER,
        });
    }
    Ok(())
}

#[cfg(all(test, not(loom)))]
mod tests {
    extern crate std;

    use super::*;
    use crate::error::ErrorCode;
    use std::format;

    const W: u64 = 0x109A_DD5E_0E8F;

    #[test]
    fn fields_round_trip() {
        let f = Flake128::from_parts(1_326_409_013_776, W, 5).unwrap();
        assert_eq!(f.time_ms(), 1_326_409_013_776);
        assert_eq!(f.worker(), W);
        assert_eq!(f.seq(), 5);
        assert_eq!(f.as_u128(), 0x0000_0134_d423_5a10_109a_dd5e_0e8f_0005);
        assert_eq!(Flake128::from_u128(f.as_u128()), f);
        let edge = Flake128::from_parts(u64::MAX, Flake128::MAX_WORKER, u16::MAX).unwrap();
        assert_eq!(edge.as_u128(), u128::MAX);
        assert_eq!(
            Flake128::from_parts(0, Flake128::MAX_WORKER + 1, 0),
            Err(Error::NodeOutOfRange {
                node: 1 << 48,
                max: Flake128::MAX_WORKER
            })
        );
    }

    #[test]
    fn bytes_are_big_endian() {
        let f = Flake128::from_parts(0x0102_0304_0506_0708, 0x090A_0B0C_0D0E, 0x0F10).unwrap();
        let b = f.to_bytes();
        assert_eq!(b, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
        assert_eq!(Flake128::from_bytes(b), f);
        assert_eq!(Flake128::try_from_slice(&b), Ok(f));
        assert_eq!(
            Flake128::try_from_slice(&b[1..]).unwrap_err().code(),
            ErrorCode::InvalidLength
        );
    }

    #[test]
    fn text_forms() {
        // From Boundary's README: an 18-character unpadded base62 id.
        let f = Flake128::parse_base62("8HFaR8qWtRlGDHnO57").unwrap();
        assert_eq!(
            (f.time_ms(), f.worker(), f.seq()),
            (1_326_409_013_776, W, 5)
        );
        let mut b62 = [0u8; Flake128::BASE62_LEN];
        assert_eq!(f.to_base62(&mut b62), "00008HFaR8qWtRlGDHnO57");
        assert_eq!(format!("{f}"), "00008HFaR8qWtRlGDHnO57");
        assert_eq!("00008HFaR8qWtRlGDHnO57".parse(), Ok(f));
        let mut hx = [0u8; Flake128::HEX_LEN];
        assert_eq!(f.to_hex(&mut hx), "00000134d4235a10109add5e0e8f0005");
        assert_eq!(
            Flake128::parse_hex("00000134D4235A10109ADD5E0E8F0005"),
            Ok(f)
        );
        assert_eq!(
            Flake128::parse_hex("134d4235a10109add5e0e8f0005"),
            Err(Error::InvalidHex("expected 32 hex characters"))
        );
        assert_eq!(
            Flake128::parse_base62("zzzzzzzzzzzzzzzzzzzzzz")
                .unwrap_err()
                .code(),
            ErrorCode::InvalidBase62
        );
    }

    #[test]
    fn generator_sequences_and_carries() {
        let g = Flake128Gen::new(W, 1).unwrap();
        let mut last = None;
        // A full millisecond of sequence, then the carry into the next one.
        for seq in 0..=u16::MAX {
            let Ok(Next::Id(id)) = g.next(1000) else {
                panic!("no id at seq {seq}")
            };
            assert_eq!((id.time_ms(), id.worker(), id.seq()), (1000, W, seq));
            assert!(last < Some(id));
            last = Some(id);
        }
        let Ok(Next::Id(id)) = g.next(1000) else {
            panic!("no carry")
        };
        assert_eq!((id.time_ms(), id.seq()), (1001, 0));
        for _ in 0..u16::MAX {
            assert!(matches!(g.next(1000), Ok(Next::Id(_))));
        }
        // 1002 would be two milliseconds ahead of the clock.
        assert_eq!(g.next(1000), Ok(Next::Pending { until_ms: 1001 }));
        assert_eq!(g.high_water_ms(), 1002);
    }

    #[test]
    fn generator_clock_back_resume_and_range() {
        let g = Flake128Gen::new(7, 0).unwrap();
        let Ok(Next::Id(a)) = g.next(5000) else {
            panic!()
        };
        assert_eq!(g.next(4000), Ok(Next::Pending { until_ms: 5000 }));
        g.resume_after_ms(9000);
        assert_eq!(g.high_water_ms(), 9001);
        assert_eq!(
            g.next(9001).unwrap(),
            Next::Id(Flake128::from_parts(9001, 7, 0).unwrap())
        );
        assert!(a.time_ms() == 5000);
        assert_eq!(
            g.next(1 << 47),
            Err(Error::TimeOutOfRange { time_ms: 1 << 47 })
        );
        assert!(Flake128Gen::new(1 << 48, 0).is_err());
    }

    #[test]
    fn set_worker_after_fork() {
        let g = Flake128Gen::new(1, 10).unwrap();
        assert_eq!(
            g.set_worker(1 << 48).unwrap_err().code(),
            ErrorCode::NodeOutOfRange
        );
        assert_eq!(g.worker(), 1);
        g.set_worker(2).unwrap();
        assert_eq!(g.worker(), 2);
        let Ok(Next::Id(id)) = g.next(50) else {
            panic!()
        };
        assert_eq!(id.worker(), 2);
    }
}
