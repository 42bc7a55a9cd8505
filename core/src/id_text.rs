//! The text forms of a 64-bit id (a snowflake, or any `u64` key): what an application writes in
//! JSON, a URL or a log line, and reads back.
//!
//! - [`TextForm::Decimal`]: the number's digits, as a string so that JSON readers with 53-bit
//!   numbers (JavaScript) keep every bit. Variable width, so text order is not id order.
//! - [`TextForm::Base32`]: 13 characters of Crockford base32, TSID's form. Upper case out;
//!   either case in. Fixed width, so text order (either case, compared case-blind) is id order.
//! - [`TextForm::Base62`]: 11 characters of `0-9A-Za-z`. Fixed width; byte order (not a
//!   case-blind collation) is id order.
//!
//! Each id has exactly one text per form (up to the case of base32), so two texts name the same
//! id only if they are equal: the parsers take only that text. They refuse a sign, spaces,
//! leading zeros in decimal, any other width in base32 and base62, a value above `u64::MAX`, and
//! Crockford's look-alike letters `I`, `L`, `O` and `U` (which [`crate::encode::base32`], for
//! ULIDs, reads as aliases): an id read from a user is then never silently another spelling.
//!
//! ```
//! use idforge_core::id_text::{self, TextForm};
//!
//! let mut buf = [0u8; id_text::MAX_LEN];
//! let id = 7_301_234_567_890_123_456;
//! let text = id_text::format(id, TextForm::Base32, &mut buf);
//! assert_eq!(text, "6AMSJ4ZME9EP0");
//! assert_eq!(id_text::parse(b"6amsj4zme9ep0", TextForm::Base32), Ok(id));
//! assert!(id_text::parse(b"6AMSJ4ZME9EPO", TextForm::Base32).is_err());
//! ```

use core::fmt;
use core::str::FromStr;

use crate::encode::{ascii, base32, base62, decimal};
use crate::error::{Error, Result};

/// The most bytes any form writes (decimal's 20); the size of the buffer [`format`] fills.
pub const MAX_LEN: usize = decimal::U64_LEN;

/// A text form of a 64-bit id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TextForm {
    /// Plain digits, no leading zeros (`"7301234567890123456"`).
    Decimal,
    /// 13 Crockford base32 characters (`"6AMSJ4ZME9EP0"`), sortable.
    Base32,
    /// 11 characters of `0-9A-Za-z` (`"8hLjMy0Qexc"`), sortable byte-wise.
    Base62,
}

impl TextForm {
    /// Every form, in the order of their numbers.
    pub const ALL: [TextForm; 3] = [TextForm::Decimal, TextForm::Base32, TextForm::Base62];

    /// The form's name: `decimal`, `base32` or `base62`.
    pub const fn name(self) -> &'static str {
        match self {
            TextForm::Decimal => "decimal",
            TextForm::Base32 => "base32",
            TextForm::Base62 => "base62",
        }
    }

    /// The form's number across the C ABI: 0, 1, 2 in the order of [`TextForm::ALL`].
    pub const fn number(self) -> u32 {
        self as u32
    }

    /// The form numbered `n` ([`TextForm::number`]).
    pub fn from_number(n: u32) -> Result<TextForm> {
        TextForm::ALL
            .get(n as usize)
            .copied()
            .ok_or(Error::InvalidArgument(
                "the text form is 0 (decimal), 1 (base32) or 2 (base62)",
            ))
    }

    /// The form's fixed width, or `None` for decimal (1 to 20 characters).
    pub const fn width(self) -> Option<usize> {
        match self {
            TextForm::Decimal => None,
            TextForm::Base32 => Some(base32::U64_LEN),
            TextForm::Base62 => Some(base62::U64_LEN),
        }
    }

    /// Whether text order is id order: true for the fixed-width forms.
    pub const fn sorts(self) -> bool {
        self.width().is_some()
    }
}

impl fmt::Display for TextForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TextForm {
    type Err = Error;

    /// Reads a form's name, in any case.
    fn from_str(s: &str) -> Result<TextForm> {
        TextForm::ALL
            .into_iter()
            .find(|form| form.name().eq_ignore_ascii_case(s))
            .ok_or(Error::InvalidArgument(
                "the text form is decimal, base32 or base62",
            ))
    }
}

/// Writes `id` in `form` into `buf` and returns the text (a view of part of `buf`).
pub fn format(id: u64, form: TextForm, buf: &mut [u8; MAX_LEN]) -> &str {
    match form {
        TextForm::Decimal => decimal::encode_u64(id, buf),
        TextForm::Base32 => {
            let mut text = [0u8; base32::U64_LEN];
            base32::encode_u64(id, &mut text);
            buf[..base32::U64_LEN].copy_from_slice(&text);
            ascii(&buf[..base32::U64_LEN])
        }
        TextForm::Base62 => {
            let mut text = [0u8; base62::U64_LEN];
            base62::encode_u64(id, &mut text);
            buf[..base62::U64_LEN].copy_from_slice(&text);
            ascii(&buf[..base62::U64_LEN])
        }
    }
}

/// Reads the one text of an id in `form` (see the module's rules), with the form's error:
/// [`Error::InvalidDecimal`], [`Error::InvalidBase32`] or [`Error::InvalidBase62`].
pub fn parse(text: &[u8], form: TextForm) -> Result<u64> {
    match form {
        TextForm::Decimal => {
            if text.len() > 1 && text[0] == b'0' {
                return Err(Error::InvalidDecimal("leading zero"));
            }
            decimal::decode_u64(text)
        }
        TextForm::Base32 => {
            if text.len() != base32::U64_LEN {
                return Err(Error::InvalidBase32("an id is 13 characters"));
            }
            // The shared decoder reads Crockford's aliases; an id's text has none of them.
            if text
                .iter()
                .any(|b| matches!(b.to_ascii_uppercase(), b'I' | b'L' | b'O' | b'U'))
            {
                return Err(Error::InvalidBase32("invalid character"));
            }
            base32::decode_u64(text)
        }
        TextForm::Base62 => {
            if text.len() != base62::U64_LEN {
                return Err(Error::InvalidBase62("an id is 11 characters"));
            }
            base62::decode_u64(text)
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn text(id: u64, form: TextForm) -> ([u8; MAX_LEN], usize) {
        let mut buf = [0u8; MAX_LEN];
        let len = format(id, form, &mut buf).len();
        (buf, len)
    }

    #[test]
    fn every_form_round_trips_the_edges() {
        for id in [
            0,
            1,
            31,
            32,
            61,
            62,
            1 << 53,
            (1 << 53) + 1,
            u64::MAX - 1,
            u64::MAX,
        ] {
            for form in TextForm::ALL {
                let mut buf = [0u8; MAX_LEN];
                let s = format(id, form, &mut buf);
                assert!(s.is_ascii());
                if let Some(width) = form.width() {
                    assert_eq!(s.len(), width, "{form} {id}");
                }
                assert_eq!(parse(s.as_bytes(), form), Ok(id), "{form} {s}");
            }
        }
    }

    #[test]
    fn fixed_width_forms_sort_like_ids() {
        let ids = [
            0u64,
            9,
            10,
            31,
            32,
            35,
            36,
            61,
            62,
            1 << 40,
            u64::MAX / 3,
            u64::MAX,
        ];
        for form in [TextForm::Base32, TextForm::Base62] {
            for pair in ids.windows(2) {
                let (a, la) = text(pair[0], form);
                let (b, lb) = text(pair[1], form);
                assert!(a[..la] < b[..lb], "{form} {pair:?}");
            }
        }
    }

    #[test]
    fn one_text_per_id() {
        let cases: [(&[u8], TextForm, ErrorCode); 12] = [
            (b"", TextForm::Decimal, ErrorCode::InvalidDecimal),
            (b"01", TextForm::Decimal, ErrorCode::InvalidDecimal),
            (b"+1", TextForm::Decimal, ErrorCode::InvalidDecimal),
            (b" 1", TextForm::Decimal, ErrorCode::InvalidDecimal),
            (
                b"18446744073709551616",
                TextForm::Decimal,
                ErrorCode::InvalidDecimal,
            ),
            (b"000000000001", TextForm::Base32, ErrorCode::InvalidBase32),
            (b"000000000000I", TextForm::Base32, ErrorCode::InvalidBase32),
            (b"000000000000l", TextForm::Base32, ErrorCode::InvalidBase32),
            (b"000000000000U", TextForm::Base32, ErrorCode::InvalidBase32),
            (b"G000000000000", TextForm::Base32, ErrorCode::InvalidBase32),
            (b"LygHa16AHYG", TextForm::Base62, ErrorCode::InvalidBase62),
            (b"0000000001", TextForm::Base62, ErrorCode::InvalidBase62),
        ];
        for (input, form, code) in cases {
            let err = parse(input, form).expect_err("refused");
            assert_eq!(err.code(), code, "{input:?}");
        }
        assert_eq!(parse(b"0", TextForm::Decimal), Ok(0));
        assert_eq!(parse(b"fZZZZZZZZZZZZ", TextForm::Base32), Ok(u64::MAX));
    }

    #[test]
    fn names_and_numbers() {
        for form in TextForm::ALL {
            assert_eq!(form.name().parse(), Ok(form));
            assert_eq!(form.name().to_ascii_uppercase().parse(), Ok(form));
            assert_eq!(TextForm::from_number(form.number()), Ok(form));
        }
        assert!("base64".parse::<TextForm>().is_err());
        assert!(TextForm::from_number(3).is_err());
    }
}
