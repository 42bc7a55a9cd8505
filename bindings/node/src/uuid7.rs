//! UUIDv7 (RFC 9562): the generator `Uuid7s`, the process-wide `uuid7Next`, and the codecs the
//! package's JavaScript wraps (text as the `uuid` package writes it: lower-case, hyphenated).

use std::sync::OnceLock;

use chrono::{DateTime, Utc};
use idforge::{Uuid7, Uuid7s as RtUuid7s};
use napi::bindgen_prelude::{BigInt, Either3, Uint8Array, Uint8ArraySlice};
use napi_derive::napi;

use crate::args::{uint64, write};
use crate::error::{OrThrow, Result, to_js};
use crate::time_ordered::{self, TimeOrderedOptions};

static SHARED: OnceLock<RtUuid7s> = OnceLock::new();

fn text(id: Uuid7) -> String {
    let mut buf = [0u8; Uuid7::TEXT_LEN];
    id.to_text(&mut buf).to_owned()
}

/// A placeholder the batch calls overwrite.
fn blank() -> Result<Uuid7> {
    Uuid7::from_fields(0, 0, 0).or_throw()
}

/// The fields of a UUIDv7.
#[napi(object, object_from_js = false)]
pub struct Uuid7Parts {
    /// The time, in Unix milliseconds (48 bits).
    pub time_ms: f64,
    /// The time as a `Date`.
    pub time: DateTime<Utc>,
    /// The 12 bits after the version (the top of idforge's counter).
    pub rand_a: u32,
    /// The 62 bits after the variant.
    pub rand_b: BigInt,
}

/// UUIDv7s (RFC 9562): strictly increasing, from an 18-bit counter that starts each
/// millisecond at a random value below 2^17, and 56 random bits.
// The name given, since napi-rs would register `Uuid7S`.
#[napi(js_name = "Uuid7s")]
pub struct Uuid7s {
    inner: RtUuid7s,
}

#[napi]
impl Uuid7s {
    /// A generator; `stateFile` keeps its ids increasing across restarts.
    #[napi(constructor)]
    pub fn new(options: Option<TimeOrderedOptions>) -> Result<Uuid7s> {
        Ok(Uuid7s {
            inner: time_ordered::build(options)?,
        })
    }

    /// The next UUID, lower-case hyphenated text.
    #[napi]
    pub fn next(&self) -> Result<String> {
        Ok(text(self.inner.next().or_throw()?))
    }

    /// `n` fresh UUIDs, increasing.
    #[napi]
    pub fn next_many(&self, n: f64) -> Result<Vec<String>> {
        time_ordered::many(&self.inner, n, blank()?, text)
    }

    /// Internal (the package's `nextBytes` uses it): fills `buf` (a multiple of 16 bytes) with
    /// fresh UUIDs; returns how many.
    #[napi(ts_args_type = "buf: Uint8Array")]
    pub fn fill(&self, mut buf: Uint8ArraySlice) -> Result<u32> {
        // SAFETY: JavaScript runs on this thread and is inside this call, so nothing else reads
        // or writes the array's memory until it returns.
        let out = unsafe { buf.as_mut() };
        time_ordered::fill(&self.inner, out, blank()?, Uuid7::to_bytes)
    }

    /// The high-water time (Unix ms) in the state file, or `null` without one.
    #[napi(getter)]
    pub fn persisted_ms(&self) -> Option<f64> {
        self.inner.persisted_ms().map(|ms| ms as f64)
    }
}

/// Internal (the package's `uuid7()`): a fresh UUIDv7 from the process-wide generator.
#[napi]
pub fn uuid7_next() -> Result<String> {
    Ok(text(time_ordered::shared(&SHARED)?.next().or_throw()?))
}

/// Internal (the package's `uuid7Bytes()`): fills `buf` (a multiple of 16 bytes) with fresh
/// UUIDv7s from the process-wide generator; returns how many.
#[napi(ts_args_type = "buf: Uint8Array")]
pub fn uuid7_fill(mut buf: Uint8ArraySlice) -> Result<u32> {
    // SAFETY: JavaScript runs on this thread and is inside this call, so nothing else reads or
    // writes the array's memory until it returns.
    let out = unsafe { buf.as_mut() };
    time_ordered::fill(
        time_ordered::shared(&SHARED)?,
        out,
        blank()?,
        Uuid7::to_bytes,
    )
}

/// Writes into `out` (16 bytes) the UUIDv7 written as text (hyphenated, 32 hex digits, in
/// braces or after `urn:uuid:`, either case); another version or variant throws
/// `IDFORGE_INVALID_UUID`.
#[napi(ts_args_type = "text: string, out: Uint8Array")]
pub fn uuid7_parse(text: String, out: Uint8ArraySlice) -> Result<()> {
    write(out, &Uuid7::parse(&text).or_throw()?.to_bytes())
}

/// The lower-case hyphenated text of the UUIDv7 in `bytes` (16), checked.
#[napi]
pub fn uuid7_to_string(bytes: Uint8Array) -> Result<String> {
    Ok(text(Uuid7::try_from_slice(&bytes).or_throw()?))
}

/// The fields of the UUIDv7 in `bytes` (16), checked.
#[napi]
pub fn uuid7_decompose(bytes: Uint8Array) -> Result<Uuid7Parts> {
    let id = Uuid7::try_from_slice(&bytes).or_throw()?;
    Ok(Uuid7Parts {
        time_ms: id.time_ms() as f64,
        time: time_ordered::date(id.time_ms()),
        rand_a: u32::from(id.rand_a()),
        rand_b: BigInt::from(id.rand_b()),
    })
}

/// Writes into `out` (16 bytes) the UUIDv7 of `(timeMs, randA, randB)` (48, 12, 62 bits).
#[napi(
    ts_args_type = "timeMs: bigint | number | string, randA: number, randB: bigint | number | string, out: Uint8Array"
)]
pub fn uuid7_compose(
    time_ms: Either3<BigInt, f64, String>,
    rand_a: u32,
    rand_b: Either3<BigInt, f64, String>,
    out: Uint8ArraySlice,
) -> Result<()> {
    let rand_a = u16::try_from(rand_a).map_err(|_| {
        to_js(idforge::CoreError::InvalidArgument(
            "rand_a must fit 12 bits",
        ))
    })?;
    let id = Uuid7::from_fields(uint64(time_ms)?, rand_a, uint64(rand_b)?).or_throw()?;
    write(out, &id.to_bytes())
}
