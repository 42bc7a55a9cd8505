//! Worker-id leases (`IDF.WORKER`): snowflake node ids handed to client processes for a time.
//!
//! A lease gives a service's lowest free id in `0..max` for `ttl` ms; the holder renews it
//! (reporting the latest time it put in an id) and releases it when done. An id is free again
//! only when its lease has ended *and* the last time its holder reported has passed, so two live
//! processes never share an id and a new holder never makes an id with an old holder's time.
//! Every change is a compare-and-set on the row's version, in one transaction with the leader
//! term check (the fence, on SQL with `--ha` and always on etcd), so leases survive restarts and
//! failovers and a deposed leader changes none.
//!
//! The server keeps a copy of each service's leases (`Leases`), read once and then kept up to
//! date by its own writes, so ACQUIRE finds the lowest free id in O(log n) of the leases held
//! and concurrent ACQUIREs take different ids. The copy is only a guide: every write still
//! compares the stored version, and a write that finds the store changed (another server)
//! throws the copy away to be read again; a role change throws away every copy.
//!
//! Lease writes are committed in groups: the writes that arrive while one transaction commits
//! go together in the next one (one commit, one fsync), so many processes taking ids at once
//! wait for two commits, not for one each.
//!
//! Hosts' clocks disagree, so a grant carries the id's *time floor* (the latest time an earlier
//! holder could have put in an id: its lease's end or the last time it reported, whichever is
//! later) and this server's clock. The holder makes no id at or below the floor, and checks
//! its own clock against the server's. The floor rides in the lease's token (`hex.floor`), so
//! every renewal can repeat it without a new column in the store.
//!
//! Leases are bounded: a service holds at most `--max-leases-per-service` and the server at
//! most `--max-leases` (held, or ended but not yet free); an ACQUIRE past either is refused.
//!
//! Ids are sticky (Leaf's persistent node per instance): an ACQUIRE may name its holder
//! (`HOLDER name`, a stable name of the instance: host and port, a pod's name). The row keeps
//! the name, and when the lease ends (released or expired) the id stays *reserved* for that
//! holder for `--worker-reserve-ms` more: no other holder gets it before, while the named one
//! gets it back as soon as it is free for it (its lease ended and its last reported time
//! passed). So a restarted instance gets its own id again, and an operator can tell which
//! instance made an id from its node field. A holder name must name one instance: two live
//! processes giving the same name are two holders the server cannot tell apart (it still never
//! gives them the id at once: a live lease is never granted again).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use tokio::sync::oneshot;

use super::Allocator;
use super::lease_table::*;
use crate::serve::lock::lock;
use idforge_store::{StoreError, WorkerRow};

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
    /// A start from a lease file (`RENEW … RESUME`) found the lease live: another process may
    /// be renewing it (the file was copied or linked), so it is not handed to a second one.
    #[error(
        "LEASEHELD {ends_in_ms} the lease is live: another process may hold it (a copied or \
         linked lease file); it ends in {ends_in_ms} ms unless renewed again"
    )]
    Held {
        /// How long (ms) until the lease ends unless renewed.
        ends_in_ms: i64,
    },
    /// The store failed.
    #[error("ERR store unavailable: {0}")]
    Store(#[from] StoreError),
    /// A limit on the leases held was reached (`--max-leases-per-service`, `--max-leases`).
    #[error("ERR worker lease limit reached: {0}; retry when leases end")]
    Full(String),
    /// A RENEW or RELEASE reported a time further past the lease's end than `time_slack`
    /// allows (nothing was written).
    #[error(
        "ERR TIME {time} is more than {slack} ms past the lease's end {end}: a holder reports \
         times its lease covers (is its clock far ahead of the server's?)"
    )]
    TimeTooFar {
        /// The time reported (Unix ms).
        time: i64,
        /// The lease's end before this call (Unix ms, this server's clock).
        end: i64,
        /// How far past the end a time may be (ms).
        slack: i64,
    },
}

/// A lease granted by [`Allocator::worker_acquire`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The worker id.
    pub id: i64,
    /// The secret that renews and releases it.
    pub token: String,
    /// The lease's length.
    pub ttl_ms: i64,
    /// The id's time floor: the latest time (Unix ms) an earlier holder could have put in an
    /// id; the new holder's ids must carry later times (0: never held).
    pub floor_ms: i64,
    /// This server's clock at the grant (Unix ms); the lease ends `ttl_ms` after it.
    pub server_ms: i64,
    /// Until when (Unix ms, this server's clock) the id stays reserved for the holder named
    /// (0: none named).
    pub reserved_ms: i64,
}

/// What [`Allocator::worker_renew`] does with a lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenewKind {
    /// Extends it by its TTL from now (the holder's renewer).
    Renew,
    /// A process starting from a lease file takes it back (`RENEW … RESUME`): only once it has
    /// ended, so that a second process reaching a copied or linked file cannot share it, and
    /// under a new token, so that an earlier process on the old one can never renew it again.
    Resume,
    /// Ends it now (`RELEASE`): the id goes back.
    Release,
    /// Ends it now but keeps it for its token (`RELEASE … KEEP`, a lease kept in a file): the
    /// holder's next start resumes it at once instead of waiting out its TTL.
    Park,
}

/// A renewal by [`Allocator::worker_renew`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renewal {
    /// The lease's new end (Unix ms, this server's clock).
    pub end_ms: i64,
    /// The time floor the lease was granted with (0 when unknown: a lease granted by an older
    /// server).
    pub floor_ms: i64,
    /// This server's clock at the renewal (Unix ms).
    pub server_ms: i64,
    /// Until when (Unix ms, this server's clock) the id stays reserved for its holder (0: the
    /// lease names none).
    pub reserved_ms: i64,
    /// The lease's token from now on: a new one after a [`RenewKind::Resume`].
    pub token: String,
}

/// The most rows one `IDF.WORKER LIST` page holds, and the page without `COUNT`.
pub const LIST_MAX: usize = 1000;
/// The rows of a `LIST` page without `COUNT`.
pub const LIST_DEFAULT: usize = 100;

impl Allocator {
    /// Compare-and-sets one lease (see [`idforge_store::Store::put_worker`]), committed with
    /// the other writes waiting at the time.
    async fn put_lease(&self, service: &str, row: &WorkerRow) -> Result<bool, StoreError> {
        let (done, mut result) = oneshot::channel();
        lock(&self.lease_queue).push_back(LeaseWrite {
            service: service.to_owned(),
            row: row.clone(),
            done,
        });
        loop {
            let _writer = self.lease_writer.lock().await;
            // Committed by the request that held the writer before?
            match result.try_recv() {
                Ok(held) => return held,
                Err(oneshot::error::TryRecvError::Closed) => {
                    return Err(StoreError("the lease write was interrupted".into()));
                }
                Err(oneshot::error::TryRecvError::Empty) => {}
            }
            let group = self.lease_group();
            if group.is_empty() {
                // Cannot happen: whoever took this write out of the queue answered it or
                // dropped its answer (Closed, above).
                return Err(StoreError("the lease write was lost".into()));
            }
            // The store holds worker ids as ids (global); the copies here are local numbers.
            let writes: Vec<(String, WorkerRow)> = group
                .iter()
                .map(|w| {
                    let id = self.stripe.worker_global(w.row.id);
                    (
                        w.service.clone(),
                        WorkerRow {
                            id,
                            ..w.row.clone()
                        },
                    )
                })
                .collect();
            match self.store.put_workers(&writes).await {
                Ok(held) => {
                    for (w, held) in group.into_iter().zip(held) {
                        let _ = w.done.send(Ok(held));
                    }
                }
                Err(e) => {
                    for w in group {
                        let _ = w.done.send(Err(e.clone()));
                    }
                }
            }
        }
    }

    /// Takes the next group of waiting lease writes: one per lease (a second write of a lease
    /// waits for the next group, as it compares with the first's result), in key order (so
    /// servers sharing a database lock rows in the same order).
    fn lease_group(&self) -> Vec<LeaseWrite> {
        let mut queue = lock(&self.lease_queue);
        let mut keys = HashSet::new();
        let mut group = Vec::new();
        let mut later = std::collections::VecDeque::new();
        while let Some(w) = queue.pop_front() {
            if group.len() < GROUP && keys.insert((w.service.clone(), w.row.id)) {
                group.push(w);
            } else {
                later.push_back(w);
            }
        }
        *queue = later;
        group.sort_by(|a, b| (&a.service, a.row.id).cmp(&(&b.service, b.row.id)));
        group
    }

    /// Reads `service`'s leases unless another request just did.
    async fn load_leases(&self, service: &str) -> Result<(), LeaseError> {
        let _one = self.lease_load.lock().await;
        if lock(&self.workers).contains_key(service) {
            return Ok(());
        }
        let generation = self.lease_generation.fetch_add(1, Ordering::Relaxed) + 1;
        // This stripe's rows, as local numbers (other stripes' ids are never leased here).
        let rows = self.store.workers(service).await?;
        let rows = rows
            .into_iter()
            .filter_map(|row| {
                let id = self.stripe.worker_local(row.id)?;
                Some(WorkerRow { id, ..row })
            })
            .collect();
        let leases = Leases::new(generation, rows, self.lease_count.held.clone());
        lock(&self.workers).insert(service.into(), leases);
        Ok(())
    }

    /// Applies `f` to the copy of `service`'s leases if it is still the `generation` read.
    fn with_leases(&self, service: &str, generation: u64, f: impl FnOnce(&mut Leases)) {
        if let Some(leases) = lock(&self.workers).get_mut(service) {
            if leases.generation == generation {
                f(leases);
            }
        }
    }

    /// Forgets the copy of `service`'s leases (the store changed under it).
    fn forget_leases(&self, service: &str, generation: u64) {
        let mut workers = lock(&self.workers);
        if workers
            .get(service)
            .is_some_and(|l| l.generation == generation)
        {
            workers.remove(service);
        }
    }

    /// Leases a worker id of `service` below `max`: the one `holder` (when named) took last if
    /// it is free for it, else the lowest id free for all. `floor_told`: the grant's floor
    /// reaches the holder (`CLOCK`); `in_file`: the holder keeps the lease in a file (`FILE`:
    /// ended without a `RELEASE`, it goes to no one until its reservation ends, and its token
    /// renews it even after its end; a name is needed).
    pub async fn worker_acquire(
        &self,
        service: &str,
        ttl_ms: i64,
        max: i64,
        holder: &str,
        floor_told: bool,
        in_file: bool,
    ) -> Result<Grant, LeaseError> {
        // A striped server leases its stripe's ids only (worker ids K, K+N, …): its copy of the
        // leases numbers them 0, 1, …; the store holds the ids themselves.
        let (asked, max) = (max, self.stripe.local_workers(max));
        let (mut tries, mut loads) = (0, 0);
        while tries < TRIES && loads <= TRIES {
            let now = now_ms();
            let picked = {
                let mut workers = lock(&self.workers);
                // A holder taking back its own id adds no lease: no room is needed.
                let own = workers.get_mut(service).and_then(|l| {
                    let pick = l.pick_own(holder, now, max, floor_told)?;
                    Some((l.generation, pick))
                });
                match own {
                    Some((generation, pick)) => Some((generation, Some(pick))),
                    None => {
                        self.lease_room(&mut workers, service, now)?;
                        workers
                            .get_mut(service)
                            .map(|l| (l.generation, l.pick(now, max)))
                    }
                }
            };
            let (generation, (id, version, floor_ms)) = match picked {
                None => {
                    loads += 1;
                    self.load_leases(service).await?;
                    continue;
                }
                Some((_, None)) => return Err(LeaseError::NoneFree(asked)),
                Some((generation, Some(pick))) => (generation, pick),
            };
            tries += 1;
            let expires_ms = now.saturating_add(ttl_ms);
            let row = WorkerRow {
                id,
                token: lease_token(floor_ms, in_file && !holder.is_empty()),
                expires_ms,
                last_time_ms: now,
                ttl_ms,
                holder: holder.to_owned(),
                reserved_ms: reservation(holder, expires_ms, self.policy.worker_reserve_ms),
                version,
            };
            match self.put_lease(service, &row).await {
                Ok(true) => {
                    let (token, reserved_ms) = (row.token.clone(), row.reserved_ms);
                    let stored = WorkerRow {
                        version: version + 1,
                        ..row
                    };
                    self.with_leases(service, generation, |l| l.written(stored));
                    let id = self.stripe.worker_global(id);
                    return Ok(Grant {
                        id,
                        token,
                        ttl_ms,
                        floor_ms,
                        server_ms: now,
                        reserved_ms,
                    });
                }
                // Another server wrote it: read the leases again.
                Ok(false) => self.forget_leases(service, generation),
                Err(e) => {
                    self.with_leases(service, generation, |l| l.untake(id));
                    return Err(e.into());
                }
            }
        }
        Err(LeaseError::Busy)
    }

    /// Extends a lease by its TTL from now, takes it back from a file, or ends it (`kind`);
    /// `time_ms` is the latest time the holder put in an id. Returns the lease's new end (Unix
    /// ms), with the lease's time floor, this server's clock and its token. Reads and writes
    /// only that lease's row.
    pub async fn worker_renew(
        &self,
        service: &str,
        id: i64,
        token: &str,
        time_ms: i64,
        kind: RenewKind,
    ) -> Result<Renewal, LeaseError> {
        // Another stripe's id was never leased here.
        let Some(local) = self.stripe.worker_local(id) else {
            return Err(LeaseError::Lost);
        };
        let ends = matches!(kind, RenewKind::Release | RenewKind::Park);
        for _ in 0..TRIES {
            let Some(row) = self.store.worker(service, id).await? else {
                return Err(LeaseError::Lost);
            };
            let row = WorkerRow { id: local, ..row };
            let now = now_ms();
            // An ended lease is never brought back: its holder may have been replaced. Except
            // one kept in a file by a named holder, renewed with its token: the token changes
            // with every grant, so no one else has had the id since.
            let revivable = token_in_file(token) && !row.holder.is_empty();
            if row.token.is_empty() || row.token != token || (row.expires_ms <= now && !revivable) {
                return Err(LeaseError::Lost);
            }
            // A start from a file while the lease is live: the process that renews it may be
            // another one on a copy of the file. Its end (unless renewed) tells the caller how
            // long a process killed without a word keeps it.
            if kind == RenewKind::Resume && row.expires_ms > now {
                return Err(LeaseError::Held {
                    ends_in_ms: row.expires_ms - now,
                });
            }
            if kind == RenewKind::Park && !revivable {
                return Err(LeaseError::Lost);
            }
            // Such a holder may have made ids up to its reservation's end.
            let end = if revivable {
                row.expires_ms.max(row.reserved_ms)
            } else {
                row.expires_ms
            };
            let slack = time_slack(row.ttl_ms);
            if time_ms > end.saturating_add(slack) {
                return Err(LeaseError::TimeTooFar {
                    time: time_ms,
                    end,
                    slack,
                });
            }
            let expires_ms = if ends {
                now
            } else {
                now.saturating_add(row.ttl_ms)
            };
            // A renewal never brings the reservation in: its holder may be riding out to the
            // end it was told (a server whose clock is behind, after a failover, would pull it
            // in). A holder that gives its id back is done with it.
            let told = if kind == RenewKind::Release || row.holder.is_empty() {
                0
            } else {
                row.reserved_ms
            };
            let reserved_ms =
                reservation(&row.holder, expires_ms, self.policy.worker_reserve_ms).max(told);
            // Taken back from a file: a new token (the old one, in any other copy of the file,
            // renews nothing from now on) carrying the id's floor for this holder: every time
            // its earlier processes reported or its lease's end covered.
            let (token, floor_ms) = match kind {
                RenewKind::Release => (String::new(), token_floor(token)),
                RenewKind::Resume => {
                    let floor = own_floor_of(&row).max(token_floor(token));
                    (lease_token(floor, true), floor)
                }
                RenewKind::Renew | RenewKind::Park => (row.token.clone(), token_floor(token)),
            };
            let next = WorkerRow {
                token: token.clone(),
                expires_ms,
                last_time_ms: row.last_time_ms.max(time_ms),
                reserved_ms,
                ..row
            };
            let generation = lock(&self.workers).get(service).map(|l| l.generation);
            if self.put_lease(service, &next).await? {
                if let Some(generation) = generation {
                    let stored = WorkerRow {
                        version: next.version + 1,
                        ..next
                    };
                    self.with_leases(service, generation, |l| l.written(stored));
                }
                return Ok(Renewal {
                    end_ms: expires_ms,
                    floor_ms,
                    server_ms: now,
                    reserved_ms,
                    token,
                });
            }
        }
        Err(LeaseError::Busy)
    }

    /// Refuses an ACQUIRE of `service` when it, or the server, holds as many leases as the
    /// policy allows (leases that ended and whose last time passed are counted free first).
    fn lease_room(
        &self,
        workers: &mut HashMap<Box<str>, Leases>,
        service: &str,
        now: i64,
    ) -> Result<(), LeaseError> {
        let (per_service, per_server) =
            (self.policy.max_leases_per_service, self.policy.max_leases);
        if let Some(l) = workers.get_mut(service) {
            l.advance(now);
            if per_service > 0 && l.held() >= per_service {
                return Err(LeaseError::Full(format!(
                    "service '{service}' holds {per_service} leases (--max-leases-per-service)"
                )));
            }
        }
        if per_server == 0 || self.lease_count.held.load(Ordering::Relaxed) < per_server {
            return Ok(());
        }
        // Other services' copies learn that their leases ended only when used: look at them
        // all, but not more often than every SWEEP_EVERY_MS, so a flood of refused ACQUIREs
        // costs no more than one sweep per period.
        let swept = self.lease_count.swept_ms.load(Ordering::Relaxed);
        if now.saturating_sub(swept) >= SWEEP_EVERY_MS
            && self
                .lease_count
                .swept_ms
                .compare_exchange(swept, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            for l in workers.values_mut() {
                l.advance(now);
            }
        }
        if self.lease_count.held.load(Ordering::Relaxed) >= per_server {
            return Err(LeaseError::Full(format!(
                "this server holds {per_server} leases (--max-leases)"
            )));
        }
        Ok(())
    }

    /// One page of `service`'s leases: at most `count` rows with ids at or above `cursor`, in
    /// id order, and the cursor of the next page (0 after the last).
    pub async fn worker_list(
        &self,
        service: &str,
        cursor: i64,
        count: usize,
    ) -> Result<(Vec<WorkerRow>, i64), LeaseError> {
        // Every page reads all of the service's rows from the store and keeps one page: the
        // store has no ranged read of leases. That read is bounded: ids are leased lowest free
        // first, so a service has about as many rows as it ever held leases at once, at most
        // --max-leases-per-service (16,384 by default). A walk of n rows costs n/count reads of
        // n rows, fine at that size; a ranged read in the store would be the fix if it grows.
        let mut rows: Vec<WorkerRow> = self
            .store
            .workers(service)
            .await?
            .into_iter()
            .filter(|r| r.id >= cursor)
            .collect();
        rows.sort_by_key(|r| r.id);
        let next = match rows.get(count) {
            Some(r) => r.id,
            None => 0,
        };
        rows.truncate(count);
        Ok((rows, next))
    }

    /// (service, leases held) of every service this server has read, sorted: the status
    /// page's view (services untouched since the last idle sweep may have left memory).
    pub(crate) fn leases_by_service(&self) -> Vec<(String, usize)> {
        let mut services: Vec<(String, usize)> = lock(&self.workers)
            .iter()
            .map(|(name, leases)| (name.to_string(), leases.held()))
            .collect();
        services.sort();
        services
    }

    /// The most leases one service holds, among the services in memory.
    pub fn leases_service_max(&self) -> usize {
        let workers = lock(&self.workers);
        workers.values().map(|l| l.held()).max().unwrap_or(0)
    }

    /// How many leases this server counts as held, over every service.
    pub fn leases_held(&self) -> usize {
        self.lease_count.held.load(Ordering::Relaxed)
    }
}
