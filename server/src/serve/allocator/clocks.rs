//! Server-side snowflake ids (`IDF.SNOWFLAKE name [COUNT n]`).
//!
//! Each name has a generator on the server's layout and node id, and a persisted time: ids are
//! made only in ticks that start before it, and it is moved ahead (with the tags, in the same
//! transactions) while ids are being made. A restart resumes after the persisted time, so even a
//! clock that stepped back across the restart cannot repeat an id.
//!
//! Names are bounded as tags are: a user without `admin` may start at most
//! [`AllocPolicy::max_snowflake_names_per_user`](super::AllocPolicy) names on a server (a name
//! the store already holds costs nothing), the server holds at most
//! [`AllocPolicy::max_snowflake_names`](super::AllocPolicy) in memory whoever asks (also on a
//! server without users), and a name left untouched for
//! [`AllocPolicy::tag_idle`](super::AllocPolicy) leaves memory. Leaving memory loses nothing: its
//! persisted time stays in the store, and the next request reloads the name and resumes after
//! it, exactly as after a restart. A name leaves only once that time has passed, so a reload
//! never waits for the clock to catch up.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use idforge::Clock;
use idforge_core::snowflake::SnowflakeGen;
use idforge_core::tick::Next;

use super::Allocator;
use super::tags::AllocError;
use crate::serve::lock::lock;
use idforge_store::guard::Mark;
use idforge_store::{ClockMove, StoreError};

/// How far (ms) a generator may run ahead of the clock when a tick's sequence is used up.
const LEAD_MS: u64 = 1000;

/// One name's generator.
#[derive(Debug)]
pub(crate) struct ClockState {
    generator: SnowflakeGen,
    /// Ids are made only in ticks starting before this persisted time (Unix ms).
    covered_ms: u64,
    wanted: bool,
    in_flight: Option<u64>,
    /// Ids were made since the last idle sweep.
    used: bool,
    /// Idle sweeps in a row that found it untouched.
    idle_sweeps: u32,
}

/// The bookkeeping of snowflake names: each non-admin user's count of names started (the
/// quota's), and how many names left memory.
#[derive(Debug, Default)]
pub(crate) struct ClockNames {
    started: Mutex<HashMap<String, usize>>,
    evicted: AtomicU64,
}

impl Allocator {
    /// Appends `n` fresh snowflake ids of `name` to `out`, in increasing order.
    pub async fn snowflakes(
        &self,
        name: &str,
        n: usize,
        out: &mut Vec<u64>,
    ) -> Result<(), AllocError> {
        self.snowflakes_for(name, n, out, None).await
    }

    /// [`Allocator::snowflakes`] on behalf of `owner` (a non-admin user, `None` for an admin): a
    /// name it starts counts towards the owner's
    /// `AllocPolicy::max_snowflake_names_per_user`.
    pub async fn snowflakes_for(
        &self,
        name: &str,
        n: usize,
        out: &mut Vec<u64>,
        owner: Option<&str>,
    ) -> Result<(), AllocError> {
        let deadline = tokio::time::Instant::now() + self.policy.alloc_timeout;
        let goal = out.len() + n;
        loop {
            let persisted = self.persisted.notified();
            tokio::pin!(persisted);
            let mut sleep_until = None;
            let mut ask = false;
            let mut missing = false;
            'locked: {
                let mut clocks = lock(&self.clocks);
                if !self.leadership.serving() {
                    return Err(AllocError::NotLeader);
                }
                let Some(c) = clocks.get_mut(name) else {
                    missing = true;
                    break 'locked;
                };
                let now = self.clock.now_ms();
                let tick_ms = self.snowflake.tick_ms();
                // The latest time any id of this call may carry.
                let horizon = now.max(c.generator.high_water_ms()) + LEAD_MS + tick_ms;
                if horizon + self.policy.clock_window_ms / 2 >= c.covered_ms
                    && !c.wanted
                    && c.in_flight.is_none()
                {
                    c.wanted = true;
                    ask = true;
                }
                if horizon < c.covered_ms {
                    while out.len() < goal {
                        let at = out.len();
                        out.resize(goal, 0);
                        match c.generator.next_run(now, &mut out[at..]) {
                            Ok(Next::Id(k)) => out.truncate(at + k),
                            Ok(Next::Pending { until_ms }) => {
                                out.truncate(at);
                                sleep_until = Some(until_ms);
                                break;
                            }
                            Err(e) => {
                                out.truncate(at);
                                return Err(AllocError::Clock(e.to_string()));
                            }
                        }
                    }
                    if out.len() == goal {
                        c.used = true;
                        drop(clocks);
                        if ask {
                            self.wake.notify_one();
                        }
                        self.metrics.ids(n as u64);
                        return Ok(());
                    }
                } else {
                    c.wanted = true;
                    ask = true;
                    persisted.as_mut().enable();
                }
            }
            if missing {
                self.load_clock(name, owner).await?;
                continue;
            }
            if ask {
                self.wake.notify_one();
            }
            if let Some(until_ms) = sleep_until {
                let wait = until_ms.saturating_sub(self.clock.now_ms()).max(1);
                let wake = tokio::time::Instant::now() + std::time::Duration::from_millis(wait);
                // After a crash or a failover the name resumes after a persisted time up to a
                // window ahead: a wait past the deadline is refused at once, saying when to
                // come back, rather than held.
                if wake > deadline {
                    return Err(AllocError::ClockAhead(wait));
                }
                tokio::time::sleep_until(wake).await;
                continue;
            }
            if tokio::time::timeout_at(deadline, persisted).await.is_err() {
                let why = self
                    .failing()
                    .unwrap_or_else(|| "the store did not answer in time".into());
                return Err(AllocError::Store(StoreError(why)));
            }
        }
    }

    /// Loads `name`'s persisted time from the store; a name it does not hold yet is started on
    /// `owner`'s quota.
    async fn load_clock(&self, name: &str, owner: Option<&str>) -> Result<(), AllocError> {
        let max = self.policy.max_snowflake_names;
        let full = |loaded: usize| max > 0 && loaded >= max;
        // Checked before the store is read, and again at the insert below.
        if full(lock(&self.clocks).len()) {
            return Err(AllocError::TooManyNames(max));
        }
        let persisted = self.store.clock(name).await?;
        let generator = SnowflakeGen::new(self.snowflake, self.node, LEAD_MS)
            .map_err(|e| AllocError::Clock(e.to_string()))?;
        let covered_ms = match persisted {
            Some(ms) => {
                let ms = u64::try_from(ms).unwrap_or(0);
                generator.resume_after_ms(ms);
                ms
            }
            None => 0,
        };
        // Counted before the name enters memory, so concurrent starts cannot pass the quota.
        let counted = persisted.is_none() && self.name_quota_take(owner)?;
        let mut clocks = lock(&self.clocks);
        if clocks.contains_key(name) {
            // Another request loaded it meanwhile: this one started nothing.
            drop(clocks);
            if counted {
                self.name_quota_give_back(owner);
            }
            return Ok(());
        }
        if full(clocks.len()) {
            drop(clocks);
            if counted {
                self.name_quota_give_back(owner);
            }
            return Err(AllocError::TooManyNames(max));
        }
        clocks.insert(
            name.into(),
            ClockState {
                generator,
                covered_ms,
                wanted: false,
                in_flight: None,
                used: true,
                idle_sweeps: 0,
            },
        );
        Ok(())
    }

    /// Counts one more name started by `owner`: `Ok(true)` when counted, `Ok(false)` when it
    /// is not counted (an admin, or no quota); refused at the quota.
    fn name_quota_take(&self, owner: Option<&str>) -> Result<bool, AllocError> {
        let max = self.policy.max_snowflake_names_per_user;
        let Some(owner) = owner.filter(|_| max > 0) else {
            return Ok(false);
        };
        let mut started = lock(&self.clock_names.started);
        let count = started.entry(owner.to_owned()).or_insert(0);
        if *count >= max {
            return Err(AllocError::NameQuota(max));
        }
        *count += 1;
        Ok(true)
    }

    /// Undoes a counted [`Allocator::name_quota_take`].
    fn name_quota_give_back(&self, owner: Option<&str>) {
        if let Some(owner) = owner {
            if let Some(count) = lock(&self.clock_names.started).get_mut(owner) {
                *count = count.saturating_sub(1);
            }
        }
    }

    /// One idle sweep over the snowflake names (run under the persist gate, so no persist of
    /// them is in flight): a name untouched for `sweeps` sweeps in a row, with no persist asked
    /// for and its persisted time passed, leaves memory.
    pub(crate) fn evict_idle_clocks(&self, sweeps: u32) {
        let now = self.clock.now_ms();
        let mut clocks = lock(&self.clocks);
        let before = clocks.len();
        clocks.retain(|_, c| {
            if c.used || c.wanted || c.in_flight.is_some() {
                c.used = false;
                c.idle_sweeps = 0;
                return true;
            }
            c.idle_sweeps = c.idle_sweeps.saturating_add(1);
            // Every id it made lies before `covered_ms`, which the store holds: a reload
            // resumes after it.
            c.idle_sweeps < sweeps || c.covered_ms > now
        });
        let gone = before - clocks.len();
        if gone > 0 {
            self.clock_names
                .evicted
                .fetch_add(gone as u64, Ordering::Relaxed);
            tracing::debug!(names = gone, "evicted idle snowflake names");
        }
    }

    /// How many snowflake names are loaded in memory.
    pub fn loaded_snowflake_names(&self) -> usize {
        lock(&self.clocks).len()
    }

    /// How many snowflake names left memory for being idle.
    pub fn evicted_snowflake_names(&self) -> u64 {
        self.clock_names.evicted.load(Ordering::Relaxed)
    }

    /// Takes the clocks that asked for a persist: (name, new persisted time).
    pub(crate) fn clock_moves(&self) -> Vec<(String, i64)> {
        let now = self.clock.now_ms();
        let mut moves = Vec::new();
        for (name, c) in lock(&self.clocks).iter_mut() {
            if !c.wanted || c.in_flight.is_some() {
                continue;
            }
            let target = now.max(c.generator.high_water_ms()) + self.policy.clock_window_ms;
            c.wanted = false;
            c.in_flight = Some(target);
            moves.push((name.to_string(), target as i64));
        }
        moves
    }

    /// Applies committed clock moves.
    pub(crate) fn clocks_persisted(&self, moves: &[(String, i64)]) {
        let mut clocks = lock(&self.clocks);
        for (name, target) in moves {
            if let Some(c) = clocks.get_mut(name.as_str()) {
                c.in_flight = None;
                c.covered_ms = c.covered_ms.max(*target as u64);
            }
        }
    }

    /// Brings each loaded clock's persisted time back to the tick of its last id, so that a
    /// clean restart (or the next leader after a handover) serves the name at once instead of
    /// waiting for the clock to pass the window persisted ahead. The guard records the lower
    /// time before the store is written (a crash between them leaves the store above the
    /// guard, which is allowed). Call under the persist gate, once no connection can make ids.
    pub(super) async fn release_clocks(&self) {
        let moves: Vec<ClockMove> = lock(&self.clocks)
            .iter()
            .filter(|(_, c)| c.in_flight.is_none())
            .filter_map(|(name, c)| {
                let last = c.generator.high_water_ms();
                let (old, new) = (i64::try_from(c.covered_ms).ok()?, i64::try_from(last).ok()?);
                (new < old).then(|| ClockMove {
                    name: name.to_string(),
                    old,
                    new,
                })
            })
            .collect();
        if moves.is_empty() {
            return;
        }
        if let Some(guard) = &self.guard {
            let marks = moves
                .iter()
                .map(|m| Mark::ClockBack(m.name.clone(), m.new))
                .collect();
            if let Err(e) = guard.record(marks).await {
                tracing::warn!(error = %e, "could not bring snowflake clocks back (the next start waits)");
                return;
            }
        }
        match self.store.lower_clocks(&moves).await {
            Ok(conflicts) => {
                let mut clocks = lock(&self.clocks);
                for m in moves.iter().filter(|m| !conflicts.contains(&m.name)) {
                    if let Some(c) = clocks.get_mut(m.name.as_str()) {
                        c.covered_ms = m.new as u64;
                    }
                }
                tracing::info!(
                    names = moves.len(),
                    "brought snowflake clocks back to their last ids"
                );
            }
            // Nothing is lost: the persisted times stay after every id made.
            Err(e) => {
                tracing::warn!(error = %e, "could not bring snowflake clocks back (the next start waits)");
            }
        }
    }

    /// Puts back clock moves whose transaction failed.
    pub(crate) fn clocks_unpersisted(&self, moves: &[(String, i64)]) {
        let mut clocks = lock(&self.clocks);
        for (name, _) in moves {
            if let Some(c) = clocks.get_mut(name.as_str()) {
                c.in_flight = None;
                c.wanted = true;
            }
        }
    }
}
