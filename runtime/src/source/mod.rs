//! Segment sources: where ranges of ids come from, chosen by URL with [`open`].
//!
//! | URL | source | durable |
//! | --- | --- | --- |
//! | `idforge://[user:pass@]host:port[,host:port…]` | [`RemoteSource`]: our server, `INCRBY`; follows `MOVED` | yes |
//! | `idforge://host:port,host:port…?mode=any` | [`AnySource`]: striped servers (`--stripe K/N`), any live one | yes |
//! | `redis://[user:pass@]host:port[/db]` | [`RemoteSource`]: Redis `INCRBY` on the tag's key | as the Redis behind it |
//! | `postgres://…`, `mysql://…`, `sqlite://path` | [`SqlSource`]: Leaf's `leaf_alloc` table | yes |
//! | `file:///dir` | [`FileSource`]: a locked counter file per tag, for one host | yes |
//! | `memory:` | [`MemorySource`]: this process only | no |
//!
//! Network URLs take `timeout_ms` (how long one request may take, all of it: connecting,
//! sending, the whole reply, redirects; default 5000); SQL URLs also `table` (default
//! `leaf_alloc`) and `auto_create` (default `true`).
//!
//! A Redis restart without `appendfsync always`, or a failover to a replica that had not yet
//! seen the last `INCRBY`, can hand out a range again. [`Segments`](crate::Segments) refuses
//! such a range (`INVALID_SEGMENT`) in a process that already took ids above it, but another
//! process cannot tell: use `redis://` only where that is acceptable, and `idforge://` or SQL
//! where it is not.

mod any;
mod file;
#[cfg(feature = "sql")]
pub mod leaf_table;
mod memory;
pub(crate) mod per_process;
mod remote;
pub(crate) mod resp;
#[cfg(feature = "sql")]
mod sql;
#[cfg(feature = "sql")]
mod sqlite_alone;
mod sqlite_url;
mod tls;
mod url;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, Weak};

use idforge_core::Error as CoreError;
use idforge_core::segment::Segment;

pub use any::AnySource;
pub use file::FileSource;
pub use memory::MemorySource;
pub(crate) use remote::transient_reply;
pub use remote::{Flavor, RemoteSource};
#[cfg(feature = "sql")]
pub use sql::{SqlKind, SqlSource};
pub use sqlite_url::sqlite_url;

use crate::error::Result;

/// A central allocator of id ranges.
///
/// `fetch` must never return an id it returned before for the same tag (within the durability
/// the source promises). It may block (the refill worker calls it, never the hot path).
pub trait SegmentSource: Send + Sync + 'static {
    /// Allocates `step` fresh ids of `tag`.
    fn fetch(&self, tag: &str, step: u64) -> Result<Segment>;

    /// A name of the counters behind this source, without credentials (`redis://host:6379/0`):
    /// [`Segments`](crate::Segments) of one tag on sources with the same identity share one
    /// high-water mark in the process, so none accepts a range below ids another already
    /// took. `None` (the default): each generator keeps its own mark.
    fn identity(&self) -> Option<String> {
        None
    }

    /// Allocates a range for each `(tag, step)`, answers in order: a source that can serve
    /// several tags in one round trip (a pipeline, one transaction) does so. The default
    /// fetches them one by one. The refill engine sends at most [`max_batch`] at once.
    ///
    /// [`max_batch`]: SegmentSource::max_batch
    fn fetch_many(&self, requests: &[(&str, u64)]) -> Vec<Result<Segment>> {
        requests
            .iter()
            .map(|&(tag, step)| self.fetch(tag, step))
            .collect()
    }

    /// How many fetches the process's refill engine may run at once for this source, each on
    /// a thread (and a connection) of its own: more than one where a tag can be held up alone
    /// (a locked row, a locked file) while others could go on. Default 1.
    fn lanes(&self) -> usize {
        1
    }

    /// The most requests one [`fetch_many`](SegmentSource::fetch_many) call should carry.
    /// Default 1: sources that gain nothing from batching see one tag at a time.
    fn max_batch(&self) -> usize {
        1
    }

    /// Whether each range this source gives a tag lies above the ones before (one counter
    /// behind it): [`Segments`](crate::Segments) then refuses a range that goes back. `false`
    /// for striped servers (`idforge://…?mode=any`), whose ranges are disjoint but interleave;
    /// such a source checks each server's own order itself. Default `true`.
    fn ordered(&self) -> bool {
        true
    }

    /// Connections this source holds open in this process now, for counters. Default 0.
    fn connections(&self) -> usize {
        0
    }
}

/// Checks a tag: 1-128 characters of `A-Za-z0-9_-.:` (safe as a file name and a Redis key).
pub fn validate_tag(tag: &str) -> Result<()> {
    let ok = !tag.is_empty()
        && tag.len() <= 128
        && !tag.starts_with('.')
        && tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.:".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(CoreError::InvalidArgument(
            "a tag is 1-128 characters of A-Za-z0-9_-.: not starting with '.'",
        )
        .into())
    }
}

fn check_step(step: u64) -> Result<()> {
    if step == 0 || step > Segment::MAX_LEN {
        return Err(CoreError::InvalidArgument("step must be in 1..=2^38").into());
    }
    Ok(())
}

/// The folder of a `file://` URL: an absolute path (`file:///srv/ids`; on Windows also
/// `file:///C:/ids`, the standard spelling, and `file://C:\ids`).
fn file_url_path(rest: &str) -> Result<&std::path::Path> {
    #[cfg(windows)]
    let rest = match rest.as_bytes() {
        [b'/', drive, b':', ..] if drive.is_ascii_alphabetic() => &rest[1..],
        _ => rest,
    };
    let path = std::path::Path::new(rest);
    if !path.is_absolute() {
        return Err(CoreError::InvalidUrl("file:// URLs need an absolute path").into());
    }
    Ok(path)
}

/// Opens a source by URL (see the table above). Network sources connect on their first fetch.
pub fn open(url: &str) -> Result<Arc<dyn SegmentSource>> {
    if url == "memory:" || url == "memory://" {
        return Ok(Arc::new(MemorySource::new()));
    }
    if let Some(rest) = url.strip_prefix("file://") {
        return Ok(Arc::new(FileSource::new(file_url_path(rest)?)?));
    }
    match url.split(':').next().unwrap_or("") {
        "idforge" | "idforges" if any::wanted(url) => Ok(Arc::new(AnySource::new(url)?)),
        "idforge" | "idforges" | "redis" | "rediss" => Ok(Arc::new(RemoteSource::new(url)?)),
        #[cfg(feature = "sql")]
        "postgres" | "postgresql" | "mysql" | "mariadb" | "sqlite" => {
            Ok(Arc::new(SqlSource::new(url)?))
        }
        #[cfg(not(feature = "sql"))]
        "postgres" | "postgresql" | "mysql" | "mariadb" | "sqlite" => Err(CoreError::InvalidUrl(
            "SQL sources need idforge built with its `sql` feature (on by default)",
        )
        .into()),
        _ => Err(CoreError::InvalidUrl(
            "supported schemes: idforge://, idforges://, redis://, rediss://, postgres://, mysql://, sqlite://, file://, memory:",
        )
        .into()),
    }
}

/// Opens a source by URL as [`open`] does, with requests that take at most `timeout`, kept
/// between 1 s and 5 s, unless the URL sets `timeout_ms`: how [`Segments`](crate::Segments)
/// makes one request's budget (and SQLite's busy wait) follow the caller's timeout. At least
/// 1 s, so a short wait does not cut off every connect; at most 5 s (the default), so a long
/// wait still retries a server that stopped answering, or another host.
pub fn open_for(url: &str, timeout: std::time::Duration) -> Result<Arc<dyn SegmentSource>> {
    match timed_url(url, timeout) {
        Some(timed) => open(&timed),
        None => open(url),
    }
}

/// Opens a source as [`open_for`] does, or gives the one this process already has open for the
/// same URL and timeout, while anything still holds it: every [`Segments`](crate::Segments)
/// on it then shares one connection (or pool) and one refill engine. `memory:` is never
/// shared: each opening is a counter of its own. A forked child opens its own.
pub fn open_shared(url: &str, timeout: std::time::Duration) -> Result<Arc<dyn SegmentSource>> {
    type Open = HashMap<String, Weak<dyn SegmentSource>>;
    static OPEN: OnceLock<per_process::PerProcess<Open>> = OnceLock::new();
    if url.starts_with("memory:") {
        return open_for(url, timeout);
    }
    let key = timed_url(url, timeout).unwrap_or_else(|| url.to_owned());
    let sources = match OPEN.get() {
        Some(sources) => sources,
        None => {
            let made = per_process::PerProcess::new()?;
            OPEN.get_or_init(|| made)
        }
    };
    sources.with(|slot| {
        let map = slot.get_or_insert_with(HashMap::new);
        if let Some(source) = map.get(&key).and_then(Weak::upgrade) {
            return Ok(source);
        }
        map.retain(|_, source| source.strong_count() > 0);
        let source = open(&key)?;
        map.insert(key, Arc::downgrade(&source));
        Ok(source)
    })
}

/// `url` with `timeout_ms` set to `timeout`, or `None` when it sets one already or takes none.
fn timed_url(url: &str, timeout: std::time::Duration) -> Option<String> {
    const TIMED: [&str; 7] = [
        "idforge:",
        "redis:",
        "postgres:",
        "postgresql:",
        "mysql:",
        "mariadb:",
        "sqlite:",
    ];
    let has_timeout = url.split_once('?').is_some_and(|(_, query)| {
        query
            .split('&')
            .any(|pair| pair.split('=').next() == Some("timeout_ms"))
    });
    if has_timeout || !TIMED.iter().any(|scheme| url.starts_with(scheme)) {
        return None;
    }
    let ms = timeout.as_millis().clamp(1_000, 5_000);
    let separator = if url.contains('?') { '&' } else { '?' };
    Some(format!("{url}{separator}timeout_ms={ms}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn memory_source_hands_out_consecutive_ranges_per_tag() {
        let s = MemorySource::new();
        assert_eq!(s.fetch("a", 10).unwrap(), Segment::new(1, 11).unwrap());
        assert_eq!(s.fetch("a", 5).unwrap(), Segment::new(11, 16).unwrap());
        assert_eq!(s.fetch("b", 1).unwrap(), Segment::new(1, 2).unwrap());
        s.set_failing(true);
        assert_eq!(
            s.fetch("a", 1).unwrap_err().code(),
            ErrorCode::SourceUnavailable
        );
        assert_eq!(
            s.fetch("../x", 1).unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            s.fetch("a", 0).unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
    }

    #[test]
    fn file_source_persists_across_instances() {
        let dir = tempfile::tempdir().unwrap();
        let a = FileSource::new(dir.path()).unwrap();
        assert_eq!(
            a.fetch("orders", 100).unwrap(),
            Segment::new(1, 101).unwrap()
        );
        let b = FileSource::new(dir.path()).unwrap();
        assert_eq!(
            b.fetch("orders", 100).unwrap(),
            Segment::new(101, 201).unwrap()
        );
        std::fs::write(dir.path().join("bad"), "x").unwrap();
        assert_eq!(a.fetch("bad", 1).unwrap_err().code(), ErrorCode::Io);
    }

    #[test]
    fn the_callers_timeout_is_the_request_budget_unless_the_url_sets_one() {
        let t = std::time::Duration::from_millis(3_000);
        assert_eq!(
            timed_url("idforge://h:7379", t).as_deref(),
            Some("idforge://h:7379?timeout_ms=3000")
        );
        assert_eq!(
            timed_url("sqlite:///x.db?table=ids", t).as_deref(),
            Some("sqlite:///x.db?table=ids&timeout_ms=3000")
        );
        let long = std::time::Duration::from_secs(20);
        assert_eq!(
            timed_url("redis://h", long).as_deref(),
            Some("redis://h?timeout_ms=5000")
        );
        assert_eq!(timed_url("redis://h?timeout_ms=9", t), None);
        assert_eq!(timed_url("memory:", t), None);
        assert_eq!(timed_url("file:///tmp/x", t), None);
        let zero = timed_url("mysql://u@h/db", std::time::Duration::ZERO);
        assert_eq!(zero.as_deref(), Some("mysql://u@h/db?timeout_ms=1000"));
        assert!(open_for("postgres://u@h/db", t).is_ok());
    }

    #[test]
    fn urls() {
        assert!(open("memory:").is_ok());
        let dir = tempfile::tempdir().unwrap();
        assert!(open(&format!("file://{}", dir.path().display())).is_ok());
        assert_eq!(
            open("file://relative").err().unwrap().code(),
            ErrorCode::InvalidUrl
        );
        assert!(open("redis://127.0.0.1").is_ok());
        assert!(open("idforge://127.0.0.1:7379,127.0.0.2").is_ok());
        assert!(open("postgres://u@127.0.0.1/db").is_ok());
        for bad in ["http://x", "redis:/x", "sqlite:///x?table=a-b", "nothing"] {
            assert_eq!(
                open(bad).err().unwrap().code(),
                ErrorCode::InvalidUrl,
                "{bad}"
            );
        }
    }
}
