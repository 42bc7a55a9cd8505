//! Many threads, many segment switches: no id twice, none outside a fetched range.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use idforge::{
    Layout, MemorySource, Result, Segment, SegmentOptions, SegmentSource, Segments, Snowflake,
};

/// Records every range the generator fetched.
struct Recording {
    inner: MemorySource,
    seen: Mutex<Vec<Segment>>,
}

impl SegmentSource for Recording {
    fn fetch(&self, tag: &str, step: u64) -> Result<Segment> {
        let segment = self.inner.fetch(tag, step)?;
        self.seen.lock().unwrap().push(segment);
        Ok(segment)
    }
}

#[test]
fn two_threads_a_million_segment_ids_each() {
    let segments = draw(5_000, 2, 1_000_000);
    assert!(
        segments > 100,
        "only {segments} segments: fewer than 100 switches"
    );
}

/// Tiny ranges, so refills race the takes all the time (a held range, a dropped take, a
/// release): still no repeat, and each thread's ids go up.
#[test]
fn four_threads_on_sixteen_id_ranges() {
    let segments = draw(16, 4, 100_000);
    assert!(segments > 1000, "{segments} segments");
}

/// `threads` threads each take `each` ids from one generator on ranges of `step` ids; checks
/// each thread's ids go up, no id comes twice and every id lies in a range the source handed
/// out; returns how many ranges were fetched.
fn draw(step: u64, threads: usize, each: usize) -> usize {
    let source = Arc::new(Recording {
        inner: MemorySource::new(),
        seen: Mutex::new(Vec::new()),
    });
    let options = SegmentOptions {
        step,
        max_step: step,
        dynamic_step: false,
        ..Default::default()
    };
    let ids = Arc::new(Segments::new(source.clone(), "stress", options).unwrap());
    let threads: Vec<_> = (0..threads)
        .map(|_| {
            let ids = ids.clone();
            std::thread::spawn(move || {
                let mine: Vec<u64> = (0..each).map(|_| ids.next().unwrap()).collect();
                assert!(
                    mine.windows(2).all(|w| w[0] < w[1]),
                    "a thread's ids went back"
                );
                mine
            })
        })
        .collect();
    let mut all: Vec<u64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    // Sorted, strictly increasing: no id twice.
    all.sort_unstable();
    assert!(all.windows(2).all(|w| w[0] < w[1]), "duplicate segment ids");
    let mut segments: Vec<Segment> = source.seen.lock().unwrap().clone();
    segments.sort_by_key(|s| s.start());
    for id in &all {
        let i = segments.partition_point(|s| s.start() <= *id);
        assert!(
            i > 0 && segments[i - 1].contains(*id),
            "id {id} is outside every fetched range"
        );
    }
    segments.len()
}

#[test]
fn two_threads_a_million_snowflakes_each() {
    let ids = Arc::new(Snowflake::new(Layout::TWITTER, 5).unwrap());
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let ids = ids.clone();
            std::thread::spawn(move || {
                let out: Vec<u64> = (0..1_000_000).map(|_| ids.next().unwrap()).collect();
                // Each thread sees its own ids strictly increase.
                assert!(out.windows(2).all(|w| w[0] < w[1]));
                out
            })
        })
        .collect();
    let mut seen = HashSet::with_capacity(2_000_000);
    for t in threads {
        for id in t.join().unwrap() {
            assert!(seen.insert(id), "duplicate snowflake {id}");
        }
    }
}
