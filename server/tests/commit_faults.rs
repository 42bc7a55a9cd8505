//! A write that fails halfway must leave nothing a later read takes for committed: a server
//! killed after a full disk or a cut commit repeats no id. (The store's own side, a persist that
//! reports success on a full disk, is `store/tests/full_disk.rs`.)

use idforge_testkit as common;

use common::cut_proxy::{Cut, CutProxy};
use common::etcd::OwnEtcd;
use common::tmpfs::Tmpfs;

/// What one drawing client ends with: every id it was served (with its tag), every error.
type Drawn = (Vec<(String, i64)>, Vec<String>);

/// Clients drawing ids from a server until stopped, keeping every id served (and counting
/// refusals): `INCR` and `INCRBY` on many tags, one connection each.
struct Draw {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<Drawn>>,
}

impl Draw {
    fn start(port: u16, clients: usize, tags: usize) -> Draw {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads = (0..clients)
            .map(|c| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut client = common::Client::connect(port);
                    let (mut ids, mut errors) = (Vec::new(), Vec::new());
                    let mut k = c;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        k = (k * 7 + 3) % tags;
                        let tag = format!("t{k}");
                        let reply = if k % 2 == 0 {
                            client.cmd(&["INCR", &tag])
                        } else {
                            client.cmd(&["INCRBY", &tag, "5"])
                        };
                        match reply {
                            // INCRBY's reply is the range's last id.
                            common::Value::Int(last) => {
                                let n = if k % 2 == 0 { 1 } else { 5 };
                                ids.extend((last - n + 1..=last).map(|id| (tag.clone(), id)));
                            }
                            common::Value::Error(e) => {
                                errors.push(e);
                                std::thread::sleep(std::time::Duration::from_millis(5));
                            }
                            other => panic!("unexpected reply {other:?}"),
                        }
                    }
                    (ids, errors)
                })
            })
            .collect();
        Draw { stop, threads }
    }

    /// Stops the clients; every id they were served, and every error they got.
    fn stop(self) -> Drawn {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let (mut ids, mut errors) = (Vec::new(), Vec::new());
        for t in self.threads {
            let (i, e) = t.join().unwrap();
            ids.extend(i);
            errors.extend(e);
        }
        (ids, errors)
    }
}

/// The episode of the finding: clients draw while the data dir's disk fills up, then space
/// comes back, the server is killed (-9) and started again: no id is served twice.
fn full_disk_episode(extra: &[&str]) {
    let Some(fs) = Tmpfs::mount("16m") else {
        return;
    };
    let dir = fs.path().to_path_buf();
    let mut args = vec![
        "--alloc-timeout-ms=300",
        "--default-step=100",
        "--max-step=400",
    ];
    args.extend_from_slice(extra);
    let server = common::Server::start(&dir, &args);
    let (mut served, _) = phase(server.port, 400, 1);
    let filler = fs.fill();
    let (ids, errors) = phase_until(server.port, 400, 3, |(_, e)| !e.is_empty());
    served.extend(ids);
    assert!(
        !errors.is_empty(),
        "the full disk refused nothing: the test proves nothing"
    );
    // What clients are told while the store cannot commit.
    assert!(
        errors
            .iter()
            .all(|e| e.contains("store unavailable") || e.contains("disk is full")),
        "an unclear error on a full disk: {:?}",
        errors.iter().find(|e| !e.contains("store unavailable"))
    );
    std::fs::remove_file(filler).unwrap();
    let (ids, _) = phase(server.port, 400, 2);
    served.extend(ids);
    kill_and_check(server, 400, served);
}

/// The end of every episode: `kill -9`, a restart on the same store, clients drawing from
/// `tags` tags again; then no (tag, id) of all `served` may be there twice.
fn kill_and_check(server: common::Server, tags: usize, mut served: Vec<(String, i64)>) {
    let server = server.restart("KILL");
    let (ids, errors) = phase_until(server.port, tags, 2, |(ids, _)| !ids.is_empty());
    assert!(
        !ids.is_empty(),
        "the restarted server serves nothing: {:?}",
        errors.first()
    );
    served.extend(ids);
    assert_unique(served);
}

/// Four clients draw from `tags` tags of the server at `port` for `secs` seconds.
fn phase(port: u16, tags: usize, secs: u64) -> Drawn {
    let draw = Draw::start(port, 4, tags);
    std::thread::sleep(std::time::Duration::from_secs(secs));
    draw.stop()
}

/// A `phase` that goes on, a second at a time, until `done` holds of all that was drawn, or
/// 30 s more have passed: what a fault shows (an error, a served id after a restart) may come
/// late on a busy machine (a reconnection backing off), and the caller's assertion then says why.
fn phase_until(port: u16, tags: usize, secs: u64, done: impl Fn(&Drawn) -> bool) -> Drawn {
    let mut all = phase(port, tags, secs);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !done(&all) && std::time::Instant::now() < deadline {
        let (ids, errors) = phase(port, tags, 1);
        all.0.extend(ids);
        all.1.extend(errors);
    }
    all
}

/// No (tag, id) twice.
fn assert_unique(mut served: Vec<(String, i64)>) {
    let total = served.len();
    served.sort_unstable();
    served.dedup();
    assert_eq!(
        served.len(),
        total,
        "{} ids served twice",
        total - served.len()
    );
}

#[test]
fn a_full_disk_and_a_kill_repeat_no_id_without_a_guard() {
    full_disk_episode(&["--guard=none"]);
}

#[test]
fn a_full_disk_and_a_kill_repeat_no_id_with_the_guard() {
    full_disk_episode(&[]);
}

/// The status `GET /healthz` gets from the metrics port at `port` (0 when it cannot connect).
fn healthz(port: u16) -> u16 {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return 0;
    };
    let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(10)));
    let _ = s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let mut head = String::new();
    let _ = s.read_to_string(&mut head);
    head.split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// Issue 68, finding 4: the guard's disk (not the store's) fills up. The server serves nothing
/// the guard does not cover, says so on /healthz at every poll, logs a line or two per retry
/// (not one per tag per retry), serves again once space is back, and a SIGTERM stops it while
/// the disk is full.
#[test]
fn a_full_guard_disk_is_unhealthy_quiet_and_stoppable() {
    let Some(fs) = Tmpfs::mount("1m") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let port_file = dir.path().join("port");
    let log = dir.path().join("log");
    let metrics = common::free_port();
    let mut child = std::process::Command::new(common::server_bin())
        .arg("serve")
        .arg("--port=0")
        .arg(format!("--port-file={}", port_file.display()))
        .arg(format!("--data-dir={}", dir.path().join("data").display()))
        .arg(format!(
            "--guard={}",
            fs.path().join("idforge.guard").display()
        ))
        .arg(format!("--metrics-port={metrics}"))
        .args([
            "--alloc-timeout-ms=300",
            "--default-step=100",
            "--max-step=400",
        ])
        .env("IDFORGE_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let port: u16 = common::poll(
        std::time::Duration::from_secs(30),
        20,
        "the server did not start",
        || {
            std::fs::read_to_string(&port_file)
                .ok()?
                .trim()
                .parse()
                .ok()
        },
    );
    let (mut served, _) = phase(port, 50, 1);
    assert!(!served.is_empty());
    let filler = fs.fill();
    let (ids, errors) = phase_until(port, 50, 2, |(_, e)| !e.is_empty());
    served.extend(ids);
    assert!(!errors.is_empty(), "the full guard disk refused nothing");
    // Every poll says so while the guard cannot be written (a persist's retry must not pass
    // for a success).
    let lines = || std::fs::read_to_string(&log).unwrap().lines().count();
    let before = lines();
    let draw = Draw::start(port, 4, 50);
    let mut polls = Vec::new();
    for _ in 0..15 {
        polls.push(healthz(metrics));
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let (ids, _) = draw.stop();
    served.extend(ids);
    assert!(
        polls.iter().all(|&c| c == 503),
        "/healthz while the guard fails: {polls:?}"
    );
    // About 3 s of clients asking on 50 tags: a few retries, not a line per tag per retry.
    let grown = lines() - before;
    assert!(grown <= 40, "{grown} log lines in 3 s of a full guard disk");
    // Space back: the marks the store took are recorded, and the ids flow again.
    std::fs::remove_file(&filler).unwrap();
    common::poll(
        std::time::Duration::from_secs(30),
        100,
        "/healthz never said 200 after the space came back",
        || (healthz(metrics) == 200).then_some(()),
    );
    let (ids, _) = phase_until(port, 50, 1, |(ids, _)| !ids.is_empty());
    assert!(!ids.is_empty(), "nothing served after the space came back");
    served.extend(ids);
    // Full again, then SIGTERM: it stops (the release it cannot write stays a gap).
    let _filler = fs.fill();
    let (ids, _) = phase_until(port, 50, 1, |(_, e)| !e.is_empty());
    served.extend(ids);
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = common::poll(
        std::time::Duration::from_secs(30),
        50,
        "SIGTERM did not stop the server while the guard's disk was full",
        || child.try_wait().unwrap(),
    );
    assert!(status.success(), "SIGTERM exit: {status:?}");
    assert_unique(served);
}

/// A server on a store (`url`, then `suffix`) reached through a proxy that cuts its connections (`cuts`, one phase
/// each): clients get errors while it does, and after recovery and a `kill -9` no id is served
/// twice.
fn cut_episode(url: &str, suffix: &str, extra: &[&str], cuts: &[Cut]) {
    let dir = tempfile::tempdir().unwrap();
    let (head, _) = url.rsplit_once(':').unwrap();
    let rest = &url[head.len() + 1..];
    let (port, path) = rest.split_once('/').unwrap_or((rest, ""));
    let proxy = CutProxy::start(port.parse().unwrap());
    let proxied = if path.is_empty() {
        format!("{head}:{}{suffix}", proxy.port)
    } else {
        format!("{head}:{}/{path}{suffix}", proxy.port)
    };
    let mut args = vec![
        format!("--store={proxied}"),
        "--alloc-timeout-ms=300".into(),
        "--default-step=100".into(),
        "--max-step=400".into(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    let server = common::Server::spawn(dir.path().to_path_buf(), args);
    let (mut served, _) = phase(server.port, 20, 1);
    for &cut in cuts {
        proxy.set(cut);
        let (ids, errors) = phase_until(server.port, 20, 2, |(_, e)| !e.is_empty());
        assert!(
            !errors.is_empty(),
            "{cut:?} refused nothing: the test proves nothing"
        );
        served.extend(ids);
    }
    proxy.set(Cut::Off);
    let (ids, _) = phase(server.port, 20, 2);
    served.extend(ids);
    kill_and_check(server, 20, served);
}

/// PostgreSQL and MariaDB: a connection cut as it sends `COMMIT` (not committed), and one cut
/// after (committed, unknown to the server).
fn sql_commit_cuts(store: common::Store, extra: &[&str]) {
    let var = store.var.expect("an external store");
    let Some(url) = common::fresh_database(var, &format!("cut{}", store.name)) else {
        return;
    };
    // In the clear, so the proxy sees the COMMIT.
    let plain = if url.starts_with("mysql") {
        "?ssl-mode=DISABLED"
    } else {
        "?sslmode=disable"
    };
    cut_episode(&url, plain, extra, &[Cut::BeforeCommit, Cut::AfterCommit]);
}

/// With the store guard (the default).
fn commits_cut_repeat_no_id(store: common::Store) {
    sql_commit_cuts(store, &[]);
}

/// Without it: the allocator's own bounds alone.
fn commits_cut_repeat_no_id_without_a_guard(store: common::Store) {
    sql_commit_cuts(store, &["--guard=none"]);
}

common::per_store!(commits_cut_repeat_no_id: postgres, mariadb);
common::per_store!(commits_cut_repeat_no_id_without_a_guard: postgres, mariadb);

/// etcd: every request's connection cut after it was sent (a transaction applied or not, the
/// server cannot know).
#[test]
fn etcd_transactions_cut_repeat_no_id() {
    let Some(url) = common::service_url("IDFORGE_TEST_ETCD_URL") else {
        return;
    };
    let prefix = format!("/{}", common::unique("cut"));
    cut_episode(&url, &prefix, &[], &[Cut::Every]);
}

/// etcd refuses the server's transactions (restarted with a request size limit that a
/// persist of many tags passes: "request is too large") until it is restarted as it was: clients
/// get errors meanwhile, and after recovery and a `kill -9` no id is served twice. (etcd's
/// space quota is no such fault: etcd 3.4 does not count puts inside nested transactions, which
/// a persist is made of, against it.)
#[test]
fn etcd_refusing_transactions_repeats_no_id() {
    let Some(mut etcd) = OwnEtcd::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = format!("--store=etcd://127.0.0.1:{}/refuse", etcd.port);
    let args = [
        &store,
        "--alloc-timeout-ms=300",
        "--default-step=100",
        "--max-step=400",
    ];
    let server = common::Server::start(dir.path(), &args);
    let (mut served, _) = phase(server.port, 400, 1);
    etcd.run(&["--max-request-bytes=300"]);
    let (ids, errors) = phase_until(server.port, 400, 3, |(_, e)| {
        e.iter().any(|e| e.contains("too large"))
    });
    assert!(
        errors.iter().any(|e| e.contains("too large")),
        "etcd refused nothing: the test proves nothing ({:?})",
        errors.first()
    );
    served.extend(ids);
    etcd.run(&[]);
    let (ids, _) = phase(server.port, 400, 2);
    served.extend(ids);
    kill_and_check(server, 400, served);
}
