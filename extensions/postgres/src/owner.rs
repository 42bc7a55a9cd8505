//! The promotion guard: which node id last made snowflake ids from this data directory, and on
//! which timeline.
//!
//! A standby is a copy of its primary's data directory (`pg_basebackup`, `pg_rewind`), often
//! with its primary's settings, `idforge.node_id` included, and the state file it copied is
//! stale. Once promoted, its ids could meet the old primary's last ones. PostgreSQL starts a new
//! timeline at every promotion (and point-in-time recovery), so the file `idforge.node` records
//! the node id and the timeline of the server that makes ids here; a server on another timeline
//! with the same node id refuses snowflake ids until it gets a node id of its own (or an
//! operator who knows the old server is gone removes the file).

use std::path::Path;
use std::sync::atomic::Ordering;

use idforge::{ErrorCode, StateFile};

use crate::error::{PgError, Result};
use crate::high_water::locked;
use crate::shared::Shared;

/// The file, relative to the data directory.
pub const PATH: &str = "idforge.node";

const HEADER: &str = "idforge-node v1";

/// Not yet checked since the server started.
pub const UNCHECKED: u32 = 0;
/// Checked: this server may make snowflake ids.
pub const ALLOWED: u32 = 1;

/// Checks (once per server start) that this server may make snowflake ids as `node` on the
/// timeline it writes WAL on.
#[inline]
pub fn check(shared: &Shared, node: u64) -> Result<()> {
    if shared.owner().load(Ordering::Acquire) == ALLOWED {
        return Ok(());
    }
    check_slow(shared, node)
}

#[cold]
fn check_slow(shared: &Shared, node: u64) -> Result<()> {
    // SAFETY: a plain read of the server's state; the caller checked it is not in recovery.
    let timeline = unsafe { pgrx::pg_sys::GetWALInsertionTimeLine() };
    locked(shared, || {
        if shared.owner().load(Ordering::Acquire) == ALLOWED {
            return Ok(());
        }
        let text = match std::fs::read_to_string(PATH) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(PgError::new(ErrorCode::Io, format!("{PATH}: {e}"))),
        };
        if let Some(text) = text {
            let (last_node, last_timeline) = parse(&text).ok_or_else(|| {
                PgError::new(
                    ErrorCode::Io,
                    format!("{PATH}: not an idforge node file (remove it once no other server makes ids with this node id)"),
                )
            })?;
            if last_timeline != timeline && last_node == node {
                return Err(PgError::setup(format!(
                    "this server is on timeline {timeline}, but node {node} made ids on timeline \
                     {last_timeline}: a promoted standby (or a restored backup) must not reuse \
                     its old primary's idforge.node_id; set a node id of its own and restart (or \
                     remove {PATH} in the data directory once the old server makes no more ids)"
                )));
            }
            if (last_node, last_timeline) == (node, timeline) {
                shared.owner().store(ALLOWED, Ordering::Release);
                return Ok(());
            }
        }
        StateFile::write_durably(
            Path::new(PATH),
            &format!("{HEADER}\nnode={node}\ntimeline={timeline}\n"),
        )?;
        shared.owner().store(ALLOWED, Ordering::Release);
        Ok(())
    })
}

/// The node id and timeline a node file records.
fn parse(text: &str) -> Option<(u64, u32)> {
    let mut lines = text.lines();
    if lines.next()? != HEADER {
        return None;
    }
    let node = lines.next()?.strip_prefix("node=")?.parse().ok()?;
    let timeline = lines.next()?.strip_prefix("timeline=")?.parse().ok()?;
    Some((node, timeline))
}
