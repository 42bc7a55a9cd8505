//! Worker-id leases: a snowflake node id held from an idforge server (`IDF.WORKER`) instead of
//! configured by hand.
//!
//! [`WorkerLease::acquire`] asks the server for the lowest free id of a service; a background
//! thread renews it every third of its TTL. The lease is good until the send time of the last
//! successful renewal plus 90% of the TTL (the server keeps it for the whole TTL from when it
//! received the renewal, which is later), and a [`Snowflake`](crate::Snowflake) on it refuses
//! to make an id whose time is not before that instant: a holder cut off from the server stops
//! by itself before the server can give the id to anyone else. Each renewal reports that
//! instant as the latest id time, so the server never hands the id to a process whose ids could
//! carry the same times. Dropping the generator releases the lease with the last time it used.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::{CoreError, Error, ErrorCode, Result};
use crate::fork;
use crate::source::RemoteSource;
use crate::source::resp::Reply;

/// The TTL of a lease unless chosen: long enough to ride out a server failover.
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(10);

/// The wall clock in Unix ms (a lease's end is a wall-clock time at the server too).
fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn lease_error(message: String) -> Error {
    Error::permanent(ErrorCode::SourceUnavailable, message)
}

struct Shared {
    source: RemoteSource,
    service: String,
    id: u64,
    token: String,
    ttl_ms: u64,
    /// Ids must carry a time before this (Unix ms); 0 once the lease is lost.
    valid_until_ms: AtomicU64,
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
    renewer: Option<JoinHandle<()>>,
    born_in: u64,
}

impl WorkerLease {
    /// Leases the lowest free worker id of `service` below `max` from the server at `url`
    /// (`idforge://[user:pass@]host:port[,host:port…]`), for `ttl` (at least 100 ms).
    pub fn acquire(url: &str, service: &str, ttl: Duration, max: u64) -> Result<WorkerLease> {
        crate::source::validate_tag(service)?;
        if !url.starts_with("idforge://") {
            return Err(
                CoreError::InvalidUrl("worker leases come from an idforge:// server").into(),
            );
        }
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        if !(100..=86_400_000).contains(&ttl_ms) {
            return Err(CoreError::InvalidArgument("a lease TTL is 100 ms to 24 h").into());
        }
        if max == 0 {
            return Err(CoreError::InvalidArgument("no worker id to lease below 0").into());
        }
        let source = RemoteSource::new(url)?;
        let (ttl_text, max_text) = (ttl_ms.to_string(), max.min(1 << 24).to_string());
        let sent = wall_ms();
        let args: [&[u8]; 6] = [
            b"IDF.WORKER",
            b"ACQUIRE",
            service.as_bytes(),
            ttl_text.as_bytes(),
            b"MAX",
            max_text.as_bytes(),
        ];
        let (addr, reply) = source.call(&args, "IDF.WORKER ACQUIRE")?;
        let (id, token) = match reply {
            Reply::Array(parts) => match parts.as_slice() {
                [Reply::Int(id), Reply::Bulk(token), ..] if *id >= 0 => {
                    (*id as u64, String::from_utf8_lossy(token).into_owned())
                }
                _ => return Err(lease_error(format!("{addr}: a malformed grant {parts:?}"))),
            },
            Reply::Error(e) if e.contains("no free worker id") => {
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
            valid_until_ms: AtomicU64::new(sent + ttl_ms / 10 * 9),
            stop: Mutex::new(false),
            wake: Condvar::new(),
        });
        let renewer = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("idforge-lease".into())
                .spawn(move || renew(&shared))
                .map_err(|e| lease_error(format!("cannot start the lease renewer: {e}")))?
        };
        Ok(WorkerLease {
            shared,
            renewer: Some(renewer),
            born_in: fork::register()?,
        })
    }

    /// The leased worker id.
    pub fn id(&self) -> u64 {
        self.shared.id
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
    /// `IDF.WORKER RENEW|RELEASE service id token TIME time_ms`.
    fn tell(&self, sub: &str, time_ms: u64) -> Result<(String, Reply)> {
        let (id, time) = (self.id.to_string(), time_ms.to_string());
        self.source.call(
            &[
                b"IDF.WORKER",
                sub.as_bytes(),
                self.service.as_bytes(),
                id.as_bytes(),
                self.token.as_bytes(),
                b"TIME",
                time.as_bytes(),
            ],
            "IDF.WORKER",
        )
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
        let sent = wall_ms();
        let reply = s.tell("RENEW", until);
        match reply {
            Ok((_, Reply::Int(_))) => {
                // Only forward: a slow reply must not shorten what a faster one granted.
                s.valid_until_ms
                    .fetch_max(sent + s.ttl_ms / 10 * 9, Ordering::AcqRel);
                wait = every;
            }
            Ok((_, Reply::Error(e))) if e.starts_with("LEASELOST") => {
                s.valid_until_ms.store(0, Ordering::Release);
                return;
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
