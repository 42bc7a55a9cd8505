//! A worker-id lease handed between hosts whose clocks disagree, for real: process A (this
//! test, the real clock) leases node id 0 of a real `idforge serve`, draws ids and gives it
//! back; then processes whose wall clock libfaketime moves (12 s and 2 s behind, 2 s ahead)
//! ask for it. A host further from the server's clock than the allowed skew is refused
//! (`CLOCK_BEHIND`); one allowed a larger skew makes no id at or below the id's time floor
//! (it waits, or fails with `CLOCK_BEHIND`); and a clock stepped back while a process holds
//! the lease repeats nothing. Not one id repeats across all of them.
//!
//! The other processes are this test binary run again (the `child` test, which does nothing
//! unless `IDFORGE_LEASE_CHILD` is set) under `LD_PRELOAD` of libfaketime. Without the
//! library the test is skipped with a message (it fails instead when `IDFORGE_REQUIRE_SERVICES`
//! is set, as in CI, where `ci/install/install-deps.sh faketime` installs it).

use idforge_testkit as common;

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::Server;
use idforge::{Layout, Policy, Snowflake};

fn wall_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Draws ids for `for_ms`, a small batch every millisecond (so the ids spread over the whole
/// time, as a busy service's would), at most `cap` of them.
fn draw(g: &Snowflake, for_ms: u64, cap: usize) -> idforge::Result<Vec<u64>> {
    let mut ids = Vec::new();
    let mut batch = [0u64; 256];
    let until = Instant::now() + Duration::from_millis(for_ms);
    while Instant::now() < until && ids.len() < cap {
        g.next_many(&mut batch)?;
        ids.extend_from_slice(&batch);
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(ids)
}

/// The other process: leases a node id from `IDFORGE_LEASE_CHILD` (a URL), draws for
/// `IDFORGE_LEASE_DRAW_MS`, and writes to `IDFORGE_LEASE_OUT`: `ok NODE WALL_MS` (its wall clock
/// at the end) or `err CODE MESSAGE` as the first line, then one id per line.
#[test]
fn child() {
    let Ok(url) = std::env::var("IDFORGE_LEASE_CHILD") else {
        return;
    };
    let out = std::env::var("IDFORGE_LEASE_OUT").unwrap();
    let draw_ms: u64 = std::env::var("IDFORGE_LEASE_DRAW_MS")
        .unwrap()
        .parse()
        .unwrap();
    let policy = match std::env::var("IDFORGE_LEASE_WAIT_MS") {
        Ok(ms) => Policy::Wait {
            budget: Duration::from_millis(ms.parse().unwrap()),
        },
        Err(_) => Policy::default(),
    };
    let result = Snowflake::builder(Layout::TWITTER)
        .policy(policy)
        .lease(url, "svc")
        .build()
        .and_then(|g| {
            // The first id waits for the time floor (or fails); then the drawing is timed.
            let first = g.next()?;
            let mut ids = draw(&g, draw_ms, 1 << 20)?;
            ids.insert(0, first);
            Ok((g.node(), ids))
        });
    let text = match result {
        Ok((node, ids)) => {
            let mut text = format!("ok {node} {}\n", wall_ms());
            for id in ids {
                text.push_str(&format!("{id}\n"));
            }
            text
        }
        Err(e) => format!("err {:?} {e}\n", e.code()),
    };
    std::fs::write(out, text).unwrap();
}

/// What a child process reported.
enum Outcome {
    /// Its node id, its wall clock at the end (Unix ms), and its ids.
    Drew(u64, i64, Vec<u64>),
    /// The error's code and words.
    Refused(idforge::ErrorCode, String),
}

impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Drew(node, wall, ids) => write!(
                f,
                "node {node}, wall clock {wall}, {} ids from {:?} to {:?}",
                ids.len(),
                ids.first(),
                ids.last()
            ),
            Outcome::Refused(code, words) => write!(f, "{code:?}: {words}"),
        }
    }
}

struct Child<'a> {
    url: String,
    /// libfaketime's `FAKETIME` (an offset such as `-12`), or a file with it.
    faketime: Fake<'a>,
    draw_ms: u64,
    wait_ms: Option<u64>,
}

enum Fake<'a> {
    Offset(&'a str),
    File(&'a Path),
}

impl Child<'_> {
    fn spawn(&self, out: &Path) -> std::process::Child {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["--exact", "child", "--nocapture", "--test-threads=1"])
            .env("LD_PRELOAD", common::FAKETIME)
            .env("IDFORGE_LEASE_CHILD", &self.url)
            .env("IDFORGE_LEASE_OUT", out)
            .env("IDFORGE_LEASE_DRAW_MS", self.draw_ms.to_string())
            .stdout(std::process::Stdio::null());
        match self.faketime {
            Fake::Offset(offset) => {
                cmd.env("FAKETIME", offset);
            }
            Fake::File(file) => {
                // Read again every second (re-reading at every call fails some sleeps).
                cmd.env("FAKETIME_TIMESTAMP_FILE", file)
                    .env("FAKETIME_CACHE_DURATION", "1");
            }
        }
        if let Some(ms) = self.wait_ms {
            cmd.env("IDFORGE_LEASE_WAIT_MS", ms.to_string());
        }
        cmd.spawn().expect("the child starts")
    }

    fn run(&self, dir: &Path) -> Outcome {
        let out = dir.join("child.out");
        let _ = std::fs::remove_file(&out);
        let mut child = self.spawn(&out);
        let deadline = Instant::now() + Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("the child did not finish in 60 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        read_outcome(&out)
    }
}

fn read_outcome(out: &Path) -> Outcome {
    let text = std::fs::read_to_string(out).expect("the child wrote its outcome");
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().splitn(3, ' ').collect();
    match head[0] {
        "ok" => Outcome::Drew(
            head[1].parse().unwrap(),
            head[2].parse().unwrap(),
            lines.map(|l| l.parse().unwrap()).collect(),
        ),
        _ => {
            let code = idforge::ErrorCode::ALL
                .iter()
                .copied()
                .find(|c| format!("{c:?}") == head[1])
                .unwrap();
            Outcome::Refused(code, head[2].to_owned())
        }
    }
}

/// Adds `ids` to `seen`, returning how many were there already.
fn repeats(seen: &mut HashSet<u64>, ids: &[u64]) -> usize {
    ids.iter().filter(|id| !seen.insert(**id)).count()
}

#[test]
fn a_lease_handed_to_hosts_whose_clocks_are_wrong_repeats_no_id() {
    if !common::faketime_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
    let url = format!("idforge://127.0.0.1:{}", server.port);
    let relaxed = format!("{url}?max_skew_ms=60000");
    let mut seen = HashSet::new();
    let hold = |seen: &mut HashSet<u64>, ms| {
        // Process A, on the real clock, holds node 0 and draws; dropped, it gives it back. The
        // id comes free once the last holder's last time passed (up to 2 s for a host ahead).
        let deadline = Instant::now() + Duration::from_secs(10);
        let a = loop {
            let a = Snowflake::builder(Layout::TWITTER)
                .lease(&url, "svc")
                .build()
                .unwrap();
            if a.node() == 0 {
                break a;
            }
            drop(a);
            assert!(Instant::now() < deadline, "node 0 never came back");
            std::thread::sleep(Duration::from_millis(100));
        };
        let ids = draw(&a, ms, 1 << 20).unwrap();
        assert!(!ids.is_empty());
        assert_eq!(repeats(seen, &ids), 0);
    };
    let child = |url: &str, offset, wait_ms| Child {
        url: url.to_owned(),
        faketime: Fake::Offset(offset),
        draw_ms: 800,
        wait_ms,
    };
    let mut report = Vec::new();
    for (offset, words) in [("-12", "behind"), ("-2", "behind"), ("+2", "ahead")] {
        hold(&mut seen, 1000);
        // The default skew (1 s): refused at ACQUIRE, typed, and the id given back. (A refusal
        // that says "behind" or "ahead" also shows that libfaketime moved the child's clock.)
        match child(&url, offset, None).run(dir.path()) {
            Outcome::Refused(code, message) => {
                assert_eq!(code, idforge::ErrorCode::ClockBehind, "{offset}: {message}");
                assert!(message.contains(words), "{offset}: {message}");
                report.push(format!("{offset} s: refused ({message})"));
            }
            other => panic!("{offset}: granted past the skew: {other:?}"),
        }
        // Allowed a minute of skew: node 0 again, but no id at or below A's times. 12 s behind
        // is refused all the same (CLOCK_BEHIND): behind, a host is allowed less than 90% of
        // the 10 s TTL, as the floor (up to the server's clock) would be past its first end;
        // 2 s behind waits for the floor.
        hold(&mut seen, 1000);
        match child(&relaxed, offset, Some(4000)).run(dir.path()) {
            Outcome::Drew(node, _, ids) => {
                assert_ne!(offset, "-12", "12 s behind the floor made ids");
                assert_eq!(node, 0, "{offset}");
                assert!(!ids.is_empty());
                assert_eq!(repeats(&mut seen, &ids), 0, "{offset}: ids repeated");
                report.push(format!("{offset} s, skew allowed: {} ids", ids.len()));
            }
            Outcome::Refused(code, message) => {
                assert_eq!(offset, "-12", "{message}");
                assert_eq!(code, idforge::ErrorCode::ClockBehind, "{message}");
                assert!(message.contains("90% of the lease's"), "{message}");
                report.push(format!("{offset} s, skew allowed: {message}"));
            }
        }
    }
    // A clock stepped back 5 s while the lease is held: the process keeps making ids on the
    // clock it started with, so none repeats (its own, A's before, or A's after it).
    hold(&mut seen, 1000);
    let file = dir.path().join("faketime");
    std::fs::write(&file, "+0\n").unwrap();
    let stepped = Child {
        url: url.clone(),
        faketime: Fake::File(&file),
        draw_ms: 2000,
        wait_ms: None,
    };
    let out = dir.path().join("stepped.out");
    let mut process = stepped.spawn(&out);
    std::thread::sleep(Duration::from_millis(1000));
    std::fs::write(&file, "-5\n").unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while process.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "the stepped child did not finish"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    match read_outcome(&out) {
        Outcome::Drew(node, wall, ids) => {
            assert_eq!(node, 0);
            assert!(
                wall < wall_ms() - 4000,
                "the child's wall clock went back ({wall})"
            );
            assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids went back");
            assert_eq!(repeats(&mut seen, &ids), 0, "stepped: ids repeated");
            report.push(format!("stepped back 5 s while held: {} ids", ids.len()));
        }
        other => panic!("the stepped child failed: {other:?}"),
    }
    hold(&mut seen, 500);
    eprintln!("{} ids, 0 repeated; {}", seen.len(), report.join("; "));
}
