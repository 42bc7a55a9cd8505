//! The segment generator: ids from ranges fetched in the background (Leaf's double buffer).
//!
//! The hot path is one atomic add on the core's [`SegmentBuffer`]. The caller that crosses the
//! prefetch mark queues the tag with the process's refill [`engine`] for its source, which
//! fetches the next range while ids keep flowing (several tags' ranges in one round trip when
//! they are due together); a caller only waits when both ranges are used up, and then at most
//! the configured timeout: through transient failures (a server restarting or failing over, a
//! refused connection, a busy database), which the engine retries with backoff, but not past a
//! permanent one (see [`Error::is_transient`]).

mod engine;
pub mod options;
mod stats;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering, fence};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use idforge_core::Error as CoreError;
use idforge_core::segment::{Segment, SegmentBuffer, StepPolicy, Take};

use crate::error::{Error, ErrorCode, Result};
use crate::marks::{self, Mark, Ticket};
use crate::reseed::ForkGuard;
use crate::source::{self, SegmentSource};
use engine::Engine;
pub use options::{SegmentOptions, SegmentOptionsInput};
pub use stats::{EngineStats, SegmentStats};

#[derive(Debug, Default)]
struct Counters {
    ranges: AtomicU64,
    errors: AtomicU64,
    micros_total: AtomicU64,
    micros_last: AtomicU64,
    waits: AtomicU64,
}

/// Where waiting callers hear of installed ranges and failed fetches. Replaced wholesale in a
/// forked child, whose copy may hold a mutex locked by a parent thread that does not exist
/// there.
#[derive(Debug, Default)]
struct Mailbox {
    state: Mutex<MailboxState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct MailboxState {
    /// Bumped on every failed fetch, so waiters can tell a failure that happened after they
    /// asked for a range.
    failures: u64,
    /// The last failure: its code, message and whether it may pass.
    last_failure: Option<(ErrorCode, String, bool)>,
}

impl Mailbox {
    fn lock(&self) -> MutexGuard<'_, MailboxState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One generator's state, shared with its source's refill engine.
#[derive(Debug)]
struct Shared {
    buffer: SegmentBuffer,
    source: Arc<dyn SegmentSource>,
    tag: String,
    /// The ids this process already took for the tag from the source: a range that is not
    /// above them is refused. `None` for a source whose ranges interleave (striped servers),
    /// which checks each server's order itself.
    mark: Option<Arc<Mark>>,
    options: SegmentOptions,
    step: AtomicU64,
    counters: Counters,
    mailbox: ArcSwap<Mailbox>,
    engine: ArcSwap<Engine>,
    /// In the engine's queue, being fetched, or waiting to be tried again: one entry per tag.
    queued: AtomicBool,
    /// Failed fetches in a row (the backoff grows with them).
    failures_in_row: AtomicU32,
    /// When the last range was installed, in ms after `created` (`u64::MAX`: none yet).
    last_install_ms: AtomicU64,
    created: Instant,
}

impl std::fmt::Debug for dyn SegmentSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SegmentSource")
    }
}

/// Ids of one tag from a [`SegmentSource`]: `Send + Sync`, one atomic add per buffered id.
///
/// Every generator of a process on one source shares that source's refill engine: one thread
/// and one connection for `idforge://` and `redis://` however many tags (open them with
/// [`Segments::open`], which shares the source of a URL), a small pool for SQL.
///
/// In a forked child the parent's buffered ranges are dropped and fresh ones fetched by the
/// child's own engine, so the child never returns a value the parent may also return.
///
/// A source is not trusted to go up: a range that is not entirely above every id this process
/// already took for the tag from that source (by any `Segments`) is refused whole with
/// `INVALID_SEGMENT`, which callers see once the buffered ids run out; the engine keeps
/// fetching, so a counter that went back is used again once it has passed the mark.
///
/// So the ids each thread gets from one generator go up (a thread that races a switch of
/// ranges may drop an id, a gap, rather than take the next range ahead of the current one),
/// except on `idforge://…?mode=any` (striped servers): there each server's ranges go up (and
/// are checked so), and ranges of different servers interleave, so the ids are unique and only
/// roughly increasing.
#[derive(Debug)]
pub struct Segments {
    shared: Arc<Shared>,
    fork: ForkGuard,
}

impl Segments {
    /// A generator for `tag` over the source named by `url` (see [`source::open`]); unless the
    /// URL sets `timeout_ms`, one request may take `options.timeout`. Generators of the process
    /// opened with the same URL and timeout share one source ([`source::open_shared`]).
    pub fn open(url: &str, tag: &str, options: SegmentOptions) -> Result<Segments> {
        Segments::new(source::open_shared(url, options.timeout)?, tag, options)
    }

    /// A generator for `tag` over `source`. Joins (or starts) the process's refill engine for
    /// that source and asks for the first range at once, so ids are usually ready by the first
    /// call.
    pub fn new(
        source: Arc<dyn SegmentSource>,
        tag: &str,
        options: SegmentOptions,
    ) -> Result<Segments> {
        source::validate_tag(tag)?;
        options.check()?;
        let mark = if source.ordered() {
            Some(marks::mark_for(source.as_ref(), tag)?)
        } else {
            None
        };
        let fork = ForkGuard::new()?;
        let buffer = SegmentBuffer::new(options.prefetch_pct)?;
        let engine = engine::engine_for(&source)?;
        engine.add_generator();
        let shared = Arc::new(Shared {
            buffer,
            source,
            tag: tag.to_owned(),
            mark,
            options,
            step: AtomicU64::new(options.step),
            counters: Counters::default(),
            mailbox: ArcSwap::from_pointee(Mailbox::default()),
            engine: ArcSwap::new(engine),
            queued: AtomicBool::new(false),
            failures_in_row: AtomicU32::new(0),
            last_install_ms: AtomicU64::new(u64::MAX),
            created: Instant::now(),
        });
        shared.request_refill();
        Ok(Segments { shared, fork })
    }

    /// The tag.
    pub fn tag(&self) -> &str {
        &self.shared.tag
    }

    /// The options in effect.
    pub fn options(&self) -> SegmentOptions {
        self.shared.options
    }

    /// The next id.
    #[inline]
    pub fn next(&self) -> Result<u64> {
        // Fast path, small enough to inline into callers: not forked, and a buffered id that
        // is not the prefetch mark. Everything else (the id taken included) goes out of line.
        let taken = if self.fork.is_current() {
            match self.shared.buffer.take() {
                Take::Id {
                    id,
                    prefetch: false,
                } => return Ok(id),
                other => Some(other),
            }
        } else {
            None
        };
        self.next_cold(taken)
    }

    /// [`next`](Self::next) past its fast path: `taken` is what its take got, or `None` when
    /// it did not take (a fork to handle first).
    #[cold]
    #[inline(never)]
    fn next_cold(&self, taken: Option<Take>) -> Result<u64> {
        let found = match taken {
            Some(Take::Id { id, .. }) => {
                // The prefetch mark: this caller asks for the next range.
                self.shared.request_refill();
                Some(id)
            }
            Some(Take::Empty) => {
                self.shared.request_refill();
                None
            }
            None => self.try_next()?,
        };
        match found {
            Some(id) => Ok(id),
            None => self.next_slow(),
        }
    }

    /// Fills `out` with ids. On error, the ids written before it are valid and issued.
    pub fn next_many(&self, out: &mut [u64]) -> Result<()> {
        for slot in out.iter_mut() {
            *slot = self.next()?;
        }
        Ok(())
    }

    /// The generator's counters, with its engine's.
    pub fn stats(&self) -> SegmentStats {
        let c = &self.shared.counters;
        SegmentStats {
            ranges_fetched: c.ranges.load(Ordering::Relaxed),
            fetch_errors: c.errors.load(Ordering::Relaxed),
            fetch_micros_total: c.micros_total.load(Ordering::Relaxed),
            fetch_micros_last: c.micros_last.load(Ordering::Relaxed),
            waits: c.waits.load(Ordering::Relaxed),
            step: self.shared.step.load(Ordering::Relaxed),
            buffered: self.shared.buffer.remaining(),
            engine: self.engine_stats(),
        }
    }

    /// The figures of the refill engine serving this generator (shared by every generator of
    /// the process on the same source).
    pub fn engine_stats(&self) -> EngineStats {
        let engine = self.shared.engine.load();
        if engine.is_ours() {
            engine.stats()
        } else {
            // A forked child that has not drawn yet: its engine starts on the first call.
            EngineStats::default()
        }
    }

    fn next_slow(&self) -> Result<u64> {
        self.wait_for(|shared| match shared.buffer.take() {
            Take::Id { id, prefetch } => Some((id, prefetch)),
            Take::Empty => None,
        })
    }

    /// The next id if one is buffered, else `None` at once (the engine is asked for a range).
    /// Never blocks: for callers that must not, such as an event loop.
    #[inline]
    pub fn try_next(&self) -> Result<Option<u64>> {
        self.fork.check(|| self.after_fork())?;
        match self.shared.buffer.take() {
            Take::Id { id, prefetch } => {
                if prefetch {
                    self.shared.request_refill();
                }
                Ok(Some(id))
            }
            Take::Empty => {
                self.shared.request_refill();
                Ok(None)
            }
        }
    }

    /// Waits until an id is buffered, without taking one: at most the configured timeout,
    /// through transient failures; a permanent one fails the wait at once.
    pub fn ready(&self) -> Result<()> {
        self.fork.check(|| self.after_fork())?;
        if self.shared.buffer.remaining() > 0 {
            return Ok(());
        }
        self.wait_for(|shared| (shared.buffer.remaining() > 0).then_some(((), false)))
    }

    /// Waits for the engine until `poll` yields (the value and whether to prefetch), a fetch
    /// fails for good, or the timeout passes: then the last transient failure's error (its
    /// code: `SOURCE_UNAVAILABLE`, `TIMEOUT`), else `TIMEOUT`.
    #[cold]
    fn wait_for<T>(&self, mut poll: impl FnMut(&Shared) -> Option<(T, bool)>) -> Result<T> {
        let shared = &self.shared;
        shared.counters.waits.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let deadline = started + shared.options.timeout;
        let mailbox = shared.mailbox.load_full();
        let mut state = mailbox.lock();
        let mut failures_seen = state.failures;
        let mut passing: Option<(ErrorCode, String)> = None;
        loop {
            if let Some((value, prefetch)) = poll(shared) {
                drop(state);
                if prefetch {
                    shared.request_refill();
                }
                return Ok(value);
            }
            if state.failures != failures_seen {
                failures_seen = state.failures;
                let (code, message, transient) = state.last_failure.clone().unwrap_or((
                    ErrorCode::SourceUnavailable,
                    "the segment source failed".into(),
                    false,
                ));
                if !transient {
                    return Err(Error::permanent(code, message));
                }
                passing = Some((code, message));
            }
            // Queued already unless the engine just filled both buffers and they ran out.
            shared.request_refill();
            let now = Instant::now();
            if now >= deadline {
                let waited = shared.options.timeout.as_millis() as u64;
                return Err(match passing {
                    Some((code, message)) => Error::transient(
                        code,
                        format!(
                            "no range within {waited} ms, tried again until then; the last \
                             failure: {message}"
                        ),
                    ),
                    None => CoreError::Timeout { waited_ms: waited }.into(),
                });
            }
            state = mailbox
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// In a forked child: forget the parent's ranges, mailbox and engine; join the child's.
    fn after_fork(&self) -> Result<()> {
        let shared = &self.shared;
        shared.buffer.reset_after_fork();
        shared.mailbox.store(Arc::new(Mailbox::default()));
        let engine = engine::engine_for(&shared.source)?;
        engine.add_generator();
        // The parent's engine is only counted down; its drop leaves it untouched here.
        shared.engine.swap(engine).remove_generator();
        shared.queued.store(false, Ordering::SeqCst);
        shared.request_refill();
        Ok(())
    }
}

/// What the engine asked a tag's fetch for.
struct Begun {
    step: u64,
    ticket: Option<Ticket>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.engine.load().remove_generator();
    }
}

impl Shared {
    /// Queues the tag with the engine unless it is queued already (cheap then: one load).
    fn request_refill(self: &Arc<Self>) {
        // Pairs with the fence in `wants_range`: either the engine sees the buffer this
        // caller freed, or this caller sees the tag out of the queue (called at a prefetch mark
        // or on an empty buffer only, never per id).
        fence(Ordering::SeqCst);
        if self.queued.load(Ordering::Relaxed) {
            return;
        }
        if self
            .queued
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            self.engine.load().push(Arc::downgrade(self));
        }
    }

    /// Before a fetch: the step to ask for, and the mark's ticket.
    fn begin(&self) -> Begun {
        Begun {
            step: self.step.load(Ordering::Relaxed),
            ticket: self.mark.as_ref().map(|mark| mark.ticket()),
        }
    }

    /// After a fetch of `micros`: installs the range (once the mark admits it) and tells the
    /// waiters; on a failure, tells them and gives the pause before the next try, or `None`
    /// when the failure is permanent (no retry until a call asks again).
    fn finish(
        &self,
        begun: Begun,
        micros: u64,
        fetched: Result<Segment>,
    ) -> std::result::Result<(), Option<Duration>> {
        self.counters.micros_last.store(micros, Ordering::Relaxed);
        self.counters
            .micros_total
            .fetch_add(micros, Ordering::Relaxed);
        let mailbox = self.mailbox.load_full();
        let admitted = fetched.and_then(|segment| {
            if let (Some(mark), Some(ticket)) = (&self.mark, begun.ticket) {
                mark.admit(ticket, segment, &self.tag)?;
            }
            Ok(self.buffer.install(segment)?)
        });
        match admitted {
            Ok(()) => {
                self.counters.ranges.fetch_add(1, Ordering::Relaxed);
                let now_ms = self.created.elapsed().as_millis() as u64;
                if self.options.dynamic_step {
                    let last = self.last_install_ms.load(Ordering::Relaxed);
                    let lasted = (last != u64::MAX).then(|| now_ms.saturating_sub(last));
                    let policy = StepPolicy {
                        min: self.options.step,
                        max: self.options.max_step,
                        target_ms: self.options.target.as_millis() as u64,
                    };
                    self.step
                        .store(policy.next_step(begun.step, lasted), Ordering::Relaxed);
                }
                self.last_install_ms.store(now_ms, Ordering::Relaxed);
                self.failures_in_row.store(0, Ordering::Relaxed);
                let _state = mailbox.lock();
                mailbox.changed.notify_all();
                Ok(())
            }
            Err(e) => {
                self.counters.errors.fetch_add(1, Ordering::Relaxed);
                // A transient failure is retried with backoff for as long as the generator
                // lives. So is INVALID_SEGMENT: each retry takes, and drops, one more step from
                // the source, which is how a counter that went back climbs past the mark. Other
                // permanent failures (refused credentials, an unknown tag, an overflow) wait
                // for a call to ask again, rather than hammer the source: out of the queue
                // before the waiters hear, so one that asks after hearing queues it again.
                let retry = e.is_transient() || e.code() == ErrorCode::InvalidSegment;
                if !retry {
                    self.leave_queue();
                }
                {
                    let mut state = mailbox.lock();
                    state.failures += 1;
                    let message = match &e {
                        Error::Source { message, .. } => message.clone(),
                        other => other.to_string(),
                    };
                    state.last_failure = Some((e.code(), message, e.is_transient()));
                    mailbox.changed.notify_all();
                }
                let failures = self.failures_in_row.fetch_add(1, Ordering::Relaxed) + 1;
                Err(retry.then(|| engine::backoff(failures)))
            }
        }
    }

    /// Takes the tag out of the queue after a permanent failure: the next call that finds no
    /// id queues it again (and so tries again), and nothing retries meanwhile.
    fn leave_queue(&self) {
        self.queued.store(false, Ordering::SeqCst);
    }

    /// Whether the queued tag needs a range now (a buffer is free): if so it stays queued.
    /// Otherwise it leaves the queue, unless a caller freed a buffer meanwhile: that caller
    /// saw it queued and left the request to the engine.
    fn wants_range(&self) -> bool {
        if self.buffer.has_free_slot() {
            return true;
        }
        self.queued.store(false, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        self.buffer.has_free_slot()
            && self
                .queued
                .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
    }
}

#[cfg(test)]
mod tests;
