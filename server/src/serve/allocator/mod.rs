//! The allocator's shared state and its background persister.
//!
//! Per tag the server holds `next` (the next id to hand out) and `limit` (the `max_id` persisted
//! in the store): ids are served from memory while `next < limit`. When less than half a step is
//! left, the persister moves `limit` ahead in the store; it takes every tag (and snowflake clock)
//! that needs it in one transaction. A request waits only when its tag's cache is exhausted. After
//! a crash the next id is the persisted `max_id`: a gap, never a duplicate.
//!
//! One `impl Allocator` is split by concern on purpose, and these are all its parts:
//!
//! - here: making the allocator, the persister, giving cached ids back, idle eviction;
//! - [`tags`]: `INCR`/`INCRBY` (`Allocator::alloc_for`) and `IDF.TAG`;
//! - [`clocks`]: `IDF.SNOWFLAKE`'s persisted clocks;
//! - [`workers`]: worker-id leases (`IDF.WORKER`).
//!
//! Each holds its own state, which the persister writes together; those four modules import
//! each other, and no other module of `serve` is in a cycle. [`stripe`] cuts ids into the
//! stripes of active-active servers, and the store's guard ([`idforge_store::guard`]) keeps,
//! outside the store, the least mark the store must hold.

pub mod clocks;
mod lease_table;
pub mod stripe;
pub mod tags;
pub mod workers;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use idforge::SystemClock;
use tokio::sync::Notify;

use super::leadership::Leadership;
use super::lock::lock;
use super::metrics::Metrics;
use clocks::ClockState;
use idforge_store::guard::{Guard, GuardError, Mark};
use idforge_store::{Store, StoreError, TagMove};
use stripe::Stripe;
use tags::Tag;

/// How tags are created and how far ahead they persist.
#[derive(Debug, Clone)]
pub struct AllocPolicy {
    /// Create a tag on its first `INCR`/`INCRBY` (with `default_step`, starting at 1).
    pub auto_create: bool,
    /// The step of tags created without one.
    pub default_step: i64,
    /// The largest step the dynamic step grows to.
    pub max_step: i64,
    /// Persists closer together than this double a tag's step; ten times further apart halve it
    /// (down to the tag's own step).
    pub step_interval: Duration,
    /// How long a request waits for the store when its tag's cache is exhausted.
    pub alloc_timeout: Duration,
    /// How far ahead (ms) a snowflake clock's persisted time runs.
    pub clock_window_ms: u64,
    /// How many tags one non-admin user's `INCR`/`INCRBY` may create on this server (0: no
    /// limit).
    pub max_tags_per_user: usize,
    /// How many `IDF.SNOWFLAKE` names one non-admin user may start on this server (0: no
    /// limit).
    pub max_snowflake_names_per_user: usize,
    /// The most tags loaded in memory at once (0: no limit).
    pub max_tags: usize,
    /// The most snowflake names loaded in memory at once (0: no limit).
    pub max_snowflake_names: usize,
    /// A loaded tag untouched this long leaves memory, giving back its unused ids (`None`:
    /// never).
    pub tag_idle: Option<Duration>,
    /// The most worker-id leases one service may hold at once (0: no limit).
    pub max_leases_per_service: usize,
    /// The most worker-id leases this server holds at once, over every service (0: no limit).
    pub max_leases: usize,
    /// How long (ms) an ended lease's id stays reserved for the holder it named (0: not at
    /// all).
    pub worker_reserve_ms: i64,
}

impl AllocPolicy {
    /// Persists closer together than this double a tag's step (see `step_interval`).
    pub const STEP_INTERVAL: Duration = Duration::from_secs(1);
    /// How far ahead (ms) a snowflake clock's persisted time runs (see `clock_window_ms`).
    ///
    /// After a crash or a failover a name resumes after its persisted time, so its first ids
    /// wait up to the window less the generator's lead (1 s): 4 s keeps that wait (3 s) within
    /// the default `--alloc-timeout-ms` (5 s), for a persist about once a second per busy name.
    /// A clean stop brings the time back to the last id, so a restart does not wait at all.
    pub const CLOCK_WINDOW_MS: u64 = 4_000;
}

/// How many sweeps a tag must sit out untouched, per [`AllocPolicy::tag_idle`], before it leaves.
const IDLE_SWEEPS: u32 = 4;

/// Everything the connections share.
#[derive(Debug)]
pub struct Allocator {
    pub(super) tags: Mutex<HashMap<Box<str>, Tag>>,
    pub(super) clocks: Mutex<HashMap<Box<str>, ClockState>>,
    /// Wakes the persister.
    pub(super) wake: Notify,
    /// Wakes requests waiting for a persist.
    pub(super) persisted: Notify,
    /// The last persist failure, for replies to requests that time out waiting.
    pub(super) last_failure: Mutex<Option<String>>,
    pub(super) store: Store,
    pub(super) policy: AllocPolicy,
    pub(super) metrics: Metrics,
    pub(super) clock: SystemClock,
    pub(super) snowflake: idforge::Layout,
    pub(super) node: u64,
    pub(super) started: Instant,
    /// Whether this server may serve (see [`Leadership`]).
    pub(super) leadership: Arc<Leadership>,
    /// Held by each persist and by role changes, so a persist of one term never lands in the
    /// next term's cache.
    pub(super) persist_gate: tokio::sync::Mutex<()>,
    /// The record outside the store of what it must hold (see [`guard`]).
    pub(super) guard: Option<Arc<Guard>>,
    /// Marks the store committed and the guard could not record (its disk full): recorded
    /// before anything else is persisted, and only then served up to (see `persist_marks`).
    pub(super) unguarded: Mutex<Vec<Mark>>,
    /// Why this server refuses to lead (its store went back), once it found out.
    pub(super) refusal: Mutex<Option<String>>,
    /// What this server knows of each service's worker leases (see [`workers`]).
    pub(super) workers: Mutex<HashMap<Box<str>, lease_table::Leases>>,
    /// Held while a service's leases are read in, so concurrent ACQUIREs read them once.
    pub(super) lease_load: tokio::sync::Mutex<()>,
    /// Numbers each reading of a service's leases (a write that began under an older one does
    /// not touch the newer copy).
    pub(super) lease_generation: std::sync::atomic::AtomicU64,
    /// Lease writes waiting for the next group commit (see `Allocator::put_lease`).
    pub(super) lease_queue: Mutex<std::collections::VecDeque<lease_table::LeaseWrite>>,
    /// Held by the request committing a group of lease writes.
    pub(super) lease_writer: tokio::sync::Mutex<()>,
    /// The leases held over every service (the bound `AllocPolicy::max_leases`).
    pub(super) lease_count: lease_table::LeaseCount,
    /// Tags created by each non-admin user's requests on this server (the quota's count).
    pub(super) tags_created: Mutex<HashMap<String, usize>>,
    /// Tags evicted from memory for being idle.
    pub(super) tags_evicted: std::sync::atomic::AtomicU64,
    /// Snowflake names started per user, and evicted (see [`clocks`]).
    pub(super) clock_names: clocks::ClockNames,
    /// This server's stripe: which ids of each tag are its own (see [`stripe`]).
    pub(super) stripe: Stripe,
}

impl Allocator {
    /// An allocator over an open store.
    pub fn new(
        store: Store,
        policy: AllocPolicy,
        snowflake: idforge::Layout,
        node: u64,
        leadership: Arc<Leadership>,
    ) -> Allocator {
        Allocator {
            tags: Mutex::new(HashMap::new()),
            clocks: Mutex::new(HashMap::new()),
            wake: Notify::new(),
            persisted: Notify::new(),
            last_failure: Mutex::new(None),
            store,
            policy,
            metrics: Metrics::default(),
            clock: SystemClock::new(),
            snowflake,
            node,
            started: Instant::now(),
            leadership,
            persist_gate: tokio::sync::Mutex::new(()),
            guard: None,
            unguarded: Mutex::new(Vec::new()),
            refusal: Mutex::new(None),
            workers: Mutex::new(HashMap::new()),
            lease_load: tokio::sync::Mutex::new(()),
            lease_generation: std::sync::atomic::AtomicU64::new(0),
            lease_queue: Mutex::new(std::collections::VecDeque::new()),
            lease_writer: tokio::sync::Mutex::new(()),
            lease_count: lease_table::LeaseCount::default(),
            tags_created: Mutex::new(HashMap::new()),
            tags_evicted: std::sync::atomic::AtomicU64::new(0),
            clock_names: clocks::ClockNames::default(),
            stripe: Stripe::NONE,
        }
    }

    /// Hands out only the ids of `stripe` (see `allocator::stripe`).
    pub fn with_stripe(mut self, stripe: Stripe) -> Allocator {
        self.stripe = stripe;
        self
    }

    /// This server's stripe.
    pub fn stripe(&self) -> Stripe {
        self.stripe
    }

    /// Records every persist in `guard` (and checks the store against it on taking the lead).
    pub fn with_guard(mut self, guard: Option<Arc<Guard>>) -> Allocator {
        self.guard = guard;
        self
    }

    /// Checks the store against the guard (at start and when taking the lead): `Err` with the
    /// refusal when the store went back.
    pub async fn verify_store(&self) -> Result<(), GuardError> {
        if let Some(why) = lock(&self.refusal).clone() {
            return Err(GuardError::Refused(why));
        }
        let Some(g) = &self.guard else {
            return Ok(());
        };
        let checked = g.verify(&self.store).await;
        if let Err(why) = &checked {
            // Until an operator repaired the store and restarted this server.
            tracing::error!("{why}");
            *lock(&self.refusal) = Some(why.to_string());
        }
        checked
    }

    /// Why this server refuses to lead, if it does.
    pub fn refusing(&self) -> Option<String> {
        lock(&self.refusal).clone()
    }

    /// [`Store::persist`] with the guard kept: a mark that goes down (unused ids given back)
    /// is lowered in the guard before the store; one that goes up is recorded after the store
    /// committed and before any id it covers is served. So every id served is below the
    /// guard's mark, and the guard's mark is never above the store's.
    pub(super) async fn persist_marks(
        &self,
        moves: &[TagMove],
        clocks: &[(String, i64)],
    ) -> Result<Vec<String>, StoreError> {
        let Some(guard) = &self.guard else {
            return self.store.persist(moves, clocks).await;
        };
        let down = moves
            .iter()
            .filter(|m| m.new < m.old)
            .map(|m| Mark::Tag(m.tag.clone(), m.new))
            .collect();
        guard.record(down).await?;
        let conflicts = self.store.persist(moves, clocks).await?;
        let up: Vec<Mark> = moves
            .iter()
            .filter(|m| m.new > m.old && !conflicts.contains(&m.tag))
            .map(|m| Mark::Tag(m.tag.clone(), m.new))
            .chain(clocks.iter().map(|(n, ms)| Mark::Clock(n.clone(), *ms)))
            .collect();
        if let Err(e) = guard.record(up.clone()).await {
            // The store holds the new marks, the guard does not: nothing above the old ones is
            // served until the guard has them (record_unguarded), and no persist writes the
            // store again before, which would find its own marks there (a conflict per tag, a
            // reload, a log line, every retry) and take more ids each time.
            lock(&self.unguarded).extend(up);
            return Err(e);
        }
        Ok(conflicts)
    }

    /// Records in the guard the marks a persist committed to the store but could not record
    /// there, then serves up to them. `Err` while the guard still cannot be written.
    async fn record_unguarded(&self) -> Result<(), StoreError> {
        let marks = lock(&self.unguarded).clone();
        if marks.is_empty() {
            return Ok(());
        }
        if let Some(guard) = &self.guard {
            guard.record(marks.clone()).await?;
        }
        lock(&self.unguarded).clear();
        let mut tags = lock(&self.tags);
        for mark in &marks {
            if let Mark::Tag(tag, max_id) = mark {
                if let Some(t) = tags.get_mut(tag.as_str()) {
                    // The store's mark, now guarded: the next persist compares against it.
                    t.limit = t.limit.max(*max_id);
                    t.wanted = true;
                }
            }
        }
        Ok(())
    }

    /// Whether this server serves, and the leader it knows.
    pub fn leadership(&self) -> &Leadership {
        &self.leadership
    }

    /// Forgets every cached tag and clock (after a role change): the next request loads them
    /// from the store again. Waits for a persist in flight.
    pub async fn reset(&self) {
        let _gate = self.persist_gate.lock().await;
        lock(&self.tags).clear();
        lock(&self.clocks).clear();
        // A new term reads the leases again: another leader may have changed them.
        lock(&self.workers).clear();
        *lock(&self.last_failure) = None;
        // Requests waiting for a persist wake up and find they are no longer served.
        self.persisted.notify_waiters();
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The counters.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The policy.
    pub fn policy(&self) -> &AllocPolicy {
        &self.policy
    }

    /// When the allocator was made.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Whether the last persist failed (and what it said).
    pub fn failing(&self) -> Option<String> {
        lock(&self.last_failure).clone()
    }

    /// Runs the persister until `stop` is notified, then returns (after the persist in flight).
    pub async fn persister(self: Arc<Self>, stop: Arc<Notify>) {
        let mut backoff = Duration::from_millis(50);
        // Idle tags are looked for a few times per idle period: one leaves after 1 to 1.25 of it.
        let mut sweep = self.policy.tag_idle.map(|idle| {
            let mut every =
                tokio::time::interval((idle / IDLE_SWEEPS).max(Duration::from_millis(10)));
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            every
        });
        loop {
            let stopped = stop.notified();
            let swept = async {
                match sweep.as_mut() {
                    Some(every) => {
                        every.tick().await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = self.wake.notified() => {}
                () = swept => {
                    self.evict_idle().await;
                    continue;
                }
                () = stopped => return,
            }
            loop {
                match self.persist_once().await {
                    Ok(true) => {
                        backoff = Duration::from_millis(50);
                    }
                    Ok(false) => break,
                    Err(()) => {
                        // A stop ends the retries (a full disk may never clear): the stop's
                        // release gives back what it can, and what it cannot stays a gap.
                        tokio::select! {
                            () = tokio::time::sleep(backoff) => {}
                            () = stop.notified() => return,
                        }
                        backoff = (backoff * 2).min(Duration::from_secs(2));
                    }
                }
            }
        }
    }

    /// Persists every tag and clock that asked for it; `Ok(false)` when none did.
    async fn persist_once(&self) -> Result<bool, ()> {
        let _gate = self.persist_gate.lock().await;
        if let Err(e) = self.record_unguarded().await {
            self.metrics.persist_failed();
            tracing::warn!(error = %e, "persist failed; retrying");
            *lock(&self.last_failure) = Some(e.0);
            return Err(());
        }
        let now = Instant::now();
        let moves = self.tag_moves(now);
        let clocks = self.clock_moves();
        if moves.is_empty() && clocks.is_empty() {
            return Ok(false);
        }
        let started = Instant::now();
        match self.persist_marks(&moves, &clocks).await {
            Ok(conflicts) => {
                self.metrics.persisted(started.elapsed());
                *lock(&self.last_failure) = None;
                self.tags_persisted(&moves, &conflicts, now);
                self.clocks_persisted(&clocks);
                for tag in &conflicts {
                    self.reload_conflict(tag).await;
                }
                self.persisted.notify_waiters();
                Ok(true)
            }
            Err(e) => {
                self.metrics.persist_failed();
                tracing::warn!(error = %e, "persist failed; retrying");
                *lock(&self.last_failure) = Some(e.0);
                // Put the requests back so the retry takes them.
                self.tags_unpersisted(&moves);
                self.clocks_unpersisted(&clocks);
                Err(())
            }
        }
    }

    /// Takes the tags left untouched for [`AllocPolicy::tag_idle`] out of memory, giving back the
    /// unused part of their cached range first (a compare-and-set of `limit -> next`). Runs
    /// under the persist gate, so no persist of them is in flight; tags a request waits on stay.
    /// The next request reloads a tag from the store, above every id handed out. Idle services'
    /// copies of their worker leases leave too.
    pub(super) async fn evict_idle(&self) {
        let _gate = self.persist_gate.lock().await;
        let gone: Vec<TagMove> = {
            let mut tags = lock(&self.tags);
            let mut idle = Vec::new();
            for (name, t) in tags.iter_mut() {
                if t.used || t.wanted || t.need > 0 || t.in_flight.is_some() {
                    t.used = false;
                    t.idle_sweeps = 0;
                } else {
                    t.idle_sweeps = t.idle_sweeps.saturating_add(1);
                    if t.idle_sweeps >= IDLE_SWEEPS {
                        idle.push(name.clone());
                    }
                }
            }
            // Out of the map before the give-back, so no id is taken above the `next` written.
            idle.iter()
                .filter_map(|name| tags.remove(name).map(|t| (name, t)))
                .map(|(name, t)| TagMove {
                    tag: name.to_string(),
                    old: t.limit,
                    new: t.next,
                })
                .collect()
        };
        // Idle snowflake names too (their persisted times stay in the store).
        self.evict_idle_clocks(IDLE_SWEEPS);
        // The copies of idle services' worker leases go too (only a cache: nothing to write).
        lock(&self.workers).retain(|_, leases| {
            if leases.used || leases.busy() {
                leases.used = false;
                leases.idle_sweeps = 0;
                return true;
            }
            leases.idle_sweeps = leases.idle_sweeps.saturating_add(1);
            leases.idle_sweeps < IDLE_SWEEPS
        });
        if gone.is_empty() {
            return;
        }
        let evicted = gone.len() as u64;
        let moves: Vec<TagMove> = gone.into_iter().filter(|m| m.new < m.old).collect();
        // A failure or a conflict loses nothing: the stored mark stays above every id handed
        // out, and a reload starts from it (a gap).
        if !moves.is_empty() {
            match self.persist_marks(&moves, &[]).await {
                Ok(conflicts) => tracing::debug!(
                    tags = moves.len(),
                    conflicts = conflicts.len(),
                    "evicted idle tags"
                ),
                Err(e) => tracing::debug!(error = %e, "could not give back an idle tag's ids"),
            }
        }
        // Counted once the give-back is settled, so `INFO` never reports an eviction whose ids
        // a reload could not yet reuse.
        self.tags_evicted
            .fetch_add(evicted, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many tags are loaded in memory.
    pub fn loaded_tags(&self) -> usize {
        lock(&self.tags).len()
    }

    /// How many tags left memory for being idle.
    pub fn evicted_tags(&self) -> u64 {
        self.tags_evicted.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Gives back the unused part of every cached range (so a clean restart continues without a
    /// gap), and brings snowflake clocks back to their last ids (so it serves them at once). Call only when no connection can allocate any more.
    pub async fn release(&self) {
        let _gate = self.persist_gate.lock().await;
        self.release_clocks().await;
        let moves: Vec<TagMove> = lock(&self.tags)
            .iter()
            .filter(|(_, t)| t.next < t.limit)
            .map(|(name, t)| TagMove {
                tag: name.to_string(),
                old: t.limit,
                new: t.next,
            })
            .collect();
        if moves.is_empty() {
            return;
        }
        match self.persist_marks(&moves, &[]).await {
            Ok(conflicts) => {
                let mut tags = lock(&self.tags);
                for m in moves.iter().filter(|m| !conflicts.contains(&m.tag)) {
                    if let Some(t) = tags.get_mut(m.tag.as_str()) {
                        t.limit = m.new;
                    }
                }
                tracing::info!(tags = moves.len(), "released the unused cached ids");
            }
            // Nothing is lost: the persisted marks stay above every id handed out.
            Err(e) => tracing::warn!(error = %e, "could not release cached ids (a gap remains)"),
        }
    }
}
