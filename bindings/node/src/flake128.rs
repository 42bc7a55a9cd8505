//! Flake-128 codecs and generators. The package's `Flake128` value class is JavaScript over the
//! 16 bytes these functions make and read.

use std::sync::OnceLock;

use chrono::{DateTime, Utc};
use idforge::Flake128 as CoreFlake128;
use idforge::{Flake128s, WorkerId};
use napi::bindgen_prelude::{BigInt, Either, Either3, Uint8Array, Uint8ArraySlice};
use napi_derive::napi;

use crate::args::{uint, uint64};
use crate::error::{OrThrow, Result, invalid_argument, to_js};

fn put(out: Uint8ArraySlice, id: CoreFlake128) -> Result<()> {
    crate::args::write(out, &id.to_bytes())
}

fn parse(bytes: &[u8]) -> Result<CoreFlake128> {
    CoreFlake128::try_from_slice(bytes).or_throw()
}

/// The fields of a flake-128 id.
#[napi(object, object_from_js = false)]
pub struct Flake128Parts {
    /// The time, in Unix milliseconds.
    pub time_ms: f64,
    /// The time as a `Date`.
    pub time: DateTime<Utc>,
    /// The 48-bit worker id.
    pub worker: f64,
    /// The 16-bit sequence number.
    pub seq: u32,
}

/// Writes into `out` (16 bytes) a fresh flake-128 id from the process-wide generator (random
/// worker id).
#[napi(ts_args_type = "out: Uint8Array")]
pub fn flake128_next(out: Uint8ArraySlice) -> Result<()> {
    static SHARED: OnceLock<Flake128s> = OnceLock::new();
    let generator = match SHARED.get() {
        Some(g) => g,
        None => {
            let made = Flake128s::new(WorkerId::Random).or_throw()?;
            SHARED.get_or_init(|| made)
        }
    };
    put(out, generator.next().or_throw()?)
}

/// Writes into `out` (16 bytes) the id written in base62 (22 characters).
#[napi(ts_args_type = "text: string, out: Uint8Array")]
pub fn flake128_from_base62(text: String, out: Uint8ArraySlice) -> Result<()> {
    put(out, CoreFlake128::parse_base62(&text).or_throw()?)
}

/// Writes into `out` (16 bytes) the id written as 32 hex digits.
#[napi(ts_args_type = "text: string, out: Uint8Array")]
pub fn flake128_from_hex(text: String, out: Uint8ArraySlice) -> Result<()> {
    put(out, CoreFlake128::parse_hex(&text).or_throw()?)
}

/// Copies into `out` (16 bytes) `bytes`, which must be 16 bytes long.
#[napi(ts_args_type = "bytes: Uint8Array, out: Uint8Array")]
pub fn flake128_from_bytes(bytes: Uint8Array, out: Uint8ArraySlice) -> Result<()> {
    put(out, parse(&bytes)?)
}

/// The id in base62 (22 characters, sorts like the id).
#[napi]
pub fn flake128_to_base62(bytes: Uint8Array) -> Result<String> {
    let mut out = [0u8; CoreFlake128::BASE62_LEN];
    Ok(parse(&bytes)?.to_base62(&mut out).to_owned())
}

/// The fields of the id.
#[napi]
pub fn flake128_decompose(bytes: Uint8Array) -> Result<Flake128Parts> {
    let id = parse(&bytes)?;
    Ok(Flake128Parts {
        time_ms: id.time_ms() as f64,
        time: DateTime::from_timestamp_millis(id.time_ms() as i64).unwrap_or_default(),
        worker: id.worker() as f64,
        seq: u32::from(id.seq()),
    })
}

/// Writes into `out` (16 bytes) the id of `(timeMs, worker, seq)`.
#[napi(
    ts_args_type = "timeMs: bigint | number | string, worker: bigint | number | string, seq: number, out: Uint8Array"
)]
pub fn flake128_compose(
    time_ms: Either3<BigInt, f64, String>,
    worker: Either3<BigInt, f64, String>,
    seq: u32,
    out: Uint8ArraySlice,
) -> Result<()> {
    let seq = u16::try_from(seq).map_err(|_| {
        to_js(idforge::CoreError::SequenceOutOfRange {
            seq: u64::from(seq),
            max: u64::from(u16::MAX),
        })
    })?;
    put(
        out,
        CoreFlake128::from_parts(uint64(time_ms)?, uint64(worker)?, seq).or_throw()?,
    )
}

/// A flake-128 generator with a worker id of its own.
#[napi]
pub struct Flake128Generator {
    inner: Flake128s,
}

#[napi]
impl Flake128Generator {
    /// `worker`: `"random"` (default: 48 random bits), `"mac"` (the first MAC address), or a
    /// fixed 48-bit number.
    #[napi(constructor)]
    pub fn new(worker: Option<Either<String, f64>>) -> Result<Flake128Generator> {
        let worker = match worker {
            None => WorkerId::Random,
            Some(Either::A(kind)) if kind == "random" => WorkerId::Random,
            Some(Either::A(kind)) if kind == "mac" => WorkerId::Mac,
            Some(Either::A(_)) => {
                return Err(invalid_argument(
                    "worker must be 'random', 'mac' or a number",
                ));
            }
            Some(Either::B(n)) => WorkerId::Fixed(uint(n, "worker must be a 48-bit number")?),
        };
        Ok(Flake128Generator {
            inner: Flake128s::new(worker).or_throw()?,
        })
    }

    /// Writes the next id into `out` (16 bytes; the package wraps them in a `Flake128`).
    #[napi(ts_args_type = "out: Uint8Array")]
    pub fn next_into(&self, out: Uint8ArraySlice) -> Result<()> {
        put(out, self.inner.next().or_throw()?)
    }

    /// The worker id.
    #[napi(getter)]
    pub fn worker(&self) -> f64 {
        self.inner.worker() as f64
    }
}
