//! TLS on the client and metrics ports: plain and mutual TLS, what is refused, the handshake's
//! time bound, and reloading the certificate on SIGHUP.

use idforge_testkit as common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::Value;
use common::tls::{self, Ca, Pair};

fn arg(name: &str, path: &Path) -> String {
    format!("--{name}={}", path.display())
}

#[test]
fn a_tls_server_serves_tls_clients_and_closes_on_plain_ones() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("test CA");
    let server = tls::server(dir.path(), &ca, &[]);
    let mut c = tls::client(server.port, &ca.pem(), None);
    assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
    assert_eq!(c.cmd(&["INCR", "orders"]).int(), 1);
    // A pipeline of 2,000 requests crosses many TLS records both ways.
    let mut req = Vec::new();
    for _ in 0..2000 {
        req.extend_from_slice(b"*2\r\n$4\r\nINCR\r\n$6\r\norders\r\n");
    }
    c.send_raw(&req);
    let ids: Vec<i64> = (0..2000).map(|_| c.read().int()).collect();
    assert_eq!(ids, (2..2002).collect::<Vec<_>>());

    // A plain client gets no reply: the server wanted a TLS hello and closed.
    let mut plain = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    plain.write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
    let mut buf = Vec::new();
    let _ = plain.read_to_end(&mut buf);
    assert!(
        !String::from_utf8_lossy(&buf).contains("PONG"),
        "a plain client was answered: {buf:?}"
    );
    // A client that does not trust the server's CA refuses it.
    let other = Ca::new("another CA");
    assert!(tls::ping(server.port, &other.pem(), None).is_err());
    // The server is still serving, also after the connection idled past the second after
    // which it gives its read buffer back.
    assert_eq!(c.cmd(&["INCR", "orders"]).int(), 2002);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(c.cmd(&["INCR", "orders"]).int(), 2003);
}

/// `connected_clients` of `INFO clients`, asked over a new TLS connection (which counts).
fn connected(port: u16, ca: &Ca) -> i64 {
    let mut c = tls::client(port, &ca.pem(), None);
    let Value::Bulk(info) = c.cmd(&["INFO", "clients"]) else {
        panic!("INFO replies a bulk string")
    };
    let info = String::from_utf8(info).unwrap();
    let line = info
        .lines()
        .find_map(|l| l.strip_prefix("connected_clients:"))
        .unwrap();
    line.trim().parse().unwrap()
}

#[test]
fn a_tls_client_that_stops_reading_is_closed_within_the_write_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("test CA");
    let server = tls::server(dir.path(), &ca, &["--write-timeout-ms=300".into()]);
    let mut greedy = tls::connect(server.port, &ca.pem(), None).unwrap();
    // Requests whose replies fill every buffer on the way back, never read.
    let req = b"*2\r\n$4\r\nINCR\r\n$1\r\nt\r\n".repeat(20_000);
    let deadline = Instant::now() + Duration::from_secs(20);
    for _ in 0..40 {
        if greedy.write_all(&req).is_err() || Instant::now() > deadline {
            break;
        }
    }
    // The server gave up on it (the write timeout, then a bounded close): only ours is left.
    common::poll(
        Duration::from_secs(15),
        100,
        "the stalled TLS client was not closed",
        || (connected(server.port, &ca) == 1).then_some(()),
    );
}

#[test]
fn mutual_tls_lets_in_only_clients_with_a_certificate_of_the_ca() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("server CA");
    let clients = Ca::new("client CA");
    let ca_file = dir.path().join("clients-ca.pem");
    std::fs::write(&ca_file, clients.pem()).unwrap();
    let server = tls::server(dir.path(), &ca, &[arg("tls-ca-cert", &ca_file)]);
    let good = clients.issue("app", false);
    let stranger = Ca::new("stranger CA").issue("app", false);
    assert_eq!(
        tls::ping(server.port, &ca.pem(), Some(&good)).unwrap(),
        "+PONG\r\n"
    );
    assert!(tls::ping(server.port, &ca.pem(), None).is_err());
    assert!(tls::ping(server.port, &ca.pem(), Some(&stranger)).is_err());

    // `optional`: a client may come without a certificate, but not with a bad one.
    let dir2 = tempfile::tempdir().unwrap();
    let optional = tls::server(
        dir2.path(),
        &ca,
        &[
            arg("tls-ca-cert", &ca_file),
            "--tls-auth-clients=optional".into(),
        ],
    );
    assert_eq!(
        tls::ping(optional.port, &ca.pem(), None).unwrap(),
        "+PONG\r\n"
    );
    assert_eq!(
        tls::ping(optional.port, &ca.pem(), Some(&good)).unwrap(),
        "+PONG\r\n"
    );
    assert!(tls::ping(optional.port, &ca.pem(), Some(&stranger)).is_err());
}

#[test]
fn a_stalled_handshake_is_closed_after_the_request_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("test CA");
    let server = tls::server(dir.path(), &ca, &["--request-timeout-ms=300".into()]);
    let mut silent = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let start = Instant::now();
    let mut byte = [0u8; 1];
    // Closed by the server (0 bytes or a reset), not by our own 20 s read timeout.
    match silent.read(&mut byte) {
        Ok(0) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("expected the server to close the connection, got {other:?}"),
    }
    assert!(start.elapsed() < common::scaled(Duration::from_secs(15)));
    assert_eq!(
        tls::ping(server.port, &ca.pem(), None).unwrap(),
        "+PONG\r\n"
    );
}

#[test]
fn a_client_that_sends_part_of_a_tls_record_is_closed_after_the_request_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("test CA");
    let server = tls::server(dir.path(), &ca, &["--request-timeout-ms=300".into()]);
    let mut tls = tls::handshake(server.port, &ca.pem(), None).unwrap();
    // One whole request first: served.
    tls.write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
    let mut reply = [0u8; 7];
    tls.read_exact(&mut reply).unwrap();
    assert_eq!(&reply, b"+PONG\r\n");
    // Then a record of 16,000 bytes of requests, of which the socket gets all but the last 100.
    let mut record = Vec::new();
    tls.conn
        .writer()
        .write_all(&b"*1\r\n$4\r\nPING\r\n".repeat(16_000 / 14))
        .unwrap();
    while tls.conn.wants_write() {
        tls.conn.write_tls(&mut record).unwrap();
    }
    assert!(record.len() > 16_000, "{} bytes", record.len());
    tls.sock.write_all(&record[..record.len() - 100]).unwrap();
    tls.sock
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let start = Instant::now();
    // Closed by the server (EOF, a reset, or an alert then EOF), not by our 20 s read timeout;
    // nothing of the incomplete record was answered.
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tls.sock.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("expected the server to close the connection, got {e}"),
        }
    }
    assert!(start.elapsed() < common::scaled(Duration::from_secs(15)));
    let (mut rest, mut plain) = (got.as_slice(), Vec::new());
    while !rest.is_empty() {
        if tls.conn.read_tls(&mut rest).is_err() || tls.conn.process_new_packets().is_err() {
            break;
        }
        let _ = tls.conn.reader().read_to_end(&mut plain);
    }
    assert!(
        !String::from_utf8_lossy(&plain).contains("PONG"),
        "the incomplete record was answered"
    );
    assert_eq!(
        tls::ping(server.port, &ca.pem(), None).unwrap(),
        "+PONG\r\n"
    );
}

#[test]
fn sighup_reloads_the_certificate_and_a_bad_one_is_not_taken() {
    let dir = tempfile::tempdir().unwrap();
    let old_ca = Ca::new("old CA");
    let server = tls::server(dir.path(), &old_ca, &[]);
    let mut before = tls::client(server.port, &old_ca.pem(), None);
    assert_eq!(before.cmd(&["INCR", "t"]).int(), 1);

    // Rotate: a certificate from a new CA in the same files, then SIGHUP.
    let new_ca = Ca::new("new CA");
    new_ca.issue("server", true).write(dir.path(), "server");
    server.signal_only("HUP");
    common::poll(
        Duration::from_secs(10),
        50,
        "the new certificate was not taken",
        || tls::ping(server.port, &new_ca.pem(), None).ok(),
    );
    assert!(tls::ping(server.port, &old_ca.pem(), None).is_err());
    // The connection opened before goes on with its session.
    assert_eq!(before.cmd(&["INCR", "t"]).int(), 2);

    // A broken file and a key that does not match: the server keeps the certificate in use.
    std::fs::write(dir.path().join("server.pem"), "not a certificate").unwrap();
    server.signal_only("HUP");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        tls::ping(server.port, &new_ca.pem(), None).unwrap(),
        "+PONG\r\n"
    );
    let Pair { cert, .. } = new_ca.issue("server", true);
    std::fs::write(dir.path().join("server.pem"), cert).unwrap();
    server.signal_only("HUP");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        tls::ping(server.port, &new_ca.pem(), None).unwrap(),
        "+PONG\r\n"
    );
    let mut after = tls::client(server.port, &new_ca.pem(), None);
    assert_eq!(after.cmd(&["INCR", "t"]).int(), 3);
}

#[test]
fn the_metrics_port_speaks_https_with_the_same_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("test CA");
    let metrics_port = common::free_port();
    let server = tls::server(dir.path(), &ca, &[format!("--metrics-port={metrics_port}")]);
    let mut c = tls::client(server.port, &ca.pem(), None);
    assert_eq!(c.cmd(&["INCR", "t"]).int(), 1);
    let mut s = tls::connect(metrics_port, &ca.pem(), None).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut page = Vec::new();
    let _ = s.read_to_end(&mut page);
    let page = String::from_utf8_lossy(&page);
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("idforge_"), "{page}");
    // The certificate's expiry, for the alert (rcgen's default: far in the future).
    let not_after: i64 = page
        .lines()
        .find_map(|l| l.strip_prefix("idforge_tls_cert_not_after_seconds "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no certificate expiry in\n{page}"));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!(not_after > now + 365 * 86_400, "{not_after}");
    // Plain HTTP on it gets no page.
    let mut plain = TcpStream::connect(("127.0.0.1", metrics_port)).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    plain.write_all(b"GET /healthz HTTP/1.1\r\n\r\n").unwrap();
    let mut buf = Vec::new();
    let _ = plain.read_to_end(&mut buf);
    assert!(!String::from_utf8_lossy(&buf).contains("200"));
}

#[test]
fn incomplete_or_unreadable_tls_settings_stop_the_server_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("test CA");
    let (cert, key) = ca.issue("server", true).write(dir.path(), "server");
    let missing = dir.path().join("missing.pem");
    // The worst file: larger than the 1 MiB a PEM file may be (read no further than that).
    let huge = dir.path().join("huge.pem");
    std::fs::write(&huge, vec![b'A'; 1024 * 1024 + 1]).unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![arg("tls-cert", &cert)],
            "tls-cert and tls-key go together",
        ),
        (
            vec![
                arg("tls-cert", &cert),
                arg("tls-key", &key),
                "--tls-auth-clients=yes".into(),
            ],
            "needs tls-ca-cert",
        ),
        (
            vec![arg("tls-cert", &missing), arg("tls-key", &key)],
            "missing.pem",
        ),
        (
            vec![arg("tls-cert", &key), arg("tls-key", &key)],
            "no certificate",
        ),
        (
            vec![arg("tls-cert", &huge), arg("tls-key", &key)],
            "larger than",
        ),
        (
            vec![
                arg("tls-cert", &cert),
                arg("tls-key", &key),
                "--tls-auth-clients=maybe".into(),
            ],
            "not yes, no or optional",
        ),
    ];
    for (args, why) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_idforge"))
            .arg("serve")
            .arg("--port=0")
            .arg(arg("data-dir", &dir.path().join("data")))
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} started");
        assert!(stderr.contains(why), "{args:?}: {stderr}");
    }
}
