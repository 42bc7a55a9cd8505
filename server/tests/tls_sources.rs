//! Every client path over TLS against real servers on 127.0.0.1: the runtime's `idforges://`
//! (against `idforge serve --tls-cert …`) and `rediss://` sources, the SQL sources with
//! `sslmode`/`ssl-mode`, and the server's PostgreSQL, MariaDB and etcd stores over TLS. Redis,
//! PostgreSQL, MariaDB and etcd are those of `ci/services.sh`, which serve TLS with the
//! certificates in `IDFORGE_TEST_TLS_DIR` and export the `…_TLS_URL`s.

use idforge_testkit as common;

use std::path::Path;
use std::time::Duration;

use common::tls::{self, Ca};
use common::{Server, Value, fixed_step, service_url, unique};
use idforge::{ErrorCode, Segments};

/// `ca.pem`, a server certificate and a client certificate in `dir`.
struct Certs {
    ca: String,
    client_cert: String,
    client_key: String,
}

fn certs(dir: &Path, ca: &Ca) -> Certs {
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    let (client_cert, client_key) = ca.issue("app", false).write(dir, "client");
    Certs {
        ca: dir.join("ca.pem").display().to_string(),
        client_cert: client_cert.display().to_string(),
        client_key: client_key.display().to_string(),
    }
}

#[test]
fn idforges_draws_ids_over_tls_and_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("test CA");
    let c = certs(dir.path(), &ca);
    let port = common::free_port();
    let server = tls::server(dir.path(), &ca, &[format!("--port={port}")]);
    // A kill -9 and a restart: the source reconnects (a new handshake), nothing repeats.
    let url = format!("idforges://127.0.0.1:{port}?tls_ca={}", c.ca);
    let (server, _, _) = common::draw_across_a_kill_9(&url, server);
    drop(server);

    // The host name instead of the address, and a name given with tls_server_name.
    let server = tls::server(dir.path(), &ca, &[]);
    for url in [
        format!("idforges://localhost:{}?tls_ca={}", server.port, c.ca),
        format!(
            "idforges://127.0.0.1:{}?tls_ca={}&tls_server_name=localhost",
            server.port, c.ca
        ),
    ] {
        let source = idforge::source::open(&url).unwrap();
        assert!(source.fetch("named", 10).is_ok(), "{url}");
    }
}

#[test]
fn idforges_with_a_client_certificate_and_what_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("test CA");
    let c = certs(dir.path(), &ca);
    let server = tls::server(dir.path(), &ca, &[format!("--tls-ca-cert={}", c.ca)]);
    let port = server.port;
    let good = format!(
        "idforges://127.0.0.1:{port}?tls_ca={}&tls_cert={}&tls_key={}",
        c.ca, c.client_cert, c.client_key
    );
    let segments = Segments::open(&good, "paid", fixed_step(10)).unwrap();
    assert_eq!(segments.next().unwrap(), 1);

    // No client certificate; a server the client's CA did not sign; plain TCP to a TLS port.
    let other = tempfile::tempdir().unwrap();
    let stranger = certs(other.path(), &Ca::new("another CA"));
    for (url, why) in [
        (
            format!("idforges://127.0.0.1:{port}?tls_ca={}", c.ca),
            "TLS",
        ),
        (
            format!("idforges://127.0.0.1:{port}?tls_ca={}", stranger.ca),
            "TLS",
        ),
        (format!("idforge://127.0.0.1:{port}"), ""),
    ] {
        let source = idforge::source::open(&url).unwrap();
        let e = source.fetch("paid", 10).unwrap_err();
        assert_eq!(e.code(), ErrorCode::SourceUnavailable, "{url}: {e}");
        assert!(e.to_string().contains(why), "{url}: {e}");
        // Transient: it may be this server's alone (another host, or another server of
        // `mode=any`, is tried) or a certificate being rotated.
        assert!(e.is_transient(), "{url}: {e}");
    }
    // The server went on serving.
    assert_eq!(segments.next().unwrap(), 2);
}

#[test]
fn bad_tls_urls_are_refused_when_the_source_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("test CA");
    let c = certs(dir.path(), &ca);
    let cases = [
        (format!("idforge://h:1?tls_ca={}", c.ca), "idforges://"),
        (format!("redis://h:1?tls_ca={}", c.ca), "rediss://"),
        (
            "idforges://h:1?tls_ca=/no/such/ca.pem".to_string(),
            "/no/such/ca.pem",
        ),
        (
            format!("idforges://h:1?tls_ca={}&tls_cert={}", c.ca, c.client_cert),
            "together",
        ),
        (
            format!("rediss://h:1?tls_ca={}&tls_bogus=1", c.ca),
            "unknown URL parameter",
        ),
        (
            format!("idforges://h:1?tls_ca={}&tls_cert={0}&tls_key={0}", c.ca),
            "tls_key",
        ),
    ];
    for (url, why) in cases {
        let e = idforge::source::open(&url).err().unwrap();
        assert!(e.to_string().contains(why), "{url}: {e}");
    }
}

#[test]
fn idforges_any_mode_over_striped_tls_servers() {
    let ca = Ca::new("test CA");
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let c = certs(dirs[0].path(), &ca);
    let servers: Vec<Server> = (0..2)
        .map(|k| {
            tls::server(
                dirs[k].path(),
                &ca,
                &[format!("--stripe={k}/2"), "--stripe-block=1000".into()],
            )
        })
        .collect();
    let url = format!(
        "idforges://127.0.0.1:{},127.0.0.1:{}?mode=any&tls_ca={}",
        servers[0].port, servers[1].port, c.ca
    );
    let segments = Segments::open(&url, "striped", fixed_step(100)).unwrap();
    let ids: Vec<u64> = (0..3000).map(|_| segments.next().unwrap()).collect();
    let distinct: std::collections::HashSet<u64> = ids.iter().copied().collect();
    assert_eq!(distinct.len(), ids.len());
    // Both servers answered: stripe k holds the blocks of 1,000 whose number is k mod 2.
    for k in 0..2 {
        assert!(
            ids.iter().any(|id| (id - 1) / 1000 % 2 == k),
            "no id of stripe {k}"
        );
    }
}

#[test]
fn rediss_source_with_a_client_certificate() {
    let Some(url) = service_url("IDFORGE_TEST_REDIS_TLS_URL") else {
        return;
    };
    let tag = unique("rediss");
    let segments = Segments::open(&url, &tag, fixed_step(100)).unwrap();
    let ids: Vec<u64> = (0..500).map(|_| segments.next().unwrap()).collect();
    assert_eq!(ids, (1..=500).collect::<Vec<_>>());
    // This Redis asks every client for a certificate: without one, the source is refused.
    let without: String = url.split("&tls_cert").next().unwrap().to_owned();
    let e = idforge::source::open(&without)
        .unwrap()
        .fetch(&tag, 5)
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::SourceUnavailable, "{e}");
    // And the plain port of the same Redis holds the same counter.
    let plain = service_url("IDFORGE_TEST_REDIS_URL").unwrap();
    let seg = idforge::source::open(&plain)
        .unwrap()
        .fetch(&tag, 5)
        .unwrap();
    assert!(seg.start() > 500, "{seg:?}");
}

/// `url` with its TLS taken away (`sslmode=disable`, `ssl-mode=DISABLED`).
fn without_tls(url: &str) -> String {
    let head = url.split('?').next().unwrap();
    if url.starts_with("mysql") {
        format!("{head}?ssl-mode=DISABLED")
    } else {
        format!("{head}?sslmode=disable")
    }
}

fn sql_source_over_tls(var: &str) {
    let Some(url) = service_url(var) else {
        return;
    };
    let tag = unique("sqltls");
    let source = idforge::source::open(&url).unwrap();
    let first = source.fetch(&tag, 100).unwrap();
    let second = source.fetch(&tag, 100).unwrap();
    assert!(
        second.start() > first.end() - 1,
        "{first:?} then {second:?}"
    );
    // The user of this URL may only come over TLS (`tlsonly`) or with the client certificate
    // (`idforge`): the same URL without TLS is refused, so the ids above did cross TLS.
    let e = idforge::source::open(&without_tls(&url))
        .unwrap()
        .fetch(&tag, 100)
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::SourceUnavailable, "{e}");
}

#[test]
fn postgres_source_over_tls() {
    sql_source_over_tls("IDFORGE_TEST_POSTGRES_TLS_URL");
}

#[test]
fn postgres_source_with_a_client_certificate() {
    sql_source_over_tls("IDFORGE_TEST_POSTGRES_MTLS_URL");
}

#[test]
fn mariadb_source_over_tls() {
    sql_source_over_tls("IDFORGE_TEST_MYSQL_TLS_URL");
}

#[test]
fn mariadb_source_with_a_client_certificate() {
    sql_source_over_tls("IDFORGE_TEST_MYSQL_MTLS_URL");
}

/// `idforge serve --store URL` hands out ids.
fn store_over_tls(var: &str) {
    let Some(mut url) = service_url(var) else {
        return;
    };
    if url.starts_with("etcds://") {
        // A key prefix of its own, before the parameters.
        let (head, query) = url.split_once('?').unwrap();
        url = format!("{head}/{}?{query}", unique("tls"));
    }
    let (_dir, server) = Server::start_fresh(&[&format!("--store={url}")]);
    let mut c = server.client();
    let tag = unique("store-tls");
    // An etcd store elects its leader first.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let first = loop {
        match c.cmd(&["INCR", &tag]) {
            Value::Int(n) => break n,
            other => {
                assert!(std::time::Instant::now() < deadline, "{var}: {other:?}");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    };
    assert_eq!(first, 1);
    assert_eq!(c.cmd(&["INCRBY", &tag, "1000"]).int(), 1001);
}

#[test]
fn postgres_store_over_tls() {
    store_over_tls("IDFORGE_TEST_POSTGRES_TLS_URL");
}

#[test]
fn mariadb_store_with_a_client_certificate() {
    store_over_tls("IDFORGE_TEST_MYSQL_MTLS_URL");
}

#[test]
fn etcd_store_over_tls() {
    store_over_tls("IDFORGE_TEST_ETCD_TLS_URL");
}

#[test]
fn an_etcds_store_that_does_not_trust_the_members_is_refused() {
    let Some(url) = service_url("IDFORGE_TEST_ETCD_TLS_URL") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let other = certs(dir.path(), &Ca::new("another CA"));
    let head = url.split('?').next().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_idforge"))
        .arg("serve")
        .arg("--port=0")
        .arg(format!("--data-dir={}", dir.path().join("data").display()))
        .arg(format!(
            "--store={head}/{}?tls_ca={}",
            unique("x"),
            other.ca
        ))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot open the store"), "{stderr}");
}

#[test]
fn a_tls_peer_trickling_its_handshake_cannot_stretch_a_request_past_timeout_ms() {
    // A peer that sends the header of a 16,000-byte TLS record, then one byte every 50 ms:
    // every read gets a byte in time, so only a deadline counted across reads can end it.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::Write;
        if let Ok((mut s, _)) = listener.accept() {
            let _ = s.write_all(&[0x16, 0x03, 0x03, 0x3e, 0x80]);
            for _ in 0..600 {
                std::thread::sleep(Duration::from_millis(50));
                if s.write_all(&[0]).is_err() {
                    break;
                }
            }
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let c = certs(dir.path(), &Ca::new("test CA"));
    let url = format!("idforges://127.0.0.1:{port}?tls_ca={}&timeout_ms=500", c.ca);
    let start = std::time::Instant::now();
    let e = idforge::source::open(&url)
        .unwrap()
        .fetch("t", 10)
        .unwrap_err();
    assert!(
        start.elapsed() < common::scaled(Duration::from_secs(5)),
        "{:?}: {e}",
        start.elapsed()
    );
    assert_eq!(e.code(), ErrorCode::Timeout, "{e}");
}
