//! High availability on etcd, against the real etcd of ci/services.sh (`IDFORGE_TEST_ETCD_URL`):
//! the fenced store, redirects from standbys, and the three ways a leader goes away (kill -9,
//! a pause past its lease, a handover). Each test uses its own key prefix.

use idforge_testkit as common;

use std::time::{Duration, Instant};

use common::{Server, Value};
use idforge_store::{EtcdStore, Store, TagMove, TagRow};

fn etcd_url() -> Option<String> {
    common::service_url("IDFORGE_TEST_ETCD_URL")
}

/// A store URL with a prefix of its own.
fn store_url(base: &str, name: &str) -> String {
    format!("{base}/{}", common::unique(&format!("test-{name}")))
}

fn member(dir: &tempfile::TempDir, name: &str, store: &str) -> Server {
    let sub = dir.path().join(name);
    std::fs::create_dir_all(&sub).unwrap();
    let mut args = vec![format!("--store={store}"), "--default-step=100".into()];
    if !store.starts_with("etcd://") {
        args.push("--ha".into());
    }
    Server::spawn(sub, args)
}

/// Where the servers of one HA test meet: a fresh etcd prefix, a SQLite file of the test's own,
/// or a fresh PostgreSQL or MariaDB database.
fn shared_store(backend: &str, dir: &tempfile::TempDir, name: &str) -> Option<String> {
    match backend {
        "etcd" => etcd_url().map(|base| store_url(&base, name)),
        "sqlite" => Some(format!(
            "sqlite://{}?mode=rwc",
            dir.path().join("shared.db").display()
        )),
        "postgres" => common::fresh_database("IDFORGE_TEST_POSTGRES_URL", name),
        "mysql" => common::fresh_database("IDFORGE_TEST_MYSQL_URL", name),
        _ => unreachable!(),
    }
}

/// The three process tests, on each backend.
macro_rules! on_every_store {
    ($($test:ident),*) => {
        mod sqlite {
            $(#[test] fn $test() { super::$test("sqlite") })*
        }
        mod etcd {
            $(#[test] fn $test() { super::$test("etcd") })*
        }
        mod postgres {
            $(#[test] fn $test() { super::$test("postgres") })*
        }
        mod mysql {
            $(#[test] fn $test() { super::$test("mysql") })*
        }
    };
}

on_every_store!(
    a_standby_redirects_to_the_leader_and_takes_over_after_a_kill_9,
    a_paused_leader_serves_nothing_after_it_resumes,
    failover_hands_over_without_a_gap,
    a_standby_whose_guard_finds_the_store_behind_never_leads,
    segments_wait_out_a_leader_kill
);

/// The most an election or a hand-over may take in these tests: a bound on a hang, not a speed
/// (each takes well under a second here; a commit's fsync beside a build writing gigabytes once
/// took over 5 s in CI).
const ELECTION: Duration = Duration::from_secs(30);

/// Waits until `server` answers `INCR tag` with an id, and returns it.
/// How every failover test starts: a folder, the shared store named `name` (`None`: skipped),
/// and member `a` serving as the leader, with the first id it gave for `orders`.
fn led_by_a(backend: &str, name: &str) -> Option<(tempfile::TempDir, String, Server, i64)> {
    let dir = tempfile::tempdir().unwrap();
    let store = shared_store(backend, &dir, name)?;
    let a = member(&dir, "a", &store);
    let first = first_served(&a, "orders", ELECTION);
    Some((dir, store, a, first))
}

fn first_served(server: &Server, tag: &str, within: Duration) -> i64 {
    let deadline = Instant::now() + within;
    loop {
        let mut c = server.client();
        match c.cmd(&["INCR", tag]) {
            Value::Int(id) => return id,
            Value::Error(e) => {
                assert!(
                    e.starts_with("MOVED") || e.starts_with("CLUSTERDOWN"),
                    "unexpected error {e}"
                );
            }
            other => panic!("unexpected reply {other:?}"),
        }
        assert!(Instant::now() < deadline, "no leader within {within:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn the_etcd_store_moves_marks_by_compare_and_swap_only_under_the_fence() {
    let Some(base) = etcd_url() else { return };
    rt().block_on(async {
        let url = store_url(&base, "store");
        let store = Store::open(&url).await.unwrap();
        let etcd: &EtcdStore = store.etcd().unwrap();
        let row = TagRow {
            tag: "orders".into(),
            max_id: 1,
            step: 100,
            description: Some("d".into()),
        };
        // What every store does alike (tags, clocks, users): store/tests/every_store.rs.
        assert!(store.create_tag(&row).await.unwrap());
        let m = |old, new| TagMove {
            tag: "orders".into(),
            old,
            new,
        };
        // No leader key held: nothing moves.
        let refused = store.persist(&[m(1, 101)], &[]).await.unwrap_err();
        assert!(refused.0.contains("not the leader"), "{refused}");

        // Hold a leader key as the election would, and fence on its create revision.
        let mut client = etcd.client();
        let put = client
            .put(etcd.key("leader"), "test 127.0.0.1:1", None)
            .await
            .unwrap();
        let revision = put.header().unwrap().revision();
        etcd.set_fence(revision + 1000);
        let fenced = store.persist(&[m(1, 101)], &[]).await.unwrap_err();
        assert!(fenced.0.contains("fenced"), "{fenced}");
        assert_eq!(store.tag("orders").await.unwrap().unwrap().max_id, 1);

        etcd.set_fence(revision);
        assert!(store.persist(&[m(1, 101)], &[]).await.unwrap().is_empty());
        assert_eq!(store.tag("orders").await.unwrap().unwrap().max_id, 101);

        // A new leader key (a new term) fences the old revision out.
        client.delete(etcd.key("leader"), None).await.unwrap();
        client
            .put(etcd.key("leader"), "other 127.0.0.1:2", None)
            .await
            .unwrap();
        assert!(store.persist(&[m(101, 201)], &[]).await.is_err());
        assert_eq!(store.tag("orders").await.unwrap().unwrap().max_id, 101);
    });
}

#[test]
fn a_bad_etcd_url_or_an_absent_cluster_is_a_clear_startup_error() {
    for (url, want) in [
        ("etcd://nohost", "host:port"),
        ("etcd://127.0.0.1:1/x", "etcd"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_idforge"))
            .args(["serve", "--port=0", &format!("--store={url}")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{url}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cannot open the store") && err.contains(want),
            "{err}"
        );
    }
}

fn a_standby_redirects_to_the_leader_and_takes_over_after_a_kill_9(backend: &str) {
    let Some((dir, store, mut a, first)) = led_by_a(backend, "kill") else {
        return;
    };
    assert_eq!(first, 1);
    let b = member(&dir, "b", &store);
    let mut cb = b.client();
    // The standby knows the leader once it has read the key (within one poll).
    let deadline = Instant::now() + ELECTION;
    let moved = loop {
        let reply = cb.cmd(&["INCR", "orders"]);
        let e = reply.error().to_owned();
        if e.starts_with("MOVED") || Instant::now() > deadline {
            break e;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let slot = cb.cmd(&["CLUSTER", "KEYSLOT", "orders"]).int();
    assert_eq!(moved, format!("MOVED {slot} 127.0.0.1:{}", a.port));
    // Keyless admin commands and reads are redirected too; connection commands are not.
    assert!(cb.cmd(&["GET", "orders"]).error().starts_with("MOVED"));
    assert!(
        cb.cmd(&["IDF.USER", "LIST"])
            .error()
            .starts_with("MOVED 0 ")
    );
    assert_eq!(cb.cmd(&["PING"]), Value::Simple("PONG".into()));
    // Both servers describe the same one-shard cluster, owned by the leader.
    for port in [a.port, b.port] {
        let mut c = common::Client::connect(port);
        let slots = c.cmd(&["CLUSTER", "SLOTS"]).into_array();
        let shard = slots[0].array();
        assert_eq!(&shard[..2], &[Value::Int(0), Value::Int(16383)]);
        let node = shard[2].array();
        assert_eq!(node[1], Value::Int(i64::from(a.port)));
        let Value::Bulk(nodes) = c.cmd(&["CLUSTER", "NODES"]) else {
            panic!("CLUSTER NODES is text")
        };
        let nodes = String::from_utf8(nodes).unwrap();
        assert!(nodes.contains(&format!("127.0.0.1:{}", a.port)), "{nodes}");
        assert!(nodes.contains("myself"), "{nodes}");
    }
    let mut ca = a.client();
    let last_a = ca.cmd(&["INCRBY", "orders", "10"]).int();
    a.signal("KILL");
    let next = first_served(&b, "orders", ELECTION);
    assert!(next > last_a, "{next} after {last_a}");
    let Value::Bulk(info) = cb.cmd(&["INFO", "replication"]) else {
        panic!("INFO is text")
    };
    assert!(String::from_utf8_lossy(&info).contains("role:master"));
}

fn a_paused_leader_serves_nothing_after_it_resumes(backend: &str) {
    let Some((dir, store, a, last_a)) = led_by_a(backend, "pause") else {
        return;
    };
    let b = member(&dir, "b", &store);
    // A connection to the leader, open across its pause, with ids cached behind it.
    let mut ca = a.client();
    assert_eq!(ca.cmd(&["INCR", "orders"]).int(), last_a + 1);
    a.signal_only("STOP");
    // Past the 1 s lease, the standby wins: the paused leader's port does not refuse
    // connections, so only the lease's expiry can hand over.
    let next = first_served(&b, "orders", ELECTION);
    assert!(next > last_a + 1);
    a.signal_only("CONT");
    // The old leader still holds cached ids, but its lease is over: it sends the client on.
    let reply = ca.cmd(&["INCR", "orders"]);
    let e = reply.error();
    assert!(
        e == format!(
            "MOVED {} 127.0.0.1:{}",
            idforge_server::serve::key_slot(b"orders"),
            b.port
        ) || e.starts_with("CLUSTERDOWN"),
        "{e}"
    );
    assert!(ca.cmd(&["IDF.SNOWFLAKE", "s"]).error().len() > 1);
    // And it stays a standby: the new leader keeps serving increasing ids.
    let later = first_served(&b, "orders", ELECTION);
    assert!(later > next);
}

fn failover_hands_over_without_a_gap(backend: &str) {
    let Some((dir, store, a, _)) = led_by_a(backend, "handover") else {
        return;
    };
    let b = member(&dir, "b", &store);
    let mut ca = a.client();
    let last_a = ca.cmd(&["INCRBY", "orders", "5"]).int();
    assert_eq!(ca.cmd(&["IDF.FAILOVER"]), Value::Simple("OK".into()));
    // The old leader gave back its cache, so the new one continues right after its last id.
    let next = first_served(&b, "orders", ELECTION);
    assert_eq!(next, last_a + 1);
    // The old leader hands out nothing more: CLUSTERDOWN until its next look at the store,
    // then MOVED to the new leader.
    let deadline = Instant::now() + ELECTION;
    loop {
        let reply = ca.cmd(&["INCR", "orders"]);
        let e = reply.error();
        if e.starts_with("MOVED") {
            assert!(e.ends_with(&format!(":{}", b.port)), "{e}");
            break;
        }
        assert!(
            e.starts_with("CLUSTERDOWN") && Instant::now() < deadline,
            "{e}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // On the new leader, a handover to the old one works the same way.
    let mut cb = b.client();
    assert_eq!(cb.cmd(&["IDF.FAILOVER"]), Value::Simple("OK".into()));
    let again = first_served(&a, "orders", ELECTION);
    assert_eq!(again, next + 1);
}

/// Moves `tag`'s mark in the shared store to `value`, behind the servers' backs (a restored
/// backup).
fn set_mark(store: &str, tag: &str, value: i64) {
    rt().block_on(async {
        if store.starts_with("etcd://") {
            let Store::Etcd(etcd) = Store::open(store).await.unwrap() else {
                unreachable!()
            };
            let key = etcd.key(&format!("max/{tag}"));
            let key = &key;
            etcd.call(|mut c| async move { c.put(key.clone(), value.to_string(), None).await })
                .await
                .unwrap();
        } else {
            sqlx::any::install_default_drivers();
            let pool = sqlx::AnyPool::connect(store).await.unwrap();
            sqlx::query(&format!(
                "UPDATE leaf_alloc SET max_id = {value} WHERE biz_tag = '{tag}'"
            ))
            .execute(&pool)
            .await
            .unwrap();
            pool.close().await;
        }
    });
}

fn a_standby_whose_guard_finds_the_store_behind_never_leads(backend: &str) {
    let Some((dir, store, mut a, _)) = led_by_a(backend, "behind") else {
        return;
    };
    let b = member(&dir, "b", &store);
    assert_eq!(
        a.client().cmd(&["IDF.FAILOVER"]),
        Value::Simple("OK".into())
    );
    first_served(&b, "orders", ELECTION);
    // b persists marks of its own (its guard records them), then hands back to a.
    let mut cb = b.client();
    let last_b = (0..20)
        .map(|_| cb.cmd(&["INCRBY", "orders", "50"]).int())
        .last()
        .unwrap();
    assert_eq!(cb.cmd(&["IDF.FAILOVER"]), Value::Simple("OK".into()));
    let next = first_served(&a, "orders", ELECTION);
    assert!(next > last_b);
    a.signal("KILL");
    // The store goes back below what b handed out.
    set_mark(&store, "orders", 5);
    // b's guard catches it: it never serves, through several lease terms.
    let until = Instant::now() + Duration::from_secs(4);
    while Instant::now() < until {
        match b.client().cmd(&["INCR", "orders"]) {
            Value::Error(e) => assert!(
                e.starts_with("CLUSTERDOWN") || e.starts_with("MOVED"),
                "{e}"
            ),
            other => panic!("a store behind its guard served {other:?} (after {last_b})"),
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `Segments` over all three servers of a group: a `kill -9` of the leader costs the drawing
/// threads a pause (the takeover), never a failed call or a repeated id.
fn segments_wait_out_a_leader_kill(backend: &str) {
    let Some((dir, store, mut a, _)) = led_by_a(backend, "segments") else {
        return;
    };
    let (b, c) = (member(&dir, "b", &store), member(&dir, "c", &store));
    let url = format!(
        "idforge://127.0.0.1:{},127.0.0.1:{},127.0.0.1:{}",
        a.port, b.port, c.port
    );
    let options = idforge::SegmentOptions {
        step: 20,
        max_step: 20,
        dynamic_step: false,
        timeout: Duration::from_secs(5),
        ..Default::default()
    };
    let segments = std::sync::Arc::new(idforge::Segments::open(&url, "orders", options).unwrap());
    let drawing = common::Drawing::start(&segments, 4);
    std::thread::sleep(Duration::from_millis(500));
    a.signal("KILL");
    // The lease (1 s) runs out, another server takes over, and the drawing goes on for a while.
    std::thread::sleep(Duration::from_secs(3));
    let drawn = drawing.stop_and_check();
    eprintln!(
        "{backend}: {drawn} ids through a leader kill, {} failed fetches retried",
        segments.stats().fetch_errors
    );
    drop((b, c));
}
