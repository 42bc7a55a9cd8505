//! `Segments` over in-memory and scripted sources: refills, the double buffer, timeouts, stats.

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

/// A memory source that serves batches of up to 64 tags, counting its round trips, and
/// fails every fetch of a tag that starts with `bad`.
struct Batching {
    inner: MemorySource,
    calls: AtomicU64,
    largest: AtomicU64,
}

impl SegmentSource for Batching {
    fn fetch(&self, tag: &str, step: u64) -> Result<Segment> {
        if tag.starts_with("bad") {
            return Err(Error::transient(
                ErrorCode::SourceUnavailable,
                "this tag's row is locked".into(),
            ));
        }
        self.inner.fetch(tag, step)
    }

    fn fetch_many(&self, requests: &[(&str, u64)]) -> Vec<Result<Segment>> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.largest
            .fetch_max(requests.len() as u64, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(2));
        requests.iter().map(|&(t, n)| self.fetch(t, n)).collect()
    }

    fn max_batch(&self) -> usize {
        64
    }
}

fn batching() -> Arc<Batching> {
    Arc::new(Batching {
        inner: MemorySource::new(),
        calls: AtomicU64::new(0),
        largest: AtomicU64::new(0),
    })
}

#[test]
fn generators_on_one_source_share_one_engine_that_batches() {
    let source = batching();
    let dynamic: Arc<dyn SegmentSource> = source.clone();
    let all: Vec<Segments> = (0..200)
        .map(|i| Segments::new(dynamic.clone(), &format!("t{i}"), options(5)).unwrap())
        .collect();
    for s in &all {
        assert_eq!(s.next().unwrap(), 1);
    }
    let engine = all[0].engine_stats();
    assert_eq!(engine.generators, 200, "{engine:?}");
    assert_eq!(engine.threads, 1, "{engine:?}");
    assert!(source.largest.load(Ordering::Relaxed) > 1, "{engine:?}");
    assert!(engine.round_trips < engine.refills, "{engine:?}");
    // Counted when sent: the source has seen at most those (one may be on its way).
    assert!(source.calls.load(Ordering::Relaxed) <= engine.round_trips);
    drop(all);
    drop(dynamic);
    // The engine ends with its last generator: its lane lets go of the source.
    let deadline = Instant::now() + Duration::from_secs(10);
    while Arc::strong_count(&source) > 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        Arc::strong_count(&source),
        1,
        "the engine outlived its generators"
    );
}

#[test]
fn a_failing_tag_does_not_hold_up_the_others() {
    let source: Arc<dyn SegmentSource> = batching();
    let bad = Segments::new(source.clone(), "bad", options(4)).unwrap();
    let good = Segments::new(source, "good", options(4)).unwrap();
    let ids: Vec<u64> = (0..200).map(|_| good.next().unwrap()).collect();
    assert_eq!(ids, (1..=200).collect::<Vec<_>>());
    let e = bad.next().unwrap_err();
    assert!(e.is_transient(), "{e}");
    assert!(e.to_string().contains("locked"), "{e}");
    // Retried with backoff, not in a loop: far fewer tries than good's 50 ranges took.
    let tries = bad.stats().fetch_errors;
    assert!((1..=20).contains(&tries), "{tries} tries");
    assert_eq!(good.stats().fetch_errors, 0);
}

/// Refuses every tag for good, counting the tries.
struct Counting(AtomicU64);

impl SegmentSource for Counting {
    fn fetch(&self, _tag: &str, _step: u64) -> Result<Segment> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Err(Error::permanent(
            ErrorCode::SourceUnavailable,
            "authentication refused".into(),
        ))
    }
}

#[test]
fn a_permanent_failure_is_tried_again_only_when_a_call_asks() {
    let source = Arc::new(Counting(AtomicU64::new(0)));
    let s = Segments::new(source.clone(), "t", options(4)).unwrap();
    assert!(!s.next().unwrap_err().is_transient());
    // A try the call queued while hearing of the first failure may still be under way.
    std::thread::sleep(Duration::from_millis(100));
    let tries = source.0.load(Ordering::Relaxed);
    // Nothing retries in the background (a transient failure would, every ≤ 0.5 s).
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(source.0.load(Ordering::Relaxed), tries);
    // The next call asks again, and hears the failure at once.
    assert!(!s.next().unwrap_err().is_transient());
    assert!(source.0.load(Ordering::Relaxed) > tries);
}

#[test]
fn generators_dropped_while_queued_let_the_engine_end() {
    // Generators dropped right after a take at the prefetch mark (the tag queued, its
    // buffers full): the engine still ends, its lane letting go of the source. The lane
    // hang this guards against (the last generator dropped by the lane while it held the
    // queue's lock) needs a narrow interleaving, which this loop does not force.
    let source = Arc::new(MemorySource::new());
    for _ in 0..200 {
        let dynamic: Arc<dyn SegmentSource> = source.clone();
        let s = Segments::new(dynamic, "t", options(10)).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while s.stats().buffered < 20 && Instant::now() < deadline {
            std::thread::yield_now();
        }
        s.next().unwrap();
        s.next().unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while Arc::strong_count(&source) > 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        Arc::strong_count(&source),
        1,
        "a lane hung holding the source"
    );
}

/// A source with a bug: it panics.
struct Panicking;

impl SegmentSource for Panicking {
    fn fetch(&self, _tag: &str, _step: u64) -> Result<Segment> {
        panic!("a bug in the source");
    }
}

#[test]
fn a_source_that_panics_fails_the_call_and_the_engine_lives_on() {
    let source: Arc<dyn SegmentSource> = Arc::new(Panicking);
    let s = Segments::new(source.clone(), "t", options(4)).unwrap();
    let e = s.next().unwrap_err();
    assert_eq!(e.code(), ErrorCode::SourceUnavailable, "{e}");
    assert!(!e.is_transient(), "{e}");
    // The lane survived: a second generator on the source is still served (and fails the
    // same way, not by timing out).
    let t = Segments::new(source, "u", options(4)).unwrap();
    assert_eq!(t.next().unwrap_err().code(), ErrorCode::SourceUnavailable);
    assert_eq!(t.engine_stats().threads, 1);
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
