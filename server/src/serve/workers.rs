//! Worker-id leases (`IDF.WORKER`): snowflake node ids handed to client processes for a time.
//!
//! A lease gives a service's lowest free id in `0..max` for `ttl` ms; the holder renews it
//! (reporting the latest time it put in an id) and releases it when done. An id is free again
//! only when its lease has ended *and* the last time its holder reported has passed, so two live
//! processes never share an id and a new holder never makes an id with an old holder's time.
//! Every change is a compare-and-set in the store (fenced on etcd), so leases survive restarts
//! and failovers.

use std::time::{SystemTime, UNIX_EPOCH};

use super::engine::Engine;
use super::store::{StoreError, WorkerRow};

/// Why a lease call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeaseError {
    /// Every id below the maximum is held (or not yet safe to reuse).
    #[error("ERR no free worker id below {0}")]
    NoneFree(i64),
    /// The lease ended (expired, released, or taken over): the holder must stop.
    #[error("LEASELOST the worker lease ended; acquire a new one")]
    Lost,
    /// Other holders kept winning the compare-and-set.
    #[error("ERR too many concurrent lease changes; retry")]
    Busy,
    /// The store failed.
    #[error("ERR store unavailable: {0}")]
    Store(String),
}

impl From<StoreError> for LeaseError {
    fn from(e: StoreError) -> LeaseError {
        LeaseError::Store(e.0)
    }
}

/// A lease granted by [`Engine::worker_acquire`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The worker id.
    pub id: i64,
    /// The secret that renews and releases it.
    pub token: String,
    /// The lease's length.
    pub ttl_ms: i64,
}

/// The leader's wall clock, in Unix ms (leases are wall-clock times: they outlive a process).
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn token() -> String {
    let mut raw = [0u8; 16];
    // Without entropy the token is only guessable, not shared: the time keeps it unique.
    if getrandom::fill(&mut raw).is_err() {
        raw[..8].copy_from_slice(&now_ms().to_le_bytes());
    }
    raw.iter().map(|b| format!("{b:02x}")).collect()
}

/// How many times a compare-and-set lost to another writer is tried again.
const TRIES: usize = 8;

impl Engine {
    /// Leases the lowest free worker id of `service` below `max`.
    pub async fn worker_acquire(
        &self,
        service: &str,
        ttl_ms: i64,
        max: i64,
    ) -> Result<Grant, LeaseError> {
        for _ in 0..TRIES {
            let rows = self.store.workers(service).await?;
            let now = now_ms();
            let free = |id: i64| match rows.iter().find(|r| r.id == id) {
                None => Some(0),
                Some(r) if r.expires_ms <= now && r.last_time_ms < now => Some(r.version),
                Some(_) => None,
            };
            let Some((id, version)) = (0..max).find_map(|id| free(id).map(|v| (id, v))) else {
                return Err(LeaseError::NoneFree(max));
            };
            let row = WorkerRow {
                id,
                token: token(),
                expires_ms: now.saturating_add(ttl_ms),
                last_time_ms: now,
                ttl_ms,
                version,
            };
            if self.store.put_worker(service, &row).await? {
                return Ok(Grant {
                    id,
                    token: row.token,
                    ttl_ms,
                });
            }
        }
        Err(LeaseError::Busy)
    }

    /// Extends a lease by its TTL from now (`release`: ends it now); `time_ms` is the latest
    /// time the holder put in an id. Returns the lease's new end (Unix ms).
    pub async fn worker_renew(
        &self,
        service: &str,
        id: i64,
        token: &str,
        time_ms: i64,
        release: bool,
    ) -> Result<i64, LeaseError> {
        for _ in 0..TRIES {
            let rows = self.store.workers(service).await?;
            let now = now_ms();
            let Some(row) = rows.into_iter().find(|r| r.id == id) else {
                return Err(LeaseError::Lost);
            };
            // An ended lease is never brought back: its holder may have been replaced.
            if row.token.is_empty() || row.token != token || row.expires_ms <= now {
                return Err(LeaseError::Lost);
            }
            let expires_ms = if release {
                now
            } else {
                now.saturating_add(row.ttl_ms)
            };
            let next = WorkerRow {
                token: if release {
                    String::new()
                } else {
                    row.token.clone()
                },
                expires_ms,
                last_time_ms: row.last_time_ms.max(time_ms),
                ..row
            };
            if self.store.put_worker(service, &next).await? {
                return Ok(expires_ms);
            }
        }
        Err(LeaseError::Busy)
    }

    /// Every lease of `service`.
    pub async fn worker_list(&self, service: &str) -> Result<Vec<WorkerRow>, LeaseError> {
        Ok(self.store.workers(service).await?)
    }
}
