//! `Flake128` values and `Flake128Generator`.

use std::sync::Arc;

use idforge::{Flake128 as RtFlake128, Flake128s, WorkerId};

use crate::error::{IdforgeError, Result};

/// The fields of a flake-128 id.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Flake128Parts {
    /// Unix milliseconds.
    pub time_ms: i64,
    /// The 48-bit worker id.
    pub worker: i64,
    /// The 16-bit sequence.
    pub seq: i32,
}

/// A flake-128 id (64-bit ms | 48-bit worker | 16-bit sequence). Equal, hashed and ordered as
/// its 128-bit value; `toString()` is its base62 text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, uniffi::Object)]
#[uniffi::export(Eq, Hash, Ord, Display)]
pub struct Flake128 {
    inner: RtFlake128,
}

fn wrap(inner: RtFlake128) -> Arc<Flake128> {
    Arc::new(Flake128 { inner })
}

#[uniffi::export]
impl Flake128 {
    /// The id of `time_ms`, `worker` (48 bits) and `seq` (16 bits).
    #[uniffi::constructor]
    pub fn compose(time_ms: i64, worker: i64, seq: i32) -> Result<Arc<Flake128>> {
        let seq = u16::try_from(seq).map_err(|_| {
            IdforgeError::SequenceOutOfRange("seq must be between 0 and 65535".to_owned())
        })?;
        Ok(wrap(RtFlake128::from_parts(
            time_ms as u64,
            worker as u64,
            seq,
        )?))
    }

    /// Parses 32 hex digits.
    #[uniffi::constructor]
    pub fn from_hex(hex: String) -> Result<Arc<Flake128>> {
        Ok(wrap(RtFlake128::parse_hex(&hex)?))
    }

    /// Parses the 22-character base62 text.
    #[uniffi::constructor]
    pub fn from_base62(text: String) -> Result<Arc<Flake128>> {
        Ok(wrap(RtFlake128::parse_base62(&text)?))
    }

    /// Takes exactly 16 big-endian bytes.
    #[uniffi::constructor]
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Arc<Flake128>> {
        Ok(wrap(RtFlake128::try_from_slice(&bytes)?))
    }

    /// Parses the unsigned 128-bit value in decimal.
    #[uniffi::constructor]
    pub fn from_decimal(text: String) -> Result<Arc<Flake128>> {
        // Digits only: `u128::from_str` would also take a leading '+'.
        let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
        match text.parse::<u128>() {
            Ok(v) if digits => Ok(wrap(RtFlake128::from_u128(v))),
            _ => Err(IdforgeError::InvalidDecimal(format!(
                "not an unsigned 128-bit decimal: {text:?}"
            ))),
        }
    }

    /// The id from the two halves of its value (as in `java.util.UUID`).
    #[uniffi::constructor]
    pub fn from_halves(high: i64, low: i64) -> Arc<Flake128> {
        wrap(RtFlake128::from_u128(
            (u128::from(high as u64) << 64) | u128::from(low as u64),
        ))
    }

    /// The fields.
    pub fn decompose(&self) -> Flake128Parts {
        Flake128Parts {
            time_ms: self.inner.time_ms() as i64,
            worker: self.inner.worker() as i64,
            seq: i32::from(self.inner.seq()),
        }
    }

    /// The 22-character base62 text (sorts like the value).
    pub fn to_base62(&self) -> String {
        let mut buf = [0u8; RtFlake128::BASE62_LEN];
        self.inner.to_base62(&mut buf).to_owned()
    }

    /// The 32 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        let mut buf = [0u8; RtFlake128::HEX_LEN];
        self.inner.to_hex(&mut buf).to_owned()
    }

    /// The 16 big-endian bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.inner.to_bytes().to_vec()
    }

    /// The unsigned 128-bit value in decimal.
    pub fn to_decimal(&self) -> String {
        self.inner.as_u128().to_string()
    }

    /// The upper 64 bits (a `UUID`'s most significant bits).
    pub fn high(&self) -> i64 {
        (self.inner.as_u128() >> 64) as u64 as i64
    }

    /// The lower 64 bits (a `UUID`'s least significant bits).
    pub fn low(&self) -> i64 {
        self.inner.as_u128() as u64 as i64
    }
}

impl std::fmt::Display for Flake128 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_base62())
    }
}

/// A flake-128 generator, safe to share between threads.
#[derive(uniffi::Object)]
pub struct Flake128Generator {
    inner: Flake128s,
}

#[uniffi::export]
impl Flake128Generator {
    /// A generator with a fixed 48-bit `worker`, or (null) 48 random bits per process, drawn
    /// again in a forked child.
    #[uniffi::constructor(default(worker = None))]
    pub fn new(worker: Option<i64>) -> Result<Arc<Flake128Generator>> {
        let worker = match worker {
            None => WorkerId::Random,
            Some(w) => WorkerId::Fixed(w as u64),
        };
        Ok(Arc::new(Flake128Generator {
            inner: Flake128s::new(worker)?,
        }))
    }

    /// A generator whose worker id is the first non-zero MAC address (Boundary's choice).
    #[uniffi::constructor]
    pub fn mac() -> Result<Arc<Flake128Generator>> {
        Ok(Arc::new(Flake128Generator {
            inner: Flake128s::new(WorkerId::Mac)?,
        }))
    }

    /// The next id.
    pub fn next(&self) -> Result<Arc<Flake128>> {
        Ok(wrap(self.inner.next()?))
    }

    /// The worker id.
    pub fn worker(&self) -> i64 {
        self.inner.worker() as i64
    }
}
