//! Leases kept in a file (`SnowflakeBuilder::lease_file`, the URL's `lease_file`): an instance
//! restarted while the server is down goes on with its id; one cut off from a server that others
//! still reach goes on only while its reservation holds, and nobody else gets its id meanwhile;
//! a file that is damaged, cut, another's, or ahead of the clock is refused.

use idforge_testkit as common;

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::Server;
use common::cut_proxy::{Cut, CutProxy};
use idforge::{ErrorCode, Layout, Snowflake};

fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn named(url: &str, file: &Path, ttl_ms: u64) -> idforge::Result<Snowflake> {
    Snowflake::builder(Layout::TWITTER)
        .lease(url, "orders")
        .lease_holder("web-0")
        .lease_file(file)
        .lease_ttl(Duration::from_millis(ttl_ms))
        .build()
}

fn draw(g: &Snowflake, n: usize) -> Vec<u64> {
    let mut ids = vec![0u64; n];
    g.next_many(&mut ids).unwrap();
    ids
}

/// The server is killed; the instance restarts with its file and makes ids at once, with its
/// own node id; once the server is back it renews the lease and keeps the id.
#[test]
fn a_restart_while_the_server_is_down_goes_on_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("web-0.lease");
    let mut server = Server::start(dir.path(), &[]);
    let (port, url) = (server.port, server.url());
    let mut seen = HashSet::new();
    let g = named(&url, &file, 1_000).unwrap();
    let node = g.node();
    seen.extend(draw(&g, 50_000));
    drop(g);
    server.signal("KILL");

    let started = Instant::now();
    let g = named(&url, &file, 1_000).unwrap();
    let first = g.next().unwrap();
    let took = started.elapsed();
    println!("restarted without the server: first id after {took:?}");
    assert!(
        took < common::scaled(Duration::from_millis(250)),
        "the first id came {took:?} after the start"
    );
    assert_eq!(g.node(), node, "its own node id");
    assert!(seen.insert(first));
    for id in draw(&g, 50_000) {
        assert!(seen.insert(id), "{id} again");
    }
    // It goes on past its lease's end (1 s): the reservation (1 h) holds the id for it.
    std::thread::sleep(Duration::from_millis(1_500));
    seen.extend(draw(&g, 1000));

    // The server comes back on the same port: the lease is renewed with its token.
    let server = Server::spawn(dir.path().to_path_buf(), vec![format!("--port={port}")]);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut c = server.client();
        let rows = c.cmd(&["IDF.WORKER", "LIST", "orders"]).into_array();
        let held = rows.iter().any(|r| {
            let common::Value::Array(f) = r else {
                return false;
            };
            // Held again, to an end after now: renewed (the old lease ended 1 s after the kill).
            f[0].int() == node as i64 && f[1].int() == 1 && f[2].int() > wall_ms()
        });
        if held {
            break;
        }
        assert!(Instant::now() < deadline, "the lease was never renewed");
        std::thread::sleep(Duration::from_millis(100));
    }
    for id in draw(&g, 10_000) {
        assert!(seen.insert(id), "{id} again");
    }
    // Another holder does not get it.
    let other = Snowflake::builder(Layout::TWITTER)
        .lease(&url, "orders")
        .build()
        .unwrap();
    assert_ne!(other.node(), node);
}

/// The instance is cut off (its requests never reach the server) while others reach it: it goes
/// on until its reservation could end, then stops (`LEASE_LOST`); nobody else gets its id
/// meanwhile; after the reservation the id goes to another holder whose ids all come after the
/// instance's. Not one id repeats.
#[test]
fn a_cut_off_instance_stops_before_its_reservation_ends_and_nothing_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("web-0.lease");
    let server = Server::start(dir.path(), &["--worker-reserve-ms=3000"]);
    let proxy = CutProxy::start(server.port);
    let via_proxy = format!("idforge://127.0.0.1:{}?timeout_ms=300", proxy.port);
    let g = Arc::new(named(&via_proxy, &file, 600).unwrap());
    let node = g.node();
    let stop = Arc::new(AtomicBool::new(false));
    let drawer = {
        let (g, stop) = (g.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut ids = Vec::new();
            let mut batch = [0u64; 512];
            let lost = loop {
                match g.next_many(&mut batch) {
                    Ok(()) => ids.extend_from_slice(&batch),
                    Err(e) => break Some(e.code()),
                }
                if stop.load(Ordering::Relaxed) {
                    break None;
                }
                std::thread::sleep(Duration::from_millis(1));
            };
            (ids, lost, Instant::now())
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    proxy.set(Cut::Blackhole);
    let cut_at = Instant::now();
    // Others keep asking for ids of the service meanwhile: never the instance's.
    let mut c = server.client();
    let mut granted = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let (ids, lost, stopped) = loop {
        let reply = c.cmd(&[
            "IDF.WORKER",
            "ACQUIRE",
            "orders",
            "200",
            "MAX",
            "2",
            "CLOCK",
        ]);
        if let common::Value::Array(parts) = &reply {
            granted.push((Instant::now(), parts[0].int(), parts[3].int()));
        }
        if drawer.is_finished() {
            break drawer.join().unwrap();
        }
        assert!(
            Instant::now() < deadline,
            "the cut-off instance never stopped"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    stop.store(true, Ordering::Relaxed);
    assert_eq!(lost, Some(ErrorCode::LeaseLost), "it stops with LEASE_LOST");
    let rode = stopped.duration_since(cut_at);
    println!(
        "cut off: went on {rode:?} (lease 600 ms, reservation 3 s), {} ids",
        ids.len()
    );
    assert!(
        rode > Duration::from_millis(1_000),
        "it rode out past its lease: {rode:?}"
    );
    for (at, id, _) in &granted {
        assert!(
            *id != node as i64 || *at > stopped,
            "its id went to another while it could still use it"
        );
    }
    // After the reservation, the id goes to another holder: its ids come after the instance's.
    let deadline = Instant::now() + Duration::from_secs(30);
    let next = loop {
        // Anonymous: the lowest free id, given back on drop (no reservation).
        let g2 = Snowflake::builder(Layout::TWITTER)
            .lease(server.url(), "orders")
            .build();
        if let Ok(g2) = g2 {
            if g2.node() == node {
                break g2;
            }
        }
        assert!(Instant::now() < deadline, "the id never came free");
        std::thread::sleep(Duration::from_millis(200));
    };
    let mut seen: HashSet<u64> = ids.iter().copied().collect();
    assert_eq!(seen.len(), ids.len(), "the instance repeated an id");
    let max_before = ids.iter().copied().max().unwrap();
    let mut total = ids.len();
    while total < 1_000_000 {
        for id in draw(&next, 100_000) {
            assert!(id > max_before, "an id at or below the instance's");
            assert!(seen.insert(id), "{id} again");
        }
        total += 100_000;
    }
    println!("{total} ids, 0 repeated");
}

/// Files that must not be used: damaged, cut, another service's or holder's, ahead of the
/// clock; and a file with no name to hold it. Each a typed error, never an id.
#[test]
fn bad_lease_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
    let url = server.url();
    let file = dir.path().join("web-0.lease");
    let g = named(&url, &file, 1_000).unwrap();
    drop(g);
    let good = std::fs::read_to_string(&file).unwrap();

    let no_name = Snowflake::builder(Layout::TWITTER)
        .lease(&url, "orders")
        .lease_file(&file)
        .build()
        .unwrap_err();
    assert_eq!(no_name.code(), ErrorCode::InvalidArgument, "{no_name}");

    let mut cut = good.clone();
    cut.truncate(good.len() / 2);
    let damaged = good.replacen("id=", "id=1", 1);
    for (what, text) in [("cut", cut), ("damaged", damaged), ("empty", String::new())] {
        std::fs::write(&file, text).unwrap();
        let e = named(&url, &file, 1_000).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Io, "{what}: {e}");
    }
    std::fs::write(&file, &good).unwrap();
    let other = Snowflake::builder(Layout::TWITTER)
        .lease(&url, "payments")
        .lease_holder("web-0")
        .lease_file(&file)
        .build()
        .unwrap_err();
    assert_eq!(other.code(), ErrorCode::Io, "{other}");
    assert!(other.to_string().contains("service 'orders'"), "{other}");

    // A file whose last id time is an hour ahead of this clock (written before the clock was
    // set back), with the server out of reach: CLOCK_BEHIND.
    let ahead = with_mark(&good, 3_600_000);
    std::fs::write(&file, ahead).unwrap();
    let e = named("idforge://127.0.0.1:1?timeout_ms=200", &file, 1_000).unwrap_err();
    assert_eq!(e.code(), ErrorCode::ClockBehind, "{e}");
    // With the server up, it renews: the server's floor is the file's mark, so ids wait for it
    // (or the policy refuses): never an id at or below the mark.
    std::fs::write(&file, &good).unwrap();
    let g = named(&url, &file, 1_000).unwrap();
    drop(g);
    // A server out of reach and no file to stand in.
    std::fs::remove_file(&file).unwrap();
    let e = named("idforge://127.0.0.1:1?timeout_ms=200", &file, 1_000).unwrap_err();
    assert_eq!(e.code(), ErrorCode::SourceUnavailable, "{e}");
}

/// `text` (a lease file) with its mark `ahead_ms` after now, its sum made again
/// (64-bit FNV-1a of everything before the sum line).
fn with_mark(text: &str, ahead_ms: u64) -> String {
    let mut body = String::new();
    for line in text.lines() {
        if line.starts_with("sum=") {
            break;
        }
        match line.strip_prefix("mark_ms=") {
            Some(_) => {
                body.push_str(&format!("mark_ms={}\n", wall_ms() as u64 + ahead_ms));
            }
            None => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    let sum = body.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{body}sum={sum:016x}\n")
}

/// `idforge gen snowflake --lease … --holder … --lease-file …`: the same node id on every run,
/// with the server and without it.
#[test]
fn the_command_line_keeps_its_node_id_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[]);
    let file = dir.path().join("cli.lease");
    let url = server.url();
    let run = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_idforge"))
            .args(["gen", "snowflake", "--lease", &url, "--service", "batch"])
            .args(["--holder", "cron-1", "--lease-file"])
            .arg(&file)
            .args(["--count", "1000"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ids: Vec<u64> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        assert_eq!(ids.len(), 1000);
        ids
    };
    // Another instance holds node 0, so the runs' node is their own, not the lowest.
    let other = Snowflake::builder(Layout::TWITTER)
        .lease(&url, "batch")
        .build()
        .unwrap();
    assert_eq!(other.node(), 0);
    let node = |id: u64| other.decode(id).unwrap().node;
    let mut last = 0;
    for life in 0..3 {
        if life == 2 {
            server.signal("KILL");
        }
        let ids = run();
        assert!(ids.iter().all(|&id| node(id) == 1), "life {life}");
        assert!(ids[0] > last, "life {life}: after the last run's ids");
        last = *ids.last().unwrap();
    }
    let e = std::process::Command::new(env!("CARGO_BIN_EXE_idforge"))
        .args(["gen", "snowflake", "--lease", &url, "--node", "3"])
        .output()
        .unwrap();
    assert!(!e.status.success(), "--lease with --node is refused");

    // The same run on this host with its wall clock set back an hour (libfaketime), the server
    // still down: refused, not one id.
    if !common::faketime_present() {
        return;
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_idforge"))
        .args(["gen", "snowflake", "--lease", &url, "--service", "batch"])
        .args(["--holder", "cron-1", "--lease-file"])
        .arg(&file)
        .env("LD_PRELOAD", common::FAKETIME)
        .env("FAKETIME", "-3600")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "made ids with the clock set back");
    assert!(out.stdout.is_empty(), "not one id");
    assert!(stderr.contains("behind"), "a clock error: {stderr}");
}

/// `idforge gen snowflake` on a lease file (`--count n`), as a child process with its ids on a
/// pipe.
fn cli_on(url: &str, file: &Path, count: u64) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_idforge"));
    cmd.args(["gen", "snowflake", "--lease", url, "--service", "orders"])
        .args(["--holder", "web-0", "--lease-file"])
        .arg(file)
        .args(["--count", &count.to_string()]);
    cmd
}

fn ids_of(stdout: &[u8]) -> Vec<u64> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// Makes the second path reach the first file (a link or a copy).
type Link = fn(&Path, &Path);

/// A second process reaching a live lease file by a symbolic link, a hard link or a byte copy
/// (a restored backup, a volume mounted twice) makes no id: the link is the same lock, and the
/// server does not hand a lease that is still renewed to a start from a file. The first goes
/// on, and not one id repeats.
#[test]
fn a_second_process_on_a_linked_or_copied_lease_file_makes_no_id() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
    let url = server.url();
    let file = dir.path().join("web-0.lease");
    let first = named(&url, &file, 1_000).unwrap();
    let mut seen: HashSet<u64> = draw(&first, 10_000).into_iter().collect();
    let ways: [(&str, Link); 3] = [
        ("symlink", |from, to| {
            std::os::unix::fs::symlink(from, to).unwrap()
        }),
        ("hard link", |from, to| {
            std::fs::hard_link(from, to).unwrap()
        }),
        ("copy", |from, to| {
            std::fs::copy(from, to).unwrap();
        }),
    ];
    for (way, make) in ways {
        let other = dir.path().join(format!("{}.lease", way.replace(' ', "-")));
        make(&file, &other);
        let out = cli_on(&url, &other, 10_000).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let theirs = ids_of(&out.stdout);
        assert!(!out.status.success(), "{way}: a second process ran");
        assert!(theirs.is_empty(), "{way}: it made {} ids", theirs.len());
        assert!(stderr.contains("in use by another"), "{way}: {stderr}");
        // The first goes on with its lease, past the time the second waited.
        for id in draw(&first, 10_000) {
            assert!(seen.insert(id), "{way}: {id} again");
        }
    }
}

/// A byte copy of a lease file taken while its process ran, used after that process was killed
/// with `kill -9`: the new process waits out the dead one's lease, then goes on with the node
/// id and a floor above every id the dead one made.
#[test]
fn a_copy_used_after_a_kill_makes_ids_after_the_dead_process() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
    let url = server.url();
    let file = dir.path().join("web-0.lease");
    let copy = dir.path().join("copy.lease");
    let mut first = cli_on(&url, &file, 10_000_000)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = first.stdout.take().unwrap();
    // Wait for its first ids (its lease is on disk before any), then copy the live file.
    let mut bytes = vec![0u8; 1 << 16];
    let mut got = Vec::new();
    while got.iter().filter(|&&b| b == b'\n').count() < 1000 {
        let n = stdout.read(&mut bytes).unwrap();
        assert!(n > 0, "the first process ended early");
        got.extend_from_slice(&bytes[..n]);
    }
    std::fs::copy(&file, &copy).unwrap();
    first.kill().unwrap();
    stdout.read_to_end(&mut got).unwrap();
    first.wait().unwrap();
    // Whole lines only: the kill may cut the last one.
    let whole = got.iter().rposition(|&b| b == b'\n').map_or(0, |at| at + 1);
    let dead = ids_of(&got[..whole]);
    let out = cli_on(&url, &copy, 100_000).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = ids_of(&out.stdout);
    assert_eq!(after.len(), 100_000);
    let last_dead = *dead.iter().max().unwrap();
    let layout = Snowflake::builder(Layout::TWITTER).build().unwrap();
    assert_eq!(
        layout.decode(after[0]).unwrap().node,
        layout.decode(last_dead).unwrap().node,
        "its own node id again"
    );
    assert!(after[0] > last_dead, "after every id of the dead process");
    let seen: HashSet<u64> = dead.into_iter().collect();
    assert!(after.iter().all(|id| !seen.contains(id)));
}

/// A FIFO or a folder at the lease path is refused at once, never read (a read of a FIFO waits
/// for a writer that never comes).
#[test]
fn a_fifo_or_a_folder_at_the_lease_path_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("web-0.lease");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for path in [fifo.as_path(), dir.path()] {
        let e = named("idforge://127.0.0.1:1?timeout_ms=200", path, 1_000).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Io, "{e}");
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }
}
