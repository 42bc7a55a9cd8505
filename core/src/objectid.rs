//! MongoDB ObjectIds, as the BSON ObjectId specification defines them.
//!
//! 12 bytes: a 4-byte big-endian **unsigned** count of seconds since the Unix epoch (good until
//! 2106-02-07), 5 bytes unique to the process, and a 3-byte big-endian counter that starts at a
//! random value and wraps from `0xFFFFFF` to 0.
//!
//! Ids made with the legacy layout (3 bytes machine, 2 bytes pid) have the same size and the same
//! time field, so they parse and read back the same way. As the specification asks, there is no
//! accessor for the process bytes or the counter: they are opaque.

use core::fmt;

use crate::encode::{ascii, hex};
use crate::error::{Error, Result};
use crate::sync::{AtomicU32, AtomicU64, Ordering};
use crate::tick::{Next, Tick, TickState};

/// The counter field is 24 bits.
const COUNTER_MASK: u32 = 0x00FF_FFFF;

/// A 12-byte MongoDB ObjectId. Orders by its bytes, so first by time.
// Aligned to 4: inside a `Result` the bytes start at a word boundary, not at offset 1, where a
// copy out read across the stores that built the id and stalled on store-to-load forwarding.
// (Bindings that copy ids out use `object_id_with`, which avoids the copy altogether.)
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(align(4))]
pub struct ObjectId([u8; 12]);

text_traits!(ObjectId, ObjectId::HEX_LEN, to_hex, parse_hex);

impl ObjectId {
    /// Bytes in an ObjectId.
    pub const LEN: usize = 12;
    /// Characters in the hex form.
    pub const HEX_LEN: usize = 24;

    /// The ObjectId with these bytes.
    #[inline]
    pub const fn from_bytes(bytes: [u8; 12]) -> ObjectId {
        ObjectId(bytes)
    }

    /// The 12 bytes.
    #[inline]
    pub const fn bytes(&self) -> [u8; 12] {
        self.0
    }

    /// Builds an id from its fields; only the low 24 bits of `counter` are used.
    #[inline]
    pub const fn from_parts(seconds: u32, process: [u8; 5], counter: u32) -> ObjectId {
        ObjectId::from_words(seconds, pack(process), counter)
    }

    /// [`from_parts`](Self::from_parts) with the process bytes packed in the low 40 bits of a
    /// word: the id is assembled as one 8-byte and one 4-byte word, so a caller copying it out
    /// reads whole words back. (Byte by byte, a 2-byte read of two 1-byte stores missed
    /// store-to-load forwarding and stalled: half the cost of an id through the C ABI.)
    #[inline]
    const fn from_words(seconds: u32, process: u64, counter: u32) -> ObjectId {
        let high = ((seconds as u64) << 32 | process >> 8).to_be_bytes();
        let low = ((process as u32) << 24 | (counter & COUNTER_MASK)).to_be_bytes();
        ObjectId([
            high[0], high[1], high[2], high[3], high[4], high[5], high[6], high[7], low[0], low[1],
            low[2], low[3],
        ])
    }

    /// Seconds since the Unix epoch, read as unsigned (ids after 2038-01-19 stay in the future).
    #[inline]
    pub const fn timestamp(&self) -> u32 {
        u32::from_be_bytes([self.0[0], self.0[1], self.0[2], self.0[3]])
    }

    /// Writes the 24 lower-case hex characters into `out` and returns them.
    #[inline]
    pub fn to_hex<'a>(&self, out: &'a mut [u8; Self::HEX_LEN]) -> &'a str {
        hex::write_bytes(&self.0, out);
        ascii(out)
    }

    /// Parses exactly 24 hex characters, in either case.
    pub fn parse_hex(s: &str) -> Result<ObjectId> {
        if s.len() != Self::HEX_LEN {
            return Err(Error::InvalidHex("expected 24 hex characters"));
        }
        let mut bytes = [0u8; 12];
        hex::decode_bytes(s.as_bytes(), &mut bytes)?;
        Ok(ObjectId(bytes))
    }

    /// The ObjectId in a 12-byte slice; any other length is [`Error::InvalidLength`].
    pub fn try_from_slice(bytes: &[u8]) -> Result<ObjectId> {
        match <[u8; 12]>::try_from(bytes) {
            Ok(array) => Ok(ObjectId(array)),
            Err(_) => Err(Error::InvalidLength {
                expected: Self::LEN,
                got: bytes.len(),
            }),
        }
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; Self::HEX_LEN];
        write!(f, "ObjectId({})", self.to_hex(&mut buf))
    }
}

/// A thread-safe ObjectId generator.
///
/// The caller supplies the time and the entropy: 5 random process bytes and a random counter
/// start, drawn once per process (and again in a forked child, with [`ObjectIdGen::reseed`]).
///
/// The counter is `start + n` (mod 2^24) for the n-th id of a second, taken from the shared
/// [`TickState`] (seconds | 24-bit sequence, one CAS). So no two ids of a process share both a
/// timestamp and a counter: past 2^24 ids in one second the generator borrows the next second
/// (up to `max_lead_secs`) instead of wrapping onto counters already used, and beyond that asks
/// the caller to wait. A plain incrementing counter would repeat ids at that rate.
pub struct ObjectIdGen {
    /// The 5 process bytes in the low 40 bits; atomic only so that `reseed` can take `&self`.
    process: AtomicU64,
    /// The random counter start, added to each second's sequence.
    counter_start: AtomicU32,
    state: TickState,
}

impl ObjectIdGen {
    /// A generator with these process bytes whose counter starts at `counter_start` (masked to
    /// 24 bits), allowed to run `max_lead_secs` seconds ahead of the clock under a burst.
    pub fn new(process: [u8; 5], counter_start: u32, max_lead_secs: u32) -> ObjectIdGen {
        let state = match TickState::new(32, 24, u64::from(max_lead_secs)) {
            Ok(state) => state,
            // 32 + 24 <= 63 always holds.
            Err(_) => unreachable!("32-bit seconds and a 24-bit counter fit the tick state"),
        };
        ObjectIdGen {
            process: AtomicU64::new(pack(process)),
            counter_start: AtomicU32::new(counter_start),
            state,
        }
    }

    /// The next id, stamped with `now_secs` (seconds since the Unix epoch), or
    /// [`Next::Pending`] when a burst has used the allowed lead.
    #[inline]
    pub fn next(&self, now_secs: u32) -> Next<ObjectId> {
        match self.state.next(u64::from(now_secs)) {
            Tick::Ready { tick, seq } => {
                let counter = self
                    .counter_start
                    .load(Ordering::Relaxed)
                    .wrapping_add(seq as u32);
                let process = self.process.load(Ordering::Relaxed);
                Next::Id(ObjectId::from_words(tick as u32, process, counter))
            }
            Tick::Pending { until_tick } => Next::Pending {
                until_ms: until_tick * 1000,
            },
            // The tick field is 32 bits, as wide as `now_secs`: only borrowing past 2106 gets here.
            Tick::Exhausted => Next::Pending { until_ms: u64::MAX },
        }
    }

    /// Replaces the process bytes and the counter start.
    ///
    /// For a forked child, which must not share its parent's process bytes. Call it while no
    /// other thread is generating (right after `fork()` the child has a single thread); an id
    /// taken concurrently may mix the old and the new values.
    pub fn reseed(&self, process: [u8; 5], counter_start: u32) {
        self.process.store(pack(process), Ordering::Relaxed);
        self.counter_start.store(counter_start, Ordering::Relaxed);
    }
}

/// Hides the process bytes and counter, which the specification says not to expose.
impl fmt::Debug for ObjectIdGen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectIdGen").finish_non_exhaustive()
    }
}

#[inline]
const fn pack(p: [u8; 5]) -> u64 {
    u64::from_be_bytes([0, 0, 0, p[0], p[1], p[2], p[3], p[4]])
}

#[cfg(all(test, not(loom)))]
mod tests {
    extern crate std;

    use super::*;
    use crate::error::ErrorCode;
    use std::format;
    use std::string::ToString;

    const P: [u8; 5] = [0x11, 0x22, 0x33, 0x44, 0x55];

    #[test]
    fn layout_is_seconds_process_counter() {
        let id = ObjectId::from_parts(0x6553_F100, P, 0x00AB_CDEF);
        assert_eq!(
            id.bytes(),
            [
                0x65, 0x53, 0xF1, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0xAB, 0xCD, 0xEF
            ]
        );
        assert_eq!(id.timestamp(), 0x6553_F100);
        // Only 24 bits of counter.
        assert_eq!(
            ObjectId::from_parts(1, P, 0xFF00_0001),
            ObjectId::from_parts(1, P, 1)
        );
    }

    #[test]
    fn timestamp_is_unsigned() {
        let id: ObjectId = "ffffffff0000000000000000".parse().unwrap();
        assert_eq!(id.timestamp(), u32::MAX);
        let id: ObjectId = "800000000000000000000000".parse().unwrap();
        assert_eq!(id.timestamp(), 0x8000_0000);
    }

    #[test]
    fn legacy_layout_reads_the_same_time() {
        // 4 time | 3 machine (0xAABBCC) | 2 pid (0x1234) | 3 counter (0x000001).
        let id = ObjectId::parse_hex("4F0E5A3BAABBCC1234000001").unwrap();
        assert_eq!(id.timestamp(), 0x4F0E_5A3B);
        assert_eq!(id.to_string(), "4f0e5a3baabbcc1234000001");
    }

    #[test]
    fn hex_round_trip_and_formatting() {
        let id = ObjectId::from_parts(0x6553_F100, P, 0x00AB_CDEF);
        let mut buf = [0u8; ObjectId::HEX_LEN];
        assert_eq!(id.to_hex(&mut buf), "6553f1001122334455abcdef");
        assert_eq!(ObjectId::parse_hex("6553F1001122334455ABCDEF"), Ok(id));
        assert_eq!(format!("{id}"), "6553f1001122334455abcdef");
        assert_eq!(format!("{id:>26}"), "  6553f1001122334455abcdef");
        assert_eq!(format!("{id:?}"), "ObjectId(6553f1001122334455abcdef)");
    }

    #[test]
    fn strict_parsing() {
        assert_eq!(
            ObjectId::parse_hex("6553f1001122334455abcde"),
            Err(Error::InvalidHex("expected 24 hex characters"))
        );
        assert_eq!(
            ObjectId::parse_hex("6553f1001122334455abcdef0"),
            Err(Error::InvalidHex("expected 24 hex characters"))
        );
        assert_eq!(
            ObjectId::parse_hex("6553f1001122334455abcdeg"),
            Err(Error::InvalidHex("invalid character"))
        );
        // 24 bytes but not 24 characters: still rejected, never sliced mid-character.
        assert_eq!(
            ObjectId::parse_hex("6553f1001122334455abcdé")
                .unwrap_err()
                .code(),
            ErrorCode::InvalidHex
        );
        assert_eq!(
            ObjectId::try_from_slice(&[0; 11]),
            Err(Error::InvalidLength {
                expected: 12,
                got: 11
            })
        );
        assert_eq!(
            ObjectId::try_from_slice(&[7; 12]),
            Ok(ObjectId::from_bytes([7; 12]))
        );
    }

    fn id(next: Next<ObjectId>) -> ObjectId {
        match next {
            Next::Id(id) => id,
            Next::Pending { until_ms } => panic!("pending until {until_ms}"),
        }
    }

    #[test]
    fn generator_counts_and_wraps() {
        let g = ObjectIdGen::new(P, 0x00FF_FFFE, 0);
        assert_eq!(id(g.next(10)), ObjectId::from_parts(10, P, 0xFF_FFFE));
        assert_eq!(id(g.next(10)), ObjectId::from_parts(10, P, 0xFF_FFFF));
        assert_eq!(id(g.next(10)), ObjectId::from_parts(10, P, 0));
        // A new second restarts the sequence at the random start.
        assert_eq!(id(g.next(11)), ObjectId::from_parts(11, P, 0xFF_FFFE));
        // The u32 itself wrapping must also land on the masked sequence.
        let g = ObjectIdGen::new(P, u32::MAX, 0);
        assert_eq!(id(g.next(1)), ObjectId::from_parts(1, P, 0xFF_FFFF));
        assert_eq!(id(g.next(1)), ObjectId::from_parts(1, P, 0));
    }

    #[test]
    fn a_full_second_borrows_the_next_instead_of_repeating() {
        let g = ObjectIdGen::new(P, 77, 1);
        let first = id(g.next(50));
        for _ in 1..(1 << 24) {
            assert_eq!(id(g.next(50)).timestamp(), 50);
        }
        // 2^24 ids used second 50: the next one must not reuse counter 77 in second 50.
        let borrowed = id(g.next(50));
        assert_eq!(borrowed.timestamp(), 51);
        assert_ne!(borrowed, first);
        for _ in 1..(1 << 24) {
            let _ = g.next(50);
        }
        assert_eq!(g.next(50), Next::Pending { until_ms: 51_000 });
    }

    #[test]
    fn reseed_changes_process_and_counter() {
        let g = ObjectIdGen::new(P, 5, 0);
        let _ = g.next(1);
        let q = [9, 8, 7, 6, 5];
        g.reseed(q, 100);
        assert_eq!(id(g.next(2)), ObjectId::from_parts(2, q, 100));
        assert_eq!(format!("{g:?}"), "ObjectIdGen { .. }");
    }

    #[test]
    fn concurrent_ids_are_unique() {
        use std::collections::HashSet;
        use std::sync::Arc;
        use std::vec::Vec;

        let g = Arc::new(ObjectIdGen::new(P, 0x00FF_F000, 0));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let g = Arc::clone(&g);
                std::thread::spawn(move || (0..10_000).map(|_| id(g.next(7))).collect::<Vec<_>>())
            })
            .collect();
        let mut seen = HashSet::new();
        for h in handles {
            for id in h.join().unwrap() {
                assert!(seen.insert(id), "duplicate {id}");
            }
        }
        assert_eq!(seen.len(), 40_000);
    }
}
