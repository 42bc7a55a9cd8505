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

mod ask;
mod file;
mod params;
mod renew;
mod skew;
use ask::{Ask, Granted};
use file::{LeaseFile, LeaseRecord, boot_now};
pub(crate) use params::{LeaseParams, split_params, validate_holder};
use renew::renew;
use skew::{check_skew, offset_ms};

/// The TTL of a lease unless chosen: long enough to ride out a server failover.
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(10);

/// How far this host's clock may differ from the server's at ACQUIRE unless chosen. Hosts kept
/// by NTP agree within milliseconds, so a second only refuses a clock that is really wrong (or
/// unsynchronised), and it is what the default policy can ride out: a holder behind the time
/// floor by up to its 1 s lead borrows, by up to another second it waits.
pub const DEFAULT_MAX_SKEW: Duration = Duration::from_secs(1);

/// The clock a lease measures with: the one ids are made on by default (the wall clock read
/// once, then advanced with the monotonic clock), so a wall-clock step while the lease is held
/// moves neither.
fn now_ms() -> u64 {
    SystemClock::shared().now_ms()
}

fn lease_error(message: String) -> Error {
    Error::permanent(ErrorCode::SourceUnavailable, message)
}

/// The least margin (ms) a lease kept in a file keeps from its reservation's end while the
/// server is out of reach.
const MIN_OFFLINE_MARGIN_MS: u64 = 1000;

/// Clocks are allowed to drift apart by 1 ms in this many (0.1%, ten times a poor crystal's)
/// while a lease kept in a file goes on without the server.
const DRIFT_PER: u64 = 1000;

/// How soon a lease resumed from its file without the server tries the server again.
const OFFLINE_RETRY: Duration = Duration::from_millis(100);

struct Shared {
    source: RemoteSource,
    service: String,
    id: u64,
    token: String,
    ttl_ms: u64,
    /// The holder's name ("" when none).
    holder: String,
    /// The file the lease is kept in, if any: written before the validity moves past it.
    file: Option<LeaseFile>,
    /// How far from its reservation's end a lease kept in a file stops when the server is out
    /// of reach (ms).
    margin_ms: u64,
    /// The lease's end as the server last told it (Unix ms, its clock; 0: not told).
    lease_end_ms: AtomicU64,
    /// When (Unix ms, this process's clock) `offset_ms` was last measured.
    measured_ms: AtomicU64,
    /// The reservation's end the file last got (see `extend_to`).
    file_reserved_ms: AtomicU64,
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
                ..LeaseParams::default()
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
        let file = match chosen.file.or(from_url.file) {
            None => None,
            Some(path) => {
                let Some(name) = &holder else {
                    return Err(CoreError::InvalidArgument(
                        "a lease file needs a holder name (holder=, lease_holder)",
                    )
                    .into());
                };
                let (file, record) = LeaseFile::open(path)?;
                if let Some(r) = &record {
                    if r.service != service || &r.holder != name {
                        return Err(file.foreign(r, service, name));
                    }
                }
                Some((file, record))
            }
        };
        let source = RemoteSource::new(&url)?;
        // How far a lease kept in a file stays from its reservation's end when the server is
        // out of reach: the allowed skew (what this host's clock may be off by), at least 1 s.
        let margin = u64::try_from(max_skew.as_millis())
            .unwrap_or(u64::MAX)
            .max(MIN_OFFLINE_MARGIN_MS);
        let ask = Ask {
            service,
            ttl_ms,
            max,
            holder: holder.as_deref(),
            in_file: file.is_some(),
        };
        let (file, record) = match file {
            Some((file, record)) => (Some(file), record),
            None => (None, None),
        };
        let mut own_mark = 0;
        let granted = match &record {
            None => ask.acquire(&source)?,
            Some(record) => match ask.resume_waiting(&source, record, file.as_ref()) {
                // Its own ids, up to the file's mark, came before.
                Ok(Some(granted)) => {
                    own_mark = record.mark_ms;
                    granted
                }
                // Its lease ended: lease again (most likely the same id, reserved for it).
                Ok(None) => {
                    let granted = ask.acquire(&source)?;
                    if granted.id == record.id {
                        own_mark = record.mark_ms;
                    }
                    granted
                }
                // Out of reach (refused, cut, silent, or unable to serve): transient errors
                // only; an answer that refuses is never a reason to go on without the server.
                Err(e) if e.is_transient() => {
                    let file = file.expect("a record comes from a file");
                    return WorkerLease::offline(source, ask, file, record, e, margin);
                }
                Err(e) => return Err(e),
            },
        };
        let Granted {
            id,
            token,
            sent,
            received,
            clock,
            reserved_ms,
            end_ms,
        } = granted;
        // A lease renewed back from its file keeps the TTL it was granted with: renew it by that.
        let ttl_ms = match (end_ms, clock) {
            (Some(end), Some((_, server))) if end > server => end - server,
            _ => ttl_ms,
        };
        let ask = Ask { ttl_ms, ..ask };
        let shared = Arc::new(Shared::new(source, &ask, id, token, file, margin));
        shared.reserved_ms.store(reserved_ms, Ordering::Relaxed);
        // Past this point the server holds the lease for us: every refusal gives it back at
        // once rather than leave the id held (and counted) until it expires.
        let refuse = |err: Error| {
            let _ = shared.tell("RELEASE", 0);
            err
        };
        // Good until 90% of the TTL after the request left, and never past the server's end
        // (its clock at the grant plus the TTL) in case this clock runs ahead of the server's.
        let mut valid_until = sent.saturating_add(ttl_ms / 10 * 9);
        let mut floor_ms = own_mark;
        if let Some((floor, server)) = clock {
            check_skew(sent, received, server, max_skew, ttl_ms).map_err(refuse)?;
            let end = end_ms.unwrap_or(server.saturating_add(ttl_ms));
            valid_until = valid_until.min(end);
            shared.lease_end_ms.store(end, Ordering::Relaxed);
            floor_ms = floor_ms.max(floor);
            let offset = offset_ms(i64::try_from(server).unwrap_or(i64::MAX), sent, received);
            shared.offset_ms.store(offset, Ordering::Relaxed);
            shared.measured_ms.store(received, Ordering::Relaxed);
            shared.clock_replies.store(true, Ordering::Relaxed);
        }
        // With a file: on disk before any id is made under it.
        if !shared.extend_to(valid_until) {
            return Err(refuse(shared.file_error()));
        }
        WorkerLease::start(shared, floor_ms, Duration::from_millis(ttl_ms / 3)).map_err(
            |(e, shared)| {
                let _ = shared.tell("RELEASE", 0);
                e
            },
        )
    }

    /// Goes on with the lease of `record` while the server cannot be reached (`why`): only
    /// while its reservation has certainly not ended (judged on the boot clock, less a margin
    /// of the allowed skew), and only with ids after the file's mark.
    fn offline(
        source: RemoteSource,
        ask: Ask<'_>,
        file: LeaseFile,
        record: &LeaseRecord,
        why: Error,
        margin: u64,
    ) -> Result<WorkerLease> {
        let now = now_ms();
        if record.mark_ms > now.saturating_add(margin) {
            return Err(Error::permanent(
                ErrorCode::ClockBehind,
                format!(
                    "this host's clock is {} ms behind the last id time in the lease file {}: \
                     was it set back? (the server is out of reach: {why})",
                    record.mark_ms - now,
                    file.path().display()
                ),
            ));
        }
        let boot = boot_now();
        let boot = boot.as_ref().map(|(b, ms)| (b.as_str(), *ms));
        let (Some(until), Some((server_now, age))) = (
            record.usable_until(now, boot, margin, DRIFT_PER),
            record.server_clock(boot),
        ) else {
            return Err(lease_error(format!(
                "{why}; and the lease file {} cannot stand in for the server: its reservation may \
                 have ended (or it is from an earlier boot of this host)",
                file.path().display()
            )));
        };
        let shared = Shared::new(
            source,
            &ask,
            record.id,
            record.token.clone(),
            Some(file),
            margin,
        );
        shared
            .reserved_ms
            .store(record.reserved_ms, Ordering::Relaxed);
        shared
            .lease_end_ms
            .store(record.lease_end_ms, Ordering::Relaxed);
        // The offset again, against this process's clock (the wall clock may have been set
        // while the process was down; the boot clock was not), as old as the file's.
        let offset = i64::try_from(server_now - i128::from(now)).unwrap_or(0);
        shared.offset_ms.store(offset, Ordering::Relaxed);
        shared
            .measured_ms
            .store(now.saturating_sub(age), Ordering::Relaxed);
        shared.clock_replies.store(true, Ordering::Relaxed);
        let shared = Arc::new(shared);
        if !shared.extend_to(until.min(now.saturating_add(ask.ttl_ms / 10 * 9))) {
            return Err(shared.file_error());
        }
        // Back to the server as soon as it answers.
        WorkerLease::start(shared, record.mark_ms, OFFLINE_RETRY).map_err(|(e, _)| e)
    }

    /// Starts the renewer (first try after `first`) of a lease whose ids carry times after
    /// `floor_ms`.
    fn start(
        shared: Arc<Shared>,
        floor_ms: u64,
        first: Duration,
    ) -> std::result::Result<WorkerLease, (Error, Arc<Shared>)> {
        // Before the renewer starts: a failure after it would leave it renewing a lease
        // nobody holds.
        let born_in = match fork::register() {
            Ok(b) => b,
            Err(e) => return Err((e, shared)),
        };
        let renewer = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("idforge-lease".into())
                .spawn(move || renew(&shared, first))
        };
        match renewer {
            Ok(renewer) => Ok(WorkerLease {
                shared,
                floor_ms,
                renewer: Some(renewer),
                born_in,
            }),
            Err(e) => Err((
                lease_error(format!("cannot start the lease renewer: {e}")),
                shared,
            )),
        }
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
        if let Some(file) = &self.shared.file {
            // Kept in a file, the lease is kept for the next start: its token brings it back,
            // with or without the server. The mark comes down to the last id's time, and the
            // server ends the lease now but keeps it for the token (`KEEP`), so that start
            // need not wait out the rest of the lease (best effort: otherwise it waits).
            let _ = file.write(&self.shared.record(last_time_ms));
            let _ = self.shared.tell_with("RELEASE", last_time_ms, &[b"KEEP"]);
            return;
        }
        // Best effort: a lease not released simply expires.
        let _ = self.shared.tell("RELEASE", last_time_ms);
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
            ..LeaseParams::default()
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
                    holder: Some("web-0.ns:8080".into()),
                    ..LeaseParams::default()
                }
            )
        );
        assert_eq!(
            split_params("idforge://h:1?lease_file=/var/lib/a/web-0.lease").unwrap(),
            (
                "idforge://h:1".into(),
                LeaseParams {
                    file: Some("/var/lib/a/web-0.lease".into()),
                    ..LeaseParams::default()
                }
            )
        );
        let err = split_params("idforge://h:1?lease_file=").unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidUrl);
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
