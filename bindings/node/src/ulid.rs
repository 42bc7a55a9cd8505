//! ULID: the generator `Ulids`, the process-wide `ulidNext`, and the codecs (26 upper-case
//! characters of Crockford base32).

use std::sync::OnceLock;

use chrono::{DateTime, Utc};
use idforge::{Ulid, Ulids as RtUlids};
use napi::bindgen_prelude::{BigInt, Either3, Uint8Array, Uint8ArraySlice};
use napi_derive::napi;

use crate::args::{uint64, write};
use crate::error::{OrThrow, Result, invalid_argument};
use crate::time_ordered::{self, TimeOrderedOptions};

static SHARED: OnceLock<RtUlids> = OnceLock::new();

fn text(id: Ulid) -> String {
    let mut buf = [0u8; Ulid::TEXT_LEN];
    id.to_text(&mut buf).to_owned()
}

/// The fields of a ULID.
#[napi(object, object_from_js = false)]
pub struct UlidParts {
    /// The time, in Unix milliseconds (48 bits).
    pub time_ms: f64,
    /// The time as a `Date`.
    pub time: DateTime<Utc>,
    /// The 80 bits after the time.
    pub random: BigInt,
}

/// ULIDs, strictly increasing (the ULID spec's monotonic mode): the engine of `Uuid7s`.
#[napi]
pub struct Ulids {
    inner: RtUlids,
}

#[napi]
impl Ulids {
    /// A generator; `stateFile` keeps its ids increasing across restarts.
    #[napi(constructor)]
    pub fn new(options: Option<TimeOrderedOptions>) -> Result<Ulids> {
        Ok(Ulids {
            inner: time_ordered::build(options)?,
        })
    }

    /// The next ULID.
    #[napi]
    pub fn next(&self) -> Result<String> {
        Ok(text(self.inner.next().or_throw()?))
    }

    /// `n` fresh ULIDs, increasing.
    #[napi]
    pub fn next_many(&self, n: f64) -> Result<Vec<String>> {
        time_ordered::many(&self.inner, n, Ulid::from_u128(0), text)
    }

    /// The high-water time (Unix ms) in the state file, or `null` without one.
    #[napi(getter)]
    pub fn persisted_ms(&self) -> Option<f64> {
        self.inner.persisted_ms().map(|ms| ms as f64)
    }
}

/// Internal (the package's `ulid()`): a fresh ULID from the process-wide generator.
#[napi]
pub fn ulid_next() -> Result<String> {
    Ok(text(time_ordered::shared(&SHARED)?.next().or_throw()?))
}

/// Writes into `out` (16 bytes) the ULID written as text (26 characters, either case,
/// Crockford's aliases); anything else throws `IDFORGE_INVALID_BASE32`.
#[napi(ts_args_type = "text: string, out: Uint8Array")]
pub fn ulid_parse(text: String, out: Uint8ArraySlice) -> Result<()> {
    write(out, &Ulid::parse(&text).or_throw()?.to_bytes())
}

/// The text of the ULID in `bytes` (16, any 128 bits).
#[napi]
pub fn ulid_to_string(bytes: Uint8Array) -> Result<String> {
    Ok(text(Ulid::try_from_slice(&bytes).or_throw()?))
}

/// The fields of the ULID in `bytes` (16).
#[napi]
pub fn ulid_decompose(bytes: Uint8Array) -> Result<UlidParts> {
    let id = Ulid::try_from_slice(&bytes).or_throw()?;
    Ok(UlidParts {
        time_ms: id.time_ms() as f64,
        time: time_ordered::date(id.time_ms()),
        random: BigInt {
            sign_bit: false,
            words: vec![id.random() as u64, (id.random() >> 64) as u64],
        },
    })
}

/// Writes into `out` (16 bytes) the ULID of `(timeMs, random)` (48 and 80 bits).
#[napi(ts_args_type = "timeMs: bigint | number | string, random: bigint, out: Uint8Array")]
pub fn ulid_compose(
    time_ms: Either3<BigInt, f64, String>,
    random: BigInt,
    out: Uint8ArraySlice,
) -> Result<()> {
    let (negative, value, lossless) = random.get_u128();
    if negative || !lossless {
        return Err(invalid_argument("the random part must fit 80 bits"));
    }
    write(
        out,
        &Ulid::from_parts(uint64(time_ms)?, value)
            .or_throw()?
            .to_bytes(),
    )
}
