//! `IDF.WORKER`: worker-id leases on the embedded store, and on PostgreSQL and MariaDB when
//! their URLs are exported (the same code runs on etcd; see
//! server/tests/clients/worker_leases.py for 50 processes through a failover).

use idforge_testkit as common;

use std::collections::HashSet;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{Server, Value};

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn grant(reply: Value) -> (i64, String) {
    let parts = reply.array();
    assert!(
        matches!(parts.len(), 3 | 5),
        "three fields, five with CLOCK: {parts:?}"
    );
    let Value::Bulk(token) = &parts[1] else {
        panic!("a token")
    };
    (parts[0].int(), String::from_utf8(token.clone()).unwrap())
}

#[test]
fn leases_hand_out_the_lowest_free_id_and_only_the_holder_renews() {
    let (_dir, server) = Server::start_fresh(&[]);
    let mut c = server.client();
    let (a, ta) = grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "svc", "60000"]));
    let (b, tb) = grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "svc", "60000"]));
    assert_eq!((a, b), (0, 1));
    assert_ne!(ta, tb);
    // Another service has ids of its own.
    assert_eq!(
        grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "other", "60000"])).0,
        0
    );
    let until = c
        .cmd(&["IDF.WORKER", "RENEW", "svc", "0", &ta, "TIME", "5"])
        .int();
    assert!(until > now_ms() + 50_000);
    for (id, token) in [("0", tb.as_str()), ("7", ta.as_str()), ("0", "")] {
        let e = c.cmd(&["IDF.WORKER", "RENEW", "svc", id, token]);
        assert!(e.error().starts_with("LEASELOST"), "{e:?}");
    }
    // MAX bounds the ids.
    let e = c.cmd(&["IDF.WORKER", "ACQUIRE", "svc", "60000", "MAX", "2"]);
    assert_eq!(e.error(), "ERR no free worker id below 2");
    // Released, the id is free again once the reported time has passed...
    assert_eq!(
        c.cmd(&["IDF.WORKER", "RELEASE", "svc", "1", &tb]),
        Value::Simple("OK".into())
    );
    assert!(
        c.cmd(&["IDF.WORKER", "RENEW", "svc", "1", &tb])
            .error()
            .starts_with("LEASELOST"),
        "a released lease stays ended"
    );
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(
        grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "svc", "60000"])).0,
        1
    );
    // ...and not before: a holder that put ids 2 s into the future keeps its id 2 s longer.
    let ahead = (now_ms() + 2000).to_string();
    assert_eq!(
        c.cmd(&["IDF.WORKER", "RELEASE", "svc", "0", &ta, "TIME", &ahead]),
        Value::Simple("OK".into())
    );
    assert_eq!(
        grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "svc", "60000"])).0,
        2
    );
    let list = c.cmd(&["IDF.WORKER", "LIST", "svc"]).into_array();
    assert_eq!(list.len(), 3);
    assert_eq!(
        list[0],
        Value::Array(vec![
            Value::Int(0),
            Value::Int(0),
            list_field(&list[0], 2),
            Value::Int(ahead.parse().unwrap()),
            Value::Bulk(vec![]),
            Value::Int(0)
        ])
    );
}

fn list_field(row: &Value, i: usize) -> Value {
    let fields = row.array();
    fields[i].clone()
}

#[test]
fn an_expired_lease_is_lost_and_its_id_comes_back() {
    let (_dir, server) = Server::start_fresh(&[]);
    let mut c = server.client();
    let (id, token) = grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "svc", "150"]));
    assert_eq!(id, 0);
    assert_eq!(
        grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "svc", "150"])).0,
        1,
        "held"
    );
    std::thread::sleep(Duration::from_millis(400));
    let e = c.cmd(&["IDF.WORKER", "RENEW", "svc", "0", &token]);
    assert!(e.error().starts_with("LEASELOST"), "{e:?}");
    assert_eq!(grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "svc", "150"])).0, 0);
}

#[test]
fn bad_lease_arguments_are_errors() {
    let (_dir, server) = Server::start_fresh(&[]);
    let mut c = server.client();
    for args in [
        &["IDF.WORKER"][..],
        &["IDF.WORKER", "ACQUIRE", "svc"],
        &["IDF.WORKER", "ACQUIRE", "svc", "99"],
        &["IDF.WORKER", "ACQUIRE", "svc", "-5"],
        &["IDF.WORKER", "ACQUIRE", "svc", "1000", "MAX", "0"],
        &["IDF.WORKER", "ACQUIRE", "svc", "1000", "MIN", "3"],
        &["IDF.WORKER", "ACQUIRE", "bad name", "1000"],
        &["IDF.WORKER", "RENEW", "svc", "x", "t"],
        &["IDF.WORKER", "RENEW", "svc", "0", "t", "WHEN", "5"],
        &["IDF.WORKER", "STEAL", "svc"],
    ] {
        let reply = c.cmd(args);
        assert!(reply.error().starts_with("ERR"), "{args:?}: {reply:?}");
    }
    // Nothing was leased by the failed calls.
    assert_eq!(grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "svc", "1000"])).0, 0);
}

/// The integers of an array reply (0 for any other element).
fn ints(reply: &Value) -> Vec<i64> {
    let int = |p: &Value| if let Value::Int(n) = p { *n } else { 0 };
    reply.array().iter().map(int).collect()
}

/// Waits (bounded) until `service`'s lowest free id is `id`, and returns that grant's reply
/// (asked with CLOCK).
fn acquire_when_free(c: &mut common::Client, service: &str, id: i64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let reply = c.cmd(&["IDF.WORKER", "ACQUIRE", service, "60000", "CLOCK"]);
        let (got, token) = grant(reply.clone());
        if got == id {
            return reply;
        }
        c.cmd(&["IDF.WORKER", "RELEASE", service, &got.to_string(), &token]);
        assert!(Instant::now() < deadline, "{id} never came free");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn grants_and_renewals_carry_the_time_floor_and_the_servers_clock() {
    let (_dir, server) = Server::start_fresh(&[]);
    let mut c = server.client();
    // With CLOCK, [id, token, ttl, floor, server-ms]: a fresh id has no floor.
    let before = now_ms();
    let reply = c.cmd(&["IDF.WORKER", "ACQUIRE", "svc", "60000", "CLOCK"]);
    let after = now_ms();
    let (_, token) = grant(reply.clone());
    let fields = ints(&reply);
    assert_eq!(fields.len(), 5, "{reply:?}");
    assert_eq!((fields[0], fields[2], fields[3]), (0, 60_000, 0));
    assert!((before..=after).contains(&fields[4]), "the server's clock");
    // Without it, the three fields of old (clients that unpack three keep working); CLOCK
    // goes before or after MAX.
    assert_eq!(
        ints(&c.cmd(&["IDF.WORKER", "ACQUIRE", "svc", "60000"])).len(),
        3
    );
    for args in [
        &["IDF.WORKER", "ACQUIRE", "svc", "60000", "MAX", "9"][..],
        &["IDF.WORKER", "ACQUIRE", "svc", "60000", "MAX", "9", "CLOCK"],
        &["IDF.WORKER", "ACQUIRE", "svc", "60000", "clock", "MAX", "9"],
    ] {
        let fields = ints(&c.cmd(args));
        let clock = args.len() == 7;
        assert_eq!(fields.len(), if clock { 5 } else { 3 }, "{args:?}");
        assert!(fields[0] < 9, "{args:?}: MAX read");
    }
    // A renewal tells the same with CLOCK: [end, floor, server-ms]; without, the end only.
    let renewed = ints(&c.cmd(&[
        "IDF.WORKER",
        "RENEW",
        "svc",
        "0",
        &token,
        "TIME",
        "5",
        "CLOCK",
    ]));
    assert_eq!(renewed.len(), 3);
    assert_eq!(renewed[0], renewed[2] + 60_000);
    assert_eq!(renewed[1], 0);
    assert!(c.cmd(&["IDF.WORKER", "RENEW", "svc", "0", &token]).int() >= renewed[0]);
    // Given back having put ids 300 ms ahead: the next holder's floor is that time.
    let ahead = now_ms() + 300;
    c.cmd(&[
        "IDF.WORKER",
        "RELEASE",
        "svc",
        "0",
        &token,
        "TIME",
        &ahead.to_string(),
    ]);
    let next = acquire_when_free(&mut c, "svc", 0);
    let (_, token) = grant(next.clone());
    let fields = ints(&next);
    assert_eq!(fields[3], ahead, "the floor is the time reported");
    assert!(fields[4] > ahead, "handed out only once it passed");
    // Every renewal of this lease repeats its floor (the grant asked with CLOCK told it too).
    let renewed = ints(&c.cmd(&["IDF.WORKER", "RENEW", "svc", "0", &token, "CLOCK"]));
    assert_eq!(renewed[1], ahead);
    // A lease that ran out: the floor is its end (a holder's ids stay below the end it was
    // told), when that is later than the time it reported.
    let short = grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "short", "150"]));
    let end = c
        .cmd(&["IDF.WORKER", "RENEW", "short", "0", &short.1, "TIME", "7"])
        .int();
    std::thread::sleep(Duration::from_millis(300));
    let fields = ints(&acquire_when_free(&mut c, "short", 0));
    assert_eq!(fields[3], end - 1);
    // CLOCK is for grants and renewals, once; TIME and MAX need their values.
    for args in [
        &["IDF.WORKER", "RELEASE", "svc", "0", &token, "CLOCK"][..],
        &["IDF.WORKER", "ACQUIRE", "svc", "60000", "CLOCK", "CLOCK"],
        &["IDF.WORKER", "ACQUIRE", "svc", "60000", "CLOCK", "MAX"],
        &["IDF.WORKER", "ACQUIRE", "svc", "60000", "MAX", "CLOCK"],
        &["IDF.WORKER", "ACQUIRE", "svc", "60000", "MAX", "2", "MAX"],
        &["IDF.WORKER", "RENEW", "svc", "0", &token, "TIME"],
        &[
            "IDF.WORKER",
            "RENEW",
            "svc",
            "0",
            &token,
            "CLOCK",
            "CLOCK",
            "X",
        ],
    ] {
        assert!(c.cmd(args).error().starts_with("ERR"), "{args:?}");
    }
}

#[test]
fn a_reported_time_far_past_the_leases_end_is_refused() {
    let (_dir, server) = Server::start_fresh(&[]);
    let mut c = server.client();
    let before = now_ms();
    let (_, token) = grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "far", "60000"]));
    // TIME 9e18 would keep the id (and a place under --max-leases) forever: refused, for a
    // renewal and a release, and nothing is written.
    let huge = "9000000000000000000";
    for sub in ["RENEW", "RELEASE"] {
        let e = c.cmd(&["IDF.WORKER", sub, "far", "0", &token, "TIME", huge]);
        assert!(
            e.error().starts_with(&format!(
                "ERR TIME {huge} is more than 60000 ms past the lease's end"
            )),
            "{sub}: {e:?}"
        );
    }
    let rows = c.cmd(&["IDF.WORKER", "LIST", "far"]).into_array();
    let last = list_field(&rows[0], 3).int();
    assert!((before..=now_ms()).contains(&last), "kept {last}");
    assert_eq!(list_field(&rows[0], 1), Value::Int(1), "still held");
    // Given back as a holder does, the id comes back at once.
    let now = now_ms().to_string();
    assert_eq!(
        c.cmd(&["IDF.WORKER", "RELEASE", "far", "0", &token, "TIME", &now]),
        Value::Simple("OK".into())
    );
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(
        grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "far", "60000"])).0,
        0
    );
    // Up to the slack past the end (the TTL, at least a minute) is taken: a holder whose clock
    // runs ahead reports such times.
    let before = now_ms();
    let (_, token) = grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "near", "60000"]));
    let ok = (before + 120_000).to_string();
    let end = c
        .cmd(&["IDF.WORKER", "RENEW", "near", "0", &token, "TIME", &ok])
        .int();
    let past = (end + 60_001).to_string();
    let e = c.cmd(&["IDF.WORKER", "RENEW", "near", "0", &token, "TIME", &past]);
    assert!(e.error().contains("past the lease's end"), "{e:?}");
    let (_, short) = grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "short", "1000"]));
    let ok = (now_ms() + 30_000).to_string();
    assert!(
        c.cmd(&["IDF.WORKER", "RENEW", "short", "0", &short, "TIME", &ok])
            .int()
            > 0,
        "a minute's slack at least"
    );
}

#[test]
fn leases_past_the_limits_are_refused_until_some_end() {
    let (_dir, server) =
        Server::start_fresh(&["--max-leases-per-service", "3", "--max-leases", "5"]);
    let mut c = server.client();
    let acquire = |c: &mut common::Client, service: &str| {
        c.cmd(&["IDF.WORKER", "ACQUIRE", service, "60000", "MAX", "100"])
    };
    let a: Vec<(i64, String)> = (0..3).map(|_| grant(acquire(&mut c, "a"))).collect();
    let e = acquire(&mut c, "a");
    assert!(
        e.error()
            .starts_with("ERR worker lease limit reached: service 'a' holds 3"),
        "{e:?}"
    );
    grant(acquire(&mut c, "b"));
    grant(acquire(&mut c, "b"));
    let e = acquire(&mut c, "c");
    assert!(
        e.error()
            .starts_with("ERR worker lease limit reached: this server holds 5"),
        "{e:?}"
    );
    // A lease given back (and its time passed) makes room, for its service and the server.
    c.cmd(&["IDF.WORKER", "RELEASE", "a", "1", &a[1].1]);
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(grant(acquire(&mut c, "c")).0, 0);
    assert!(acquire(&mut c, "a").error().contains("this server holds 5"));
    // Renewals of the leases held go on.
    assert!(c.cmd(&["IDF.WORKER", "RENEW", "a", "0", &a[0].1]).int() > now_ms());
}

#[test]
fn list_pages_with_a_cursor() {
    let (_dir, server) = Server::start_fresh(&[]);
    let mut c = server.client();
    for _ in 0..5 {
        grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "svc", "60000"]));
    }
    let page = |c: &mut common::Client, args: &[&str]| {
        let mut all = vec!["IDF.WORKER", "LIST", "svc"];
        all.extend_from_slice(args);
        let reply = c.cmd(&all).into_array();
        let rows = reply[1].array();
        let ids: Vec<i64> = rows.iter().map(|r| ints(r)[0]).collect();
        (reply[0].int(), ids)
    };
    let (cursor, ids) = page(&mut c, &["COUNT", "2"]);
    assert_eq!(ids, [0, 1]);
    let (cursor, ids) = page(&mut c, &["CURSOR", &cursor.to_string(), "COUNT", "2"]);
    assert_eq!(ids, [2, 3]);
    let (cursor, ids) = page(&mut c, &["CURSOR", &cursor.to_string(), "COUNT", "2"]);
    assert_eq!((cursor, ids), (0, vec![4]), "0: the last page");
    assert_eq!(page(&mut c, &["CURSOR", "0"]), (0, vec![0, 1, 2, 3, 4]));
    for args in [
        &["COUNT", "0"][..],
        &["COUNT", "1001"],
        &["CURSOR"],
        &["COUNT", "2", "MATCH", "x"],
    ] {
        let mut all = vec!["IDF.WORKER", "LIST", "svc"];
        all.extend_from_slice(args);
        assert!(c.cmd(&all).error().starts_with("ERR"), "{args:?}");
    }
    // The unpaged form answers as before while one page holds everything, and refuses a
    // service with more than 1000 leases.
    let rows = c.cmd(&["IDF.WORKER", "LIST", "svc"]).into_array();
    assert_eq!(rows.len(), 5);
    for _ in 5..1001 {
        grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "svc", "60000", "MAX", "2000"]));
    }
    let e = c.cmd(&["IDF.WORKER", "LIST", "svc"]);
    assert!(e.error().contains("more than 1000 leases"), "{e:?}");
    let (cursor, ids) = page(&mut c, &["COUNT", "1000"]);
    assert_eq!((cursor, ids.len()), (1000, 1000));
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A server on `store` in a fresh folder, serving the new worker service named after `what`
/// (`None`: skipped).
fn serving_on(store: common::Store, what: &str) -> Option<(tempfile::TempDir, Server, String)> {
    let (dir, server) = common::server_on_store(store.var, "test-workers", &[])?;
    let service = common::unique(what);
    server.wait_serving(&service);
    Some((dir, server, service))
}

/// 16 clients ACQUIRE at the same moment, 4 rounds: every one gets a lease, all ids differ.
/// Prints the latencies (never asserted: a shared CI machine's timings are not a test).
fn concurrent_acquires(store: common::Store) {
    let label = store.name;
    let Some((_dir, server, service)) = serving_on(store, "conc") else {
        return;
    };
    const CLIENTS: usize = 16;
    const ROUNDS: usize = 4;
    let barrier = Arc::new(Barrier::new(CLIENTS));
    let threads: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (barrier, service, port) = (barrier.clone(), service.clone(), server.port);
            std::thread::spawn(move || {
                let mut c = common::Client::connect(port);
                (0..ROUNDS)
                    .map(|_| {
                        barrier.wait();
                        let started = Instant::now();
                        let reply = c.cmd(&["IDF.WORKER", "ACQUIRE", &service, "60000"]);
                        (started.elapsed(), reply)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut ids = HashSet::new();
    for t in threads {
        for (took, reply) in t.join().unwrap() {
            assert!(
                matches!(reply, Value::Array(_)),
                "{label}: every concurrent ACQUIRE succeeds, got {reply:?}"
            );
            assert!(
                ids.insert(grant(reply).0),
                "{label}: an id was leased twice"
            );
            latencies.push(took);
        }
    }
    assert_eq!(ids.len(), CLIENTS * ROUNDS);
    assert_eq!(
        ids.iter().copied().max(),
        Some((CLIENTS * ROUNDS) as i64 - 1),
        "{label}: the lowest ids"
    );
    latencies.sort();
    println!(
        "{label}: {} concurrent ACQUIREs ({CLIENTS} at once x {ROUNDS}): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        latencies.len(),
        ms(percentile(&latencies, 0.5)),
        ms(percentile(&latencies, 0.99)),
        ms(*latencies.last().unwrap())
    );
}

common::per_store!(concurrent_acquires: sqlite, postgres, mariadb, etcd);

/// The median of `n` ACQUIREs in a row on one connection; each must succeed with a new id.
fn timed_acquires(
    c: &mut common::Client,
    service: &str,
    n: usize,
    ids: &mut HashSet<i64>,
) -> Duration {
    let mut took: Vec<Duration> = (0..n)
        .map(|_| {
            let started = Instant::now();
            let reply = c.cmd(&["IDF.WORKER", "ACQUIRE", service, "600000", "MAX", "100000"]);
            let took = started.elapsed();
            assert!(ids.insert(grant(reply).0), "an id was leased twice");
            took
        })
        .collect();
    took.sort();
    percentile(&took, 0.5)
}

/// ACQUIRE with 5,000 leases held against ACQUIRE with 10: the server keeps the leases
/// indexed, so the cost should not grow with them (printed, not asserted). Also checks that
/// 5,000 leases taken by 8 clients at once are all distinct and all held.
fn acquire_cost_with_leases_held(store: common::Store) {
    let label = store.name;
    let Some((_dir, server, service)) = serving_on(store, "cost") else {
        return;
    };
    let mut c = server.client();
    let mut ids = HashSet::new();
    timed_acquires(&mut c, &service, 10, &mut ids);
    let at_10 = timed_acquires(&mut c, &service, 200, &mut ids);
    // Fill up to 5,000 from 8 connections.
    const FILLERS: usize = 8;
    let (per, rest) = ((5000 - ids.len()) / FILLERS, (5000 - ids.len()) % FILLERS);
    let fillers: Vec<_> = (0..FILLERS)
        .map(|i| {
            let per = per + usize::from(i < rest);
            let (service, port) = (service.clone(), server.port);
            std::thread::spawn(move || {
                let mut c = common::Client::connect(port);
                let mut ids = HashSet::new();
                for _ in 0..per {
                    let reply =
                        c.cmd(&["IDF.WORKER", "ACQUIRE", &service, "600000", "MAX", "100000"]);
                    assert!(ids.insert(grant(reply).0));
                }
                ids
            })
        })
        .collect();
    for f in fillers {
        for id in f.join().unwrap() {
            assert!(ids.insert(id), "{label}: an id was leased twice");
        }
    }
    let held = ids.len();
    let at_5000 = timed_acquires(&mut c, &service, 200, &mut ids);
    // More than one page: walk them.
    let mut list = Vec::new();
    let mut cursor = 0;
    loop {
        let page = c.cmd(&[
            "IDF.WORKER",
            "LIST",
            &service,
            "CURSOR",
            &cursor.to_string(),
            "COUNT",
            "1000",
        ]);
        let page = page.array();
        let rows = page[1].array();
        list.extend(rows.iter().cloned());
        cursor = page[0].int();
        if cursor == 0 {
            break;
        }
    }
    assert_eq!(list.len(), ids.len(), "{label}: one row per lease");
    assert!(
        list.iter().all(|row| list_field(row, 1) == Value::Int(1)),
        "{label}: every lease is held"
    );
    println!(
        "{label}: ACQUIRE median with 10-210 leases held {:.2} ms, with {held} held {:.2} ms (ratio {:.2})",
        ms(at_10),
        ms(at_5000),
        at_5000.as_secs_f64() / at_10.as_secs_f64()
    );
}

common::per_store!(acquire_cost_with_leases_held: sqlite, postgres, mariadb);

/// A lease taken, renewed and released by one server is seen by the next one on the same store
/// (the in-memory copy of the leases is only a guide), and a second server writing the same
/// service (no election) never makes the first hand out an id twice.
#[test]
fn two_servers_on_one_store_never_share_an_id() {
    let dir = tempfile::tempdir().unwrap();
    let a = Server::start(dir.path(), &[]);
    let store = format!(
        "--store=sqlite://{}?mode=rwc",
        dir.path().join("data").join("idforge.db").display()
    );
    let dir_b = tempfile::tempdir().unwrap();
    let b = Server::start(dir_b.path(), &[&store]);
    let (mut ca, mut cb) = (a.client(), b.client());
    let mut ids = HashSet::new();
    for i in 0..20 {
        let c = if i % 3 == 0 { &mut cb } else { &mut ca };
        let (id, _) = grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "shared", "60000"]));
        assert!(ids.insert(id), "id {id} was leased twice");
    }
    assert_eq!(ids, (0..20).collect());
    // A lease granted by one server is renewed and released through the other.
    let (id, token) = grant(ca.cmd(&["IDF.WORKER", "ACQUIRE", "shared", "60000"]));
    assert_eq!(id, 20);
    assert!(
        cb.cmd(&["IDF.WORKER", "RENEW", "shared", "20", &token])
            .int()
            > now_ms()
    );
    assert_eq!(
        cb.cmd(&["IDF.WORKER", "RELEASE", "shared", "20", &token]),
        Value::Simple("OK".into())
    );
    std::thread::sleep(Duration::from_millis(5));
    // Server a still believes 20 is held (a stale copy only skips an id); b wrote the release
    // and hands 20 out again.
    let (next, _) = grant(ca.cmd(&["IDF.WORKER", "ACQUIRE", "shared", "60000"]));
    assert_eq!(next, 21);
    let (other, _) = grant(cb.cmd(&["IDF.WORKER", "ACQUIRE", "shared", "60000"]));
    assert_eq!(other, 20);
}

/// The server's copy of an idle service's leases leaves memory with idle tags; the next ACQUIRE
/// reads the leases again and finds the same state.
#[test]
fn leases_read_again_after_the_copy_left_memory() {
    let (_dir, server) = Server::start_fresh(&["--tag-idle-secs=1"]);
    let mut c = server.client();
    let (a, ta) = grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "idle", "60000"]));
    let (b, _) = grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "idle", "60000"]));
    assert_eq!((a, b), (0, 1));
    assert_eq!(
        c.cmd(&["IDF.WORKER", "RELEASE", "idle", "0", &ta]),
        Value::Simple("OK".into())
    );
    // Past 1.25 s idle the copy is gone (its reload is all this checks: same answers).
    std::thread::sleep(Duration::from_millis(1600));
    assert_eq!(
        grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "idle", "60000"])).0,
        0
    );
    assert_eq!(
        grant(c.cmd(&["IDF.WORKER", "ACQUIRE", "idle", "60000"])).0,
        2
    );
}

/// Eight clients renew one lease at the same moment (writes of one lease are never in one
/// group; each lost compare-and-set means another renewal won): all succeed.
#[test]
fn concurrent_renewals_of_one_lease_all_succeed() {
    let (_dir, server) = Server::start_fresh(&[]);
    let (id, token) = grant(
        server
            .client()
            .cmd(&["IDF.WORKER", "ACQUIRE", "renew", "60000"]),
    );
    let barrier = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let (barrier, token, port) = (barrier.clone(), token.clone(), server.port);
            std::thread::spawn(move || {
                let mut c = common::Client::connect(port);
                barrier.wait();
                let time = now_ms() + i;
                let reply = c.cmd(&[
                    "IDF.WORKER",
                    "RENEW",
                    "renew",
                    &id.to_string(),
                    &token,
                    "TIME",
                    &time.to_string(),
                ]);
                (time, reply)
            })
        })
        .collect();
    let mut latest = 0;
    for t in threads {
        let (time, reply) = t.join().unwrap();
        assert!(
            matches!(reply, Value::Int(until) if until > now_ms()),
            "{reply:?}"
        );
        latest = latest.max(time);
    }
    // No renewal's report was lost: the lease keeps the latest time.
    let list = server
        .client()
        .cmd(&["IDF.WORKER", "LIST", "renew"])
        .into_array();
    assert_eq!(list_field(&list[0], 3), Value::Int(latest));
}
