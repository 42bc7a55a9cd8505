//! serde for the ids (feature `serde`, off by default; no allocation).
//!
//! [`ObjectId`], [`Flake128`], [`Uuid7`] and [`Ulid`] are their text in human-readable formats
//! (JSON, TOML, YAML: 24 hex digits, 22 base62 characters, the UUID's text, 26 Crockford
//! characters) and their bytes in binary ones (bincode, CBOR, MessagePack). They read back what
//! they write, with the parser's rules (a UUID of another version is refused).
//!
//! A snowflake id is a plain `u64`, which serde writes as a number: exact in Rust, but a
//! JavaScript reader keeps only 53 bits. The modules [`decimal`], [`base32`] and [`base62`] are
//! for `#[serde(with = "...")]` on such a field and write it in that text form instead (as a
//! `u64` in binary formats):
//!
//! ```
//! # #[cfg(feature = "serde")] {
//! #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
//! struct Order {
//!     #[serde(with = "idforge_core::with_serde::decimal")]
//!     id: u64,
//!     #[serde(with = "idforge_core::with_serde::base32")]
//!     parent: u64,
//! }
//! let order = Order { id: 7_301_234_567_890_123_456, parent: 7_301_234_567_890_123_456 };
//! let json = serde_json::to_string(&order).unwrap();
//! assert_eq!(json, r#"{"id":"7301234567890123456","parent":"6AMSJ4ZME9EP0"}"#);
//! assert_eq!(serde_json::from_str::<Order>(&json).unwrap(), order);
//! # }
//! ```

use core::fmt;
use core::marker::PhantomData;
use core::str::FromStr;

use serde::de::{self, Deserializer, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::flake128::Flake128;
use crate::id_text::{self, TextForm};
use crate::objectid::ObjectId;
use crate::ulid::Ulid;
use crate::uuid7::Uuid7;

/// An id type with a text form (`Display`/`FromStr`) and a fixed-size binary form.
trait TextAndBytes: fmt::Display + FromStr<Err = Error> + Sized {
    /// What the visitor expects, for serde's messages.
    const EXPECTING: &'static str;
    /// The id of its binary form.
    fn from_slice(bytes: &[u8]) -> Result<Self, Error>;
}

impl TextAndBytes for ObjectId {
    const EXPECTING: &'static str = "an ObjectId: 24 hex digits or 12 bytes";
    fn from_slice(bytes: &[u8]) -> Result<Self, Error> {
        ObjectId::try_from_slice(bytes)
    }
}

impl TextAndBytes for Flake128 {
    const EXPECTING: &'static str = "a flake-128 id: 22 base62 characters or 16 bytes";
    fn from_slice(bytes: &[u8]) -> Result<Self, Error> {
        Flake128::try_from_slice(bytes)
    }
}

impl TextAndBytes for Uuid7 {
    const EXPECTING: &'static str = "a UUIDv7: its text or 16 bytes";
    fn from_slice(bytes: &[u8]) -> Result<Self, Error> {
        Uuid7::try_from_slice(bytes)
    }
}

impl TextAndBytes for Ulid {
    const EXPECTING: &'static str = "a ULID: 26 Crockford base32 characters or 16 bytes";
    fn from_slice(bytes: &[u8]) -> Result<Self, Error> {
        Ulid::try_from_slice(bytes)
    }
}

struct IdVisitor<T>(PhantomData<T>);

impl<T: TextAndBytes> Visitor<'_> for IdVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        v.parse().map_err(E::custom)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<T, E> {
        T::from_slice(v).map_err(E::custom)
    }
}

fn serialize_id<T: TextAndBytes, S: Serializer>(
    id: &T,
    bytes: &[u8],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    if serializer.is_human_readable() {
        serializer.collect_str(id)
    } else {
        serializer.serialize_bytes(bytes)
    }
}

fn deserialize_id<'de, T: TextAndBytes, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    if d.is_human_readable() {
        d.deserialize_str(IdVisitor(PhantomData))
    } else {
        d.deserialize_bytes(IdVisitor(PhantomData))
    }
}

macro_rules! text_and_bytes_serde {
    ($ty:ty, $bytes:ident) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serialize_id(self, &self.$bytes(), serializer)
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                deserialize_id(d)
            }
        }
    };
}

text_and_bytes_serde!(ObjectId, bytes);
text_and_bytes_serde!(Flake128, to_bytes);
text_and_bytes_serde!(Uuid7, to_bytes);
text_and_bytes_serde!(Ulid, to_bytes);

/// Reads a `u64` id from its text in one form; the decimal form also takes a JSON number.
struct U64Visitor(TextForm);

impl Visitor<'_> for U64Visitor {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a 64-bit id as {} text", self.0)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
        id_text::parse(v.as_bytes(), self.0).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        match self.0 {
            TextForm::Decimal => Ok(v),
            _ => Err(E::invalid_type(de::Unexpected::Unsigned(v), &self)),
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        match (self.0, u64::try_from(v)) {
            (TextForm::Decimal, Ok(v)) => Ok(v),
            _ => Err(E::invalid_value(de::Unexpected::Signed(v), &self)),
        }
    }
}

fn serialize_u64<S: Serializer>(id: u64, form: TextForm, s: S) -> Result<S::Ok, S::Error> {
    if s.is_human_readable() {
        let mut buf = [0u8; id_text::MAX_LEN];
        s.serialize_str(id_text::format(id, form, &mut buf))
    } else {
        s.serialize_u64(id)
    }
}

fn deserialize_u64<'de, D: Deserializer<'de>>(d: D, form: TextForm) -> Result<u64, D::Error> {
    if d.is_human_readable() {
        d.deserialize_any(U64Visitor(form))
    } else {
        u64::deserialize(d)
    }
}

macro_rules! u64_form {
    ($name:ident, $form:expr, $doc:literal) => {
        #[doc = $doc]
        pub mod $name {
            use super::{Deserializer, Serializer, TextForm, deserialize_u64, serialize_u64};

            /// Writes the id in this form (a `u64` in binary formats).
            pub fn serialize<S: Serializer>(id: &u64, s: S) -> Result<S::Ok, S::Error> {
                serialize_u64(*id, $form, s)
            }

            /// Reads the id's one text in this form (a `u64` in binary formats).
            pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
                deserialize_u64(d, $form)
            }
        }
    };
}

u64_form!(
    decimal,
    TextForm::Decimal,
    "A `u64` id as its decimal text (`\"7301234567890123456\"`), the JSON form every binding \
     writes; reading also takes a JSON number."
);
u64_form!(
    base32,
    TextForm::Base32,
    "A `u64` id as its 13 Crockford base32 characters (`\"6AMSJ4ZME9EP0\"`), read in either case."
);
u64_form!(
    base62,
    TextForm::Base62,
    "A `u64` id as its 11 base62 characters (`\"8hLjMy0Qexc\"`)."
);
