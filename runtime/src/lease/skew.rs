//! How far this host's clock may be from the server's: the check at a grant, and the offset.

use std::time::Duration;

use super::params::SKEW_PARAM;
use crate::error::{Error, ErrorCode, Result};

/// Ok when the server's clock `server_ms`, read between `sent_ms` and `received_ms` on this
/// host's clock, is within the allowed skew; else the `CLOCK_BEHIND` refusal. A clock ahead of
/// the server's shortens every lease by as much (the holder stops at the server's end), so
/// ahead it is allowed at most a quarter of the TTL as well. Behind, it is allowed less than
/// 90% of the TTL (counted from the send time, the most it can be): the time floor can be as
/// late as the server's clock at the grant, and the lease's first end on this host's clock is
/// 90% of the TTL after the send, so a clock further behind would make its first ids at or
/// past that end and lose the lease (`LEASE_LOST`) instead of being refused.
pub(super) fn check_skew(
    sent_ms: u64,
    received_ms: u64,
    server_ms: u64,
    max_skew: Duration,
    ttl_ms: u64,
) -> Result<()> {
    let max = u64::try_from(max_skew.as_millis()).unwrap_or(u64::MAX);
    let behind = server_ms.saturating_sub(received_ms);
    let ahead = sent_ms.saturating_sub(server_ms);
    let raise = format!("raise {SKEW_PARAM}");
    let (why, fix) = if behind > max {
        (
            format!(
                "this host's clock is {behind} ms behind the server's (at most {max} ms allowed)"
            ),
            raise,
        )
    } else if ahead > max {
        (
            format!(
                "this host's clock is {ahead} ms ahead of the server's (at most {max} ms allowed)"
            ),
            raise,
        )
    } else if ahead > ttl_ms / 4 {
        (
            format!(
                "this host's clock is {ahead} ms ahead of the server's, more than a quarter of \
                 the lease's {ttl_ms} ms TTL"
            ),
            "lengthen the lease's TTL".to_owned(),
        )
    } else if server_ms.saturating_sub(sent_ms) >= ttl_ms / 10 * 9 {
        (
            format!(
                "this host's clock is {} ms behind the server's, not under 90% of the lease's \
                 {ttl_ms} ms TTL (its first ids could fall past the lease)",
                server_ms.saturating_sub(sent_ms)
            ),
            "lengthen the lease's TTL".to_owned(),
        )
    } else {
        return Ok(());
    };
    Err(Error::permanent(
        ErrorCode::ClockBehind,
        format!("worker lease refused: {why}; fix the host's clock (NTP) or {fix}"),
    ))
}

/// The server's clock `server_ms` minus this host's at the middle of the round trip from
/// `sent_ms` to `received_ms`, saturating (a hostile reply cannot overflow it).
pub(super) fn offset_ms(server_ms: i64, sent_ms: u64, received_ms: u64) -> i64 {
    let mid = sent_ms / 2 + received_ms / 2;
    server_ms.saturating_sub(i64::try_from(mid).unwrap_or(i64::MAX))
}
