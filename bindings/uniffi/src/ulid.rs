//! ULIDs on the JVM as text: the generator `Ulids` (the ULID spec's monotonic mode) and the
//! codecs (functions; the hand-written Kotlin object `Ulid` gathers them for Java).

use std::sync::Arc;

use idforge::{Ulid as RtUlid, Ulids as RtUlids};

use crate::error::Result;
use crate::snowflake::{Policy, count};
use crate::time_ordered;
use crate::uuid::Uuid;

/// A ULID generator in the spec's monotonic mode: strictly increasing ids (their text sorts the
/// same) from any number of threads. Each millisecond's 18-bit counter (the top of the 80
/// random bits) starts at a random value below 2^17, so a millisecond holds at least 131,072
/// ids before borrowing the next. Fork-safe; with `state_file` the ids also increase across
/// restarts with the clock set back.
#[derive(uniffi::Object)]
pub struct Ulids {
    inner: RtUlids,
}

fn text(id: RtUlid) -> String {
    let mut buf = [0u8; RtUlid::TEXT_LEN];
    id.to_text(&mut buf).to_owned()
}

#[uniffi::export]
impl Ulids {
    /// A generator; `state_file` keeps a high-water time across restarts; `policy` (default
    /// `Borrow`, 1 s) and `max_wait_ms` as for `Snowflake`.
    #[uniffi::constructor(default(state_file = None, policy = None, max_wait_ms = None))]
    pub fn new(
        state_file: Option<String>,
        policy: Option<Policy>,
        max_wait_ms: Option<i64>,
    ) -> Result<Arc<Ulids>> {
        Ok(Arc::new(Ulids {
            inner: time_ordered::build(state_file, policy, max_wait_ms)?,
        }))
    }

    /// The next ULID: 26 characters of upper-case Crockford base32.
    pub fn next(&self) -> Result<String> {
        Ok(text(self.inner.next()?))
    }

    /// `n` fresh ULIDs in increasing order.
    pub fn next_many(&self, n: i32) -> Result<Vec<String>> {
        let ids = time_ordered::next_many(&self.inner, count(n)?)?;
        Ok(ids.into_iter().map(text).collect())
    }
}

/// Parses ULID text (26 characters, either case, Crockford's aliases I and L for 1, O for 0)
/// into its canonical upper-case form (`InvalidBase32` otherwise).
#[uniffi::export]
pub fn ulid_parse(text_in: String) -> Result<String> {
    Ok(text(RtUlid::parse(&text_in)?))
}

/// The Unix milliseconds of ULID text.
#[uniffi::export]
pub fn ulid_time_ms(text_in: String) -> Result<i64> {
    Ok(RtUlid::parse(&text_in)?.time_ms() as i64)
}

/// The 16 big-endian bytes of ULID text.
#[uniffi::export]
pub fn ulid_to_bytes(text_in: String) -> Result<Vec<u8>> {
    Ok(RtUlid::parse(&text_in)?.to_bytes().to_vec())
}

/// The text of 16 big-endian bytes (`InvalidLength` otherwise; every 16 bytes are a ULID).
#[uniffi::export]
pub fn ulid_from_bytes(bytes: Vec<u8>) -> Result<String> {
    Ok(text(RtUlid::try_from_slice(&bytes)?))
}

/// The same 128 bits as a `UUID` (a UUIDv7 when the ULID came from one).
#[uniffi::export]
pub fn ulid_to_uuid(text_in: String) -> Result<Uuid> {
    Ok(Uuid(RtUlid::parse(&text_in)?.as_u128()))
}

/// The ULID text of a UUID's 128 bits (any version).
#[uniffi::export]
pub fn ulid_from_uuid(uuid: Uuid) -> String {
    text(RtUlid::from_u128(uuid.0))
}
