//! sqlx `Type`, `Encode` and `Decode` for the ids in PostgreSQL and SQLite (feature `sqlx`, off
//! by default; it brings in std). The column types are the ones every binding uses
//! (docs/frameworks.md), so a table written from Python, Go or the JVM reads here:
//!
//! | id | PostgreSQL | SQLite |
//! | --- | --- | --- |
//! | snowflake (`i64`, sqlx's own) | `bigint` | `INTEGER`/`BIGINT` |
//! | [`Uuid7`] | `uuid` | `TEXT` (the UUID's text) |
//! | [`Ulid`] | `text`/`varchar(26)` | `TEXT` |
//! | [`ObjectId`] | `bytea` (12 bytes) | `BLOB` |
//! | [`Flake128`] | `bytea` (16 bytes) | `BLOB` |
//!
//! Each sorts by creation in its column. A value that is not an id of the type (a UUID of
//! another version, a blob of another length) fails to decode with the parser's error.

use std::borrow::ToOwned;
use std::string::{String, ToString};
use std::vec::Vec;

use sqlx::error::BoxDynError;
use sqlx::postgres::types::Oid;
use sqlx::postgres::{PgArgumentBuffer, PgTypeInfo, PgValueFormat, PgValueRef};
use sqlx::{Decode, Encode, Postgres, Sqlite, Type, encode::IsNull};

use crate::flake128::Flake128;
use crate::objectid::ObjectId;
use crate::ulid::Ulid;
use crate::uuid7::Uuid7;

/// PostgreSQL's `uuid` type (a built-in OID: no lookup by name on first use).
const PG_UUID: Oid = Oid(2950);

impl Type<Postgres> for Uuid7 {
    fn type_info() -> PgTypeInfo {
        PgTypeInfo::with_oid(PG_UUID)
    }
}

impl Encode<'_, Postgres> for Uuid7 {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        // `uuid`'s binary form is its 16 bytes.
        buf.extend_from_slice(&self.to_bytes());
        Ok(IsNull::No)
    }
}

impl<'r> Decode<'r, Postgres> for Uuid7 {
    fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(match value.format() {
            PgValueFormat::Binary => Uuid7::try_from_slice(value.as_bytes()?)?,
            PgValueFormat::Text => Uuid7::parse(value.as_str()?)?,
        })
    }
}

/// Text ids (`Ulid` in both databases, `Uuid7` in SQLite): stored as their `Display` text,
/// read with `FromStr`.
macro_rules! as_text {
    ($ty:ty, $($db:ident),+) => {$(
        impl Type<$db> for $ty {
            fn type_info() -> <$db as sqlx::Database>::TypeInfo {
                <str as Type<$db>>::type_info()
            }
            fn compatible(ty: &<$db as sqlx::Database>::TypeInfo) -> bool {
                <str as Type<$db>>::compatible(ty)
            }
        }

        impl<'q> Encode<'q, $db> for $ty {
            fn encode_by_ref(
                &self,
                buf: &mut <$db as sqlx::Database>::ArgumentBuffer<'q>,
            ) -> Result<IsNull, BoxDynError> {
                <String as Encode<'q, $db>>::encode(self.to_string(), buf)
            }
        }

        impl<'r> Decode<'r, $db> for $ty {
            fn decode(value: <$db as sqlx::Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
                Ok(<&str as Decode<'r, $db>>::decode(value)?.parse::<$ty>()?)
            }
        }
    )+};
}

/// Binary ids (`ObjectId`, `Flake128`): stored as their bytes.
macro_rules! as_bytes {
    ($ty:ty, $bytes:ident, $($db:ident),+) => {$(
        impl Type<$db> for $ty {
            fn type_info() -> <$db as sqlx::Database>::TypeInfo {
                <[u8] as Type<$db>>::type_info()
            }
            fn compatible(ty: &<$db as sqlx::Database>::TypeInfo) -> bool {
                <[u8] as Type<$db>>::compatible(ty)
            }
        }

        impl<'q> Encode<'q, $db> for $ty {
            fn encode_by_ref(
                &self,
                buf: &mut <$db as sqlx::Database>::ArgumentBuffer<'q>,
            ) -> Result<IsNull, BoxDynError> {
                <Vec<u8> as Encode<'q, $db>>::encode(self.$bytes()[..].to_owned(), buf)
            }
        }

        impl<'r> Decode<'r, $db> for $ty {
            fn decode(value: <$db as sqlx::Database>::ValueRef<'r>) -> Result<Self, BoxDynError> {
                Ok(<$ty>::try_from_slice(<&[u8] as Decode<'r, $db>>::decode(value)?)?)
            }
        }
    )+};
}

as_text!(Ulid, Postgres, Sqlite);
as_text!(Uuid7, Sqlite);
as_bytes!(ObjectId, bytes, Postgres, Sqlite);
as_bytes!(Flake128, to_bytes, Postgres, Sqlite);
