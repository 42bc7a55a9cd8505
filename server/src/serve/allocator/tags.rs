//! Per-tag sequences: `INCR`, `INCRBY`, `GET` and `IDF.TAG`.

use std::time::Instant;

use super::Allocator;
use crate::serve::lock::lock;
use crate::serve::metrics::ErrorKind;
use crate::text::glob::glob_match;
use idforge_store::{StoreError, TagMove, TagRow};

/// One loaded tag.
#[derive(Debug, Clone)]
pub(crate) struct Tag {
    /// The next id to hand out.
    pub next: i64,
    /// The persisted `max_id`: ids below it may be handed out.
    pub limit: i64,
    /// The step stored with the tag.
    pub base_step: i64,
    /// The current (dynamic) step.
    pub step: i64,
    /// The largest request waiting for more than the cache holds.
    pub need: i64,
    /// Asked the persister for more.
    pub wanted: bool,
    /// The `max_id` being written, if any.
    pub in_flight: Option<i64>,
    /// When the last persist of this tag committed.
    pub last_persist: Option<Instant>,
    /// Taken from since the last idle sweep (a flag: the hot path reads no clock).
    pub used: bool,
    /// Idle sweeps in a row that found it untouched.
    pub idle_sweeps: u32,
    /// `next` when it was loaded, and when: the status page counts the ids handed out from a
    /// tag loaded between two of its samples from there.
    pub loaded: (i64, Instant),
}

impl Tag {
    fn loaded(row: &TagRow) -> Tag {
        // Ids start at 1, whatever a store row says (a hand edit, a Leaf row at 0).
        let next = row.max_id.max(1);
        Tag {
            next,
            limit: row.max_id,
            base_step: row.step.max(1),
            step: row.step.max(1),
            need: 0,
            wanted: false,
            in_flight: None,
            last_persist: None,
            used: true,
            idle_sweeps: 0,
            loaded: (next, Instant::now()),
        }
    }
}

/// Why an allocation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    /// The range would pass the 64-bit signed maximum.
    #[error("ERR increment would overflow the tag's 64-bit range")]
    Overflow,
    /// The tag does not exist and auto-create is off.
    #[error("ERR no such tag '{0}' (create it with IDF.TAG CREATE)")]
    NoTag(String),
    /// The store failed or did not answer in time.
    #[error("ERR store unavailable: {0}")]
    Store(#[from] StoreError),
    /// The server's clock is outside the snowflake layout's range.
    #[error("ERR clock: {0}")]
    Clock(String),
    /// This server is not the leader (or its lease ran out): the client must go elsewhere.
    #[error("CLUSTERDOWN not the leader")]
    NotLeader,
    /// A striped server hands out ranges within one stripe block: `INCRBY` asked for more.
    #[error(
        "ERR the count is larger than the stripe block ({0} ids): a striped server hands out \
         a range within one block (--stripe-block)"
    )]
    LargerThanBlock(i64),
    /// The user created as many tags as `--max-tags-per-user` allows.
    #[error(
        "ERR tag quota reached: this user may create at most {0} tags (--max-tags-per-user); \
         ask an administrator to create it with IDF.TAG CREATE"
    )]
    Quota(usize),
    /// The user started as many snowflake names as `--max-snowflake-names-per-user` allows.
    #[error(
        "ERR snowflake name quota reached: this user may start at most {0} names \
         (--max-snowflake-names-per-user); use a name an administrator started"
    )]
    NameQuota(usize),
    /// A snowflake name resumes after its persisted time (a restart after a crash, or a
    /// failover), which lies further ahead of the clock than the request may wait: retry in
    /// this many milliseconds.
    #[error(
        "TRYAGAIN the snowflake name resumes after its persisted time (a restart after a crash, \
         or a failover): retry in {0} ms"
    )]
    ClockAhead(u64),
    /// The server holds as many tags in memory as `--max-tags` allows.
    #[error(
        "ERR server limit reached: at most {0} tags in memory (--max-tags); idle ones leave \
         after --tag-idle-secs"
    )]
    TooManyTags(usize),
    /// The server holds as many snowflake names in memory as `--max-snowflake-names` allows.
    #[error(
        "ERR server limit reached: at most {0} snowflake names in memory \
         (--max-snowflake-names); idle ones leave after --tag-idle-secs"
    )]
    TooManyNames(usize),
}

impl AllocError {
    /// How `/metrics` counts it.
    pub(crate) fn kind(&self) -> ErrorKind {
        match self {
            AllocError::Overflow => ErrorKind::Overflow,
            AllocError::NoTag(_) => ErrorKind::NoTag,
            AllocError::Store(_) | AllocError::Clock(_) | AllocError::ClockAhead(_) => {
                ErrorKind::Store
            }
            AllocError::Quota(_) | AllocError::NameQuota(_) | AllocError::LargerThanBlock(_) => {
                ErrorKind::Usage
            }
            AllocError::TooManyTags(_) | AllocError::TooManyNames(_) => ErrorKind::Limit,
            AllocError::NotLeader => ErrorKind::Moved,
        }
    }
}

/// What `IDF.TAG INFO` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagInfo {
    /// The tag.
    pub tag: String,
    /// The last id handed out (or skipped): every later id is larger.
    pub last: i64,
    /// The persisted `max_id`, as an id: every id this server hands out is below it until the
    /// next persist.
    pub max_id: i64,
    /// Ids reserved in the store and not yet handed out.
    pub cached: i64,
    /// The stored step.
    pub step: i64,
    /// The current dynamic step.
    pub dynamic_step: i64,
    /// Free text.
    pub description: Option<String>,
}

/// A loaded tag as the status page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TagView {
    /// The tag.
    pub tag: String,
    /// The next id to hand out, in this server's own (local) numbering: only its changes mean
    /// something outside (ids handed out).
    pub next: i64,
    /// The last id handed out (global).
    pub last: i64,
    /// The cached range: ids from `last + 1` below this one (global) may be handed out.
    pub cached_to: i64,
    /// The stored step and the dynamic one.
    pub step: (i64, i64),
    /// How long ago its last persist committed (`None`: none since it was loaded).
    pub persisted_ago: Option<std::time::Duration>,
    /// Its `next` when it was loaded, and when (see `Tag::loaded`).
    pub loaded: (i64, Instant),
}

impl Allocator {
    /// Hands out `n` consecutive ids of `tag`; returns the first. Waits (up to the policy's
    /// timeout) only when the tag's cache is exhausted.
    pub async fn alloc(&self, tag: &str, n: i64) -> Result<i64, AllocError> {
        self.alloc_for(tag, n, None).await
    }

    /// [`Allocator::alloc`] on behalf of `owner` (a non-admin user, `None` for an admin): a tag it
    /// creates counts towards the owner's `AllocPolicy::max_tags_per_user`.
    pub async fn alloc_for(
        &self,
        tag: &str,
        n: i64,
        owner: Option<&str>,
    ) -> Result<i64, AllocError> {
        debug_assert!(n > 0);
        // Read only when a request must wait: the common case (the cache holds the ids) reads
        // no clock.
        let mut deadline = None;
        loop {
            let persisted = self.persisted.notified();
            tokio::pin!(persisted);
            // The lock is taken and released within this block: never held across an await.
            let missing = {
                let mut tags = lock(&self.tags);
                if let Some(taken) = self.take(&mut tags, tag, n) {
                    return taken;
                }
                match tags.get_mut(tag) {
                    None => true,
                    Some(t) => {
                        // With stripes, the rest of a block too small for the range.
                        let span = self.stripe.span(t.next, n).unwrap_or(n);
                        t.need = t.need.max(span);
                        t.wanted = true;
                        // Registered before the lock is released, so a persist landing in
                        // between wakes this request.
                        persisted.as_mut().enable();
                        false
                    }
                }
            };
            if missing {
                self.load(tag, owner).await?;
                continue;
            }
            self.wake.notify_one();
            let deadline = *deadline
                .get_or_insert_with(|| tokio::time::Instant::now() + self.policy.alloc_timeout);
            if tokio::time::timeout_at(deadline, persisted).await.is_err() {
                let why = self
                    .failing()
                    .unwrap_or_else(|| "the store did not answer in time".into());
                return Err(AllocError::Store(StoreError(why)));
            }
        }
    }

    /// Takes `n` ids of `tag` from its cache: `None` when the tag is not loaded or its cache
    /// holds fewer (then nothing was taken). Asks the persister for more at the watermark.
    fn take(
        &self,
        tags: &mut std::collections::HashMap<Box<str>, Tag>,
        tag: &str,
        n: i64,
    ) -> Option<Result<i64, AllocError>> {
        // Checked under the lock, at the moment the ids are taken.
        if !self.leadership.serving() {
            return Some(Err(AllocError::NotLeader));
        }
        let t = tags.get_mut(tag)?;
        // `span` local ids from `next`: `n`, after the rest of a stripe block too small for them.
        let Some(span) = self.stripe.span(t.next, n) else {
            return Some(Err(AllocError::LargerThanBlock(self.stripe.block)));
        };
        if span > i64::MAX - t.next {
            return Some(Err(AllocError::Overflow));
        }
        // The range's global ids, checked before anything is taken.
        let Some(first) = self
            .stripe
            .global(t.next + span - n)
            .filter(|first| first.checked_add(n - 1).is_some())
        else {
            return Some(Err(AllocError::Overflow));
        };
        if t.limit - t.next < span {
            return None;
        }
        t.next += span;
        t.used = true;
        let low = t.limit - t.next < t.step / 2 + 1;
        if low && !t.wanted && t.in_flight.is_none() {
            t.wanted = true;
            self.wake.notify_one();
        }
        self.metrics.ids(n as u64);
        Some(Ok(first))
    }

    /// Loads `tag` from the store (creating it when the policy allows, on `owner`'s quota).
    async fn load(&self, tag: &str, owner: Option<&str>) -> Result<(), AllocError> {
        // Checked before anything is read or created, and again at the insert below.
        self.room_for_tag()?;
        let row = match self.store.tag(tag).await? {
            Some(row) => row,
            None if self.policy.auto_create => {
                let row = TagRow {
                    tag: tag.to_owned(),
                    max_id: 1,
                    step: self.policy.default_step,
                    description: None,
                };
                // Counted before the write, so concurrent creations cannot pass the quota.
                self.quota_take(owner)?;
                let created = self.store.create_tag(&row).await;
                if !matches!(created, Ok(true)) {
                    self.quota_give_back(owner);
                }
                created?;
                // Another server or tool may have created it first: use what the store holds.
                self.store
                    .tag(tag)
                    .await?
                    .ok_or_else(|| AllocError::NoTag(tag.to_owned()))?
            }
            None => return Err(AllocError::NoTag(tag.to_owned())),
        };
        let mut tags = lock(&self.tags);
        if !tags.contains_key(tag) {
            let max = self.policy.max_tags;
            if max > 0 && tags.len() >= max {
                return Err(AllocError::TooManyTags(max));
            }
            tags.insert(tag.into(), Tag::loaded(&row));
        }
        Ok(())
    }

    /// Refuses a tag that is not in memory when `--max-tags` are.
    fn room_for_tag(&self) -> Result<(), AllocError> {
        let max = self.policy.max_tags;
        if max > 0 && lock(&self.tags).len() >= max {
            return Err(AllocError::TooManyTags(max));
        }
        Ok(())
    }

    /// Counts one more tag created by `owner`; refused at the quota.
    fn quota_take(&self, owner: Option<&str>) -> Result<(), AllocError> {
        let max = self.policy.max_tags_per_user;
        let Some(owner) = owner.filter(|_| max > 0) else {
            return Ok(());
        };
        let mut counts = lock(&self.tags_created);
        let count = counts.entry(owner.to_owned()).or_insert(0);
        if *count >= max {
            return Err(AllocError::Quota(max));
        }
        *count += 1;
        Ok(())
    }

    /// Undoes [`Allocator::quota_take`] (the tag was not created after all).
    fn quota_give_back(&self, owner: Option<&str>) {
        if let Some(owner) = owner {
            if let Some(count) = lock(&self.tags_created).get_mut(owner) {
                *count = count.saturating_sub(1);
            }
        }
    }

    /// The last id handed out (every later one is larger), or `None` for an unknown tag.
    pub async fn last(&self, tag: &str) -> Result<Option<i64>, AllocError> {
        if let Some(t) = lock(&self.tags).get(tag) {
            return Ok(Some(self.stripe.last_before(t.next)));
        }
        let row = self.store.tag(tag).await?;
        Ok(row.map(|row| self.stripe.last_before(row.max_id)))
    }

    /// A tag's state, or `None` for an unknown tag.
    pub async fn info(&self, tag: &str) -> Result<Option<TagInfo>, AllocError> {
        let Some(row) = self.store.tag(tag).await? else {
            return Ok(None);
        };
        // Positions as ids (global); the store keeps this server's own (local) ones.
        let global = |local: i64| self.stripe.global(local.max(1)).unwrap_or(i64::MAX);
        let mut info = TagInfo {
            tag: row.tag.clone(),
            last: self.stripe.last_before(row.max_id),
            max_id: global(row.max_id),
            cached: 0,
            step: row.step,
            dynamic_step: row.step,
            description: row.description,
        };
        if let Some(t) = lock(&self.tags).get(tag) {
            info.last = self.stripe.last_before(t.next);
            info.max_id = global(t.limit);
            info.cached = (t.limit - t.next).max(0);
            info.dynamic_step = t.step;
        }
        Ok(Some(info))
    }

    /// Creates a tag whose first id is `start`; `false` when it exists.
    pub async fn create(
        &self,
        tag: &str,
        step: i64,
        start: i64,
        description: Option<String>,
    ) -> Result<bool, AllocError> {
        let row = TagRow {
            tag: tag.to_owned(),
            // This server's first id at or above `start`.
            max_id: self.stripe.local_at_or_above(start),
            step,
            description,
        };
        Ok(self.store.create_tag(&row).await?)
    }

    /// Forgets a tag (memory and store); `false` when it did not exist. Re-creating it starts
    /// over from its new start, so this is an administrator's decision.
    pub async fn drop_tag(&self, tag: &str) -> Result<bool, AllocError> {
        lock(&self.tags).remove(tag);
        // Out of the guard first: a crash between the two leaves a tag the guard no longer
        // checks, never a guard that refuses a store an administrator changed on purpose.
        if let Some(g) = &self.guard {
            g.record(vec![idforge_store::guard::Mark::Dropped(tag.to_owned())])
                .await?;
        }
        Ok(self.store.drop_tag(tag).await?)
    }

    /// One page of tag names: reads at most `count` names after `after` (from the first when
    /// empty) and keeps those matching the glob `pattern`. Also returns where the next page
    /// starts (`None`: this was the last).
    pub async fn scan(
        &self,
        after: &str,
        pattern: &[u8],
        count: usize,
    ) -> Result<(Vec<String>, Option<String>), AllocError> {
        let names = self.store.tag_names(after, count).await?;
        let next = (names.len() >= count)
            .then(|| names.last().cloned())
            .flatten();
        let matching = names
            .into_iter()
            .filter(|t| glob_match(pattern, t.as_bytes()))
            .collect();
        Ok((matching, next))
    }

    /// The first `n` loaded tags by name: one pass over the table that keeps the `n` smallest
    /// names seen (a bounded heap of borrowed names), so only those `n` are copied; the status
    /// page's cost stays that of `n` rows, however many tags are loaded.
    pub(crate) fn first_tag_views(&self, n: usize) -> Vec<TagView> {
        let now = Instant::now();
        let tags = lock(&self.tags);
        let mut first: std::collections::BinaryHeap<&str> =
            std::collections::BinaryHeap::with_capacity(n + 1);
        for name in tags.keys() {
            if first.len() < n {
                first.push(name);
            } else if first.peek().is_some_and(|top| **name < **top) {
                first.pop();
                first.push(name);
            }
        }
        let mut views: Vec<TagView> = first
            .into_iter()
            .filter_map(|name| tags.get(name).map(|t| self.view_of(name, t, now)))
            .collect();
        drop(tags);
        views.sort_by(|a, b| a.tag.cmp(&b.tag));
        views
    }

    /// One loaded tag's view (`None`: not loaded).
    pub(crate) fn tag_view(&self, tag: &str) -> Option<TagView> {
        let now = Instant::now();
        lock(&self.tags).get(tag).map(|t| self.view_of(tag, t, now))
    }

    fn view_of(&self, name: &str, t: &Tag, now: Instant) -> TagView {
        let global = |local: i64| self.stripe.global(local.max(1)).unwrap_or(i64::MAX);
        TagView {
            tag: name.to_string(),
            next: t.next,
            last: self.stripe.last_before(t.next),
            cached_to: global(t.limit),
            step: (t.base_step, t.step),
            persisted_ago: t.last_persist.map(|at| now.saturating_duration_since(at)),
            loaded: t.loaded,
        }
    }

    /// The largest id any loaded tag has reserved in the store (0 with none): the metrics'
    /// warning of a tag nearing the 64-bit end.
    pub fn highest_reserved(&self) -> i64 {
        let tags = lock(&self.tags);
        let reserved = |t: &Tag| match self.stripe.global(t.limit.max(1)) {
            Some(end) => end - 1,
            None => i64::MAX,
        };
        tags.values().map(reserved).max().unwrap_or(0).max(0)
    }

    /// (tag, cached ids) of every loaded tag, sorted.
    pub fn cache_levels(&self) -> Vec<(String, i64)> {
        let mut levels: Vec<(String, i64)> = lock(&self.tags)
            .iter()
            .map(|(name, t)| (name.to_string(), (t.limit - t.next).max(0)))
            .collect();
        levels.sort();
        levels
    }

    /// Takes the tags that asked for a persist: their new marks, with the dynamic step adjusted.
    pub(crate) fn tag_moves(&self, now: Instant) -> Vec<TagMove> {
        let policy = &self.policy;
        let mut moves = Vec::new();
        for (name, t) in lock(&self.tags).iter_mut() {
            if !t.wanted || t.in_flight.is_some() {
                continue;
            }
            if let Some(last) = t.last_persist {
                let gap = now.duration_since(last);
                if gap < policy.step_interval {
                    t.step = (t.step.saturating_mul(2)).min(policy.max_step.max(t.base_step));
                } else if gap > policy.step_interval * 10 {
                    t.step = (t.step / 2).max(t.base_step);
                }
            }
            let floor = t.limit.max(t.next.saturating_add(t.need));
            let target = floor.saturating_add(t.step);
            t.wanted = false;
            t.need = 0;
            t.in_flight = Some(target);
            moves.push(TagMove {
                tag: name.to_string(),
                old: t.limit,
                new: target,
            });
        }
        moves
    }

    /// Applies committed moves (all but `conflicts`).
    pub(crate) fn tags_persisted(&self, moves: &[TagMove], conflicts: &[String], now: Instant) {
        let mut tags = lock(&self.tags);
        for m in moves {
            let Some(t) = tags.get_mut(m.tag.as_str()) else {
                continue;
            };
            t.in_flight = None;
            if !conflicts.contains(&m.tag) {
                t.limit = m.new;
                t.last_persist = Some(now);
            }
        }
    }

    /// Puts back moves whose transaction failed, to be retried.
    pub(crate) fn tags_unpersisted(&self, moves: &[TagMove]) {
        let mut tags = lock(&self.tags);
        for m in moves {
            if let Some(t) = tags.get_mut(m.tag.as_str()) {
                t.in_flight = None;
                t.wanted = true;
            }
        }
    }

    /// A tag's row changed under us (another writer, or it was deleted): continue above both
    /// what we handed out and what the store holds.
    pub(crate) async fn reload_conflict(&self, tag: &str) {
        tracing::warn!(
            tag,
            "the tag's max_id changed outside this server; reloading"
        );
        let row = match self.store.tag(tag).await {
            Ok(row) => row,
            Err(e) => {
                tracing::warn!(tag, error = %e, "reload failed; dropping the tag from memory");
                // Skipping ahead is safe: reloading later takes the store's mark again, and
                // the persist's compare-and-set keeps it from going below.
                lock(&self.tags).remove(tag);
                return;
            }
        };
        let recreate = {
            let mut tags = lock(&self.tags);
            let Some(t) = tags.get_mut(tag) else { return };
            match &row {
                Some(row) => {
                    t.next = t.next.max(row.max_id);
                    t.limit = row.max_id;
                    t.wanted = true;
                    None
                }
                None => Some(TagRow {
                    tag: tag.to_owned(),
                    max_id: t.next,
                    step: t.base_step,
                    description: None,
                }),
            }
        };
        if let Some(row) = recreate {
            // Deleted behind our back: put it back above every id handed out, so a later
            // auto-create cannot start over below them.
            match self.store.create_tag(&row).await {
                Ok(_) => {
                    if let Some(t) = lock(&self.tags).get_mut(tag) {
                        t.limit = row.max_id;
                        t.wanted = true;
                    }
                }
                Err(e) => {
                    tracing::warn!(tag, error = %e, "could not re-create the tag");
                    lock(&self.tags).remove(tag);
                }
            }
        }
        self.wake.notify_one();
    }
}
