//! The server's limits (docs/server.md "Limits"): what happens past each. `server/tests/harness/hostile.py`
//! attacks the same bounds at scale and measures memory and latency; these check the behaviour.

use idforge_testkit as common;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{Client, Server, Value};

/// Whether the server closes `c` well before the client's 20 s read timeout (which `closed`
/// would also take for a close).
fn closed_soon(c: &mut Client) -> bool {
    let started = Instant::now();
    c.closed() && started.elapsed() < common::scaled(Duration::from_secs(10))
}

#[test]
fn maxclients_refuses_with_the_redis_error_and_frees_the_slot() {
    let (_dir, server) = Server::start_fresh(&["--maxclients=2"]);
    let mut a = server.client();
    let mut b = server.client();
    assert_eq!(a.cmd(&["PING"]), Value::Simple("PONG".into()));
    assert_eq!(b.cmd(&["PING"]), Value::Simple("PONG".into()));
    let mut c = server.client();
    assert_eq!(
        c.read(),
        Value::Error("ERR max number of clients reached".into())
    );
    assert!(closed_soon(&mut c));
    drop(a);
    // The slot comes back once the server has seen the close (bounded: not hanging).
    common::poll(
        Duration::from_secs(10),
        50,
        "the slot was not freed",
        || (server.client().cmd(&["PING"]) == Value::Simple("PONG".into())).then_some(()),
    );
    assert_eq!(b.cmd(&["INCR", "t"]).int(), 1);
}

#[test]
fn an_open_server_bounds_the_tags_and_snowflake_names_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    // No users, no password: the per-user quotas do not apply, the server-wide bounds do.
    let server = Server::start(
        dir.path(),
        &[
            "--max-tags=3",
            "--max-snowflake-names=2",
            "--tag-idle-secs=1",
        ],
    );
    let mut c = server.client();
    for t in ["a", "b", "c"] {
        assert_eq!(c.cmd(&["INCR", t]).int(), 1);
    }
    let e = c.cmd(&["INCR", "d"]);
    assert!(
        e.error()
            .starts_with("ERR server limit reached: at most 3 tags in memory (--max-tags)"),
        "{e:?}"
    );
    assert_eq!(c.cmd(&["INCR", "a"]).int(), 2, "tags in memory still serve");
    c.cmd(&["IDF.SNOWFLAKE", "s1"]).int();
    c.cmd(&["IDF.SNOWFLAKE", "s2"]).int();
    let e = c.cmd(&["IDF.SNOWFLAKE", "s3"]);
    assert!(
        e.error().starts_with(
            "ERR server limit reached: at most 2 snowflake names in memory (--max-snowflake-names)"
        ),
        "{e:?}"
    );
    c.cmd(&["IDF.SNOWFLAKE", "s1"]).int();
    // Idle ones leave memory (the tag's ids given back, the name's time kept): room again.
    common::poll(Duration::from_secs(20), 200, "no room after idle", || {
        let (tag, name) = (c.cmd(&["INCR", "d"]), c.cmd(&["IDF.SNOWFLAKE", "s3"]));
        matches!((tag, name), (Value::Int(_), Value::Int(_))).then_some(())
    });
}

#[test]
fn long_pipelines_are_answered_in_order_past_the_reply_buffer() {
    let (_dir, server) = Server::start_fresh(&["--reply-buffer-bytes=1024"]);
    let mut c = server.client();
    let mut req = Vec::new();
    for _ in 0..5000 {
        req.extend_from_slice(b"*2\r\n$4\r\nINCR\r\n$1\r\np\r\n");
    }
    c.send_raw(&req);
    for want in 1..=5000 {
        assert_eq!(c.read().int(), want);
    }
    // Snowflakes: above the bound refused, at it served (one reply larger than the buffer).
    let e = c.cmd(&["IDF.SNOWFLAKE", "s", "COUNT", "10001"]);
    assert!(
        e.error()
            .starts_with("ERR COUNT must be between 1 and 10000")
    );
    let ids = c
        .cmd(&["IDF.SNOWFLAKE", "s", "COUNT", "10000"])
        .into_array();
    assert_eq!(ids.len(), 10000);
}

#[test]
fn oversized_and_half_sent_requests_are_closed() {
    let (_dir, server) =
        Server::start_fresh(&["--max-request-bytes=2048", "--request-timeout-ms=300"]);
    let mut c = server.client();
    c.send_raw(b"*2\r\n$4\r\nECHO\r\n$4000\r\n");
    assert!(c.read().error().contains("request too big"));
    assert!(closed_soon(&mut c));
    // Just under the limit is fine.
    let mut c = server.client();
    let text = "x".repeat(1900);
    assert_eq!(c.cmd(&["ECHO", &text]), Value::Bulk(text.into_bytes()));
    // Half a request, then nothing: closed after the request timeout.
    c.send_raw(b"*2\r\n$4\r\nINCR\r\n$5\r\nab");
    assert!(closed_soon(&mut c));
}

#[test]
fn unauthenticated_and_idle_connections_are_closed() {
    let (_dir, server) =
        Server::start_fresh(&["--requirepass=pw", "--auth-timeout-ms=300", "--timeout=1"]);
    let mut waiting = server.client();
    assert_eq!(waiting.cmd(&["PING"]), Value::Simple("PONG".into()));
    assert!(closed_soon(&mut waiting), "not authenticated in time");
    let mut c = server.client_as(&["pw"]);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(c.cmd(&["INCR", "t"]).int(), 1, "authenticated: not closed");
    assert!(closed_soon(&mut c), "closed once idle for --timeout");
}

#[test]
fn failed_auth_is_limited_per_address() {
    let (_dir, server) = Server::start_fresh(&[
        "--requirepass=pw",
        "--auth-fail-burst=2",
        "--auth-fail-delay-ms=1",
    ]);
    let mut c = server.client();
    for _ in 0..2 {
        assert!(c.cmd(&["AUTH", "wrong"]).error().starts_with("WRONGPASS"));
    }
    // Even the right password: the address has used its allowance.
    let e = c.cmd(&["AUTH", "pw"]);
    assert!(
        e.error().starts_with("ERR too many failed AUTH attempts"),
        "{e:?}"
    );
    // It refills at one a second, and a success gives its token back.
    std::thread::sleep(Duration::from_millis(1100));
    for _ in 0..3 {
        assert_eq!(c.cmd(&["AUTH", "pw"]), Value::Simple("OK".into()));
    }
}

#[test]
fn metrics_want_the_token_and_name_no_tags_by_default() {
    let (_dir, server, metrics_port) = metrics_server(&["--metrics-token=tok"]);
    let mut c = server.client();
    c.cmd(&["INCR", "secret-tag-name"]);
    let get =
        |auth: &str| http_get(metrics_port, "/metrics", auth, Duration::from_secs(20)).unwrap();
    assert!(get("").starts_with("HTTP/1.1 401 Unauthorized"));
    assert!(get("Authorization: Bearer nope\r\n").starts_with("HTTP/1.1 401"));
    let page = get("Authorization: Bearer tok\r\n");
    assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
    assert!(page.contains("idforge_tags_loaded 1"), "{page}");
    assert!(!page.contains("secret-tag-name"), "{page}");
}

/// A server in a fresh folder with a metrics port of its own and `extra` arguments; returns
/// the port too.
fn metrics_server(extra: &[&str]) -> (tempfile::TempDir, Server, u16) {
    let port = common::free_port();
    let arg = format!("--metrics-port={port}");
    let (dir, server) = Server::start_fresh(&[&[arg.as_str()], extra].concat());
    (dir, server, port)
}

/// `GET path` on the metrics port, with `headers` (each ending in CRLF): the whole response, or
/// the error that ended it (our read timeout included).
fn http_get(port: u16, path: &str, headers: &str, timeout: Duration) -> Result<String, String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(timeout)).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n{headers}\r\n").map_err(|e| e.to_string())?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut s, &mut text).map_err(|e| e.to_string())?;
    Ok(text)
}

/// Opens `n` connections to `port` that never send a request.
fn idle_connections(port: u16, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect()
}

#[test]
fn the_metrics_port_answers_while_idle_connections_flood_it() {
    let (_dir, server, metrics_port) = metrics_server(&[]);
    // More than a handful of idle connections (each used to hold one of 16 slots for 5 s).
    let idle = idle_connections(metrics_port, 40);
    std::thread::sleep(Duration::from_millis(100));
    for path in ["/healthz", "/metrics", "/healthz"] {
        let page = http_get(metrics_port, path, "", Duration::from_secs(4)).unwrap();
        assert!(page.starts_with("HTTP/1.1 200 OK"), "{path}: {page}");
    }
    drop(idle);
    drop(server);

    // Past --metrics-maxclients a probe takes the place of the oldest idle connection, and idle
    // ones are closed after --metrics-timeout-ms.
    let (_dir, _server, metrics_port) =
        metrics_server(&["--metrics-maxclients=8", "--metrics-timeout-ms=500"]);
    let idle = idle_connections(metrics_port, 16);
    std::thread::sleep(Duration::from_millis(100));
    for path in ["/healthz", "/metrics", "/healthz"] {
        let page = http_get(metrics_port, path, "", Duration::from_secs(4)).unwrap();
        assert!(page.starts_with("HTTP/1.1 200 OK"), "{path}: {page}");
    }
    for mut s in idle {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let started = Instant::now();
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut s, &mut buf);
        assert!(buf.is_empty(), "an idle connection got {buf:?}");
        assert!(
            started.elapsed() < common::scaled(Duration::from_secs(5)),
            "not closed"
        );
    }
}
