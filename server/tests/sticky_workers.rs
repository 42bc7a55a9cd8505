//! Sticky worker ids (`IDF.WORKER ACQUIRE … HOLDER name`, `--worker-reserve-ms`): a named
//! holder gets its id back, no one else gets a reserved id, on every store (SQLite here; etcd,
//! PostgreSQL and MariaDB when ci/services.sh exported them), through a restart of the server,
//! and through the runtime's generators (`lease_holder`, the URL's `holder`).

use idforge_testkit as common;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use common::{Server, Value};
use idforge::{Layout, Snowflake};

/// `[id, token, ttl, floor, server-ms, reserved-ms]` of an `ACQUIRE … CLOCK HOLDER`, or the
/// first three (and floor, server-ms) of one without a name.
fn fields(reply: &Value) -> (i64, String, Vec<i64>) {
    let parts = reply.array();
    let Value::Bulk(token) = &parts[1] else {
        panic!("a token in {parts:?}")
    };
    let rest = parts[2..].iter().map(Value::int).collect();
    (
        parts[0].int(),
        String::from_utf8(token.clone()).unwrap(),
        rest,
    )
}

fn acquire(c: &mut common::Client, service: &str, ttl: &str, holder: Option<&str>) -> Value {
    let mut args = vec!["IDF.WORKER", "ACQUIRE", service, ttl, "MAX", "4", "CLOCK"];
    if let Some(h) = holder {
        args.extend(["HOLDER", h]);
    }
    c.cmd(&args)
}

fn id_of(reply: &Value) -> i64 {
    fields(reply).0
}

fn release(c: &mut common::Client, service: &str, id: i64, token: &str) {
    let id = id.to_string();
    assert_eq!(
        c.cmd(&["IDF.WORKER", "RELEASE", service, &id, token]),
        Value::Simple("OK".into())
    );
}

/// `LIST` rows as `(id, held, holder, reserved-ms)`.
fn list(c: &mut common::Client, service: &str) -> Vec<(i64, i64, String, i64)> {
    let rows = c.cmd(&["IDF.WORKER", "LIST", service]).into_array();
    rows.iter()
        .map(|r| {
            let f = r.array();
            assert_eq!(f.len(), 6, "[id, held, end, last, holder, reserved]: {f:?}");
            let Value::Bulk(holder) = &f[4] else {
                panic!("a holder in {f:?}")
            };
            (
                f[0].int(),
                f[1].int(),
                String::from_utf8(holder.clone()).unwrap(),
                f[5].int(),
            )
        })
        .collect()
}

/// The whole story on one store: names, reservations, a server restart, the end of a
/// reservation, and a service full of reservations.
fn sticky_ids_on(store: common::Store) {
    let (label, var) = (store.name, store.var);
    // Long enough to outlast a restart of the server on a busy machine; the wait for its end
    // below is as long.
    let reserve = ["--worker-reserve-ms=10000"];
    let Some((_dir, server)) = common::server_on_store(var, "sticky", &reserve) else {
        return;
    };
    let service = common::unique("sticky");
    server.wait_serving(&service);
    let mut c = server.client();

    // a, b and an anonymous holder take 0, 1, 2; a names itself, so its grant tells the
    // reservation's end: the lease's end plus the reserve.
    let a = acquire(&mut c, &service, "60000", Some("web-a:8080"));
    let (a_id, a_token, a_rest) = fields(&a);
    assert_eq!(
        a_rest.len(),
        4,
        "{label}: ttl, floor, server-ms, reserved-ms"
    );
    let (server_ms, reserved) = (a_rest[2], a_rest[3]);
    assert_eq!(reserved, server_ms + 60_000 + 10_000, "{label}");
    let (b_id, b_token, _) = fields(&acquire(&mut c, &service, "60000", Some("web-b")));
    let anon = acquire(&mut c, &service, "60000", None);
    assert_eq!(
        fields(&anon).2.len(),
        3,
        "{label}: no name, no reservation field"
    );
    assert_eq!((a_id, b_id, id_of(&anon)), (0, 1, 2), "{label}");

    // a and b leave; an anonymous holder and a new name get neither of their ids.
    release(&mut c, &service, a_id, &a_token);
    release(&mut c, &service, b_id, &b_token);
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(
        id_of(&acquire(&mut c, &service, "60000", None)),
        3,
        "{label}"
    );
    let e = acquire(&mut c, &service, "60000", Some("web-c"));
    assert_eq!(
        e.error(),
        "ERR no free worker id below 4",
        "{label}: a full service refuses, it does not hand out reservations"
    );
    let rows = list(&mut c, &service);
    assert_eq!(
        rows.iter()
            .map(|r| (r.0, r.1, r.2.as_str()))
            .collect::<Vec<_>>(),
        [
            (0, 0, "web-a:8080"),
            (1, 0, "web-b"),
            (2, 1, ""),
            (3, 1, "")
        ],
        "{label}"
    );
    assert_eq!(
        (rows[2].3, rows[3].3),
        (0, 0),
        "{label}: no name, no reservation"
    );

    // The server restarts (kill -9): the names and reservations were in the store.
    let server = server.restart("KILL");
    server.wait_serving(&service);
    let mut c = server.client();
    let again = acquire(&mut c, &service, "200", Some("web-a:8080"));
    let (id, token, rest) = fields(&again);
    assert_eq!(
        id, a_id,
        "{label}: a gets its own id back after the restart"
    );
    assert!(rest[1] > 0, "{label}: with its own floor (its lease's end)");
    // Its lease now ends unreleased (a crash): still its own, and still no one else's.
    std::thread::sleep(Duration::from_millis(400));
    let e = c.cmd(&["IDF.WORKER", "RENEW", &service, &id.to_string(), &token]);
    assert!(e.error().starts_with("LEASELOST"), "{label}: {e:?}");
    assert_eq!(
        acquire(&mut c, &service, "60000", Some("web-c")).error(),
        "ERR no free worker id below 4",
        "{label}"
    );
    let back = acquire(&mut c, &service, "60000", Some("web-a:8080"));
    assert_eq!(id_of(&back), a_id, "{label}: back after a crash too");

    // b's reservation ends (10 s after its release): its id goes to c, with a floor at the
    // reservation's end, and b gets no id (a holds 0, anonymous ones 2 and 3).
    let deadline = Instant::now() + Duration::from_secs(30);
    let c_grant = loop {
        let reply = acquire(&mut c, &service, "60000", Some("web-c"));
        if !matches!(reply, Value::Error(_)) {
            break reply;
        }
        assert!(
            Instant::now() < deadline,
            "{label}: b's reservation never ended"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let (c_id, _, c_rest) = fields(&c_grant);
    assert_eq!(c_id, b_id, "{label}");
    let b_reserved = rows[1].3;
    assert_eq!(
        c_rest[1],
        b_reserved - 1,
        "{label}: the floor covers every time b's reservation allowed"
    );
    assert!(
        acquire(&mut c, &service, "60000", Some("web-b"))
            .error()
            .starts_with("ERR no free worker id"),
        "{label}"
    );
}

common::per_store!(sticky_ids_on: sqlite, etcd, postgres, mariadb);

#[test]
fn without_reservations_a_name_still_finds_its_free_id() {
    let (_dir, server) = Server::start_fresh(&["--worker-reserve-ms=0"]);
    let mut c = server.client();
    let (id, token, rest) = fields(&acquire(&mut c, "s", "60000", Some("a")));
    assert_eq!(rest[3], rest[2] + 60_000, "reserved only as long as leased");
    release(&mut c, "s", id, &token);
    std::thread::sleep(Duration::from_millis(5));
    // Free for all at once: an anonymous holder takes the lowest.
    let (anon, anon_token, _) = fields(&acquire(&mut c, "s", "60000", None));
    assert_eq!(anon, 0);
    // a comes back: its id is taken, it gets another, and that one is its id from now on,
    // though a lower one is free by then.
    let (id, token, _) = fields(&acquire(&mut c, "s", "60000", Some("a")));
    assert_eq!(id, 1);
    release(&mut c, "s", id, &token);
    release(&mut c, "s", anon, &anon_token);
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(id_of(&acquire(&mut c, "s", "60000", Some("a"))), 1);
}

/// A lease kept in a file (`HOLDER name FILE`) that ended unreleased goes to no one, not even
/// its name, until its reservation ends; its token brings it back (the instance was only cut
/// off), with the times it made meanwhile.
#[test]
fn a_lease_kept_in_a_file_comes_back_only_with_its_token() {
    let (_dir, server) = Server::start_fresh(&["--worker-reserve-ms=60000"]);
    let mut c = server.client();
    let e = c.cmd(&["IDF.WORKER", "ACQUIRE", "s", "60000", "FILE"]);
    assert!(e.error().starts_with("ERR FILE needs HOLDER"), "{e:?}");
    let mut args = vec![
        "IDF.WORKER",
        "ACQUIRE",
        "s",
        "200",
        "CLOCK",
        "HOLDER",
        "a",
        "FILE",
    ];
    let (id, token, rest) = fields(&c.cmd(&args));
    let reserved = rest[3];
    std::thread::sleep(Duration::from_millis(400));
    // Ended: neither its name (without the token) nor anyone else gets it.
    args[3] = "60000";
    let (other, other_token, _) = fields(&c.cmd(&args));
    assert_ne!(other, id);
    release(&mut c, "s", other, &other_token);
    assert_ne!(id_of(&acquire(&mut c, "s", "60000", None)), id);
    // Its token renews it, reporting times past the lease's end (made while cut off), up to
    // the reservation's end and its slack.
    let id_text = id.to_string();
    let made = (reserved - 1).to_string();
    let renewed = c.cmd(&[
        "IDF.WORKER",
        "RENEW",
        "s",
        &id_text,
        &token,
        "TIME",
        &made,
        "CLOCK",
    ]);
    let parts = renewed.array();
    assert_eq!(parts.len(), 4);
    assert!(parts[0].int() > parts[2].int(), "live again: {renewed:?}");
    let far = (reserved + 3_600_000).to_string();
    let e = c.cmd(&["IDF.WORKER", "RENEW", "s", &id_text, &token, "TIME", &far]);
    assert!(e.error().starts_with("ERR TIME"), "{e:?}");
    // Given back, it is its name's again at once.
    release(&mut c, "s", id, &token);
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(id_of(&acquire(&mut c, "s", "60000", Some("a"))), id);
}

#[test]
fn bad_holder_names_are_refused() {
    let (_dir, server) = Server::start_fresh(&[]);
    let mut c = server.client();
    let long = "h".repeat(129);
    for bad in ["", ".a", "a b", "a\u{e4}", long.as_str()] {
        let e = acquire(&mut c, "s", "60000", Some(bad));
        assert!(
            e.error().starts_with("ERR invalid holder"),
            "{bad:?}: {e:?}"
        );
    }
    let e = c.cmd(&["IDF.WORKER", "ACQUIRE", "s", "60000", "HOLDER"]);
    assert!(matches!(e, Value::Error(_)), "{e:?}");
    let e = c.cmd(&[
        "IDF.WORKER",
        "ACQUIRE",
        "s",
        "60000",
        "HOLDER",
        "a",
        "HOLDER",
        "b",
    ]);
    assert!(matches!(e, Value::Error(_)), "one name: {e:?}");
    assert!(list(&mut c, "s").is_empty(), "nothing was leased");
}

/// An instance restarted three times with its name gets its node id each time (the others
/// keep theirs), and no id repeats across its lives.
#[test]
fn a_restarted_instance_gets_its_node_id_back() {
    let (_dir, server) = Server::start_fresh(&[]);
    let named = |name: &str| {
        Snowflake::builder(Layout::TWITTER)
            .lease(server.url(), "orders")
            .lease_holder(name)
            .build()
            .unwrap()
    };
    let others: Vec<Snowflake> = ["web-0", "web-1", "web-2"].map(named).into();
    assert_eq!(
        others.iter().map(Snowflake::node).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    let mut seen = HashSet::new();
    let mut node = None;
    for life in 0..4 {
        // The URL's parameter names it as well as the builder does.
        let g = Snowflake::builder(Layout::TWITTER)
            .lease(format!("{}?holder=web-1b", server.url()), "orders")
            .build()
            .unwrap();
        assert_eq!(*node.get_or_insert(g.node()), g.node(), "life {life}");
        let mut ids = vec![0u64; 20_000];
        g.next_many(&mut ids).unwrap();
        for id in ids {
            assert!(seen.insert(id), "life {life}: {id} again");
        }
        // A restart in the middle of the others' lives: theirs stay theirs.
        drop(g);
    }
    assert_eq!(node, Some(3));
    drop(others);
    std::thread::sleep(Duration::from_millis(10));
    let again = named("web-2");
    assert_eq!(again.node(), 2, "web-2's own id, not the lowest free");
    let stranger = Snowflake::builder(Layout::TWITTER)
        .lease(server.url(), "orders")
        .build()
        .unwrap();
    assert_eq!(stranger.node(), 4, "reserved ids are no one else's");
}
