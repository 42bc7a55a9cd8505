//! ULID: 48-bit Unix milliseconds and 80 random bits, written as 26 characters of Crockford
//! base32 (the ULID spec).
//!
//! [`UlidGen`] fills the top 18 of the 80 bits with a counter and the other 62 with randomness
//! (see [`stamp`](crate::stamp)): a generator's ULIDs strictly increase, which is what the spec's
//! monotonic mode promises. Text is upper case; the parser takes either case and Crockford's
//! aliases (`I`, `L` for 1, `O` for 0), and refuses any other length or a first character
//! above `7` (more than 128 bits) with [`Error::InvalidBase32`].

use crate::encode::base32;
use crate::error::{Error, Result};
use crate::stamp::{Stamp, StampGen};

/// A ULID. Orders by value, which is time first; its text sorts the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ulid(u128);

u128_views!(Ulid);
text_traits!(Ulid, Ulid::TEXT_LEN, to_text, parse);

impl Ulid {
    /// Bytes in the binary form.
    pub const LEN: usize = 16;
    /// Characters in the text form.
    pub const TEXT_LEN: usize = base32::U128_LEN;
    /// The largest Unix millisecond a ULID holds (48 bits).
    pub const MAX_TIME_MS: u64 = (1 << 48) - 1;
    /// The largest random part (80 bits).
    pub const MAX_RANDOM: u128 = (1 << 80) - 1;

    /// The ULID with these fields; a time over [`Ulid::MAX_TIME_MS`] is
    /// [`Error::TimeOutOfRange`], a random part over [`Ulid::MAX_RANDOM`] is
    /// [`Error::InvalidArgument`].
    pub const fn from_parts(time_ms: u64, random: u128) -> Result<Ulid> {
        if time_ms > Self::MAX_TIME_MS {
            return Err(Error::TimeOutOfRange { time_ms });
        }
        if random > Self::MAX_RANDOM {
            return Err(Error::InvalidArgument("the random part must fit 80 bits"));
        }
        Ok(Ulid((time_ms as u128) << 80 | random))
    }

    /// The ULID with this value; every `u128` is one.
    #[inline]
    pub const fn from_u128(value: u128) -> Ulid {
        Ulid(value)
    }

    /// Unix milliseconds.
    #[inline]
    pub const fn time_ms(&self) -> u64 {
        (self.0 >> 80) as u64
    }

    /// The 80 bits after the time.
    #[inline]
    pub const fn random(&self) -> u128 {
        self.0 & Self::MAX_RANDOM
    }

    /// The ULID from its 16 big-endian bytes.
    #[inline]
    pub const fn from_bytes(bytes: [u8; 16]) -> Ulid {
        Ulid(u128::from_be_bytes(bytes))
    }

    /// The ULID in a 16-byte slice; any other length is [`Error::InvalidLength`].
    pub fn try_from_slice(bytes: &[u8]) -> Result<Ulid> {
        crate::encode::array16(bytes).map(Self::from_bytes)
    }

    /// Writes the 26 upper-case characters into `out` and returns them.
    #[inline]
    pub fn to_text<'a>(&self, out: &'a mut [u8; Self::TEXT_LEN]) -> &'a str {
        base32::encode_u128(self.0, out)
    }

    /// Parses exactly 26 Crockford base32 characters, in either case.
    pub fn parse(s: &str) -> Result<Ulid> {
        if s.len() != Self::TEXT_LEN {
            return Err(Error::InvalidBase32("a ULID has 26 characters"));
        }
        base32::decode_u128(s.as_bytes()).map(Ulid)
    }
}

impl Stamp for Ulid {
    #[inline]
    fn stamp(time_ms: u64, counter: u32, random: u64) -> Ulid {
        Ulid((time_ms as u128) << 80 | (counter as u128) << 62 | (random as u128 & ((1 << 62) - 1)))
    }
}

/// The ULID generator: see [`StampGen`].
pub type UlidGen = StampGen<Ulid>;

/// Every UUIDv7 is a ULID with the same millisecond.
impl From<crate::uuid7::Uuid7> for Ulid {
    fn from(id: crate::uuid7::Uuid7) -> Ulid {
        Ulid(id.as_u128())
    }
}
