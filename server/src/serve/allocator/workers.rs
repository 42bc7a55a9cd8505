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

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::sync::oneshot;

use super::Allocator;
use crate::serve::lock::lock;
use crate::serve::store::{StoreError, WorkerRow};

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

impl From<StoreError> for LeaseError {
    fn from(e: StoreError) -> LeaseError {
        LeaseError::Store(e.0)
    }
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

/// A renewal by [`Allocator::worker_renew`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
}

/// The most rows one `IDF.WORKER LIST` page holds, and the page without `COUNT`.
pub const LIST_MAX: usize = 1000;
/// The rows of a `LIST` page without `COUNT`.
pub const LIST_DEFAULT: usize = 100;

/// The leader's wall clock, in Unix ms (leases are wall-clock times: they outlive a process).
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A lease's secret: 32 random hex digits, then `.` and the id's time floor (kept in the
/// token, so renewals can tell it again without a column of its own), then `.f` for a holder
/// that keeps its lease in a file (see [`token_in_file`]).
fn token(floor_ms: i64, in_file: bool) -> String {
    let mut raw = [0u8; 16];
    // Without entropy the token is only guessable, not shared: the time keeps it unique.
    if getrandom::fill(&mut raw).is_err() {
        raw[..8].copy_from_slice(&now_ms().to_le_bytes());
    }
    let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    let file = if in_file { FILE_MARK } else { "" };
    format!("{hex}.{floor_ms}{file}")
}

/// The end of the token of a lease kept in a file.
const FILE_MARK: &str = ".f";

/// Whether the token's holder keeps its lease in a file (`ACQUIRE … HOLDER name FILE`): such a
/// holder may go on using its id past its lease's end while the server is out of its reach, up
/// to the end of its reservation, and brings the lease back by renewing it with the token. So
/// its ended (not released) lease goes to no one before the reservation ends, not even to its
/// own name: only the token renews it.
fn token_in_file(token: &str) -> bool {
    token.ends_with(FILE_MARK)
}

/// The time floor a token was made with (0 for tokens of older servers, which had none).
fn token_floor(token: &str) -> i64 {
    token
        .strip_suffix(FILE_MARK)
        .unwrap_or(token)
        .rsplit_once('.')
        .and_then(|(_, floor)| floor.parse().ok())
        .unwrap_or(0)
}

/// How far past its lease's current end a holder may report a time (RENEW/RELEASE `TIME`): the
/// lease's TTL, and at least a minute.
///
/// The reported time keeps the id from being handed out until it has passed, so an unbounded
/// one (`TIME 9e18`) would keep the id, and a place under `--max-leases`, forever. A holder
/// reports the end of what its lease covers: this runtime never past the end the server told
/// it, so at or below the current end; runtimes before the server told its clock count 90% of
/// the TTL from their own send time, which is past the server's end only when their clock leads
/// the server's, by the lead less a tenth of the TTL. The slack accepts those up to a lead of
/// 1.1 TTL (11 s at the default 10 s TTL) and at least a minute (so short TTLs do not refuse
/// a clock merely loosely kept). It costs little: a holder that stops renewing frees its id at
/// most this much later than its lease's end, as if its TTL were that much longer.
fn time_slack(ttl_ms: i64) -> i64 {
    ttl_ms.max(TIME_SLACK_MIN_MS)
}

/// The least [`time_slack`].
const TIME_SLACK_MIN_MS: i64 = 60_000;

/// How many times a compare-and-set lost to another writer is tried again.
const TRIES: usize = 8;

/// When an id with this row may be leased again by its own holder (the name in the row): its
/// lease has ended and the last time its holder reported has passed.
fn own_free_at(row: &WorkerRow) -> i64 {
    row.expires_ms.max(row.last_time_ms.saturating_add(1))
}

/// When an id with this row may be leased again by any holder: as [`own_free_at`], and its
/// reservation for its holder (if any) has ended.
fn free_at(row: &WorkerRow) -> i64 {
    own_free_at(row).max(row.reserved_ms)
}

/// The latest time an id with this row may have been put in an id by its holder: the holder
/// reported it, or its lease's end bounds it (a holder's ids stay below the end it was told).
/// Given to another holder, the reservation's end counts too: it is when the id became free.
fn floor_of(row: &WorkerRow) -> i64 {
    free_at(row).saturating_sub(1).max(0)
}

/// [`floor_of`] for the row's own holder taking the id back within its reservation.
fn own_floor_of(row: &WorkerRow) -> i64 {
    own_free_at(row).saturating_sub(1).max(0)
}

/// Until when an id stays reserved for `holder` once its lease ends at `end_ms` (0: no name,
/// no reservation).
fn reservation(holder: &str, end_ms: i64, reserve_ms: i64) -> i64 {
    if holder.is_empty() {
        0
    } else {
        end_ms.saturating_add(reserve_ms)
    }
}

/// This server's count of leases held, over every service (see [`Leases`]'s `held`).
#[derive(Debug, Default)]
pub(crate) struct LeaseCount {
    /// Leases held or not yet free, and ids being written, over every copy in memory.
    held: Arc<AtomicUsize>,
    /// When (Unix ms) the copies were last swept for leases that became free.
    swept_ms: AtomicI64,
}

/// How often, at most, a full server sweeps every copy for leases that became free.
const SWEEP_EVERY_MS: i64 = 100;

/// One service's leases as this server last read or wrote them.
#[derive(Debug)]
pub(crate) struct Leases {
    /// Which reading of the store this is (see `Allocator::lease_generation`).
    generation: u64,
    /// The rows, by id.
    rows: HashMap<i64, WorkerRow>,
    /// `(free_at, id)` of the rows not known to be free yet.
    waiting: BTreeSet<(i64, i64)>,
    /// Ids whose row is free (its `free_at` has passed).
    free: BTreeSet<i64>,
    /// Ids below `fresh` without a row.
    holes: BTreeSet<i64>,
    /// The lowest id above every row.
    fresh: i64,
    /// Ids an ACQUIRE in flight is writing (in none of the sets above meanwhile).
    taken: HashSet<i64>,
    /// The id each holder name last took (rows with a holder only; bounded by the rows).
    by_holder: HashMap<String, i64>,
    /// Used since the last idle sweep (see `Allocator::evict_idle`).
    pub(crate) used: bool,
    /// Idle sweeps in a row that found it unused.
    pub(crate) idle_sweeps: u32,
    /// What this copy adds to `count`: its rows not known to be free, and its ids being
    /// written. Kept by [`recount`](Self::recount); given back when the copy is dropped.
    held: usize,
    /// The server's count (see [`LeaseCount`]).
    count: Arc<AtomicUsize>,
}

impl Drop for Leases {
    fn drop(&mut self) {
        self.count.fetch_sub(self.held, Ordering::Relaxed);
    }
}

impl Leases {
    fn new(generation: u64, rows: Vec<WorkerRow>, count: Arc<AtomicUsize>) -> Leases {
        let mut leases = Leases {
            generation,
            rows: HashMap::new(),
            waiting: BTreeSet::new(),
            free: BTreeSet::new(),
            holes: BTreeSet::new(),
            fresh: rows
                .iter()
                .map(|r| r.id.saturating_add(1))
                .max()
                .unwrap_or(0),
            taken: HashSet::new(),
            by_holder: HashMap::new(),
            used: true,
            idle_sweeps: 0,
            held: 0,
            count,
        };
        let ids: HashSet<i64> = rows.iter().map(|r| r.id).collect();
        // Rows are made lowest id first, so holes are rare (another writer, a hand edit); at
        // most a bounded number are remembered, the rest are only found after a re-read.
        leases.holes = (0..leases.fresh)
            .filter(|id| !ids.contains(id))
            .take(1 << 16)
            .collect();
        // A name with two rows (it took another id while its old one was held) goes back to
        // the one it took last.
        let mut named: Vec<&WorkerRow> = rows.iter().filter(|r| !r.holder.is_empty()).collect();
        named.sort_by_key(|r| (r.expires_ms, r.id));
        for row in named {
            leases.by_holder.insert(row.holder.clone(), row.id);
        }
        for row in rows {
            leases.waiting.insert((free_at(&row), row.id));
            leases.rows.insert(row.id, row);
        }
        leases.recount();
        leases
    }

    /// Brings `held` and the server's count up to date after a change.
    fn recount(&mut self) {
        let held = self.waiting.len() + self.taken.len();
        if held > self.held {
            self.count.fetch_add(held - self.held, Ordering::Relaxed);
        } else {
            self.count.fetch_sub(self.held - held, Ordering::Relaxed);
        }
        self.held = held;
    }

    /// Moves the rows whose `free_at` has passed to the free ids.
    fn advance(&mut self, now: i64) {
        while let Some(&(at, id)) = self.waiting.first() {
            if at > now {
                break;
            }
            self.waiting.pop_first();
            self.free.insert(id);
        }
        self.recount();
    }

    /// How many leases of this service are held (or ended but not yet free, or being
    /// written), as of the last [`advance`](Self::advance).
    fn held(&self) -> usize {
        self.held
    }

    /// Takes the lowest free id below `max` for a write: `(id, stored version, time floor)`.
    fn pick(&mut self, now: i64, max: i64) -> Option<(i64, i64, i64)> {
        self.used = true;
        self.advance(now);
        let id = [self.free.first(), self.holes.first(), Some(&self.fresh)]
            .into_iter()
            .flatten()
            .copied()
            .min()?;
        if id >= max {
            return None;
        }
        if !self.free.remove(&id) && !self.holes.remove(&id) {
            self.fresh += 1;
        }
        self.taken.insert(id);
        self.recount();
        let row = self.rows.get(&id);
        Some((id, row.map_or(0, |r| r.version), row.map_or(0, floor_of)))
    }

    /// Takes the id `holder` took last for a write, when it is below `max` and free for it
    /// (its lease ended and, unless the grant tells the floor, its last time passed: reserved
    /// for it or free for all): `(id, stored version, time floor)`. `None` for no name, or
    /// when that id is not free for it.
    ///
    /// A holder told the floor makes no id at or below it, so its last reported time need not
    /// have passed: an instance restarted at once (its last ids a little ahead of the clock)
    /// gets its own id, and waits out the difference, instead of another id.
    fn pick_own(
        &mut self,
        holder: &str,
        now: i64,
        max: i64,
        floor_told: bool,
    ) -> Option<(i64, i64, i64)> {
        if holder.is_empty() {
            return None;
        }
        let id = *self.by_holder.get(holder)?;
        let row = self.rows.get(&id)?;
        // A lease kept in a file and not given back may still be in use: only its token
        // brings it back (its reservation ends, then it is free for all).
        let in_use = !row.token.is_empty() && token_in_file(&row.token);
        let free_for_it = !in_use
            && if floor_told {
                row.expires_ms <= now
            } else {
                own_free_at(row) <= now
            };
        if id >= max || row.holder != holder || !free_for_it || self.taken.contains(&id) {
            return None;
        }
        let (version, floor, at) = (row.version, own_floor_of(row), free_at(row));
        self.used = true;
        self.waiting.remove(&(at, id));
        self.free.remove(&id);
        self.taken.insert(id);
        self.recount();
        Some((id, version, floor))
    }

    /// Whether an ACQUIRE of this service is writing.
    pub(crate) fn busy(&self) -> bool {
        !self.taken.is_empty()
    }

    /// Puts back an id whose write failed (nothing was written).
    fn untake(&mut self, id: i64) {
        if self.taken.remove(&id) {
            match self.rows.get(&id) {
                Some(row) => {
                    self.waiting.insert((free_at(row), id));
                }
                None => {
                    self.holes.insert(id);
                }
            }
        }
        self.recount();
    }

    /// Records a row this server wrote (its version already the stored one).
    fn written(&mut self, row: WorkerRow) {
        self.used = true;
        self.taken.remove(&row.id);
        self.free.remove(&row.id);
        self.holes.remove(&row.id);
        if let Some(old) = self.rows.get(&row.id) {
            self.waiting.remove(&(free_at(old), row.id));
            if self.by_holder.get(&old.holder) == Some(&row.id) && old.holder != row.holder {
                self.by_holder.remove(&old.holder);
            }
        }
        if !row.holder.is_empty() {
            self.by_holder.insert(row.holder.clone(), row.id);
        }
        if row.id >= self.fresh {
            self.holes.extend((self.fresh..row.id).take(1 << 16));
            self.fresh = row.id + 1;
        }
        self.waiting.insert((free_at(&row), row.id));
        self.rows.insert(row.id, row);
        self.recount();
    }
}

/// A lease write waiting for its group's commit.
#[derive(Debug)]
pub(crate) struct LeaseWrite {
    service: String,
    row: WorkerRow,
    done: oneshot::Sender<Result<bool, StoreError>>,
}

/// The most lease writes committed together.
const GROUP: usize = 256;

impl Allocator {
    /// Compare-and-sets one lease (see [`crate::serve::store::Store::put_worker`]), committed with
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
                token: token(floor_ms, in_file && !holder.is_empty()),
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

    /// Extends a lease by its TTL from now (`release`: ends it now); `time_ms` is the latest
    /// time the holder put in an id. Returns the lease's new end (Unix ms), with the lease's
    /// time floor and this server's clock. Reads and writes only that lease's row.
    pub async fn worker_renew(
        &self,
        service: &str,
        id: i64,
        token: &str,
        time_ms: i64,
        release: bool,
    ) -> Result<Renewal, LeaseError> {
        // Another stripe's id was never leased here.
        let Some(local) = self.stripe.worker_local(id) else {
            return Err(LeaseError::Lost);
        };
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
            let expires_ms = if release {
                now
            } else {
                now.saturating_add(row.ttl_ms)
            };
            // A renewal never brings the reservation in: its holder may be riding out to the
            // end it was told (a server whose clock is behind, after a failover, would pull it
            // in). A holder that gives its id back is done with it.
            let told = if release || row.holder.is_empty() {
                0
            } else {
                row.reserved_ms
            };
            let reserved_ms =
                reservation(&row.holder, expires_ms, self.policy.worker_reserve_ms).max(told);
            let next = WorkerRow {
                token: if release {
                    String::new()
                } else {
                    row.token.clone()
                },
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
                    floor_ms: token_floor(token),
                    server_ms: now,
                    reserved_ms,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, expires_ms: i64, last_time_ms: i64) -> WorkerRow {
        WorkerRow {
            id,
            token: "t".into(),
            expires_ms,
            last_time_ms,
            ttl_ms: 1000,
            holder: String::new(),
            reserved_ms: 0,
            version: 1,
        }
    }

    fn named(id: i64, expires_ms: i64, holder: &str, reserved_ms: i64) -> WorkerRow {
        WorkerRow {
            holder: holder.into(),
            reserved_ms,
            ..row(id, expires_ms, 5)
        }
    }

    #[test]
    fn a_reserved_id_goes_back_to_its_holder_only() {
        // 0 ended at 10, reserved for "a" until 500; 1 ended at 10, reserved for "b" until 20.
        let mut l = Leases::new(
            1,
            vec![named(0, 10, "a", 500), named(1, 10, "b", 20)],
            Arc::default(),
        );
        // Others get neither while they are reserved: the lowest id free for all is 2.
        assert_eq!(l.pick(15, 10), Some((2, 0, 0)));
        assert_eq!(l.pick_own("c", 15, 10, false), None, "a name never seen");
        // "a" gets its own id back within its reservation, with its own floor (its lease's
        // last instant), not the reservation's.
        assert_eq!(l.pick_own("a", 15, 10, false), Some((0, 1, 9)));
        assert_eq!(l.pick_own("a", 15, 10, false), None, "being written");
        // Past "b"'s reservation its id is free for all, with a floor at the reservation's end.
        assert_eq!(l.pick(25, 10), Some((1, 1, 19)));
        // Below MAX only; and not while its lease is live.
        l.written(WorkerRow {
            version: 2,
            ..named(0, 100, "a", 600)
        });
        assert_eq!(l.pick_own("a", 50, 10, false), None, "live");
        assert_eq!(l.pick_own("a", 150, 0, false), None, "past MAX");
        assert_eq!(l.pick_own("a", 150, 10, false), Some((0, 2, 99)));
    }

    #[test]
    fn a_name_follows_the_id_it_took_last() {
        // "a" holds 0 and took 3 later (0 was live when it came back); 3 is the one it gets.
        let mut l = Leases::new(
            1,
            vec![named(0, 100, "a", 900), named(3, 200, "a", 1000)],
            Arc::default(),
        );
        assert_eq!(l.pick_own("a", 250, 10, false), Some((3, 1, 199)));
        l.untake(3);
        // An anonymous holder takes 0 past its reservation: the name no longer leads there.
        l.written(WorkerRow {
            version: 2,
            ..row(0, 2000, 5)
        });
        l.written(WorkerRow {
            version: 2,
            ..named(3, 300, "b", 400)
        });
        assert_eq!(l.pick_own("a", 2500, 10, false), None);
        assert_eq!(l.pick_own("b", 350, 10, false), Some((3, 2, 299)));
    }

    #[test]
    fn a_holder_told_the_floor_need_not_wait_for_its_last_time() {
        // "a" released 0 at 100, reporting ids up to 180 (made a little ahead of its clock).
        let mut l = Leases::new(1, vec![named(0, 100, "a", 900)], Arc::default());
        l.written(WorkerRow {
            last_time_ms: 180,
            ..named(0, 100, "a", 900)
        });
        assert_eq!(l.pick_own("a", 120, 10, false), None, "untold: waits");
        // Told, it gets the id at once with a floor at its last time: it waits for it itself.
        assert_eq!(l.pick_own("a", 120, 10, true), Some((0, 1, 180)));
        l.untake(0);
        assert_eq!(l.pick_own("a", 90, 10, true), None, "never while leased");
    }

    #[test]
    fn a_lease_kept_in_a_file_goes_back_to_no_one_until_given_back() {
        // "a" keeps its lease in a file; it ended at 100 without a RELEASE: "a" may be going on
        // with it while cut off from the server.
        let in_file = WorkerRow {
            token: token(0, true),
            ..named(0, 100, "a", 900)
        };
        let mut l = Leases::new(1, vec![in_file.clone()], Arc::default());
        assert_eq!(l.pick_own("a", 500, 10, true), None, "only its token");
        assert_eq!(l.pick(500, 10).map(|p| p.0), Some(1), "no one else's");
        // Given back (the token cleared), it is its name's again.
        l.written(WorkerRow {
            token: String::new(),
            version: 2,
            ..in_file
        });
        assert_eq!(l.pick_own("a", 500, 10, true), Some((0, 2, 99)));
    }

    #[test]
    fn the_lowest_free_id_is_picked_and_never_twice() {
        // 0 held until 100, 1 free since 10, 3 held; 2 has no row.
        let mut l = Leases::new(
            1,
            vec![row(0, 100, 5), row(1, 10, 5), row(3, 100, 5)],
            Arc::default(),
        );
        assert_eq!(l.pick(50, 10), Some((1, 1, 9)));
        assert_eq!(l.pick(50, 10), Some((2, 0, 0)));
        assert_eq!(l.pick(50, 10), Some((4, 0, 0)));
        assert_eq!(l.pick(50, 5), None, "0 and 3 are held below 5");
        // A failed write puts its id back; a successful one records the new row.
        l.untake(2);
        l.written(WorkerRow {
            version: 1,
            ..row(4, 200, 50)
        });
        assert_eq!(l.pick(50, 10), Some((2, 0, 0)));
        // Time passes: 0 and 3 end (0's holder reported a time past its end). The floor is
        // the later of the lease's last instant and the reported time.
        l.written(row(0, 100, 150));
        assert_eq!(l.pick(120, 10), Some((3, 1, 99)));
        assert_eq!(l.pick(151, 10), Some((0, 1, 150)));
        assert_eq!(l.pick(151, 10), Some((5, 0, 0)));
    }

    #[test]
    fn the_held_count_follows_every_copy_and_leaves_with_it() {
        let count = Arc::new(AtomicUsize::new(0));
        let mut a = Leases::new(1, vec![row(0, 100, 5), row(1, 10, 5)], count.clone());
        let b = Leases::new(1, vec![row(0, 100, 5)], count.clone());
        assert_eq!(
            count.load(Ordering::Relaxed),
            3,
            "rows not known free count"
        );
        a.advance(50);
        assert_eq!((a.held(), count.load(Ordering::Relaxed)), (1, 2));
        // A pick is held while written and after.
        let (id, ..) = a.pick(50, 10).unwrap();
        assert_eq!(count.load(Ordering::Relaxed), 3);
        a.untake(id);
        a.advance(50);
        assert_eq!(count.load(Ordering::Relaxed), 2);
        let (id, version, _) = a.pick(50, 10).unwrap();
        a.written(WorkerRow {
            version: version + 1,
            ..row(id, 200, 50)
        });
        assert_eq!((a.held(), count.load(Ordering::Relaxed)), (2, 3));
        drop(b);
        assert_eq!(count.load(Ordering::Relaxed), 2);
        drop(a);
        assert_eq!(count.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_token_carries_its_floor() {
        let t = token(1_700_000_000_123, false);
        assert_eq!(t.len(), 32 + 1 + 13);
        assert_eq!(token_floor(&t), 1_700_000_000_123);
        assert!(!token_in_file(&t));
        assert_eq!(token_floor(&token(0, false)), 0);
        let f = token(1_700_000_000_123, true);
        assert_eq!(f.len(), 32 + 1 + 13 + 2);
        assert!(token_in_file(&f));
        assert_eq!(token_floor(&f), 1_700_000_000_123);
        // A token of an older server (hex only) has no floor to tell.
        assert_eq!(token_floor("0123456789abcdef0123456789abcdef"), 0);
    }

    #[test]
    fn a_row_written_past_the_fresh_ids_leaves_holes() {
        let mut l = Leases::new(1, vec![], Arc::default());
        l.written(row(3, 100, 5));
        let picks: Vec<i64> = (0..4).filter_map(|_| l.pick(50, 10)).map(|p| p.0).collect();
        assert_eq!(picks, [0, 1, 2, 4]);
    }
}
