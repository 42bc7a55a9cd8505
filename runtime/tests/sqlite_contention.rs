//! Processes contending for one `sqlite://` file wait for each other instead of failing: this
//! test runs itself again as 5 child processes (selected by an environment variable), each with
//! 2 threads drawing at step 100 with a 20 s timeout, and checks that no call failed and no id
//! repeated.

#![cfg(feature = "sql")]

use std::collections::HashSet;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use idforge::{SegmentOptions, Segments};
use idforge_testkit::fixed_step;

const PROCESSES: usize = 5;
const THREADS: usize = 2;
const IDS: usize = 3_000;
const CHILD: &str = "IDFORGE_TEST_CONTENDER";

/// One child: draws with `THREADS` threads, writes its ids to `out`, its errors to stderr.
fn contend(url: &str, out: &str) -> ! {
    let options = SegmentOptions {
        timeout: Duration::from_secs(20),
        ..fixed_step(100)
    };
    let segments = Arc::new(Segments::open(url, "contended", options).unwrap());
    let drawers: Vec<_> = (0..THREADS)
        .map(|_| {
            let segments = segments.clone();
            std::thread::spawn(move || {
                let (mut ids, mut errors) = (Vec::new(), Vec::new());
                for _ in 0..IDS {
                    match segments.next() {
                        Ok(id) => ids.push(id),
                        Err(e) => errors.push(e.to_string()),
                    }
                }
                (ids, errors)
            })
        })
        .collect();
    idforge_testkit::finish_drawing_child(drawers, out, true)
}

#[test]
fn processes_contending_for_one_sqlite_file_wait_instead_of_failing() {
    if let Ok(args) = std::env::var(CHILD) {
        let (url, out) = args.split_once(' ').unwrap();
        contend(url, out);
    }
    // The test is about lock contention, not the disk: every range commits with an fsync
    // (`synchronous=FULL`), and on CI's disk, right after a build, one fsync has taken about
    // 20 s (the build's dirty pages go first), in 3 of 5 fresh-clone runs. So the file lives in
    // memory (tmpfs, where fsync returns at once) when the host has one.
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        rustix::fs::sync();
        tempfile::tempdir().unwrap()
    };
    let url = format!("sqlite://{}/leaf.db", dir.path().display());
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..PROCESSES)
        .map(|i| {
            let out = dir.path().join(format!("ids-{i}"));
            let child = Command::new(&exe)
                .args([
                    "--exact",
                    "--nocapture",
                    "processes_contending_for_one_sqlite_file_wait_instead_of_failing",
                ])
                .env(CHILD, format!("{url} {}", out.display()))
                .spawn()
                .unwrap();
            (child, out)
        })
        .collect();
    let mut seen = HashSet::new();
    for (mut child, out) in children {
        assert!(child.wait().unwrap().success(), "a contender's call failed");
        for line in std::fs::read_to_string(&out).unwrap().lines() {
            assert!(seen.insert(line.parse::<u64>().unwrap()), "{line} twice");
        }
    }
    assert_eq!(seen.len(), PROCESSES * THREADS * IDS);
}
