//! Segment generators at scale, against real servers on 127.0.0.1: 10,000 tags in one process
//! share one refill thread and one connection per server (`idforge serve` started here, Redis
//! from `ci/services.sh`).
//!
//! The only test of this binary, the flavours one after another: the thread and memory figures
//! are the process's, which a test running beside would blur.

use idforge_testkit as common;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use common::{Client, Server, service_url};
use idforge::{SegmentOptions, Segments};

const TAGS: usize = 10_000;

/// A line of `/proc/self/status` (`Threads`, `VmRSS` in kB).
fn status(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

/// `connected_clients` of the server's `INFO`, asked on `client` (counted among them).
fn connected_clients(client: &mut Client) -> u64 {
    let text = match client.cmd(&["INFO"]) {
        common::Value::Bulk(bytes) => String::from_utf8(bytes).unwrap(),
        other => panic!("INFO replied {other:?}"),
    };
    text.lines()
        .find_map(|l| l.strip_prefix("connected_clients:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no connected_clients in INFO: {text}"))
}

/// Opens `TAGS` generators on `url`, draws ids from each, and checks what the process added:
/// at most 3 threads, at most one connection to the server, every id unique.
fn many_tags_on(what: &str, url: &str, info: &mut Client) {
    let threads_before = status("Threads");
    let clients_before = connected_clients(info);
    let rss_before = status("VmRSS");
    let run = std::process::id();
    let options = SegmentOptions {
        timeout: Duration::from_secs(20),
        ..common::fixed_step(10)
    };
    let started = Instant::now();
    let all: Vec<Segments> = (0..TAGS)
        .map(|i| Segments::open(url, &format!("many-{run}-{i}"), options).unwrap())
        .collect();
    let mut seen = HashSet::new();
    for segments in &all {
        for _ in 0..3 {
            assert!(seen.insert((segments.tag().to_owned(), segments.next().unwrap())));
        }
    }
    let elapsed = started.elapsed();
    let threads = status("Threads") - threads_before;
    let clients = connected_clients(info) - clients_before;
    let rss_kb = status("VmRSS").saturating_sub(rss_before);
    let engine = all[0].stats().engine;
    eprintln!(
        "{what}: {TAGS} tags, 3 ids each in {elapsed:?}: +{threads} threads, +{clients} \
         connections, RSS +{rss_kb} kB ({} B per tag); engine {engine:?}",
        rss_kb * 1024 / TAGS as u64
    );
    assert!(threads <= 3, "{what}: {threads} threads added");
    assert!(clients <= 1, "{what}: {clients} connections added");
    assert_eq!(engine.generators, TAGS as u64, "{engine:?}");
    assert_eq!(engine.threads, 1, "{engine:?}");
    assert_eq!(engine.connections, 1, "{engine:?}");
    // A range per tag at least, many per round trip.
    assert!(engine.refills >= TAGS as u64, "{engine:?}");
    assert!(engine.round_trips * 10 < engine.refills, "{engine:?}");
    assert!(engine.batched_refills > TAGS as u64, "{engine:?}");
    drop(all);
    // The engine ends with its last generator: its thread and connection go.
    let deadline = Instant::now() + Duration::from_secs(10);
    while status("Threads") > threads_before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        status("Threads"),
        threads_before,
        "{what}: the refill thread stayed"
    );
}

#[test]
fn ten_thousand_tags_share_one_thread_and_one_connection() {
    // The server's store in memory where there is a tmpfs: each new tag costs it durable
    // writes, and the disk is not what this test measures.
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let server = Server::start(dir.path(), &["--max-tags-per-user=20000"]);
    let mut info = server.client();
    many_tags_on(
        "idforge://",
        &format!("idforge://127.0.0.1:{}", server.port),
        &mut info,
    );
    if let Some(url) = service_url("IDFORGE_TEST_REDIS_URL") {
        let port: u16 = url.rsplit(':').next().unwrap().parse().unwrap();
        many_tags_on("redis://", &url, &mut Client::connect(port));
    }
}
