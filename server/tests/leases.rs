//! The runtime's leased snowflake generators (`SnowflakeBuilder::lease`) against a real
//! `idforge serve`.

use idforge_testkit as common;

use std::time::{Duration, Instant};

use common::Server;
use idforge::{ErrorCode, Layout, Snowflake};

#[test]
fn leased_generators_get_distinct_nodes_and_give_them_back() {
    let (_dir, server) = Server::start_fresh(&[]);
    let a = Snowflake::builder(Layout::TWITTER)
        .lease(server.url(), "orders")
        .build()
        .unwrap();
    let b = Snowflake::builder(Layout::TWITTER)
        .lease(server.url(), "orders")
        .build()
        .unwrap();
    assert_eq!((a.node(), b.node()), (0, 1));
    assert_eq!(a.lease().unwrap().id(), 0);
    let (x, y) = (a.next().unwrap(), b.next().unwrap());
    assert_eq!(a.decode(x).unwrap().node, 0);
    assert_eq!(b.decode(y).unwrap().node, 1);
    let mut many = vec![0u64; 10_000];
    a.next_many(&mut many).unwrap();
    assert!(many.windows(2).all(|w| w[0] < w[1]));
    // Dropped, a generator releases its id with the last time it used: once that has passed,
    // the id is the lowest free one again.
    drop(a);
    std::thread::sleep(Duration::from_millis(20));
    let c = Snowflake::builder(Layout::TWITTER)
        .lease(server.url(), "orders")
        .build()
        .unwrap();
    assert_eq!(c.node(), 0);
    assert!(
        c.next().unwrap() > many[9_999],
        "the new holder's ids come after"
    );
}

#[test]
fn a_generator_stops_when_its_lease_cannot_be_renewed_and_the_id_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[]);
    let port = server.port;
    let g = Snowflake::builder(Layout::TWITTER)
        .lease(server.url(), "svc")
        .lease_ttl(Duration::from_millis(600))
        .build()
        .unwrap();
    let last = g.next().unwrap();
    // Renewals go on across the lease's TTL.
    std::thread::sleep(Duration::from_millis(900));
    let later = g.next().unwrap();
    assert!(later > last);
    // The server goes away: within the TTL the generator refuses to make ids.
    server.signal("KILL");
    let deadline = Instant::now() + Duration::from_secs(5);
    let err = loop {
        match g.next() {
            Ok(_) => assert!(Instant::now() < deadline, "still issuing with no lease"),
            Err(e) => break e,
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(err.code(), ErrorCode::LeaseLost, "{err}");
    assert_eq!(
        g.next_many(&mut [0u64; 4]).unwrap_err().code(),
        ErrorCode::LeaseLost
    );
    // Back on the same data (after the old lease's end at the server), the id is free again
    // and the new holder's ids are all later than the old holder's.
    std::thread::sleep(Duration::from_millis(300));
    let server = Server::spawn(dir.path().to_path_buf(), vec![format!("--port={port}")]);
    let h = Snowflake::builder(Layout::TWITTER)
        .lease(server.url(), "svc")
        .build()
        .unwrap();
    assert_eq!(h.node(), 0);
    assert!(h.next().unwrap() > later);
}

#[test]
fn bad_lease_settings_are_typed_errors() {
    let (_dir, server) = Server::start_fresh(&[]);
    let build = |url: &str, service: &str, ttl: Duration| {
        Snowflake::builder(Layout::TWITTER)
            .lease(url, service)
            .lease_ttl(ttl)
            .build()
            .unwrap_err()
            .code()
    };
    let ok = server.url();
    let second = Duration::from_secs(1);
    assert_eq!(
        build("redis://127.0.0.1:1", "s", second),
        ErrorCode::InvalidUrl
    );
    assert_eq!(build(&ok, "bad name", second), ErrorCode::InvalidArgument);
    assert_eq!(
        build(&ok, "s", Duration::from_millis(5)),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        build("idforge://127.0.0.1:1?timeout_ms=300", "s", second),
        ErrorCode::SourceUnavailable
    );
    assert_eq!(
        Snowflake::builder(Layout::TWITTER)
            .lease_ttl(second)
            .build()
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
    // A 1-bit node field has two ids to lease; the third generator finds none.
    let tiny = Layout::new(
        1_288_834_974_657,
        1,
        41,
        1,
        21,
        idforge::Order::TimeNodeSeq,
        false,
    )
    .unwrap();
    let leased = |_| Snowflake::builder(tiny).lease(server.url(), "tiny").build();
    let (_a, _b) = (leased(0).unwrap(), leased(1).unwrap());
    assert_eq!(leased(2).unwrap_err().code(), ErrorCode::Overflow);
}
