//! # idforge-core
//!
//! The algorithms of idforge, with no standard library and no allocation: time, entropy and I/O
//! are passed in by the caller (the `idforge` runtime crate, or your own embedding).
//!
//! - [`tick`]: the lock-free (tick, sequence) state behind snowflake and flake-128.
//! - [`snowflake`]: 64-bit ids in any common layout.
//! - [`layout_text`]: layouts and orders as text (preset names and `key=value` specs).
//! - [`objectid`]: MongoDB ObjectIds (12 bytes).
//! - [`flake128`]: Boundary-style 128-bit flake ids.
//! - [`uuid7`] and [`ulid`]: RFC 9562 UUIDv7 and ULIDs, from the [`stamp`] generator.
//! - [`segment`]: the double-buffered segment (range) client of Leaf-style allocators.
//! - [`encode`]: base62, Crockford base32, hex and decimal into caller buffers.
//! - [`error`]: the one error type and its stable codes.
//! - [`id_text`]: the text forms of 64-bit ids (decimal, base32, base62).
//!
//! Optional features, off by default: `serde` (the ids as text in JSON, bytes in binary formats;
//! `with_serde`'s helpers for `u64` ids), `uuid` (conversions to and from `uuid::Uuid`) and
//! `sqlx` (`Type`, `Encode`, `Decode` in PostgreSQL and SQLite; needs std).
#![no_std]

// sqlx's traits need std (its argument buffers, boxed errors); only with that feature.
#[cfg(feature = "sqlx")]
extern crate std;

// The impl macros first: a `macro_rules!` is visible only after its module.
#[macro_use]
mod id_traits;

pub mod encode;
pub mod error;
mod error_code;
pub mod flake128;
pub mod id_text;
pub mod layout_text;
pub mod objectid;
pub mod segment;
pub mod snowflake;
pub mod stamp;
mod sync;
pub mod tick;
pub mod ulid;
pub mod uuid7;
#[cfg(feature = "serde")]
pub mod with_serde;
#[cfg(feature = "sqlx")]
mod with_sqlx;
#[cfg(feature = "uuid")]
mod with_uuid;

pub use error::{Error, ErrorCode, Result};
