//! A model with idforge ids as sqlx and serde see it: the example of docs/frameworks.md's Rust
//! section, and what `tests/sqlx.rs` inserts, reads back and round-trips through JSON.

use idforge::{Flake128, ObjectId, Ulid, Uuid7};
use serde::{Deserialize, Serialize};

/// One row: a snowflake primary key and one id of every other kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Order {
    /// The snowflake id: a `BIGINT` column, decimal text in JSON (JavaScript keeps every digit).
    #[serde(with = "idforge::with_serde::decimal")]
    pub id: u64,
    /// The same id's short form in JSON (13 base32 characters).
    #[serde(with = "idforge::with_serde::base32")]
    pub short: u64,
    /// A UUIDv7: `uuid` in PostgreSQL, `TEXT` in SQLite.
    pub reference: Uuid7,
    /// A ULID: text.
    pub ulid: Ulid,
    /// An ObjectId: 12 bytes.
    pub oid: ObjectId,
    /// A flake-128 id: 16 bytes.
    pub flake: Flake128,
}
