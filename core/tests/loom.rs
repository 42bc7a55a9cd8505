//! Model checks (run with `RUSTFLAGS="--cfg loom" cargo test -p idforge-core --release --test loom`):
//! every interleaving loom explores must keep ids unique, and each thread's ids increasing.
#![cfg(loom)]

use idforge_core::segment::{Segment, SegmentBuffer, Take};
use idforge_core::tick::{Tick, TickState};
use loom::sync::Arc;
use loom::thread;

/// Three threads with clocks that disagree (one behind, one ahead) share one tick state.
#[test]
fn tick_state_never_repeats() {
    loom::model(|| {
        let state = Arc::new(TickState::new(8, 1, 2).unwrap());
        let handles: Vec<_> = [1u64, 0, 2]
            .into_iter()
            .map(|now| {
                let state = state.clone();
                thread::spawn(move || {
                    let mut got = Vec::new();
                    for _ in 0..2 {
                        if let Tick::Ready { tick, seq } = state.next(now) {
                            got.push((tick, seq));
                        }
                    }
                    // Each thread sees its own values strictly increase.
                    assert!(got.windows(2).all(|w| w[0] < w[1]));
                    got
                })
            })
            .collect();
        let mut all: Vec<(u64, u64)> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "a (tick, seq) was handed out twice");
    });
}

/// Up to `tries` ids from one thread, checked to go up: a thread never sees an older range
/// after a newer one.
fn take_some(buffer: &SegmentBuffer, tries: usize) -> Vec<u64> {
    let ids: Vec<u64> = (0..tries)
        .filter_map(|_| match buffer.take() {
            Take::Id { id, .. } => Some(id),
            Take::Empty => None,
        })
        .collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "a thread's ids went back: {ids:?}"
    );
    ids
}

fn assert_unique(ids: &[u64]) {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(
        sorted.len(),
        ids.len(),
        "an id was handed out twice: {ids:?}"
    );
}

/// Two takers drain a segment while a refill installs the next: no repeat, nothing outside an
/// installed segment.
#[test]
fn segment_switch_never_repeats() {
    loom::model(|| {
        let buffer = Arc::new(SegmentBuffer::new(0).unwrap());
        buffer.install(Segment::new(0, 2).unwrap()).unwrap();
        let takers: Vec<_> = (0..2)
            .map(|_| {
                let buffer = buffer.clone();
                thread::spawn(move || take_some(&buffer, 2))
            })
            .collect();
        let refill = {
            let buffer = buffer.clone();
            thread::spawn(move || buffer.install(Segment::new(10, 12).unwrap()).is_ok())
        };
        let installed_second = refill.join().unwrap();
        let mut ids: Vec<u64> = takers.into_iter().flat_map(|h| h.join().unwrap()).collect();
        ids.extend(take_some(&buffer, 5));
        assert_unique(&ids);
        for id in &ids {
            assert!(
                *id < 2 || (installed_second && (10..12).contains(id)),
                "stray id {id}"
            );
        }
        // A taker may drop an id (a gap, by design): one preempted between its take and its
        // check while the slot was refilled, or one that took the second segment while it was
        // held behind the first. Whatever is left is never stuck: the last drain took it all.
        assert_eq!(buffer.remaining(), 0, "ids left behind: {ids:?}");
    });
}

/// One-id segments force a slot to be refilled while a taker may still be reading it: the
/// seqlock check must turn that read into a retry, never into an id of the wrong range.
#[test]
fn slot_reuse_during_a_take_never_repeats() {
    loom::model(|| {
        let buffer = Arc::new(SegmentBuffer::new(0).unwrap());
        buffer.install(Segment::new(0, 1).unwrap()).unwrap();
        buffer.install(Segment::new(5, 6).unwrap()).unwrap();
        let taker = {
            let buffer = buffer.clone();
            thread::spawn(move || take_some(&buffer, 2))
        };
        let refill = {
            let buffer = buffer.clone();
            thread::spawn(move || {
                let mut installed = Vec::new();
                for (start, end) in [(10, 11), (20, 21)] {
                    let s = Segment::new(start, end).unwrap();
                    if buffer.install(s).is_ok() {
                        installed.push(s);
                    }
                }
                installed
            })
        };
        let mut ids = take_some(&buffer, 1);
        ids.extend(taker.join().unwrap());
        let installed = refill.join().unwrap();
        assert_unique(&ids);
        for id in &ids {
            let ok = *id == 0 || *id == 5 || installed.iter().any(|s| s.contains(*id));
            assert!(ok, "id {id} is outside every installed segment");
        }
    });
}
