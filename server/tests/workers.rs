//! `IDF.WORKER`: worker-id leases on the embedded store (the same code runs on etcd; see
//! server/tests/clients/worker_leases.py for 50 processes through a failover).

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{Server, Value};

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn grant(reply: Value) -> (i64, String) {
    let Value::Array(parts) = reply else {
        panic!("a grant is [id, token, ttl], got {reply:?}")
    };
    let Value::Bulk(token) = &parts[1] else {
        panic!("a token")
    };
    (parts[0].int(), String::from_utf8(token.clone()).unwrap())
}

#[test]
fn leases_hand_out_the_lowest_free_id_and_only_the_holder_renews() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
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
    let Value::Array(list) = c.cmd(&["IDF.WORKER", "LIST", "svc"]) else {
        panic!("LIST is an array")
    };
    assert_eq!(list.len(), 3);
    assert_eq!(
        list[0],
        Value::Array(vec![
            Value::Int(0),
            Value::Int(0),
            list_field(&list[0], 2),
            Value::Int(ahead.parse().unwrap())
        ])
    );
}

fn list_field(row: &Value, i: usize) -> Value {
    let Value::Array(fields) = row else {
        panic!("a row")
    };
    fields[i].clone()
}

#[test]
fn an_expired_lease_is_lost_and_its_id_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
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
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
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
