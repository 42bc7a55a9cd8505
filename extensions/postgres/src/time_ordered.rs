//! The time-ordered 128-bit ids: UUIDv7 (`uuid`) and ULID (`text`) from the cluster's shared
//! generators (declared in `sql/idforge--0.1.0.sql`), and their parse, decode and conversion
//! functions.
//!
//! Each id takes its (millisecond, counter) from one lock-free word in shared memory, as a
//! snowflake does, so ids strictly increase across every backend; its random bits come from the
//! calling backend's own stream ([`crate::random`]). The state file covers their time like a
//! snowflake's, so a restart resumes after the last run's ids.

use idforge_core::stamp::{Stamp, StampGen};
use idforge_core::ulid::Ulid;
use idforge_core::uuid7::Uuid7;
use pgrx::pg_sys::errcodes::PgSqlErrorCode;
use pgrx::prelude::*;

use crate::error::{PgError, Result, or_raise};
use crate::ids::timestamp;
use crate::shared::Shared;
use crate::{high_water, random, shared, with_clock};

/// A new UUIDv7 from the cluster's shared generator.
#[pg_extern(volatile, parallel_safe)]
fn idforge_uuid7() -> pgrx::Uuid {
    let id = or_raise(next(Shared::uuid7, Uuid7::time_ms));
    pgrx::Uuid::from_bytes(id.to_bytes())
}

/// A new ULID (26 characters) from the cluster's shared generator.
#[pg_extern(volatile, parallel_safe)]
fn idforge_ulid() -> String {
    let id = or_raise(next(Shared::ulid, Ulid::time_ms));
    let mut text = [0u8; Ulid::TEXT_LEN];
    id.to_text(&mut text).to_owned()
}

/// The next id of the shared generator `which`, after its time is covered by the state file.
fn next<T: Stamp>(which: fn(&Shared) -> &StampGen<T>, time_ms: fn(&T) -> u64) -> Result<T> {
    let shared = shared(true)?;
    let generator = which(shared);
    let id = with_clock(shared.clock(), |now| {
        Ok(generator.next(now, random::u64()?)?)
    })?;
    high_water::cover(shared, time_ms(&id))?;
    Ok(id)
}

/// The UUIDv7 written `text` (hyphenated, 32 hex digits, braces or `urn:uuid:`, either case);
/// another version or variant is `INVALID_UUID`.
#[pg_extern(immutable, parallel_safe)]
fn idforge_uuid7_parse(text: &str) -> pgrx::Uuid {
    let id = or_raise(Uuid7::parse(text).map_err(PgError::from));
    pgrx::Uuid::from_bytes(id.to_bytes())
}

/// The time (Unix millisecond) of a UUIDv7.
#[pg_extern(immutable, parallel_safe)]
fn idforge_uuid7_time(id: pgrx::Uuid) -> TimestampWithTimeZone {
    or_raise(uuid7_of(id).and_then(|id| timestamp(id.time_ms())))
}

/// `id` as a UUIDv7: another version or variant is `INVALID_UUID` (a bad argument, as the
/// value is a valid `uuid`).
fn uuid7_of(id: pgrx::Uuid) -> Result<Uuid7> {
    Uuid7::from_bytes(*id.as_bytes()).map_err(|e| PgError {
        state: Some(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE),
        ..PgError::from(e)
    })
}

/// The ULID text of a uuid's 128 bits (a UUIDv7's time is the ULID's time).
#[pg_extern(immutable, parallel_safe)]
fn idforge_uuid_to_ulid(id: pgrx::Uuid) -> String {
    let mut text = [0u8; Ulid::TEXT_LEN];
    Ulid::from_bytes(*id.as_bytes())
        .to_text(&mut text)
        .to_owned()
}

/// The 128 bits of a ULID as a `uuid` (26 characters of Crockford base32, either case).
#[pg_extern(immutable, parallel_safe)]
fn idforge_ulid_to_uuid(text: &str) -> pgrx::Uuid {
    let id = or_raise(Ulid::parse(text).map_err(PgError::from));
    pgrx::Uuid::from_bytes(id.to_bytes())
}
