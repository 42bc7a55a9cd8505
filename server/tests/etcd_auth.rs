//! A store on an etcd with authentication on (issue 68, finding 5: the `ha` overlays give etcd
//! credentials): `etcd://user:password@…` logs in and serves; no credentials or a wrong
//! password refuse the start with etcd's reason; the password shows in no message.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use idforge_testkit as common;

use common::etcd::OwnEtcd;

/// The root user's password: a `:` and an `@`, escaped in the URL.
const PASSWORD: &str = "s3cret:p@ss";
const ESCAPED: &str = "s3cret%3Ap%40ss";

/// `idforge serve` on `store`, its messages in `dir/log`.
fn serve(dir: &Path, store: &str) -> Child {
    Command::new(common::server_bin())
        .arg("serve")
        .arg("--port=0")
        .arg(format!("--port-file={}", dir.join("port").display()))
        .arg(format!("--data-dir={}", dir.join("data").display()))
        .arg(format!("--store={store}"))
        .env("IDFORGE_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("log")).unwrap())
        .spawn()
        .unwrap()
}

/// Waits for `child` to give up (bounded), and returns its messages.
fn refused(dir: &Path, mut child: Child) -> String {
    let status = common::poll(
        Duration::from_secs(60),
        50,
        "a start without valid etcd credentials did not end",
        || child.try_wait().unwrap(),
    );
    assert!(!status.success(), "it started without valid credentials");
    std::fs::read_to_string(dir.join("log")).unwrap()
}

#[test]
fn a_store_on_an_etcd_with_authentication() {
    let Some(etcd) = OwnEtcd::start() else {
        return;
    };
    let password = format!("--new-user-password={PASSWORD}");
    for args in [
        &["user", "add", "root", &password][..],
        &["user", "grant-role", "root", "root"],
        &["auth", "enable"],
    ] {
        let out = etcd.ctl(args);
        assert!(
            out.status.success(),
            "etcdctl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let port = etcd.port;

    // With the credentials: it serves, and the password is in no message.
    let dir = tempfile::tempdir().unwrap();
    let mut child = serve(
        dir.path(),
        &format!("etcd://root:{ESCAPED}@127.0.0.1:{port}/auth"),
    );
    let resp: u16 = common::poll(
        Duration::from_secs(60),
        20,
        "the server on an authenticated etcd did not start",
        || {
            assert!(child.try_wait().unwrap().is_none(), "it exited");
            std::fs::read_to_string(dir.path().join("port"))
                .ok()?
                .trim()
                .parse()
                .ok()
        },
    );
    let mut c = common::Client::connect(resp);
    // On etcd it elects itself leader first (its lease and election keys: written as root).
    let first = common::poll(
        Duration::from_secs(60),
        50,
        "the server on an authenticated etcd never served",
        || match c.cmd(&["INCR", "orders"]) {
            common::Value::Int(id) => Some(id),
            common::Value::Error(e) if e.starts_with("CLUSTERDOWN") => None,
            other => panic!("INCR: {other:?}"),
        },
    );
    assert_eq!(first, 1);
    assert_eq!(c.cmd(&["INCR", "orders"]).int(), 2);
    let info = c.cmd(&["INFO"]).text();
    let _ = child.kill();
    let _ = child.wait();
    let log = std::fs::read_to_string(dir.path().join("log")).unwrap();
    for (what, text) in [("INFO", &info), ("the log", &log)] {
        assert!(
            !text.contains(PASSWORD) && !text.contains(ESCAPED),
            "{what} shows the password: {text}"
        );
    }

    // Without credentials, and with a wrong password: no start, etcd's reason given.
    for (store, secret) in [
        (format!("etcd://127.0.0.1:{port}/auth"), None),
        (
            format!("etcd://root:wrong-pw@127.0.0.1:{port}/auth"),
            Some("wrong-pw"),
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let log = refused(dir.path(), serve(dir.path(), &store));
        println!("{store}: {log}");
        assert!(!log.trim().is_empty(), "{store}: no reason given");
        if let Some(secret) = secret {
            assert!(!log.contains(secret), "the log shows the password: {log}");
        }
    }
}
