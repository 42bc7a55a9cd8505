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
#![no_std]

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

pub use error::{Error, ErrorCode, Result};
