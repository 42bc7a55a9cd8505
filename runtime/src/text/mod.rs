//! Ids and times as text. Here: the text forms of 64-bit ids as `String`s: decimal
//! (JSON-safe), 13-character Crockford base32 (TSID's form) and 11-character base62 (the rules,
//! and the buffer-filling versions, are [`idforge_core::id_text`]'s). [`id`]: any id's text and
//! fields; [`time`]: RFC 3339 times.
//!
//! ```
//! use idforge::text::{TextForm, id_from_text, id_to_text};
//!
//! let text = id_to_text(7_301_234_567_890_123_456, TextForm::Base32);
//! assert_eq!(text, "6AMSJ4ZME9EP0");
//! assert_eq!(id_from_text("6amsj4zme9ep0", TextForm::Base32).unwrap(), 7_301_234_567_890_123_456);
//! ```

pub mod id;
pub mod time;

pub use idforge_core::id_text::{MAX_LEN, TextForm, format, parse};

use crate::Result;

/// `id` written in `form`.
pub fn id_to_text(id: u64, form: TextForm) -> String {
    let mut buf = [0u8; MAX_LEN];
    format(id, form, &mut buf).to_owned()
}

/// The id whose text in `form` is `text`: only that one text is accepted (base32 in either
/// case), else the form's error ([`ErrorCode::InvalidDecimal`](crate::ErrorCode::InvalidDecimal),
/// `InvalidBase32` or `InvalidBase62`).
pub fn id_from_text(text: &str, form: TextForm) -> Result<u64> {
    Ok(parse(text.as_bytes(), form)?)
}
