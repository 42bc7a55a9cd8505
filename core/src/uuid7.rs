//! UUIDv7 (RFC 9562): 48-bit Unix milliseconds, the version (7), 12 bits `rand_a`, the variant
//! (`10`), 62 bits `rand_b`.
//!
//! [`Uuid7Gen`] fills `rand_a` and the top 6 bits of `rand_b` with an 18-bit counter and the
//! other 56 bits with randomness (see [`stamp`](crate::stamp)), so a generator's UUIDs strictly
//! increase, as numbers, as bytes and as text. Text is the hyphenated lower-case form; the
//! parser also takes upper case, the 32-digit simple form, braces and `urn:uuid:`, as Python's
//! `uuid.UUID` and `java.util.UUID` print or accept them. A UUID of another version or variant is
//! [`Error::InvalidUuid`].

use crate::encode::{ascii, hex};
use crate::error::{Error, Result};
use crate::stamp::{Stamp, StampGen};
use crate::ulid::Ulid;

/// A version 7 UUID. Orders by value, which is time first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Uuid7(u128);

/// The version and variant bits of every `Uuid7`, and where they are.
const VERSION: u128 = 0x7 << 76;
const VARIANT: u128 = 0b10 << 62;
const FIXED_MASK: u128 = 0xF << 76 | 0b11 << 62;

u128_views!(Uuid7);
text_traits!(Uuid7, Uuid7::TEXT_LEN, to_text, parse);

impl Uuid7 {
    /// Bytes in the binary form.
    pub const LEN: usize = 16;
    /// Characters in the hyphenated text form.
    pub const TEXT_LEN: usize = 36;
    /// The largest Unix millisecond a UUIDv7 holds (48 bits).
    pub const MAX_TIME_MS: u64 = (1 << 48) - 1;
    /// The largest `rand_a` (12 bits).
    pub const MAX_RAND_A: u16 = (1 << 12) - 1;
    /// The largest `rand_b` (62 bits).
    pub const MAX_RAND_B: u64 = (1 << 62) - 1;

    /// The UUID with these fields; a field too wide for its bits is an error
    /// ([`Error::TimeOutOfRange`], [`Error::InvalidArgument`]).
    pub const fn from_fields(time_ms: u64, rand_a: u16, rand_b: u64) -> Result<Uuid7> {
        if time_ms > Self::MAX_TIME_MS {
            return Err(Error::TimeOutOfRange { time_ms });
        }
        if rand_a > Self::MAX_RAND_A {
            return Err(Error::InvalidArgument("rand_a must fit 12 bits"));
        }
        if rand_b > Self::MAX_RAND_B {
            return Err(Error::InvalidArgument("rand_b must fit 62 bits"));
        }
        Ok(Uuid7(
            (time_ms as u128) << 80 | VERSION | (rand_a as u128) << 64 | VARIANT | rand_b as u128,
        ))
    }

    /// Whether `value` has version 7 and the RFC 9562 variant.
    #[inline]
    pub const fn is_v7(value: u128) -> bool {
        value & FIXED_MASK == VERSION | VARIANT
    }

    /// The UUID with this value; another version or variant is [`Error::InvalidUuid`].
    #[inline]
    pub const fn from_u128(value: u128) -> Result<Uuid7> {
        if Self::is_v7(value) {
            Ok(Uuid7(value))
        } else {
            Err(Error::InvalidUuid(
                "not a version 7 UUID of the RFC 9562 variant",
            ))
        }
    }

    /// Unix milliseconds.
    #[inline]
    pub const fn time_ms(&self) -> u64 {
        (self.0 >> 80) as u64
    }

    /// The 12 bits after the version.
    #[inline]
    pub const fn rand_a(&self) -> u16 {
        (self.0 >> 64) as u16 & Self::MAX_RAND_A
    }

    /// The 62 bits after the variant.
    #[inline]
    pub const fn rand_b(&self) -> u64 {
        self.0 as u64 & Self::MAX_RAND_B
    }

    /// The UUID from its 16 bytes; another version or variant is [`Error::InvalidUuid`].
    #[inline]
    pub const fn from_bytes(bytes: [u8; 16]) -> Result<Uuid7> {
        Self::from_u128(u128::from_be_bytes(bytes))
    }

    /// The UUID in a 16-byte slice; any other length is [`Error::InvalidLength`].
    pub fn try_from_slice(bytes: &[u8]) -> Result<Uuid7> {
        crate::encode::array16(bytes).and_then(Self::from_bytes)
    }

    /// Writes the 36-character hyphenated lower-case form into `out` and returns it.
    #[inline]
    pub fn to_text<'a>(&self, out: &'a mut [u8; Self::TEXT_LEN]) -> &'a str {
        write_hyphenated(self.0, out)
    }

    /// Parses a version 7 UUID: hyphenated (36 characters), simple (32 hex digits), in braces
    /// or after `urn:uuid:`, in either case.
    pub fn parse(s: &str) -> Result<Uuid7> {
        Self::from_u128(parse_uuid(s)?)
    }

    /// The same 128 bits as ULID text (26 characters; ULID's 48-bit time is the same
    /// millisecond).
    #[inline]
    pub fn to_ulid_text<'a>(&self, out: &'a mut [u8; Ulid::TEXT_LEN]) -> &'a str {
        Ulid::from_u128(self.0).to_text(out)
    }

    /// The UUIDv7 written as ULID text; other ULIDs are [`Error::InvalidUuid`].
    pub fn parse_ulid_text(s: &str) -> Result<Uuid7> {
        Self::from_u128(Ulid::parse(s)?.as_u128())
    }
}

impl Stamp for Uuid7 {
    #[inline]
    fn stamp(time_ms: u64, counter: u32, random: u64) -> Uuid7 {
        let counter = counter as u128;
        Uuid7(
            (time_ms as u128) << 80
                | VERSION
                | (counter >> 6) << 64
                | VARIANT
                | (counter & 0x3F) << 56
                | (random as u128 & ((1 << 56) - 1)),
        )
    }
}

/// The UUIDv7 generator: see [`StampGen`].
pub type Uuid7Gen = StampGen<Uuid7>;

/// Writes `value` as a hyphenated lower-case UUID (8-4-4-4-12).
fn write_hyphenated(value: u128, out: &mut [u8; 36]) -> &str {
    let mut digits = [0u8; hex::U128_LEN];
    hex::encode_u128(value, &mut digits);
    let mut at = 0;
    for (i, &digit) in digits.iter().enumerate() {
        if matches!(i, 8 | 12 | 16 | 20) {
            out[at] = b'-';
            at += 1;
        }
        out[at] = digit;
        at += 1;
    }
    ascii(out)
}

/// Parses any UUID text form to its 128 bits (no version check).
pub(crate) fn parse_uuid(s: &str) -> Result<u128> {
    let bytes = s.as_bytes();
    let body = match bytes {
        [b'{', inner @ .., b'}'] => inner,
        _ if bytes.len() > 9 && bytes[..9].eq_ignore_ascii_case(b"urn:uuid:") => &bytes[9..],
        _ => bytes,
    };
    let mut digits = [0u8; hex::U128_LEN];
    match body.len() {
        32 => digits.copy_from_slice(body),
        36 => {
            let mut n = 0;
            for (i, &c) in body.iter().enumerate() {
                if matches!(i, 8 | 13 | 18 | 23) {
                    if c != b'-' {
                        return Err(Error::InvalidUuid(
                            "hyphens belong after 8, 12, 16 and 20 digits",
                        ));
                    }
                } else {
                    digits[n] = c;
                    n += 1;
                }
            }
        }
        _ => {
            return Err(Error::InvalidUuid(
                "expected 36 characters (8-4-4-4-12) or 32 hex digits",
            ));
        }
    }
    hex::decode_u128(&digits).map_err(|_| Error::InvalidUuid("invalid hex digit"))
}

#[cfg(all(test, not(loom)))]
mod tests {
    extern crate std;

    use super::*;
    use crate::error::ErrorCode;
    use std::format;
    use std::string::ToString;

    #[test]
    fn fields_bytes_and_limits() {
        let id = Uuid7::from_fields(0x0189_3A5B_7C3D, 0xABC, 0x0123_4567_89AB_CDEF).unwrap();
        assert_eq!(id.to_string(), "01893a5b-7c3d-7abc-8123-456789abcdef");
        assert_eq!(
            format!("{id:>38}"),
            "  01893a5b-7c3d-7abc-8123-456789abcdef"
        );
        assert_eq!(Uuid7::try_from_slice(&id.to_bytes()), Ok(id));
        assert_eq!(
            Uuid7::try_from_slice(&[0; 15]).unwrap_err().code(),
            ErrorCode::InvalidLength
        );
        assert_eq!(
            Uuid7::from_fields(1 << 48, 0, 0),
            Err(Error::TimeOutOfRange { time_ms: 1 << 48 })
        );
        assert!(Uuid7::from_fields(0, 0x1000, 0).is_err());
        assert!(Uuid7::from_fields(0, 0, 1 << 62).is_err());
        assert_eq!(u128::from(id), id.as_u128());
        assert_eq!("01893A5B7C3D7ABC8123456789ABCDEF".parse(), Ok(id));
    }
}
