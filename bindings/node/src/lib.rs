//! The native addon of the npm package `idforge` (napi-rs): thin glue over the runtime. The
//! package's JavaScript (`node/index.js`) adds the id value classes and serves single ids from
//! small batches; `node/native.d.ts` is generated from this crate by the napi CLI.

// napi-derive registers the exports only outside `cfg(test)`, which clippy's `--all-targets`
// also checks; there everything looks unused.
#![cfg_attr(test, allow(dead_code))]

mod args;
mod describe;
mod error;
mod flake128;
mod id_text;
mod layout;
mod millis;
mod objectid;
mod segments;
mod snowflake;
mod task;
mod time_ordered;
mod ulid;
mod uuid7;

use napi_derive::napi;

/// The package version (the crate's).
#[napi]
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The most ids one batch call makes (the runtime's cap, 2^27), for the package's JavaScript.
#[napi]
pub const MAX_BATCH: u32 = idforge::MAX_BATCH as u32;

/// `n` if it is a batch size (an integer from 0 to 2^27), else throws `IDFORGE_INVALID_ARGUMENT`:
/// the runtime's one rule, for the package's JavaScript batch calls.
#[napi]
pub fn batch_len(n: f64) -> error::Result<u32> {
    args::count(n).map(|n| n as u32)
}

/// Does nothing: the cost of one call into the addon, the floor of the benchmarks.
#[napi]
pub fn noop() {}
