//! The lease's shared state at work: telling the server, keeping the end, riding out an
//! outage from the file, and the renewer thread.

use super::*;

impl Shared {
    pub(super) fn new(
        source: RemoteSource,
        ask: &Ask<'_>,
        id: u64,
        token: String,
        file: Option<LeaseFile>,
        margin_ms: u64,
    ) -> Shared {
        Shared {
            source,
            service: ask.service.to_owned(),
            id,
            token,
            ttl_ms: ask.ttl_ms,
            holder: ask.holder.unwrap_or_default().to_owned(),
            file,
            margin_ms,
            lease_end_ms: AtomicU64::new(0),
            measured_ms: AtomicU64::new(now_ms()),
            file_reserved_ms: AtomicU64::new(u64::MAX),
            clock_replies: AtomicBool::new(false),
            // Nothing may be made until the grant is checked.
            valid_until_ms: AtomicU64::new(0),
            reserved_ms: AtomicU64::new(0),
            offset_ms: AtomicI64::new(0),
            stop: Mutex::new(false),
            wake: Condvar::new(),
        }
    }

    /// The lease as its file holds it, with `mark_ms` as the mark.
    pub(super) fn record(&self, mark_ms: u64) -> LeaseRecord {
        let (boot_id, boot_ms) = boot_now().unwrap_or_default();
        LeaseRecord {
            service: self.service.clone(),
            holder: self.holder.clone(),
            id: self.id,
            token: self.token.clone(),
            lease_end_ms: self.lease_end_ms.load(Ordering::Relaxed),
            reserved_ms: self.reserved_ms.load(Ordering::Relaxed),
            offset_ms: self.offset_ms.load(Ordering::Relaxed),
            measured_ms: self.measured_ms.load(Ordering::Relaxed),
            mark_ms,
            written_ms: now_ms(),
            boot_id,
            boot_ms,
        }
    }

    /// Lets ids carry times up to `until` (only forward), writing the lease file first when
    /// there is one: no id passes a mark that is not on disk. `false` when the write failed
    /// (the validity then stays as it was).
    pub(super) fn extend_to(&self, until: u64) -> bool {
        if let Some(file) = &self.file {
            let current = self.valid_until_ms.load(Ordering::Acquire);
            let reserved = self.reserved_ms.load(Ordering::Relaxed);
            // Written also when the reservation came down (or went), so that a start from the
            // file never trusts more than the server last told.
            let lowered = reserved < self.file_reserved_ms.load(Ordering::Relaxed);
            if until <= current && !lowered {
                return true;
            }
            if file.write(&self.record(until.max(current))).is_err() {
                return false;
            }
            self.file_reserved_ms.store(reserved, Ordering::Relaxed);
        }
        self.valid_until_ms.fetch_max(until, Ordering::AcqRel);
        true
    }

    /// Why the lease file could not be written.
    pub(super) fn file_error(&self) -> Error {
        let path = self.file.as_ref().map(|f| f.path().display().to_string());
        lease_error(format!(
            "the lease file {} cannot be written",
            path.unwrap_or_default()
        ))
    }

    /// While the server is out of reach, a lease kept in a file goes on up to its reservation's
    /// end less the margin (its end on the server's clock, by the last measured offset; this
    /// process's clock does not step), a third of the TTL at a time, each step on disk first.
    pub(super) fn ride_out(&self) {
        let reserved = self.reserved_ms.load(Ordering::Relaxed);
        if self.file.is_none() || reserved == 0 {
            return;
        }
        let now = now_ms();
        let server_now = i128::from(now) + i128::from(self.offset_ms.load(Ordering::Relaxed));
        // Clocks drift apart since the offset was measured: allow 0.1% of that time.
        let since = now.saturating_sub(self.measured_ms.load(Ordering::Relaxed));
        let margin = self.margin_ms.saturating_add(since / DRIFT_PER);
        let left = i128::from(reserved) - server_now - i128::from(margin);
        let Ok(left) = u64::try_from(left) else {
            return;
        };
        // Ids are stamped with this host's clock, and the next holder's floor is the
        // reservation's end on the server's: no id time at or past it less the margin, however
        // far ahead this clock reads.
        let until = now
            .saturating_add(left)
            .min(now.saturating_add(self.ttl_ms / 10 * 9))
            .min(reserved.saturating_sub(margin));
        let current = self.valid_until_ms.load(Ordering::Acquire);
        // Not a write every retry: only when it moves the validity by a third of the TTL.
        if current != 0 && until >= current.saturating_add(self.ttl_ms / 3) {
            self.extend_to(until);
        }
    }

    /// `IDF.WORKER RENEW|RELEASE service id token TIME time_ms` (and `CLOCK` on a renewal,
    /// when the server tells its clock).
    pub(super) fn tell(&self, sub: &str, time_ms: u64) -> Result<(String, Reply)> {
        self.tell_with(sub, time_ms, &[])
    }

    /// [`tell`](Self::tell) with `more` words after the time.
    pub(super) fn tell_with(
        &self,
        sub: &str,
        time_ms: u64,
        more: &[&[u8]],
    ) -> Result<(String, Reply)> {
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
        args.extend_from_slice(more);
        self.source.call(&args, "IDF.WORKER")
    }
}

/// The renewer: every third of the TTL (the first time after `first`), `RENEW` with the
/// current end as the latest id time.
pub(super) fn renew(s: &Shared, first: Duration) {
    let every = Duration::from_millis(s.ttl_ms / 3);
    let mut wait = first;
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
            Ok((_, Reply::Int(end))) => {
                s.reserved_ms.store(0, Ordering::Relaxed);
                Some(*end)
            }
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
                        s.measured_ms.store(received, Ordering::Relaxed);
                    }
                    // No reservation told (a server older than names, after a failover): none
                    // is trusted any more.
                    let reserved = match more {
                        [Reply::Int(reserved), ..] => u64::try_from(*reserved).unwrap_or(0),
                        _ => 0,
                    };
                    s.reserved_ms.store(reserved, Ordering::Relaxed);
                    let told = u64::try_from(*end).unwrap_or(0);
                    s.lease_end_ms.store(told, Ordering::Relaxed);
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
            // With a file, on disk first; a failed write leaves the validity as it was: try
            // again soon.
            wait = if s.extend_to(sent.saturating_add(s.ttl_ms / 10 * 9).min(end)) {
                every
            } else {
                Duration::from_millis(100).min(every)
            };
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
            // by itself if this goes on (kept in a file, at its reservation's end).
            _ => {
                s.ride_out();
                wait = Duration::from_millis(100).min(every);
            }
        }
    }
}
