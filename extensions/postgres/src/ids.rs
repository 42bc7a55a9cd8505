//! The SQL functions (declared in `sql/idforge--0.1.0.sql`, whose names and types must match).

use std::cell::RefCell;

use idforge::{Clock, ErrorCode};
use idforge_core::snowflake::SnowflakeGen;
use idforge_core::tick::Next;
use pgrx::prelude::*;

use crate::error::{PgError, Result, or_raise};
use crate::shared::Shared;
use crate::{high_water, layout, node_id, owner, shared, with_clock};

/// Microseconds from the Unix epoch to PostgreSQL's (2000-01-01).
const PG_EPOCH_US: i64 = 946_684_800_000_000;

/// A snowflake id from the cluster's shared generator of the layout.
#[pg_extern(volatile, parallel_safe)]
fn idforge_snowflake(layout_text: &str) -> i64 {
    or_raise(snowflake(layout_text))
}

fn snowflake(layout_text: &str) -> Result<i64> {
    let shared = shared(true)?;
    // SAFETY: a plain query of the server's state, in a backend, inside pgrx's guard.
    if unsafe { pg_sys::RecoveryInProgress() } {
        // A standby got its settings, idforge.node_id too, from its primary: its ids would be
        // the primary's.
        return Err(PgError::setup(
            "this server is a standby (in recovery): snowflake ids come from the primary, whose \
             node id a standby shares",
        ));
    }
    owner::check(shared, node_id())?;
    let generator = generator_of(shared, layout_text)?;
    let layout = *generator.layout();
    let id = with_clock(shared.clock(), |now| Ok(generator.next(now)?))?;
    high_water::cover(shared, layout.decompose(id)?.time_ms)?;
    // Unsigned layouts (discord, instagram) pass i64::MAX; bigint holds their bits.
    Ok(id as i64)
}

thread_local! {
    /// The layout text this backend used last and its generator: a column default passes the
    /// same text on every row, so this skips parsing it and searching the slots.
    static LAST: RefCell<Option<(String, &'static SnowflakeGen)>> = const { RefCell::new(None) };
}

/// The shared generator of the layout written `layout_text`.
fn generator_of(shared: &'static Shared, layout_text: &str) -> Result<&'static SnowflakeGen> {
    if let Some(generator) = LAST.with_borrow(|last| match last {
        Some((text, generator)) if text == layout_text => Some(*generator),
        _ => None,
    }) {
        return Ok(generator);
    }
    let generator = shared.snowflake(layout(layout_text)?, node_id())?;
    LAST.set(Some((layout_text.to_owned(), generator)));
    Ok(generator)
}

/// A new ObjectId as 24 hex digits.
#[pg_extern(volatile, parallel_safe)]
fn idforge_objectid() -> String {
    let mut hex = [0u8; 24];
    or_raise(objectid()).to_hex(&mut hex).to_owned()
}

/// A new ObjectId as its 12 bytes.
#[pg_extern(volatile, parallel_safe)]
fn idforge_objectid_bytes() -> Vec<u8> {
    or_raise(objectid()).bytes().to_vec()
}

fn objectid() -> Result<idforge::ObjectId> {
    let shared = shared(false)?;
    let generator = shared.objectid();
    // The ObjectId field is 32-bit seconds; truncation past 2106 is the format's own.
    match generator.next(shared.clock().now_secs() as u32) {
        Next::Id(id) => Ok(id),
        // Every second up to 2106 used up: no waiting helps.
        Next::Pending { until_ms: u64::MAX } => Err(PgError::new(
            ErrorCode::TimeOutOfRange,
            "the ObjectId seconds field is used up",
        )),
        Next::Pending { .. } => with_clock(shared.clock(), |now_ms| {
            Ok(generator.next((now_ms / 1000) as u32))
        }),
    }
}

/// A new flake-128 id as a `uuid` (its 16 bytes, big-endian, so uuid order is id order).
#[pg_extern(volatile, parallel_safe)]
fn idforge_flake128() -> pgrx::Uuid {
    or_raise(flake128())
}

fn flake128() -> Result<pgrx::Uuid> {
    let shared = shared(true)?;
    let id = with_clock(shared.clock(), |now| Ok(shared.flake().next(now)?))?;
    high_water::cover(shared, id.time_ms())?;
    Ok(pgrx::Uuid::from_bytes(id.to_bytes()))
}

/// The time, node and sequence of a snowflake id.
#[pg_extern(immutable, parallel_safe)]
fn idforge_decode(
    id: i64,
    layout_text: &str,
) -> TableIterator<
    'static,
    (
        name!(time, TimestampWithTimeZone),
        name!(node, i64),
        name!(seq, i64),
    ),
> {
    let (time, node, seq) = or_raise(decode(id, layout_text));
    TableIterator::once((time, node, seq))
}

fn decode(id: i64, layout_text: &str) -> Result<(TimestampWithTimeZone, i64, i64)> {
    let parts = layout(layout_text)?.decompose(id as u64)?;
    Ok((
        timestamp(parts.time_ms)?,
        field(parts.node, "node")?,
        field(parts.seq, "seq")?,
    ))
}

/// The id of a time, node and sequence (the time is truncated to its tick).
#[pg_extern(immutable, parallel_safe)]
fn idforge_compose(ts: TimestampWithTimeZone, layout_text: &str, node: i64, seq: i64) -> i64 {
    or_raise(compose(ts, layout_text, node, seq))
}

fn compose(ts: TimestampWithTimeZone, layout_text: &str, node: i64, seq: i64) -> Result<i64> {
    let layout = layout(layout_text)?;
    let tick = layout.tick_of(unix_ms(ts)?)?;
    let node = u64::try_from(node).map_err(|_| {
        PgError::new(
            ErrorCode::NodeOutOfRange,
            format!("node {node} is negative"),
        )
    })?;
    let seq = u64::try_from(seq).map_err(|_| {
        PgError::new(
            ErrorCode::SequenceOutOfRange,
            format!("seq {seq} is negative"),
        )
    })?;
    Ok(layout.compose(tick, node, seq)? as i64)
}

/// The smallest and largest ids of the tick holding `ts`: `WHERE id BETWEEN min AND max` of a
/// time range (for unsigned layouts past `i64::MAX`, bigint order is not id order).
#[pg_extern(immutable, parallel_safe)]
fn idforge_bounds(
    ts: TimestampWithTimeZone,
    layout_text: &str,
) -> TableIterator<'static, (name!(min, i64), name!(max, i64))> {
    let (min, max) = or_raise(bounds(ts, layout_text));
    TableIterator::once((min, max))
}

fn bounds(ts: TimestampWithTimeZone, layout_text: &str) -> Result<(i64, i64)> {
    let (min, max) = layout(layout_text)?.bounds_at(unix_ms(ts)?)?;
    Ok((min as i64, max as i64))
}

/// A timestamp as Unix milliseconds (rounded down); before 1970 or infinite is out of range.
fn unix_ms(ts: TimestampWithTimeZone) -> Result<u64> {
    let pg_us: i64 = pg_sys::TimestampTz::from(ts);
    pg_us
        .checked_add(PG_EPOCH_US)
        .and_then(|us| u64::try_from(us).ok())
        .filter(|_| pg_us != i64::MAX && pg_us != i64::MIN)
        .map(|us| us / 1000)
        .ok_or_else(|| {
            PgError::new(
                ErrorCode::TimeOutOfRange,
                "the timestamp is before 1970 or infinite",
            )
        })
}

/// Unix milliseconds as a timestamp.
pub(crate) fn timestamp(ms: u64) -> Result<TimestampWithTimeZone> {
    i64::try_from(ms)
        .ok()
        .and_then(|ms| ms.checked_mul(1000))
        .and_then(|us| us.checked_sub(PG_EPOCH_US))
        .and_then(|pg_us| TimestampWithTimeZone::try_from(pg_us).ok())
        .ok_or_else(|| {
            PgError::new(
                ErrorCode::TimeOutOfRange,
                format!("{ms} ms is past what a timestamptz holds"),
            )
        })
}

/// A node or sequence as a bigint (a layout may give either up to 64 bits).
fn field(value: u64, what: &str) -> Result<i64> {
    i64::try_from(value).map_err(|_| {
        PgError::new(
            ErrorCode::Overflow,
            format!("the {what} field ({value}) is larger than a bigint"),
        )
    })
}
