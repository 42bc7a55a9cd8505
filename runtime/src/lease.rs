//! Worker-id leases: a snowflake node id held from an idforge server (`IDF.WORKER`) instead of
//! configured by hand.
//!
//! [`WorkerLease::acquire`] asks the server for the lowest free id of a service; a background
//! thread renews it every third of its TTL. The lease is good until the send time of the last
//! successful renewal plus 90% of the TTL (the server keeps it for the whole TTL from when it
//! received the renewal, which is later), and never past the end the server told (its clock's
//! number, so a holder whose clock runs ahead cannot outlast it), and a
//! [`Snowflake`](crate::Snowflake) on it refuses to make an id whose time is not before that
//! instant: a holder cut off from the server stops by itself before the server can give the id
//! to anyone else. Each renewal reports that instant as the latest id time, so the server never
//! hands the id to a process whose ids could carry the same times. Dropping the generator
//! releases the lease with the last time it used.
//!
//! Hosts' clocks disagree. The grant carries the id's *time floor*, the latest time an earlier
//! holder could have put in an id (on its clock, or the server's lease end): the generator makes
//! no id at or below it, waiting within its policy or failing with `CLOCK_BEHIND`. The grant
//! also carries the server's clock: a host whose clock differs from it by more than the allowed
//! skew ([`DEFAULT_MAX_SKEW`], the URL's `max_skew_ms` or
//! [`SnowflakeBuilder::lease_max_skew`](crate::SnowflakeBuilder::lease_max_skew)) gives the
//! lease back at once and fails with `CLOCK_BEHIND`, naming the difference.
//!
//! A holder may name itself (the URL's `holder`, or
//! [`SnowflakeBuilder::lease_holder`](crate::SnowflakeBuilder::lease_holder)): a stable name of
//! the instance, such as its host and port or its pod's name. The server then gives it back the
//! id it held before whenever that id is free for it, and keeps the id reserved for it for a
//! while after its lease ends (the server's `--worker-reserve-ms`), so a restarted instance
//! gets its own id again. A name must name one instance. A server older than names refuses the
//! word: the lease is then taken without a name, as before.
//!
//! The floor and the clock are asked for (`ACQUIRE … CLOCK`, `RENEW … CLOCK`). A server older
//! than them refuses the word: the lease is then taken, and renewed, as before them, without a
//! floor or a skew check, so an earlier holder's ids are kept apart only by the id's reuse delay
//! (its lease's end and its last reported time, on the server's clock), which a host clock
//! further behind than that delay can cross.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::clock::{Clock, SystemClock};
use crate::error::{CoreError, Error, ErrorCode, Result};
use crate::fork;
use crate::source::RemoteSource;
use crate::source::resp::Reply;

/// The TTL of a lease unless chosen: long enough to ride out a server failover.
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(10);

/// How far this host's clock may differ from the server's at ACQUIRE unless chosen. Hosts kept
/// by NTP agree within milliseconds, so a second only refuses a clock that is really wrong (or
/// unsynchronised), and it is what the default policy can ride out: a holder behind the time
/// floor by up to its 1 s lead borrows, by up to another second it waits.
pub const DEFAULT_MAX_SKEW: Duration = Duration::from_secs(1);

/// The URL parameter that sets the allowed skew, in ms (read here, not by the source).
const SKEW_PARAM: &str = "max_skew_ms";

/// The URL parameter that names the holder (read here, not by the source).
const HOLDER_PARAM: &str = "holder";

/// The clock a lease measures with: the one ids are made on by default (the wall clock read
/// once, then advanced with the monotonic clock), so a wall-clock step while the lease is held
/// moves neither.
fn now_ms() -> u64 {
    SystemClock::shared().now_ms()
}

fn lease_error(message: String) -> Error {
    Error::permanent(ErrorCode::SourceUnavailable, message)
}

/// The lease's own parameters of a lease URL (the source reads the others).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct LeaseParams {
    /// `max_skew_ms`.
    pub(crate) max_skew: Option<Duration>,
    /// `holder`.
    pub(crate) holder: Option<String>,
}

/// Checks a holder's name: what a tag may be (1-128 of `A-Za-z0-9_-.:`).
pub(crate) fn validate_holder(name: &str) -> Result<()> {
    crate::source::validate_tag(name).map_err(|_| {
        CoreError::InvalidArgument(
            "a holder name is 1-128 characters of A-Za-z0-9_-.: not starting with '.'",
        )
        .into()
    })
}

/// `url` without the lease's own parameters, and their values.
pub(crate) fn split_params(url: &str) -> Result<(String, LeaseParams)> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), LeaseParams::default()));
    };
    let (mut skew, mut holder) = (None, None);
    let mut kept = Vec::new();
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some((HOLDER_PARAM, name)) => {
                if validate_holder(name).is_err() {
                    return Err(CoreError::InvalidUrl(
                        "holder is 1-128 characters of A-Za-z0-9_-.: not starting with '.'",
                    )
                    .into());
                }
                holder = Some(name.to_owned());
            }
            Some((SKEW_PARAM, ms)) => match ms.parse::<u64>() {
                Ok(ms @ 0..=86_400_000) => skew = Some(Duration::from_millis(ms)),
                _ => {
                    return Err(CoreError::InvalidUrl(
                        "max_skew_ms is a whole number of milliseconds, 0 to 86400000",
                    )
                    .into());
                }
            },
            _ => kept.push(pair),
        }
    }
    let url = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((
        url,
        LeaseParams {
            max_skew: skew,
            holder,
        },
    ))
}

/// Ok when the server's clock `server_ms`, read between `sent_ms` and `received_ms` on this
/// host's clock, is within the allowed skew; else the `CLOCK_BEHIND` refusal. A clock ahead of
/// the server's shortens every lease by as much (the holder stops at the server's end), so
/// ahead it is allowed at most a quarter of the TTL as well. Behind, it is allowed less than
/// 90% of the TTL (counted from the send time, the most it can be): the time floor can be as
/// late as the server's clock at the grant, and the lease's first end on this host's clock is
/// 90% of the TTL after the send, so a clock further behind would make its first ids at or
/// past that end and lose the lease (`LEASE_LOST`) instead of being refused.
fn check_skew(
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
fn offset_ms(server_ms: i64, sent_ms: u64, received_ms: u64) -> i64 {
    let mid = sent_ms / 2 + received_ms / 2;
    server_ms.saturating_sub(i64::try_from(mid).unwrap_or(i64::MAX))
}

struct Shared {
    source: RemoteSource,
    service: String,
    id: u64,
    token: String,
    ttl_ms: u64,
    /// Whether renewals ask for the server's clock and the floor (`RENEW … CLOCK`): set by a
    /// grant that told them, cleared when a server refuses it (an older one, after a failover
    /// during a rolling upgrade).
    clock_replies: AtomicBool,
    /// Ids must carry a time before this (Unix ms); 0 once the lease is lost.
    valid_until_ms: AtomicU64,
    /// Until when the server keeps the id reserved for this holder (Unix ms, the server's
    /// clock; 0: no name, or not told).
    reserved_ms: AtomicU64,
    /// The server's clock minus this host's at the last grant or renewal that told it (ms,
    /// the middle of the round trip).
    offset_ms: AtomicI64,
    /// Set to stop the renewer.
    stop: Mutex<bool>,
    wake: Condvar,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerLease")
            .field("service", &self.service)
            .field("id", &self.id)
            .field("ttl_ms", &self.ttl_ms)
            .field(
                "valid_until_ms",
                &self.valid_until_ms.load(Ordering::Relaxed),
            )
            .finish_non_exhaustive()
    }
}

/// A worker id leased from an idforge server, renewed in the background until dropped.
#[derive(Debug)]
pub struct WorkerLease {
    shared: Arc<Shared>,
    /// The id's time floor from the grant (Unix ms; 0: never held, or an older server).
    floor_ms: u64,
    renewer: Option<JoinHandle<()>>,
    born_in: u64,
}

impl WorkerLease {
    /// Leases the lowest free worker id of `service` below `max` from the server at `url`
    /// (`idforge://[user:pass@]host:port[,host:port…]`, optionally with `max_skew_ms`), for
    /// `ttl` (at least 100 ms).
    pub fn acquire(url: &str, service: &str, ttl: Duration, max: u64) -> Result<WorkerLease> {
        WorkerLease::acquire_with_skew(url, service, ttl, max, None)
    }

    /// [`acquire`](Self::acquire), allowing this host's clock to differ from the server's by
    /// `max_skew` (`None`: the URL's `max_skew_ms`, else [`DEFAULT_MAX_SKEW`]).
    pub fn acquire_with_skew(
        url: &str,
        service: &str,
        ttl: Duration,
        max: u64,
        max_skew: Option<Duration>,
    ) -> Result<WorkerLease> {
        WorkerLease::acquire_with(
            url,
            service,
            ttl,
            max,
            LeaseParams {
                max_skew,
                holder: None,
            },
        )
    }

    /// [`acquire_with_skew`](Self::acquire_with_skew) with the builder's options (each wins
    /// over the URL's).
    pub(crate) fn acquire_with(
        url: &str,
        service: &str,
        ttl: Duration,
        max: u64,
        chosen: LeaseParams,
    ) -> Result<WorkerLease> {
        crate::source::validate_tag(service)?;
        if !url.starts_with("idforge://") {
            return Err(
                CoreError::InvalidUrl("worker leases come from an idforge:// server").into(),
            );
        }
        let (url, from_url) = split_params(url)?;
        let max_skew = chosen
            .max_skew
            .or(from_url.max_skew)
            .unwrap_or(DEFAULT_MAX_SKEW);
        let holder = chosen.holder.or(from_url.holder);
        if let Some(name) = &holder {
            validate_holder(name)?;
        }
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        if !(100..=86_400_000).contains(&ttl_ms) {
            return Err(CoreError::InvalidArgument("a lease TTL is 100 ms to 24 h").into());
        }
        if max == 0 {
            return Err(CoreError::InvalidArgument("no worker id to lease below 0").into());
        }
        let source = RemoteSource::new(&url)?;
        let (ttl_text, max_text) = (ttl_ms.to_string(), max.min(1 << 24).to_string());
        let mut args: Vec<&[u8]> = vec![
            b"IDF.WORKER",
            b"ACQUIRE",
            service.as_bytes(),
            ttl_text.as_bytes(),
            b"MAX",
            max_text.as_bytes(),
        ];
        if let Some(name) = &holder {
            args.extend([b"HOLDER".as_slice(), name.as_bytes()]);
        }
        args.push(b"CLOCK");
        let mut sent = now_ms();
        let (mut addr, mut reply) = source.call(&args, "IDF.WORKER ACQUIRE")?;
        let older = |reply: &Reply| {
            matches!(reply, Reply::Error(e)
                if e.starts_with("ERR wrong arguments") || e.starts_with("ERR syntax"))
        };
        if holder.is_some() && older(&reply) {
            // A server older than holder names refuses HOLDER: lease without a name, as
            // before them (the id is then not kept for this instance).
            args.drain(6..8);
            sent = now_ms();
            (addr, reply) = source.call(&args, "IDF.WORKER ACQUIRE")?;
        }
        if matches!(&reply, Reply::Error(e) if e.starts_with("ERR wrong arguments")) {
            // A server older than time floors refuses CLOCK: lease as before them, without a
            // floor (an earlier holder's ids are then kept apart only by the id's reuse delay,
            // as they always were with such a server) and without measuring the skew.
            args.pop();
            sent = now_ms();
            (addr, reply) = source.call(&args, "IDF.WORKER ACQUIRE")?;
        }
        let received = now_ms();
        // `[id, token, ttl, floor, server-ms]` with CLOCK; `[id, token, ttl]` from an older
        // server.
        let (id, token, rest) = match reply {
            Reply::Array(parts) => match parts.as_slice() {
                [Reply::Int(id), Reply::Bulk(token), _, rest @ ..] if *id >= 0 => (
                    *id as u64,
                    String::from_utf8_lossy(token).into_owned(),
                    rest.to_vec(),
                ),
                _ => return Err(lease_error(format!("{addr}: a malformed grant {parts:?}"))),
            },
            Reply::Error(e) if e.contains("no free worker id") || e.contains("lease limit") => {
                return Err(Error::permanent(
                    ErrorCode::Overflow,
                    format!("{addr}: {e}"),
                ));
            }
            other => {
                return Err(lease_error(format!(
                    "{addr}: IDF.WORKER ACQUIRE: {other:?}"
                )));
            }
        };
        let shared = Arc::new(Shared {
            source,
            service: service.to_owned(),
            id,
            token,
            ttl_ms,
            clock_replies: AtomicBool::new(false),
            // Nothing may be made until the grant is checked.
            valid_until_ms: AtomicU64::new(0),
            reserved_ms: AtomicU64::new(0),
            offset_ms: AtomicI64::new(0),
            stop: Mutex::new(false),
            wake: Condvar::new(),
        });
        // Past this point the server holds the lease for us: every refusal gives it back at
        // once rather than leave the id held (and counted) until it expires.
        let refuse = |err: Error| {
            let _ = shared.tell("RELEASE", 0);
            err
        };
        let clock = match rest.as_slice() {
            [] => None,
            [Reply::Int(floor), Reply::Int(server), more @ ..] if *floor >= 0 && *server > 0 => {
                // `reserved-ms` follows for a named holder.
                if let [Reply::Int(reserved), ..] = more {
                    let reserved = u64::try_from(*reserved).unwrap_or(0);
                    shared.reserved_ms.store(reserved, Ordering::Relaxed);
                }
                Some((*floor as u64, *server as u64))
            }
            _ => {
                return Err(refuse(lease_error(format!(
                    "{addr}: a malformed grant (floor and clock {rest:?})"
                ))));
            }
        };
        // Good until 90% of the TTL after the request left, and never past the server's end
        // (its clock at the grant plus the TTL) in case this clock runs ahead of the server's.
        let mut valid_until = sent.saturating_add(ttl_ms / 10 * 9);
        let mut floor_ms = 0;
        if let Some((floor, server)) = clock {
            check_skew(sent, received, server, max_skew, ttl_ms).map_err(refuse)?;
            valid_until = valid_until.min(server.saturating_add(ttl_ms));
            floor_ms = floor;
            let offset = offset_ms(i64::try_from(server).unwrap_or(i64::MAX), sent, received);
            shared.offset_ms.store(offset, Ordering::Relaxed);
            shared.clock_replies.store(true, Ordering::Relaxed);
        }
        shared.valid_until_ms.store(valid_until, Ordering::Release);
        // Before the renewer starts: a failure after it would leave it renewing a lease
        // nobody holds.
        let born_in = fork::register().map_err(refuse)?;
        let renewer = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("idforge-lease".into())
                .spawn(move || renew(&shared))
                .map_err(|e| refuse(lease_error(format!("cannot start the lease renewer: {e}"))))?
        };
        Ok(WorkerLease {
            shared,
            floor_ms,
            renewer: Some(renewer),
            born_in,
        })
    }

    /// The leased worker id.
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// The id's time floor (Unix ms): the latest time an earlier holder of this id could have
    /// put in an id. Ids made under this lease carry later times. 0 when the id was never held
    /// (or the server is older than floors).
    pub fn floor_ms(&self) -> u64 {
        self.floor_ms
    }

    /// The server's clock minus this host's (ms), measured at the grant and at each renewal;
    /// 0 when the server does not tell its clock.
    pub fn clock_offset_ms(&self) -> i64 {
        self.shared.offset_ms.load(Ordering::Relaxed)
    }

    /// Until when the server keeps this id reserved for the holder named (Unix ms, the
    /// server's clock), as of the grant or the last renewal; 0 when no name was given (or the
    /// server keeps no reservations).
    pub fn reserved_until_ms(&self) -> u64 {
        self.shared.reserved_ms.load(Ordering::Relaxed)
    }

    /// Until when (Unix ms) ids may carry times; 0 once the lease is lost.
    pub fn valid_until_ms(&self) -> u64 {
        self.shared.valid_until_ms.load(Ordering::Acquire)
    }

    /// Ok when an id with `time_ms` may be handed out under this lease.
    #[inline]
    pub(crate) fn check(&self, time_ms: u64) -> Result<()> {
        if time_ms < self.valid_until_ms() {
            Ok(())
        } else if self.valid_until_ms() == 0 {
            Err(CoreError::LeaseLost("the server ended it; build a new generator").into())
        } else {
            Err(CoreError::LeaseLost("not renewed in time (is the server reachable?)").into())
        }
    }

    /// Ends the lease: stops the renewer and tells the server (in the process that acquired
    /// it only) that ids up to `last_time_ms` were made under it.
    pub(crate) fn release(&mut self, last_time_ms: u64) {
        *self.shared.stop.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.shared.wake.notify_all();
        if fork::current() != self.born_in {
            // A forked child owns neither the lease nor the renewer thread.
            return;
        }
        if let Some(renewer) = self.renewer.take() {
            let _ = renewer.join();
        }
        if self.shared.valid_until_ms.swap(0, Ordering::AcqRel) == 0 {
            return;
        }
        // Best effort: a lease not released simply expires.
        let _ = self.shared.tell("RELEASE", last_time_ms);
    }
}

impl Shared {
    /// `IDF.WORKER RENEW|RELEASE service id token TIME time_ms` (and `CLOCK` on a renewal,
    /// when the server tells its clock).
    fn tell(&self, sub: &str, time_ms: u64) -> Result<(String, Reply)> {
        let (id, time) = (self.id.to_string(), time_ms.to_string());
        let mut args: Vec<&[u8]> = vec![
            b"IDF.WORKER",
            sub.as_bytes(),
            self.service.as_bytes(),
            id.as_bytes(),
            self.token.as_bytes(),
            b"TIME",
            time.as_bytes(),
        ];
        if sub == "RENEW" && self.clock_replies.load(Ordering::Relaxed) {
            args.push(b"CLOCK");
        }
        self.source.call(&args, "IDF.WORKER")
    }
}

/// The renewer: every third of the TTL, `RENEW` with the current end as the latest id time.
fn renew(s: &Shared) {
    let every = Duration::from_millis(s.ttl_ms / 3);
    let mut wait = every;
    loop {
        {
            let stop = s.stop.lock().unwrap_or_else(|e| e.into_inner());
            let (stop, _) = s
                .wake
                .wait_timeout_while(stop, wait, |stop| !*stop)
                .unwrap_or_else(|e| e.into_inner());
            if *stop {
                return;
            }
        }
        let until = s.valid_until_ms.load(Ordering::Acquire);
        if until == 0 {
            return;
        }
        let sent = now_ms();
        let asked_clock = s.clock_replies.load(Ordering::Relaxed);
        let reply = s.tell("RENEW", until);
        let received = now_ms();
        // The lease's end at the server (its clock), and its clock: `end` or `[end, floor,
        // server-ms]`.
        let renewed = match &reply {
            Ok((_, Reply::Int(end))) => Some(*end),
            Ok((_, Reply::Array(parts))) => match parts.as_slice() {
                [
                    Reply::Int(end),
                    Reply::Int(_floor),
                    Reply::Int(server),
                    more @ ..,
                ] => {
                    if *server > 0 {
                        s.offset_ms
                            .store(offset_ms(*server, sent, received), Ordering::Relaxed);
                    }
                    if let [Reply::Int(reserved), ..] = more {
                        let reserved = u64::try_from(*reserved).unwrap_or(0);
                        s.reserved_ms.store(reserved, Ordering::Relaxed);
                    }
                    Some(*end)
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(end) = renewed {
            // Only forward: a slow reply must not shorten what a faster one granted. Never past
            // the server's end: a clock ahead of the server's would outlast it.
            let end = u64::try_from(end).unwrap_or(0);
            s.valid_until_ms.fetch_max(
                sent.saturating_add(s.ttl_ms / 10 * 9).min(end),
                Ordering::AcqRel,
            );
            wait = every;
            continue;
        }
        match reply {
            Ok((_, Reply::Error(e))) if e.starts_with("LEASELOST") => {
                s.valid_until_ms.store(0, Ordering::Release);
                return;
            }
            // Refused with CLOCK: after a failover to a server older than time floors (a
            // rolling upgrade), which knows no CLOCK. Renew without it from now on, at once:
            // only the offset goes unmeasured (the end still bounds the lease). Cleared once,
            // so this retries without waiting at most once.
            Ok((_, Reply::Error(_))) if asked_clock => {
                s.clock_replies.store(false, Ordering::Relaxed);
                wait = Duration::ZERO;
            }
            // The server is failing over or unreachable: try again soon; the lease runs out
            // by itself if this goes on.
            _ => wait = Duration::from_millis(100).min(every),
        }
    }
}

impl Drop for WorkerLease {
    fn drop(&mut self) {
        if self.renewer.is_some() {
            let until = self.valid_until_ms();
            self.release(until);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lease_parameters_are_read_and_left_out_of_the_source_url() {
        let ms = Duration::from_millis;
        let skew = |s: Option<Duration>| LeaseParams {
            max_skew: s,
            holder: None,
        };
        assert_eq!(
            split_params("idforge://h:1").unwrap(),
            ("idforge://h:1".into(), skew(None))
        );
        assert_eq!(
            split_params("idforge://h:1?max_skew_ms=250").unwrap(),
            ("idforge://h:1".into(), skew(Some(ms(250))))
        );
        assert_eq!(
            split_params("idforge://u:p@h:1,g:2?timeout_ms=9&max_skew_ms=0&mode=leader").unwrap(),
            (
                "idforge://u:p@h:1,g:2?timeout_ms=9&mode=leader".into(),
                skew(Some(ms(0)))
            )
        );
        assert_eq!(
            split_params("idforge://h:1?holder=web-0.ns:8080&timeout_ms=9").unwrap(),
            (
                "idforge://h:1?timeout_ms=9".into(),
                LeaseParams {
                    max_skew: None,
                    holder: Some("web-0.ns:8080".into())
                }
            )
        );
        for bad in ["x", "-1", "86400001", ""] {
            let err = split_params(&format!("idforge://h?max_skew_ms={bad}")).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidUrl, "{bad}");
        }
        let long = "h".repeat(129);
        for bad in ["", ".x", "a b", "a%20b", "ä", long.as_str()] {
            let err = split_params(&format!("idforge://h?holder={bad}")).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidUrl, "{bad}");
        }
    }

    #[test]
    fn a_clock_further_from_the_servers_than_allowed_is_refused_both_ways() {
        let second = Duration::from_secs(1);
        let ttl = 10_000;
        // The server's clock read while the request was out: no skew at all.
        assert!(check_skew(1000, 1010, 1005, Duration::ZERO, ttl).is_ok());
        // Up to the bound past either end of the round trip.
        assert!(check_skew(10_000, 10_020, 11_020, second, ttl).is_ok());
        assert!(check_skew(10_000, 10_020, 9_000, second, ttl).is_ok());
        let behind = check_skew(10_000, 10_020, 22_020, second, ttl).unwrap_err();
        assert_eq!(behind.code(), ErrorCode::ClockBehind);
        assert!(behind.to_string().contains("12000 ms behind"), "{behind}");
        let ahead = check_skew(10_000, 10_020, 8_000, second, ttl).unwrap_err();
        assert_eq!(ahead.code(), ErrorCode::ClockBehind);
        assert!(ahead.to_string().contains("2000 ms ahead"), "{ahead}");
        // Ahead, a short lease allows less: its holder stops at the server's end.
        assert!(check_skew(10_000, 10_020, 9_500, second, 1000).is_err());
        assert!(check_skew(10_000, 10_020, 9_800, second, 1000).is_ok());
        // Behind, less than 90% of the TTL from the send time: the floor can be the server's
        // clock, and the first end is 90% of the TTL after the send on this clock.
        assert!(check_skew(10_000, 10_020, 10_899, second, 1000).is_ok());
        let short = check_skew(10_000, 10_020, 10_900, second, 1000).unwrap_err();
        assert_eq!(short.code(), ErrorCode::ClockBehind);
        assert!(short.to_string().contains("900 ms behind"), "{short}");
        assert!(check_skew(10_000, 10_020, 19_000, Duration::from_secs(60), ttl).is_err());
        assert!(check_skew(10_000, 10_020, 18_999, Duration::from_secs(60), ttl).is_ok());
    }

    #[test]
    fn the_offset_saturates_on_hostile_clocks() {
        assert_eq!(offset_ms(1_500, 1_000, 1_010), 495);
        assert_eq!(offset_ms(i64::MIN, 1_000, 1_010), i64::MIN);
        assert_eq!(offset_ms(i64::MAX, 0, 0), i64::MAX);
        assert_eq!(offset_ms(0, u64::MAX, u64::MAX), -i64::MAX);
    }
}
