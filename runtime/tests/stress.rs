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
    let source = Arc::new(Recording {
        inner: MemorySource::new(),
        seen: Mutex::new(Vec::new()),
    });
    let options = SegmentOptions {
        step: 5_000,
        max_step: 5_000,
        dynamic_step: false,
        ..Default::default()
    };
    let ids = Arc::new(Segments::new(source.clone(), "stress", options).unwrap());
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let ids = ids.clone();
            std::thread::spawn(move || {
                (0..1_000_000)
                    .map(|_| ids.next().unwrap())
                    .collect::<Vec<u64>>()
            })
        })
        .collect();
    let mut all: Vec<u64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert_eq!(all.len(), 2_000_000);
    all.sort_unstable();
    let before = all.len();
    all.dedup();
    assert_eq!(all.len(), before, "duplicate segment ids");

    let mut segments = source.seen.lock().unwrap().clone();
    assert!(
        segments.len() > 100,
        "only {} segments: fewer than 100 switches",
        segments.len()
    );
    segments.sort_by_key(|s| s.start());
    for id in &all {
        let i = segments.partition_point(|s| s.start() <= *id);
        assert!(
            i > 0 && segments[i - 1].contains(*id),
            "id {id} is outside every fetched range"
        );
    }
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
