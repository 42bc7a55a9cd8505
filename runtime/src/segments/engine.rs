//! The refill engine: one per process and source, shared by every [`Segments`] on it.
//!
//! Tags that need a range wait in one queue. A lane (a thread) takes up to the source's
//! [`max_batch`] of them and fetches all their ranges in one [`fetch_many`]: one pipelined round
//! trip to a server, one SQLite transaction. A tag whose fetch failed goes back after its own
//! backoff, so it never holds the queue. Lanes start as work calls for them, up to the source's
//! [`lanes`] (more than one where a tag can be held up alone, such as a locked SQL row), and
//! end with the engine, when the last generator on the source is dropped.
//!
//! A forked child never uses its parent's engine (its lanes do not exist there and its lock may
//! be held): the child's generators get an engine of the child's own.
//!
//! [`Segments`]: super::Segments
//! [`max_batch`]: SegmentSource::max_batch
//! [`fetch_many`]: SegmentSource::fetch_many
//! [`lanes`]: SegmentSource::lanes

use std::cmp::Ordering as CmpOrdering;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use idforge_core::Error as CoreError;

use super::Shared;
use super::stats::EngineStats;
use crate::error::Result;
use crate::fork;
use crate::source::SegmentSource;
use crate::source::per_process::PerProcess;

/// The first pause before a failed tag is tried again; it doubles on each failure.
const FIRST_BACKOFF: Duration = Duration::from_millis(10);
/// The longest pause between tries, so a caller waiting out a server's restart gets its range
/// soon after.
pub(super) const MAX_BACKOFF: Duration = Duration::from_millis(500);

/// A process's refill engine for one source.
pub(super) struct Engine {
    inner: Arc<Inner>,
    /// The fork generation the engine belongs to: in any other, it is never touched.
    generation: u64,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("lanes", &self.inner.lanes)
            .finish_non_exhaustive()
    }
}

struct Inner {
    source: Arc<dyn SegmentSource>,
    lanes: usize,
    max_batch: usize,
    queue: Mutex<Queue>,
    wake: Condvar,
    generators: AtomicU64,
    round_trips: AtomicU64,
    refills: AtomicU64,
    batched: AtomicU64,
}

#[derive(Default)]
struct Queue {
    /// Tags due for a fetch now, oldest first.
    ready: VecDeque<Weak<Shared>>,
    /// Tags whose last fetch failed, by when to try again.
    retry: BinaryHeap<Retry>,
    /// Orders retries due at the same instant.
    seq: u64,
    /// Lanes started and not ended.
    running: usize,
    /// Lanes waiting for work.
    idle: usize,
    stop: bool,
}

struct Retry {
    at: Instant,
    seq: u64,
    tag: Weak<Shared>,
}

impl PartialEq for Retry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl Eq for Retry {}

impl PartialOrd for Retry {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}

impl Ord for Retry {
    /// Reversed: the heap's top is the earliest.
    fn cmp(&self, other: &Self) -> CmpOrdering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// The engines of this process, by source (its address: an engine keeps its source alive, so
/// a live entry's address is that source's). A forked child starts with none.
fn engines() -> Result<&'static PerProcess<HashMap<usize, Weak<Engine>>>> {
    static ENGINES: OnceLock<PerProcess<HashMap<usize, Weak<Engine>>>> = OnceLock::new();
    if let Some(engines) = ENGINES.get() {
        return Ok(engines);
    }
    let made = PerProcess::new()?;
    Ok(ENGINES.get_or_init(|| made))
}

/// This process's engine for `source`, started with its first lane when there is none.
pub(super) fn engine_for(source: &Arc<dyn SegmentSource>) -> Result<Arc<Engine>> {
    let key = Arc::as_ptr(source) as *const () as usize;
    engines()?.with(|slot| {
        let map = slot.get_or_insert_with(HashMap::new);
        if let Some(engine) = map.get(&key).and_then(Weak::upgrade) {
            return Ok(engine);
        }
        map.retain(|_, engine| engine.strong_count() > 0);
        let engine = Arc::new(Engine::start(source.clone())?);
        map.insert(key, Arc::downgrade(&engine));
        Ok(engine)
    })
}

impl Engine {
    fn start(source: Arc<dyn SegmentSource>) -> Result<Engine> {
        let inner = Arc::new(Inner {
            lanes: source.lanes().max(1),
            max_batch: source.max_batch().max(1),
            source,
            queue: Mutex::new(Queue::default()),
            wake: Condvar::new(),
            generators: AtomicU64::new(0),
            round_trips: AtomicU64::new(0),
            refills: AtomicU64::new(0),
            batched: AtomicU64::new(0),
        });
        // The first lane now, so a process that cannot start threads hears it here.
        {
            let mut queue = inner.lock();
            inner
                .spawn_lane(&mut queue)
                .map_err(|_| CoreError::Io("could not start the refill thread"))?;
        }
        Ok(Engine {
            inner,
            generation: fork::current(),
        })
    }

    /// Queues `tag` for a fetch (its caller won the right to: one entry per tag).
    pub(super) fn push(&self, tag: Weak<Shared>) {
        let mut queue = self.inner.lock();
        queue.ready.push_back(tag);
        self.inner.wake_lane(&mut queue);
    }

    /// One more generator served.
    pub(super) fn add_generator(&self) {
        self.inner.generators.fetch_add(1, Ordering::Relaxed);
    }

    /// One generator fewer (no lock: also called in a forked child on the parent's engine).
    pub(super) fn remove_generator(&self) {
        self.inner.generators.fetch_sub(1, Ordering::Relaxed);
    }

    /// The engine's figures.
    pub(super) fn stats(&self) -> EngineStats {
        let inner = &self.inner;
        let (threads, queued) = {
            let queue = inner.lock();
            (queue.running, queue.ready.len() + queue.retry.len())
        };
        EngineStats {
            generators: inner.generators.load(Ordering::Relaxed),
            threads: threads as u64,
            connections: inner.source.connections() as u64,
            round_trips: inner.round_trips.load(Ordering::Relaxed),
            refills: inner.refills.load(Ordering::Relaxed),
            batched_refills: inner.batched.load(Ordering::Relaxed),
            queued: queued as u64,
        }
    }

    /// Whether this engine belongs to the current process (not to a parent before a fork).
    pub(super) fn is_ours(&self) -> bool {
        self.generation == fork::current()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if !self.is_ours() {
            // A parent's engine in a forked child: its lock may be held by a thread that does
            // not exist here, and its lanes never ran here. Leave it untouched, for good.
            std::mem::forget(self.inner.clone());
            return;
        }
        self.inner.lock().stop = true;
        self.inner.wake.notify_all();
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wakes an idle lane, or starts one more when none is idle and the source allows it.
    fn wake_lane(self: &Arc<Self>, queue: &mut Queue) {
        if queue.idle > 0 {
            self.wake.notify_one();
        } else if queue.running < self.lanes {
            // Best effort: the running lanes will serve the tag if no thread can be made.
            let _ = self.spawn_lane(queue);
        }
    }

    fn spawn_lane(self: &Arc<Self>, queue: &mut Queue) -> std::io::Result<()> {
        let inner = self.clone();
        std::thread::Builder::new()
            .name("idforge-refill".into())
            .spawn(move || inner.lane())?;
        queue.running += 1;
        Ok(())
    }

    /// A lane: takes due tags in batches and fetches their ranges, until the engine stops.
    fn lane(self: Arc<Self>) {
        let mut batch: Vec<Arc<Shared>> = Vec::new();
        // Tags taken from the queue that need nothing now: dropped only once the queue's lock
        // is released, since dropping the last generator of the source drops the engine, whose
        // `Drop` takes that lock.
        let mut spare: Vec<Arc<Shared>> = Vec::new();
        loop {
            {
                let mut queue = self.lock();
                loop {
                    if queue.stop {
                        queue.running -= 1;
                        return;
                    }
                    let now = Instant::now();
                    while queue.retry.peek().is_some_and(|r| r.at <= now) {
                        let due = queue.retry.pop().expect("peeked");
                        queue.ready.push_back(due.tag);
                    }
                    while batch.len() < self.max_batch {
                        let Some(tag) = queue.ready.pop_front() else {
                            break;
                        };
                        // A generator dropped while queued is gone from the queue with it; one
                        // whose buffers are both full (asked at a prefetch mark while the
                        // other range was still unused) leaves the queue until it asks again.
                        if let Some(tag) = tag.upgrade() {
                            if tag.wants_range() {
                                batch.push(tag);
                            } else {
                                spare.push(tag);
                            }
                        }
                    }
                    if !batch.is_empty() || !spare.is_empty() {
                        if !queue.ready.is_empty() {
                            self.wake_lane(&mut queue);
                        }
                        break;
                    }
                    let next_retry = queue.retry.peek().map(|r| r.at - now);
                    queue.idle += 1;
                    queue = match next_retry {
                        Some(wait) => {
                            self.wake
                                .wait_timeout(queue, wait)
                                .unwrap_or_else(|p| p.into_inner())
                                .0
                        }
                        None => self.wake.wait(queue).unwrap_or_else(|p| p.into_inner()),
                    };
                    queue.idle -= 1;
                }
            }
            spare.clear();
            if !batch.is_empty() {
                self.serve(&batch);
                batch.clear();
            }
        }
    }

    /// Fetches a range for each tag of `batch` in one request and hands each its outcome; then
    /// queues again the tags that need more, now or after their backoff.
    fn serve(self: &Arc<Self>, batch: &[Arc<Shared>]) {
        let begun: Vec<_> = batch.iter().map(|tag| tag.begin()).collect();
        let requests: Vec<(&str, u64)> = batch
            .iter()
            .zip(&begun)
            .map(|(tag, begun)| (tag.tag.as_str(), begun.step))
            .collect();
        // Counted as sent, so a request under way is among them.
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        self.refills
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        if batch.len() > 1 {
            self.batched
                .fetch_add(batch.len() as u64, Ordering::Relaxed);
        }
        let started = Instant::now();
        // A source that panics fails this batch; the lane lives on to serve the rest.
        let fetched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.source.fetch_many(&requests)
        }));
        let mut results = fetched.unwrap_or_default();
        let micros = started.elapsed().as_micros() as u64;
        // A source that answered fewer requests than asked (or panicked): the rest failed.
        results.resize_with(batch.len(), || {
            Err(crate::Error::permanent(
                crate::ErrorCode::SourceUnavailable,
                "the source gave no answer for this tag".into(),
            ))
        });
        let mut again = Vec::new();
        let mut later = Vec::new();
        for ((tag, begun), result) in batch.iter().zip(begun).zip(results) {
            match tag.finish(begun, micros, result) {
                Ok(()) => {
                    if tag.wants_range() {
                        again.push(Arc::downgrade(tag));
                    }
                }
                Err(Some(backoff)) => later.push((Instant::now() + backoff, Arc::downgrade(tag))),
                // Failed for good: `finish` took it out of the queue until a call asks again.
                Err(None) => {}
            }
        }
        if again.is_empty() && later.is_empty() {
            return;
        }
        let mut queue = self.lock();
        queue.ready.extend(again);
        for (at, tag) in later {
            queue.seq += 1;
            let seq = queue.seq;
            queue.retry.push(Retry { at, seq, tag });
        }
        // This lane comes back for them (and keeps the retries' timer); an idle one may take
        // some meanwhile.
        if !queue.ready.is_empty() && queue.idle > 0 {
            self.wake.notify_one();
        }
    }
}

/// The pause after a tag's `failures`-th failure in a row: 10 ms doubling to 500 ms.
pub(super) fn backoff(failures: u32) -> Duration {
    FIRST_BACKOFF
        .saturating_mul(1 << failures.saturating_sub(1).min(16))
        .min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_half_a_second() {
        assert_eq!(backoff(1), Duration::from_millis(10));
        assert_eq!(backoff(2), Duration::from_millis(20));
        assert_eq!(backoff(6), Duration::from_millis(320));
        assert_eq!(backoff(7), MAX_BACKOFF);
        assert_eq!(backoff(u32::MAX), MAX_BACKOFF);
    }

    #[test]
    fn retries_come_out_earliest_first() {
        let now = Instant::now();
        let mut heap = BinaryHeap::new();
        for (ms, seq) in [(30, 1), (10, 2), (20, 3), (10, 4)] {
            heap.push(Retry {
                at: now + Duration::from_millis(ms),
                seq,
                tag: Weak::new(),
            });
        }
        let order: Vec<u64> = std::iter::from_fn(|| heap.pop().map(|r| r.seq)).collect();
        assert_eq!(order, [2, 4, 3, 1]);
    }
}
