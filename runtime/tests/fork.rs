//! Fork safety: a child never repeats what its parent issues.
//!
//! One test in its own binary, so the process that forks runs no other test threads.
#![allow(unsafe_code)]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;

use idforge::{
    ErrorCode, FileSource, Flake128s, Layout, ObjectIds, SegmentOptions, Segments, Snowflake,
    WorkerId,
};

/// What the child reports back, as little-endian words.
struct ChildReport {
    snowflake_error: u32,
    objectid: [u8; 12],
    flake_worker: u64,
    segment_ids: Vec<u64>,
}

fn run_child(
    mut out: UnixStream,
    snow: &Snowflake,
    oids: &ObjectIds,
    flakes: &Flake128s,
    segs: &Segments,
) -> i32 {
    let mut buf = Vec::new();
    let code = match snow.next() {
        Ok(_) => 0,
        Err(e) => e.code().as_u32(),
    };
    buf.extend_from_slice(&code.to_le_bytes());
    let Ok(oid) = oids.next() else { return 3 };
    buf.extend_from_slice(&oid.bytes());
    let Ok(flake) = flakes.next() else { return 4 };
    buf.extend_from_slice(&flake.worker().to_le_bytes());
    for _ in 0..5_000 {
        match segs.next() {
            Ok(id) => buf.extend_from_slice(&id.to_le_bytes()),
            Err(_) => return 5,
        }
    }
    if out.write_all(&buf).is_err() {
        return 6;
    }
    0
}

fn parse(bytes: &[u8]) -> ChildReport {
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    ChildReport {
        snowflake_error: u32::from_le_bytes(bytes[0..4].try_into().unwrap()),
        objectid: bytes[4..16].try_into().unwrap(),
        flake_worker: word(16),
        segment_ids: bytes[24..]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
    }
}

#[test]
fn a_forked_child_never_repeats_its_parent() {
    let dir = tempfile::tempdir().unwrap();
    let snow = Snowflake::new(Layout::TWITTER, 9).unwrap();
    let oids = ObjectIds::new().unwrap();
    let flakes = Flake128s::new(WorkerId::Random).unwrap();
    let source = Arc::new(FileSource::new(dir.path()).unwrap());
    let options = SegmentOptions {
        step: 1_000,
        dynamic_step: false,
        ..Default::default()
    };
    let segs = Segments::new(source, "fork", options).unwrap();

    // The parent uses everything first, so the child inherits buffered ranges.
    snow.next().unwrap();
    let parent_oid = oids.next().unwrap();
    let parent_worker = flakes.next().unwrap().worker();
    let mut parent_ids: Vec<u64> = (0..500).map(|_| segs.next().unwrap()).collect();
    // The prefetch of the second range runs in the background: let it land before the fork,
    // or the child may fetch that range itself (no repeat, but not what this test checks).
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while segs.stats().ranges_fetched < 2 && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(segs.stats().ranges_fetched >= 2, "{:?}", segs.stats());

    let (mut parent_end, child_end) = UnixStream::pair().unwrap();
    // SAFETY: the child only runs Rust code that allocates and makes syscalls, which glibc's
    // fork handlers keep usable, then leaves with `_exit` so no test-harness state is touched.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        drop(parent_end);
        let code = run_child(child_end, &snow, &oids, &flakes, &segs);
        // SAFETY: ends the child at once, skipping destructors and atexit handlers meant for the
        // parent.
        unsafe { libc::_exit(code) };
    }
    drop(child_end);

    // The parent keeps drawing from its buffered ranges and beyond while the child runs.
    for i in 0..5_000 {
        match segs.next() {
            Ok(id) => parent_ids.push(id),
            Err(e) => panic!(
                "parent failed after the fork at id {i}: {e}; {:?}",
                segs.stats()
            ),
        }
    }
    let mut bytes = Vec::new();
    parent_end.read_to_end(&mut bytes).unwrap();
    let mut status = 0;
    // SAFETY: waits for the child we forked; `status` is a valid out-pointer.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child failed: status {status:#x}"
    );

    let child = parse(&bytes);
    assert_eq!(
        child.snowflake_error,
        ErrorCode::Forked.as_u32(),
        "fixed-node snowflake must refuse"
    );
    assert_ne!(
        child.objectid[4..9],
        parent_oid.bytes()[4..9],
        "child kept the parent's process bytes"
    );
    assert_ne!(
        child.flake_worker, parent_worker,
        "child kept the parent's random worker id"
    );
    assert_eq!(child.segment_ids.len(), 5_000);
    let parent: std::collections::HashSet<u64> = parent_ids.iter().copied().collect();
    assert_eq!(parent.len(), parent_ids.len());
    for id in &child.segment_ids {
        assert!(
            !parent.contains(id),
            "child returned {id}, which the parent also returned"
        );
    }
    // Everything the parent had buffered at the fork (its first two ranges) is the parent's.
    assert!(
        child.segment_ids.iter().all(|&id| id > 2_000),
        "child used a parent range"
    );
    // The parent is unaffected by the fork.
    assert!(snow.next().is_ok());
}
