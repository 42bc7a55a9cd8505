//! UUIDv7 and ULID generators: `Uuid7s` and `Ulids`, the process-wide ones behind `uuid7()`
//! and `ulid()`, and what they share (options, batches).

use std::sync::OnceLock;

use chrono::{DateTime, Utc};
use idforge::{Policy, SystemClock, TimeOrdered, TimeOrderedId};
use napi_derive::napi;

use crate::error::{OrThrow, Result};

/// Options of `Uuid7s` and `Ulids`.
#[napi(object)]
pub struct TimeOrderedOptions {
    /// A file that persists the high-water time, so ids keep increasing after a restart even
    /// if the clock was set back while the process was down.
    pub state_file: Option<String>,
}

/// A generator with `options` (the default policy: borrow up to 1 s ahead of the clock).
pub(crate) fn build<T: TimeOrderedId>(
    options: Option<TimeOrderedOptions>,
) -> Result<TimeOrdered<T>> {
    let state_file = options.and_then(|o| o.state_file).map(Into::into);
    TimeOrdered::build(Policy::default(), state_file, SystemClock::shared()).or_throw()
}

/// The process-wide generator in `cell`, made on first use.
pub(crate) fn shared<T: TimeOrderedId>(
    cell: &'static OnceLock<TimeOrdered<T>>,
) -> Result<&'static TimeOrdered<T>> {
    if let Some(g) = cell.get() {
        return Ok(g);
    }
    let g = TimeOrdered::new().or_throw()?;
    Ok(cell.get_or_init(|| g))
}

/// `n` fresh ids of `g`, increasing (`n` checked as every batch size), each written by `each`.
pub(crate) fn many<T: TimeOrderedId + Copy, J>(
    g: &TimeOrdered<T>,
    n: f64,
    blank: T,
    each: impl FnMut(T) -> J,
) -> Result<Vec<J>> {
    let mut ids = vec![blank; crate::args::count(n)?];
    g.next_many(&mut ids).or_throw()?;
    Ok(ids.into_iter().map(each).collect())
}

/// Fills `out` (a multiple of 16 bytes) with the 16 bytes of fresh ids of `g`; returns how
/// many.
pub(crate) fn fill<T: TimeOrderedId + Copy>(
    g: &TimeOrdered<T>,
    out: &mut [u8],
    blank: T,
    bytes: fn(&T) -> [u8; 16],
) -> Result<u32> {
    let mut ids = vec![blank; out.len() / 16];
    g.next_many(&mut ids).or_throw()?;
    for (chunk, id) in out.chunks_exact_mut(16).zip(&ids) {
        chunk.copy_from_slice(&bytes(id));
    }
    Ok(ids.len() as u32)
}

/// An id's millisecond as a `Date` (the epoch for one past chrono's range, which a 48-bit time
/// never is).
pub(crate) fn date(time_ms: u64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(time_ms as i64).unwrap_or_default()
}
