//! The segment generator: ids from ranges fetched in the background (Leaf's double buffer).
//!
//! The hot path is one atomic add on the core's [`SegmentBuffer`]. The caller that crosses the
//! prefetch mark wakes a background worker, which fetches the next range from the source while
//! ids keep flowing; a caller only waits when both ranges are used up, and then at most the
//! configured timeout: through transient failures (a server restarting or failing over, a
//! refused connection, a busy database), which the worker retries with backoff, but not past a
//! permanent one (see [`Error::is_transient`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use idforge_core::Error as CoreError;
use idforge_core::segment::{SegmentBuffer, StepPolicy, Take};

use crate::error::{Error, ErrorCode, Result};
use crate::marks::{self, Mark};
use crate::reseed::ForkGuard;
use crate::source::{self, SegmentSource};

/// Options of a [`Segments`] generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentOptions {
    /// The first step, and the smallest one (default 1000).
    pub step: u64,
    /// The largest step dynamic sizing may reach (default 1,000,000, Leaf's).
    pub max_step: u64,
    /// Double or halve the step to keep a segment lasting about `target` (Leaf's dynamic
    /// step); when false, every fetch asks for `step`.
    pub dynamic_step: bool,
    /// How long a segment should last (default 15 min).
    pub target: Duration,
    /// Percentage of a segment used before the next one is fetched (default 10).
    pub prefetch_pct: u8,
    /// The longest a call waits for a range when both buffers are empty (default 3 s), through
    /// transient failures; also each request's budget unless the URL sets `timeout_ms`.
    pub timeout: Duration,
}

impl Default for SegmentOptions {
    fn default() -> Self {
        SegmentOptions {
            step: 1000,
            max_step: 1_000_000,
            dynamic_step: true,
            target: Duration::from_secs(15 * 60),
            prefetch_pct: SegmentBuffer::DEFAULT_PREFETCH_PCT,
            timeout: Duration::from_secs(3),
        }
    }
}

/// Counters of a [`Segments`] generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SegmentStats {
    /// Ranges fetched from the source.
    pub ranges_fetched: u64,
    /// Fetches that failed.
    pub fetch_errors: u64,
    /// Total time spent fetching, in microseconds.
    pub fetch_micros_total: u64,
    /// The last fetch's duration, in microseconds.
    pub fetch_micros_last: u64,
    /// Calls that found both buffers empty and had to wait.
    pub waits: u64,
    /// The step the next fetch will ask for.
    pub step: u64,
    /// Ids buffered right now.
    pub buffered: u64,
}

#[derive(Debug, Default)]
struct Counters {
    ranges: AtomicU64,
    errors: AtomicU64,
    micros_total: AtomicU64,
    micros_last: AtomicU64,
    waits: AtomicU64,
}

/// The refill worker's mailbox. Replaced wholesale in a forked child, whose copy may hold a
/// mutex locked by a parent thread that does not exist there.
#[derive(Debug, Default)]
struct Worker {
    state: Mutex<WorkerState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct WorkerState {
    wanted: bool,
    stop: bool,
    /// Bumped on every failed fetch, so waiters can tell a failure that happened after they
    /// asked for a range.
    failures: u64,
    /// The last failure: its code, message and whether it may pass.
    last_failure: Option<(ErrorCode, String, bool)>,
}

impl Worker {
    fn lock(&self) -> MutexGuard<'_, WorkerState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[derive(Debug)]
struct Shared {
    buffer: SegmentBuffer,
    source: Arc<dyn SegmentSource>,
    tag: String,
    /// The ids this process already took for the tag from the source: a range that is not
    /// above them is refused.
    mark: Arc<Mark>,
    options: SegmentOptions,
    step: AtomicU64,
    counters: Counters,
    worker: ArcSwap<Worker>,
}

impl std::fmt::Debug for dyn SegmentSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SegmentSource")
    }
}

/// Ids of one tag from a [`SegmentSource`]: `Send + Sync`, one atomic add per buffered id.
///
/// In a forked child the parent's buffered ranges are dropped and fresh ones fetched, so the
/// child never returns a value the parent may also return.
///
/// A source is not trusted to go up: a range that is not entirely above every id this process
/// already took for the tag from that source (by any `Segments`) is refused whole with
/// `INVALID_SEGMENT`, which callers see once the buffered ids run out; the worker keeps
/// fetching, so a counter that went back is used again once it has passed the mark.
#[derive(Debug)]
pub struct Segments {
    shared: Arc<Shared>,
    fork: ForkGuard,
}

impl Segments {
    /// A generator for `tag` over the source named by `url` (see [`source::open`]); unless the
    /// URL sets `timeout_ms`, one request may take `options.timeout`.
    pub fn open(url: &str, tag: &str, options: SegmentOptions) -> Result<Segments> {
        Segments::new(source::open_for(url, options.timeout)?, tag, options)
    }

    /// A generator for `tag` over `source`. Starts the refill worker and asks for the first
    /// range at once, so ids are usually ready by the first call.
    pub fn new(
        source: Arc<dyn SegmentSource>,
        tag: &str,
        options: SegmentOptions,
    ) -> Result<Segments> {
        source::validate_tag(tag)?;
        if options.step == 0 || options.max_step < options.step {
            return Err(CoreError::InvalidArgument("need 1 <= step <= max_step").into());
        }
        let mark = marks::mark_for(source.as_ref(), tag)?;
        let shared = Arc::new(Shared {
            buffer: SegmentBuffer::new(options.prefetch_pct)?,
            source,
            tag: tag.to_owned(),
            mark,
            options,
            step: AtomicU64::new(options.step),
            counters: Counters::default(),
            worker: ArcSwap::from_pointee(Worker::default()),
        });
        let fork = ForkGuard::new()?;
        start_worker(&shared)?;
        Ok(Segments { shared, fork })
    }

    /// The tag.
    pub fn tag(&self) -> &str {
        &self.shared.tag
    }

    /// The next id.
    #[inline]
    pub fn next(&self) -> Result<u64> {
        match self.try_next()? {
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

    /// The generator's counters.
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
        }
    }

    #[cold]
    fn next_slow(&self) -> Result<u64> {
        self.wait_for(|shared| match shared.buffer.take() {
            Take::Id { id, prefetch } => Some((id, prefetch)),
            Take::Empty => None,
        })
    }

    /// The next id if one is buffered, else `None` at once (the worker is asked for a range).
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

    /// Waits for the refill worker until `poll` yields (the value and whether to prefetch), a
    /// fetch fails for good, or the timeout passes: then the last transient failure's error
    /// (its code: `SOURCE_UNAVAILABLE`, `TIMEOUT`), else `TIMEOUT`.
    #[cold]
    fn wait_for<T>(&self, mut poll: impl FnMut(&Shared) -> Option<(T, bool)>) -> Result<T> {
        let shared = &self.shared;
        shared.counters.waits.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let deadline = started + shared.options.timeout;
        let worker = shared.worker.load_full();
        let mut state = worker.lock();
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
            state.wanted = true;
            worker.changed.notify_all();
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
            state = worker
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// In a forked child: forget the parent's ranges and its worker, start our own.
    fn after_fork(&self) -> Result<()> {
        self.shared.buffer.reset_after_fork();
        self.shared.worker.store(Arc::new(Worker::default()));
        start_worker(&self.shared)
    }
}

impl Drop for Segments {
    fn drop(&mut self) {
        let worker = self.shared.worker.load_full();
        worker.lock().stop = true;
        worker.changed.notify_all();
    }
}

impl Shared {
    fn request_refill(&self) {
        let worker = self.worker.load();
        let mut state = worker.lock();
        if !state.wanted {
            state.wanted = true;
            worker.changed.notify_all();
        }
    }

    /// Fetches and installs ranges until both buffers are full; returns false on a failure.
    fn refill(&self, last_install: &mut Option<Instant>) -> bool {
        while self.buffer.has_free_slot() {
            let step = self.step.load(Ordering::Relaxed);
            let started = Instant::now();
            let ticket = self.mark.ticket();
            let fetched = self.source.fetch(&self.tag, step);
            let micros = started.elapsed().as_micros() as u64;
            self.counters.micros_last.store(micros, Ordering::Relaxed);
            self.counters
                .micros_total
                .fetch_add(micros, Ordering::Relaxed);
            let worker = self.worker.load_full();
            let admitted = fetched.and_then(|segment| {
                self.mark.admit(ticket, segment, &self.tag)?;
                Ok(self.buffer.install(segment)?)
            });
            match admitted {
                Ok(()) => {
                    self.counters.ranges.fetch_add(1, Ordering::Relaxed);
                    if self.options.dynamic_step {
                        let lasted = last_install.map(|t| t.elapsed().as_millis() as u64);
                        let policy = StepPolicy {
                            min: self.options.step,
                            max: self.options.max_step,
                            target_ms: self.options.target.as_millis() as u64,
                        };
                        self.step
                            .store(policy.next_step(step, lasted), Ordering::Relaxed);
                    }
                    *last_install = Some(Instant::now());
                    let _state = worker.lock();
                    worker.changed.notify_all();
                }
                Err(e) => {
                    self.counters.errors.fetch_add(1, Ordering::Relaxed);
                    let mut state = worker.lock();
                    state.failures += 1;
                    let message = match &e {
                        Error::Source { message, .. } => message.clone(),
                        other => other.to_string(),
                    };
                    state.last_failure = Some((e.code(), message, e.is_transient()));
                    worker.changed.notify_all();
                    return false;
                }
            }
        }
        true
    }
}

/// Spawns the refill thread for the current worker mailbox. It holds only a weak reference, so
/// dropping the generator ends it.
fn start_worker(shared: &Arc<Shared>) -> Result<()> {
    let weak: Weak<Shared> = Arc::downgrade(shared);
    let worker = shared.worker.load_full();
    worker.lock().wanted = true;
    std::thread::Builder::new()
        .name(format!("idforge-refill-{}", shared.tag))
        .spawn(move || refill_loop(weak, worker))
        .map_err(|_| CoreError::Io("could not start the refill thread"))?;
    Ok(())
}

fn refill_loop(shared: Weak<Shared>, worker: Arc<Worker>) {
    let mut last_install = None;
    let mut backoff = Duration::from_millis(10);
    loop {
        {
            let mut state = worker.lock();
            while !state.wanted && !state.stop {
                state = worker
                    .changed
                    .wait(state)
                    .unwrap_or_else(|p| p.into_inner());
            }
            if state.stop {
                return;
            }
            state.wanted = false;
        }
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if !Arc::ptr_eq(&shared.worker.load_full(), &worker) {
            return; // replaced after a fork
        }
        if shared.refill(&mut last_install) {
            backoff = Duration::from_millis(10);
        } else {
            // Retry with backoff, for as long as the generator lives (at most half a second
            // apart, so a caller waiting out a server's restart gets its range soon after).
            // Each retry after an INVALID_SEGMENT refusal takes, and drops, one more step from
            // the source: that is how a counter that went back climbs past the mark.
            drop(shared);
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(Duration::from_millis(500));
            worker.lock().wanted = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::MemorySource;

    fn options(step: u64) -> SegmentOptions {
        SegmentOptions {
            step,
            max_step: step * 64,
            timeout: Duration::from_secs(2),
            ..Default::default()
        }
    }

    /// A generator on a memory source that fetches a fixed 4 ids when half a range is used.
    fn small_ranges(timeout: Duration) -> (Arc<MemorySource>, Segments) {
        let source = Arc::new(MemorySource::new());
        let options = SegmentOptions {
            dynamic_step: false,
            prefetch_pct: 50,
            timeout,
            ..options(4)
        };
        let s = Segments::new(source.clone(), "t", options).unwrap();
        (source, s)
    }

    #[test]
    fn serves_consecutive_ids_and_prefetches() {
        let source = Arc::new(MemorySource::new());
        let s = Segments::new(
            source.clone(),
            "orders",
            SegmentOptions {
                dynamic_step: false,
                ..options(100)
            },
        )
        .unwrap();
        let ids: Vec<u64> = (0..1000).map(|_| s.next().unwrap()).collect();
        assert_eq!(ids, (1..=1000).collect::<Vec<_>>());
        let stats = s.stats();
        assert!(stats.ranges_fetched >= 10, "{stats:?}");
        assert_eq!(stats.fetch_errors, 0);
    }

    #[test]
    fn a_fast_consumer_doubles_the_step() {
        let source = Arc::new(MemorySource::new());
        let s = Segments::new(source, "t", options(10)).unwrap();
        for _ in 0..5000 {
            s.next().unwrap();
        }
        assert!(s.stats().step > 10, "{:?}", s.stats());
    }

    #[test]
    fn failures_surface_as_typed_errors_and_nothing_is_repeated() {
        let (source, s) = small_ranges(Duration::from_millis(200));
        let first = s.next().unwrap();
        source.set_failing(true);
        let mut got = vec![first];
        let err = loop {
            match s.next() {
                Ok(id) => got.push(id),
                Err(e) => break e,
            }
        };
        // An outage longer than the timeout: the last failure, after the whole wait.
        assert_eq!(err.code(), ErrorCode::SourceUnavailable);
        assert!(err.is_transient(), "{err}");
        assert!(
            err.to_string().contains("memory source set to fail"),
            "{err}"
        );
        source.set_failing(false);
        let after = s.next().unwrap();
        assert!(got.iter().all(|&id| id < after), "{got:?} then {after}");
    }

    #[test]
    fn try_next_never_waits_and_ready_waits_without_taking() {
        let source = Arc::new(MemorySource::new());
        source.set_delay(Duration::from_millis(100));
        let s = Segments::new(
            source.clone(),
            "t",
            SegmentOptions {
                dynamic_step: false,
                ..options(10)
            },
        )
        .unwrap();
        // The first fetch is still under way.
        assert_eq!(s.try_next().unwrap(), None);
        s.ready().unwrap();
        assert!(s.stats().buffered > 0);
        assert_eq!(s.try_next().unwrap(), Some(1));
        assert_eq!(s.next().unwrap(), 2);
        source.set_failing(true);
        let mut seen = vec![1, 2];
        while let Ok(Some(id)) = s.try_next() {
            seen.push(id);
        }
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
        let e = s.ready().unwrap_err();
        assert_eq!(e.code(), ErrorCode::SourceUnavailable);
    }

    #[test]
    fn a_call_waits_out_an_outage_shorter_than_its_timeout() {
        let (source, s) = small_ranges(Duration::from_secs(2));
        let mut ids = vec![s.next().unwrap()];
        source.set_failing(true);
        let mender = {
            let source = source.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(400));
                source.set_failing(false);
            })
        };
        // The buffered ids, then calls that wait through failed fetches until the source mends.
        for _ in 0..20 {
            ids.push(s.next().unwrap());
        }
        mender.join().unwrap();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
        assert!(s.stats().fetch_errors > 0, "{:?}", s.stats());
    }

    /// A source that refuses for good.
    struct Refusing;

    impl SegmentSource for Refusing {
        fn fetch(&self, _tag: &str, _step: u64) -> Result<idforge_core::segment::Segment> {
            Err(Error::permanent(
                ErrorCode::InvalidArgument,
                "no such tag".into(),
            ))
        }
    }

    #[test]
    fn a_permanent_failure_ends_the_wait_at_once() {
        let s = Segments::new(
            Arc::new(Refusing),
            "t",
            SegmentOptions {
                timeout: Duration::from_secs(30),
                ..options(4)
            },
        )
        .unwrap();
        let started = Instant::now();
        let e = s.next().unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(!e.is_transient());
        // Far less than the 30 s timeout (the bound only says it did not wait it out).
        assert!(started.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn a_slow_source_times_out() {
        let source = Arc::new(MemorySource::new());
        source.set_delay(Duration::from_millis(300));
        let s = Segments::new(
            source,
            "t",
            SegmentOptions {
                timeout: Duration::from_millis(50),
                ..options(10)
            },
        )
        .unwrap();
        assert_eq!(s.next().unwrap_err().code(), ErrorCode::Timeout);
        std::thread::sleep(Duration::from_millis(400));
        assert!(s.next().is_ok());
    }

    #[test]
    fn bad_options_are_refused() {
        let source: Arc<dyn SegmentSource> = Arc::new(MemorySource::new());
        let e = Segments::new(source.clone(), "", options(1)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        let e = Segments::new(
            source,
            "t",
            SegmentOptions {
                step: 0,
                ..options(1)
            },
        )
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
    }
}
