//! UUIDv7s under load and across a restart whose clock went back: 8 threads x 1,000,000 ids
//! from one generator, all distinct and each thread's strictly increasing; and a process whose
//! wall clock libfaketime sets 1 h back continues after its state file's mark.
//!
//! The restarted processes are this test binary run again (the `child` test, which does nothing
//! unless `IDFORGE_UUID7_CHILD` is set), the second under `LD_PRELOAD` of libfaketime. Without
//! the library that test is skipped with a message (it fails instead when
//! `IDFORGE_REQUIRE_SERVICES` is set, as in CI, where `ci/install/install-deps.sh faketime`
//! installs it).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use idforge::{Policy, SystemClock, TimeOrdered, Ulids, Uuid7, Uuid7s};

use idforge_testkit::FAKETIME;

#[test]
fn eight_threads_one_million_each_all_distinct_and_increasing() {
    let ids = Arc::new(Uuid7s::new().unwrap());
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let ids = ids.clone();
            std::thread::spawn(move || {
                let mut mine = Vec::with_capacity(1_000_000);
                for _ in 0..1_000_000 {
                    mine.push(ids.next().unwrap().as_u128());
                }
                assert!(
                    mine.windows(2).all(|w| w[0] < w[1]),
                    "a thread's ids strictly increase"
                );
                mine
            })
        })
        .collect();
    let mut all: Vec<u128> = Vec::with_capacity(8_000_000);
    for t in threads {
        all.extend(t.join().unwrap());
    }
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 8_000_000, "every id distinct");
    assert!(all.iter().all(|&v| Uuid7::is_v7(v)));
}

#[test]
fn batches_and_ulids_increase_too() {
    let ulids = Ulids::new().unwrap();
    let mut batch = [ulids.next().unwrap(); 4096];
    ulids.next_many(&mut batch).unwrap();
    assert!(batch.windows(2).all(|w| w[0] < w[1]));
    assert!(ulids.next().unwrap() > batch[4095]);
}

/// Runs as a restarted process: draws 1,000 UUIDv7s with the state file and writes the wall
/// clock, then every id, one per line.
#[test]
fn child() {
    let Ok(state) = std::env::var("IDFORGE_UUID7_CHILD") else {
        return;
    };
    let out = std::env::var("IDFORGE_UUID7_OUT").unwrap();
    // A 2 h lead: a clock 1 h behind the mark goes on borrowing instead of refusing.
    let policy = Policy::Borrow {
        max_lead: Duration::from_secs(7_200),
    };
    let ids: Uuid7s = TimeOrdered::build(policy, Some(state.into()), SystemClock::new()).unwrap();
    let mut text = format!("{}\n", wall_ms());
    for _ in 0..1_000 {
        text.push_str(&format!("{}\n", ids.next().unwrap()));
    }
    std::fs::write(out, text).unwrap();
}

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn run_child(dir: &Path, faketime: Option<&str>) -> (u64, Vec<Uuid7>) {
    let out = dir.join("child.out");
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env("IDFORGE_UUID7_CHILD", dir.join("uuid7.state"))
        .env("IDFORGE_UUID7_OUT", &out)
        .stdout(std::process::Stdio::null());
    if let Some(offset) = faketime {
        cmd.env("LD_PRELOAD", FAKETIME).env("FAKETIME", offset);
    }
    let status = cmd.status().unwrap();
    assert!(status.success(), "the child failed: {status}");
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    let wall = lines.next().unwrap().parse().unwrap();
    (wall, lines.map(|l| l.parse().unwrap()).collect())
}

#[test]
fn a_clock_stepped_back_an_hour_across_a_restart_still_increases() {
    if !idforge_testkit::faketime_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (wall_a, first) = run_child(dir.path(), None);
    let (wall_b, second) = run_child(dir.path(), Some("-1h"));
    assert!(
        wall_b + 3_500_000 < wall_a,
        "the second process's clock is an hour back ({wall_a} then {wall_b})"
    );
    let all: Vec<Uuid7> = first.iter().chain(&second).copied().collect();
    assert_eq!(all.len(), 2_000);
    assert!(
        all.windows(2).all(|w| w[0] < w[1]),
        "ids increase across the restart: {} then {}",
        first[999],
        second[0]
    );
    assert!(second[0].time_ms() > first[999].time_ms(), "after the mark");
}
