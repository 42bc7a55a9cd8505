//! UUIDv7 on the JVM as `java.util.UUID`: the generator `Uuid7s` and the codecs (functions;
//! the hand-written Kotlin object `Uuid7` gathers them for Java).

use std::sync::Arc;

use idforge::{Ulid as RtUlid, Uuid7 as RtUuid7, Uuid7s as RtUuid7s};

use crate::error::Result;
use crate::snowflake::{Policy, count};
use crate::time_ordered;
use crate::uuid::Uuid;

/// The fields of a UUIDv7.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Uuid7Fields {
    /// Unix milliseconds (48 bits).
    pub time_ms: i64,
    /// The 12 bits after the version.
    pub rand_a: i32,
    /// The 62 bits after the variant.
    pub rand_b: i64,
}

/// A UUIDv7 generator: strictly increasing ids from any number of threads, as numbers, bytes and
/// text (and by `UUID.compareTo`, which compares signed halves: the same order for UUIDv7s up
/// to the year 6429). Each millisecond's 18-bit counter starts at a random value below 2^17,
/// so a millisecond holds at least 131,072 ids before borrowing the next; the other 56 bits are
/// random. Fork-safe; with `state_file` the ids also increase across
/// restarts with the clock set back.
#[derive(uniffi::Object)]
pub struct Uuid7s {
    inner: RtUuid7s,
}

#[uniffi::export]
impl Uuid7s {
    /// A generator; `state_file` keeps a high-water time across restarts; `policy` (default
    /// `Borrow`, 1 s) and `max_wait_ms` as for `Snowflake`.
    #[uniffi::constructor(default(state_file = None, policy = None, max_wait_ms = None))]
    pub fn new(
        state_file: Option<String>,
        policy: Option<Policy>,
        max_wait_ms: Option<i64>,
    ) -> Result<Arc<Uuid7s>> {
        Ok(Arc::new(Uuid7s {
            inner: time_ordered::build(state_file, policy, max_wait_ms)?,
        }))
    }

    /// The next UUID.
    pub fn next(&self) -> Result<Uuid> {
        Ok(Uuid(self.inner.next()?.as_u128()))
    }

    /// `n` fresh UUIDs in increasing order.
    pub fn next_many(&self, n: i32) -> Result<Vec<Uuid>> {
        let ids = time_ordered::next_many(&self.inner, count(n)?)?;
        Ok(ids.iter().map(|id| Uuid(id.as_u128())).collect())
    }
}

fn v7(uuid: Uuid) -> Result<RtUuid7> {
    Ok(RtUuid7::from_u128(uuid.0)?)
}

/// Parses a UUIDv7: hyphenated, 32 hex digits, in braces or after `urn:uuid:`, either case;
/// another version or variant is `InvalidUuid`.
#[uniffi::export]
pub fn uuid7_parse(text: String) -> Result<Uuid> {
    Ok(Uuid(RtUuid7::parse(&text)?.as_u128()))
}

/// The UUIDv7 of 16 big-endian bytes (`InvalidLength`, `InvalidUuid`).
#[uniffi::export]
pub fn uuid7_from_bytes(bytes: Vec<u8>) -> Result<Uuid> {
    Ok(Uuid(RtUuid7::try_from_slice(&bytes)?.as_u128()))
}

/// The UUIDv7 of `(time_ms, rand_a, rand_b)`: for range queries and tests, not for issuing ids.
#[uniffi::export]
pub fn uuid7_from_fields(time_ms: i64, rand_a: i32, rand_b: i64) -> Result<Uuid> {
    let rand_a = u16::try_from(rand_a).unwrap_or(u16::MAX);
    Ok(Uuid(
        RtUuid7::from_fields(time_ms as u64, rand_a, rand_b as u64)?.as_u128(),
    ))
}

/// The fields of a UUIDv7 (`InvalidUuid` for another version).
#[uniffi::export]
pub fn uuid7_fields(uuid: Uuid) -> Result<Uuid7Fields> {
    let id = v7(uuid)?;
    Ok(Uuid7Fields {
        time_ms: id.time_ms() as i64,
        rand_a: i32::from(id.rand_a()),
        rand_b: id.rand_b() as i64,
    })
}

/// The Unix milliseconds of a UUIDv7 (`InvalidUuid` for another version).
#[uniffi::export]
pub fn uuid7_time_ms(uuid: Uuid) -> Result<i64> {
    Ok(v7(uuid)?.time_ms() as i64)
}

/// The same 128 bits as ULID text (`InvalidUuid` for another version).
#[uniffi::export]
pub fn uuid7_to_ulid(uuid: Uuid) -> Result<String> {
    let mut buf = [0u8; RtUlid::TEXT_LEN];
    Ok(v7(uuid)?.to_ulid_text(&mut buf).to_owned())
}

/// The UUIDv7 written as ULID text (`InvalidBase32`; `InvalidUuid` for a ULID that is not one).
#[uniffi::export]
pub fn uuid7_from_ulid(text: String) -> Result<Uuid> {
    Ok(Uuid(RtUuid7::parse_ulid_text(&text)?.as_u128()))
}
