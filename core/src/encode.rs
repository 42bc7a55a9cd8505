//! Text encodings of integers and bytes, written into caller buffers (no allocation).
//!
//! Each encoding is a submodule with `LEN` constants giving the exact buffer size:
//!
//! - [`base62`]: `0-9A-Za-z` in ASCII order, so fixed-width strings sort like the numbers.
//! - [`base32`]: Crockford's alphabet, upper-case out, case-insensitive in.
//! - [`hex`]: lower-case out, case-insensitive in; also byte strings.
//! - [`decimal`]: plain digits.
//!
//! Encoders return a `&str` view of the buffer they filled. Decoders take bytes, accept unpadded
//! input (1 up to `LEN` characters) and reject empty input, foreign characters and values that do
//! not fit, with the encoding's own error.
//!
//! ```
//! use idforge_core::encode::base62;
//!
//! let mut buf = [0u8; base62::U64_LEN];
//! assert_eq!(base62::encode_u64(62, &mut buf), "00000000010");
//! assert_eq!(base62::decode_u64(b"10"), Ok(62));
//! ```

/// Marks a byte that is not a digit in a decode table.
const INVALID: u8 = 0xFF;

/// A decode table mapping each byte of `alphabet` to its index and every other byte to
/// [`INVALID`].
const fn decode_table(alphabet: &[u8]) -> [u8; 256] {
    let mut table = [INVALID; 256];
    let mut i = 0;
    while i < alphabet.len() {
        table[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    table
}

/// Views bytes an encoder just wrote as `&str`. They come only from ASCII alphabets, so the
/// fallback can never be taken; it exists so that no path can panic.
#[inline]
pub(crate) fn ascii(bytes: &[u8]) -> &str {
    core::str::from_utf8(bytes).unwrap_or_default()
}

/// `bytes` as a 16-byte array (the binary form of the 128-bit ids); any other length is
/// [`Error::InvalidLength`](crate::Error::InvalidLength).
pub(crate) fn array16(bytes: &[u8]) -> crate::Result<[u8; 16]> {
    <[u8; 16]>::try_from(bytes).map_err(|_| crate::Error::InvalidLength {
        expected: 16,
        got: bytes.len(),
    })
}

/// Parses `src` as digits of `radix` looked up in `table`; the error is the reason text.
///
/// The accumulator is a `u128` and every step is checked, so no input can wrap; `max` then
/// narrows to the target type.
fn parse_digits(
    src: &[u8],
    table: &[u8; 256],
    radix: u8,
    max_len: usize,
    max: u128,
) -> core::result::Result<u128, &'static str> {
    if src.is_empty() {
        return Err("empty input");
    }
    if src.len() > max_len {
        return Err("too many characters");
    }
    let mut value: u128 = 0;
    for &byte in src {
        let digit = table[byte as usize];
        if digit == INVALID {
            return Err("invalid character");
        }
        value = value
            .checked_mul(u128::from(radix))
            .and_then(|v| v.checked_add(u128::from(digit)))
            .ok_or("value does not fit")?;
    }
    if value > max {
        return Err("value does not fit");
    }
    Ok(value)
}

/// Base62 with the alphabet `0-9A-Za-z`.
///
/// The digits are in ASCII order, so strings of the same width (the padded output of the
/// encoders) compare byte-wise exactly like the numbers they encode.
pub mod base62 {
    use super::{INVALID, ascii, decode_table, parse_digits};
    use crate::error::{Error, Result};

    /// Characters in a padded `u64` (62^11 > 2^64).
    pub const U64_LEN: usize = 11;
    /// Characters in a padded `u128` (62^22 > 2^128).
    pub const U128_LEN: usize = 22;

    /// The digits, in ASCII (and so in numeric) order.
    pub const ALPHABET: &[u8; 62] =
        b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    const DECODE: [u8; 256] = decode_table(ALPHABET);

    // 62^10 < 2^64: a u128 splits into three chunks of at most 10 digits, each in u64.
    const CHUNK: u128 = 839_299_365_868_340_224;

    /// Fills all of `out` with the low digits of `v`, most significant first, left-padded.
    #[inline]
    fn fill(mut v: u64, out: &mut [u8]) {
        for slot in out.iter_mut().rev() {
            *slot = ALPHABET[(v % 62) as usize];
            v /= 62;
        }
    }

    /// Encodes `v` as exactly [`U64_LEN`] characters, left-padded with `'0'`.
    #[inline]
    pub fn encode_u64(v: u64, out: &mut [u8; U64_LEN]) -> &str {
        fill(v, out);
        ascii(out)
    }

    /// Encodes `v` as exactly [`U128_LEN`] characters, left-padded with `'0'`.
    #[inline]
    pub fn encode_u128(v: u128, out: &mut [u8; U128_LEN]) -> &str {
        // u128 division is a slow library call: divide twice, then finish in u64.
        let low = (v % CHUNK) as u64;
        let rest = v / CHUNK;
        let mid = (rest % CHUNK) as u64;
        // 2^128 / 62^20 < 62^2, so the top chunk has two digits.
        let high = (rest / CHUNK) as u64;
        let (high_out, rest_out) = out.split_at_mut(2);
        let (mid_out, low_out) = rest_out.split_at_mut(10);
        fill(high, high_out);
        fill(mid, mid_out);
        fill(low, low_out);
        ascii(out)
    }

    /// Decodes 1 to [`U64_LEN`] base62 characters (padded or not).
    pub fn decode_u64(src: &[u8]) -> Result<u64> {
        match parse_digits(src, &DECODE, 62, U64_LEN, u128::from(u64::MAX)) {
            Ok(v) => Ok(v as u64),
            Err(reason) => Err(Error::InvalidBase62(reason)),
        }
    }

    /// Decodes 1 to [`U128_LEN`] base62 characters (padded or not).
    pub fn decode_u128(src: &[u8]) -> Result<u128> {
        parse_digits(src, &DECODE, 62, U128_LEN, u128::MAX).map_err(Error::InvalidBase62)
    }

    /// Whether `byte` is a base62 digit.
    #[inline]
    pub fn is_digit(byte: u8) -> bool {
        DECODE[byte as usize] != INVALID
    }
}

/// Crockford base32: `0123456789ABCDEFGHJKMNPQRSTVWXYZ`.
///
/// Output is upper-case and padded, so it sorts like the numbers. Input is case-insensitive and,
/// as Crockford specifies, reads `I`/`L` as `1` and `O` as `0`. `U`, hyphens and the check
/// symbols are rejected.
pub mod base32 {
    use super::{ascii, decode_table, parse_digits};
    use crate::error::{Error, Result};

    /// Characters in a padded `u64` (13 × 5 = 65 bits).
    pub const U64_LEN: usize = 13;
    /// Characters in a padded `u128` (26 × 5 = 130 bits).
    pub const U128_LEN: usize = 26;

    /// The digits, in ASCII (and so in numeric) order.
    pub const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

    const DECODE: [u8; 256] = {
        let mut table = decode_table(ALPHABET);
        let mut i = 10;
        while i < 32 {
            let upper = ALPHABET[i];
            table[upper.to_ascii_lowercase() as usize] = i as u8;
            i += 1;
        }
        // Crockford's aliases for the letters left out because they look like digits.
        table[b'I' as usize] = 1;
        table[b'i' as usize] = 1;
        table[b'L' as usize] = 1;
        table[b'l' as usize] = 1;
        table[b'O' as usize] = 0;
        table[b'o' as usize] = 0;
        table
    };

    /// Encodes `v` as exactly [`U64_LEN`] upper-case characters, left-padded with `'0'`.
    #[inline]
    pub fn encode_u64(mut v: u64, out: &mut [u8; U64_LEN]) -> &str {
        for slot in out.iter_mut().rev() {
            *slot = ALPHABET[(v & 31) as usize];
            v >>= 5;
        }
        ascii(out)
    }

    /// Encodes `v` as exactly [`U128_LEN`] upper-case characters, left-padded with `'0'`.
    #[inline]
    pub fn encode_u128(mut v: u128, out: &mut [u8; U128_LEN]) -> &str {
        for slot in out.iter_mut().rev() {
            *slot = ALPHABET[(v & 31) as usize];
            v >>= 5;
        }
        ascii(out)
    }

    /// Decodes 1 to [`U64_LEN`] Crockford base32 characters, in either case.
    pub fn decode_u64(src: &[u8]) -> Result<u64> {
        match parse_digits(src, &DECODE, 32, U64_LEN, u128::from(u64::MAX)) {
            Ok(v) => Ok(v as u64),
            Err(reason) => Err(Error::InvalidBase32(reason)),
        }
    }

    /// Decodes 1 to [`U128_LEN`] Crockford base32 characters, in either case.
    pub fn decode_u128(src: &[u8]) -> Result<u128> {
        parse_digits(src, &DECODE, 32, U128_LEN, u128::MAX).map_err(Error::InvalidBase32)
    }
}

/// Hexadecimal: lower-case out, either case in.
pub mod hex {
    use super::{INVALID, ascii, decode_table, parse_digits};
    use crate::error::{Error, Result};

    /// Characters in a padded `u64`.
    pub const U64_LEN: usize = 16;
    /// Characters in a padded `u128`.
    pub const U128_LEN: usize = 32;

    const LOWER: &[u8; 16] = b"0123456789abcdef";

    const DECODE: [u8; 256] = {
        let mut table = decode_table(LOWER);
        let upper = b"ABCDEF";
        let mut i = 0;
        while i < upper.len() {
            table[upper[i] as usize] = 10 + i as u8;
            i += 1;
        }
        table
    };

    /// Encodes `v` as exactly [`U64_LEN`] lower-case characters, left-padded with `'0'`.
    #[inline]
    pub fn encode_u64(mut v: u64, out: &mut [u8; U64_LEN]) -> &str {
        for slot in out.iter_mut().rev() {
            *slot = LOWER[(v & 15) as usize];
            v >>= 4;
        }
        ascii(out)
    }

    /// Encodes `v` as exactly [`U128_LEN`] lower-case characters, left-padded with `'0'`.
    #[inline]
    pub fn encode_u128(mut v: u128, out: &mut [u8; U128_LEN]) -> &str {
        for slot in out.iter_mut().rev() {
            *slot = LOWER[(v & 15) as usize];
            v >>= 4;
        }
        ascii(out)
    }

    /// Decodes 1 to [`U64_LEN`] hex characters, in either case.
    pub fn decode_u64(src: &[u8]) -> Result<u64> {
        match parse_digits(src, &DECODE, 16, U64_LEN, u128::from(u64::MAX)) {
            Ok(v) => Ok(v as u64),
            Err(reason) => Err(Error::InvalidHex(reason)),
        }
    }

    /// Decodes 1 to [`U128_LEN`] hex characters, in either case.
    pub fn decode_u128(src: &[u8]) -> Result<u128> {
        parse_digits(src, &DECODE, 16, U128_LEN, u128::MAX).map_err(Error::InvalidHex)
    }

    /// Writes two lower-case characters per byte of `src` into the front of `out`; stops at the
    /// shorter of the two. Callers size `out` as `2 * src.len()`.
    #[inline]
    pub(crate) fn write_bytes(src: &[u8], out: &mut [u8]) {
        for (pair, &byte) in out.chunks_exact_mut(2).zip(src) {
            if let [hi, lo] = pair {
                *hi = LOWER[usize::from(byte >> 4)];
                *lo = LOWER[usize::from(byte & 15)];
            }
        }
    }

    /// Encodes `src` as lower-case hex into `out`, which must be exactly `2 * src.len()` bytes
    /// (else [`Error::InvalidLength`]).
    pub fn encode_bytes<'a>(src: &[u8], out: &'a mut [u8]) -> Result<&'a str> {
        let expected = src.len() * 2;
        if out.len() != expected {
            return Err(Error::InvalidLength {
                expected,
                got: out.len(),
            });
        }
        write_bytes(src, out);
        Ok(ascii(out))
    }

    /// Decodes exactly `2 * out.len()` hex characters (either case) into `out`.
    ///
    /// Any other length, or a non-hex character, is [`Error::InvalidHex`]; `out` may then hold
    /// part of the result.
    pub fn decode_bytes(src: &[u8], out: &mut [u8]) -> Result<()> {
        if src.len() != out.len() * 2 {
            return Err(Error::InvalidHex("expected two characters per byte"));
        }
        for (byte, pair) in out.iter_mut().zip(src.chunks_exact(2)) {
            let (hi, lo) = match pair {
                [hi, lo] => (DECODE[usize::from(*hi)], DECODE[usize::from(*lo)]),
                _ => (INVALID, INVALID), // chunks_exact(2) never yields this
            };
            if hi == INVALID || lo == INVALID {
                return Err(Error::InvalidHex("invalid character"));
            }
            *byte = hi << 4 | lo;
        }
        Ok(())
    }
}

/// Decimal digits, no sign.
pub mod decimal {
    use super::{ascii, decode_table, parse_digits};
    use crate::error::{Error, Result};

    /// The most characters of a `u64` (`18446744073709551615`).
    pub const U64_LEN: usize = 20;

    const DECODE: [u8; 256] = decode_table(b"0123456789");

    /// Encodes `v` without padding into the tail of `out` and returns that tail.
    #[inline]
    pub fn encode_u64(mut v: u64, out: &mut [u8; U64_LEN]) -> &str {
        let mut start = U64_LEN - 1;
        for (i, slot) in out.iter_mut().enumerate().rev() {
            *slot = b'0' + (v % 10) as u8;
            v /= 10;
            start = i;
            if v == 0 {
                break;
            }
        }
        ascii(&out[start..])
    }

    /// Decodes 1 to [`U64_LEN`] ASCII digits (leading zeros allowed; no sign, no spaces).
    pub fn decode_u64(src: &[u8]) -> Result<u64> {
        match parse_digits(src, &DECODE, 10, U64_LEN, u128::from(u64::MAX)) {
            Ok(v) => Ok(v as u64),
            Err(reason) => Err(Error::InvalidDecimal(reason)),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::error::{Error, ErrorCode};

    #[test]
    fn base62_known_values() {
        let mut b = [0u8; base62::U64_LEN];
        assert_eq!(base62::encode_u64(0, &mut b), "00000000000");
        assert_eq!(base62::encode_u64(61, &mut b), "0000000000z");
        assert_eq!(base62::encode_u64(62, &mut b), "00000000010");
        // 18446744073709551615 = LygHa16AHYF in 0-9A-Za-z (checked by hand with python).
        assert_eq!(base62::encode_u64(u64::MAX, &mut b), "LygHa16AHYF");
        let mut w = [0u8; base62::U128_LEN];
        assert_eq!(base62::encode_u128(0, &mut w), "0000000000000000000000");
        assert_eq!(
            base62::encode_u128(u128::MAX, &mut w),
            "7n42DGM5Tflk9n8mt7Fhc7"
        );
        // Crosses each chunk boundary: 62^10 and 62^20.
        assert_eq!(
            base62::encode_u128(62u128.pow(10), &mut w),
            "0000000000010000000000"
        );
        assert_eq!(
            base62::encode_u128(62u128.pow(20), &mut w),
            "0100000000000000000000"
        );
        assert_eq!(
            base62::encode_u128(62u128.pow(10) - 1, &mut w),
            "000000000000zzzzzzzzzz"
        );
    }

    #[test]
    fn base62_decode_accepts_unpadded_and_rejects_bad_input() {
        assert_eq!(base62::decode_u64(b"z"), Ok(61));
        assert_eq!(base62::decode_u64(b"00000000010"), Ok(62));
        assert_eq!(base62::decode_u64(b"LygHa16AHYF"), Ok(u64::MAX));
        assert_eq!(
            base62::decode_u64(b"LygHa16AHYG"),
            Err(Error::InvalidBase62("value does not fit"))
        );
        assert_eq!(
            base62::decode_u64(b"000000000000"),
            Err(Error::InvalidBase62("too many characters"))
        );
        assert_eq!(
            base62::decode_u64(b""),
            Err(Error::InvalidBase62("empty input"))
        );
        assert_eq!(
            base62::decode_u64(b"12-3"),
            Err(Error::InvalidBase62("invalid character"))
        );
        assert_eq!(
            base62::decode_u128(b"7n42DGM5Tflk9n8mt7Fhc7"),
            Ok(u128::MAX)
        );
        assert_eq!(
            base62::decode_u128(b"7n42DGM5Tflk9n8mt7Fhc8")
                .unwrap_err()
                .code(),
            ErrorCode::InvalidBase62
        );
        // 62^22 - 1 overflows the u128 accumulator itself; must still be an error, not a wrap.
        assert_eq!(
            base62::decode_u128(b"zzzzzzzzzzzzzzzzzzzzzz"),
            Err(Error::InvalidBase62("value does not fit"))
        );
        assert!(base62::is_digit(b'a') && !base62::is_digit(b'_'));
    }

    #[test]
    fn base32_crockford() {
        let mut b = [0u8; base32::U64_LEN];
        assert_eq!(base32::encode_u64(0, &mut b), "0000000000000");
        assert_eq!(base32::encode_u64(31, &mut b), "000000000000Z");
        assert_eq!(base32::encode_u64(u64::MAX, &mut b), "FZZZZZZZZZZZZ");
        let mut w = [0u8; base32::U128_LEN];
        assert_eq!(
            base32::encode_u128(u128::MAX, &mut w),
            "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"
        );
        assert_eq!(base32::decode_u64(b"z"), Ok(31));
        assert_eq!(base32::decode_u64(b"Oo"), Ok(0));
        assert_eq!(base32::decode_u64(b"IiLl"), Ok(0b00001_00001_00001_00001));
        assert_eq!(base32::decode_u64(b"fzzzzzzzzzzzz"), Ok(u64::MAX));
        for bad in [&b"U"[..], b"u", b"1-2", b"*", b"", b"G0000000000000"] {
            assert_eq!(
                base32::decode_u64(bad).unwrap_err().code(),
                ErrorCode::InvalidBase32,
                "{bad:?}"
            );
        }
        assert_eq!(
            base32::decode_u64(b"G000000000000"),
            Err(Error::InvalidBase32("value does not fit"))
        );
        assert_eq!(
            base32::decode_u128(b"80000000000000000000000000"),
            Err(Error::InvalidBase32("value does not fit"))
        );
    }

    #[test]
    fn hex_numbers_and_bytes() {
        let mut b = [0u8; hex::U64_LEN];
        assert_eq!(hex::encode_u64(0xDEAD_BEEF, &mut b), "00000000deadbeef");
        let mut w = [0u8; hex::U128_LEN];
        assert_eq!(
            hex::encode_u128(1 << 127, &mut w),
            "80000000000000000000000000000000"
        );
        assert_eq!(hex::decode_u64(b"DeadBeef"), Ok(0xDEAD_BEEF));
        assert_eq!(
            hex::decode_u128(b"ffffffffffffffffffffffffffffffff"),
            Ok(u128::MAX)
        );
        assert_eq!(
            hex::decode_u64(b"10000000000000000"),
            Err(Error::InvalidHex("too many characters"))
        );
        assert_eq!(
            hex::decode_u64(b"0x1"),
            Err(Error::InvalidHex("invalid character"))
        );

        let mut out = [0u8; 6];
        assert_eq!(
            hex::encode_bytes(&[0x00, 0xAB, 0xFF], &mut out),
            Ok("00abff")
        );
        let mut short = [0u8; 5];
        assert_eq!(
            hex::encode_bytes(&[0x00, 0xAB, 0xFF], &mut short),
            Err(Error::InvalidLength {
                expected: 6,
                got: 5
            })
        );
        let mut bytes = [0u8; 3];
        assert_eq!(hex::decode_bytes(b"00AbfF", &mut bytes), Ok(()));
        assert_eq!(bytes, [0x00, 0xAB, 0xFF]);
        assert_eq!(
            hex::decode_bytes(b"00abf", &mut bytes).unwrap_err().code(),
            ErrorCode::InvalidHex
        );
        assert_eq!(
            hex::decode_bytes(b"00abfg", &mut bytes),
            Err(Error::InvalidHex("invalid character"))
        );
        // Zero bytes is a valid, empty conversion.
        assert_eq!(hex::decode_bytes(b"", &mut []), Ok(()));
        assert_eq!(hex::encode_bytes(&[], &mut []), Ok(""));
    }

    #[test]
    fn decimal_unpadded() {
        let mut b = [0u8; decimal::U64_LEN];
        assert_eq!(decimal::encode_u64(0, &mut b), "0");
        assert_eq!(decimal::encode_u64(10, &mut b), "10");
        assert_eq!(
            decimal::encode_u64(u64::MAX, &mut b),
            "18446744073709551615"
        );
        assert_eq!(decimal::decode_u64(b"18446744073709551615"), Ok(u64::MAX));
        assert_eq!(decimal::decode_u64(b"007"), Ok(7));
        assert_eq!(
            decimal::decode_u64(b"18446744073709551616"),
            Err(Error::InvalidDecimal("value does not fit"))
        );
        for bad in [
            &b""[..],
            b"+1",
            b"-1",
            b" 1",
            b"1.0",
            b"000000000000000000001",
        ] {
            assert_eq!(
                decimal::decode_u64(bad).unwrap_err().code(),
                ErrorCode::InvalidDecimal,
                "{bad:?}"
            );
        }
    }
}
