//! The takeover guard: which server last made snowflake ids from this data directory, as which
//! node, on which timeline.
//!
//! A standby is a copy of its primary's data directory (`pg_basebackup`, `pg_rewind`), often
//! with its primary's settings, `idforge.node_id` included, and its copy of the state file is
//! stale. Promoted, it could make ids its old primary made in its last moments: those may be up
//! to the generators' lead ahead of the clock. So the file `idforge.node` records the node id,
//! the WAL timeline and the server (host name and data directory) making ids here. A server
//! that finds another writer, another timeline (a promotion, a point-in-time recovery) or no
//! file, and may share that node id, first moves every generator past the time the other
//! server's ids can reach (its lead plus [`MAX_SKEW_MS`] of clock difference between hosts) and
//! waits the second or so until the clock is within the lead again. Assumed: the old server
//! made no more ids once this one took over (an HA manager fences it), and the hosts' clocks
//! agree within [`MAX_SKEW_MS`]. Two primaries making ids at once with one node id are not
//! detected: give every server a node id of its own.

use std::path::Path;
use std::sync::atomic::Ordering;

use idforge::{Clock, ErrorCode, StateFile};

use crate::error::{PgError, Result};
use crate::high_water::locked;
use crate::shared::{MAX_LEAD_MS, Shared};

/// The file, relative to the data directory.
pub const PATH: &str = "idforge.node";

const HEADER: &str = "idforge-node v1";

/// How far apart the clocks of two servers taking over from each other may be.
pub const MAX_SKEW_MS: u64 = 1_000;

/// Not yet checked since the server started.
pub const UNCHECKED: u32 = 0;
/// Checked: this server may make snowflake ids.
pub const ALLOWED: u32 = 1;

/// What the node file records.
#[derive(Debug, PartialEq, Eq)]
struct Record {
    node: u64,
    timeline: u32,
    writer: String,
}

/// Checks (once per server start) whether this server takes over ids from another one, and if
/// so moves the generators past them before any snowflake id is made.
#[inline]
pub fn check(shared: &Shared, node: u64) -> Result<()> {
    if shared.owner().load(Ordering::Acquire) == ALLOWED {
        return Ok(());
    }
    check_slow(shared, node)
}

#[cold]
fn check_slow(shared: &Shared, node: u64) -> Result<()> {
    // SAFETY: a plain read of the server's state; the caller checked it is not in recovery,
    // which never comes back, so the timeline is set.
    let timeline = unsafe { pgrx::pg_sys::GetWALInsertionTimeLine() };
    let me = Record {
        node,
        timeline,
        writer: writer()?,
    };
    locked(shared, || {
        if shared.owner().load(Ordering::Acquire) == ALLOWED {
            return Ok(());
        }
        let last = match StateFile::read_small(Path::new(PATH))? {
            Some(text) => Some(parse(&text).ok_or_else(|| {
                PgError::new(
                    ErrorCode::Io,
                    format!("{PATH}: not an idforge node file (fix or remove it)"),
                )
            })?),
            None => None,
        };
        if last.as_ref() == Some(&me) {
            shared.owner().store(ALLOWED, Ordering::Release);
            return Ok(());
        }
        // Another server (or one we cannot tell) may have made ids with this node id.
        let takeover = last.as_ref().is_none_or(|last| last.node == node);
        StateFile::write_durably(
            Path::new(PATH),
            &format!(
                "{HEADER}\nnode={}\ntimeline={}\nwriter={}\n",
                me.node, me.timeline, me.writer
            ),
        )?;
        if takeover {
            let clock = shared.clock();
            let floor = clock.now_ms() + MAX_LEAD_MS + MAX_SKEW_MS;
            shared.raise_floor(floor);
            // Ids may lead the clock by MAX_LEAD_MS: wait until the floor is within it.
            while clock.now_ms() + MAX_LEAD_MS <= floor {
                std::thread::sleep(std::time::Duration::from_millis(10));
                pgrx::check_for_interrupts!();
            }
        }
        shared.owner().store(ALLOWED, Ordering::Release);
        Ok(())
    })
}

/// This server: its host name and its data directory (the working directory of every
/// PostgreSQL process).
fn writer() -> Result<String> {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let dir = std::fs::canonicalize(".")
        .map_err(|e| PgError::new(ErrorCode::Io, format!("the data directory: {e}")))?;
    Ok(format!("{}:{}", host.trim(), dir.display()))
}

/// The record of a node file.
fn parse(text: &str) -> Option<Record> {
    let mut lines = text.lines();
    if lines.next()? != HEADER {
        return None;
    }
    let node = lines.next()?.strip_prefix("node=")?.parse().ok()?;
    let timeline = lines.next()?.strip_prefix("timeline=")?.parse().ok()?;
    let writer = lines.next()?.strip_prefix("writer=")?.to_owned();
    Some(Record {
        node,
        timeline,
        writer,
    })
}
