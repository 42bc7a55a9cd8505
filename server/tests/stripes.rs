//! Striped servers (`--stripe K/N`), each on its own store, and clients that use any live one
//! (`idforge://a,b?mode=any`): disjoint ids with no election, through `kill -9`s of either.

use idforge_testkit as common;

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Server, Value};
use idforge::{SegmentOptions, Segments};

/// Ids per stripe block in these tests: small, so ranges cross blocks often.
const BLOCK: i64 = 2_000;
/// Set in the client processes these tests start: `URL OUT STOP`.
const CHILD: &str = "IDFORGE_TEST_STRIPE_CLIENT";
const CLIENTS: usize = 4;
const THREADS: usize = 2;

/// One client process: `THREADS` threads draw from one `Segments` (`timeout` 2 s) until the
/// file `stop` appears (or 60 s pass); writes its ids to `out` and each failed call to stderr.
fn client(args: &str) -> ! {
    let mut parts = args.split(' ');
    let (url, out, stop) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap().to_owned(),
    );
    let options = SegmentOptions {
        step: 100,
        max_step: 1_000,
        timeout: Duration::from_secs(2),
        ..Default::default()
    };
    let segments = Arc::new(Segments::open(url, "orders", options).unwrap());
    let until = Instant::now() + Duration::from_secs(60);
    let threads = common::draw_threads(&segments, THREADS, move || {
        !Path::new(&stop).exists() && Instant::now() < until
    });
    // A client switches servers, so its ids need not go up across stripes.
    common::finish_drawing_child(threads, out, false)
}

/// Servers `0/N` … `N-1/N` on fixed ports, server K on `stores[K]` (`None`: its own SQLite).
fn stripes(dir: &Path, stores: &[Option<String>]) -> Vec<Server> {
    let n = stores.len();
    stores
        .iter()
        .enumerate()
        .map(|(k, store)| {
            let sub = dir.join(format!("s{k}"));
            std::fs::create_dir_all(&sub).unwrap();
            let mut args = vec![
                format!("--port={}", common::free_port()),
                format!("--stripe={k}/{n}"),
                format!("--stripe-block={BLOCK}"),
                "--default-step=500".into(),
            ];
            args.extend(store.iter().map(|url| format!("--store={url}")));
            Server::spawn(sub, args)
        })
        .collect()
}

/// Ranges of 10 ids, so a test meets every server within a few hundred calls; 2 s calls.
fn small_steps() -> SegmentOptions {
    SegmentOptions {
        step: 10,
        max_step: 10,
        timeout: Duration::from_secs(2),
        ..Default::default()
    }
}

/// Which stripe of `n` an id is in.
fn stripe_of(id: u64, n: u64) -> u64 {
    (id - 1) / BLOCK as u64 % n
}

/// `CLIENTS` processes x `THREADS` threads draw through `mode=any` while the servers are
/// `kill -9`ed and restarted 5 times, in turn: no call fails, no id repeats, every server
/// served, and each id is of a stripe whose server could hand it out.
fn draw_through_kills(test: &str, stores: Vec<Option<String>>) {
    let dir = tempfile::tempdir().unwrap();
    let mut servers = stripes(dir.path(), &stores);
    let hosts: Vec<String> = servers
        .iter()
        .map(|s| format!("127.0.0.1:{}", s.port))
        .collect();
    let url = format!("idforge://{}?mode=any", hosts.join(","));
    let stop = dir.path().join("stop");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let out = dir.path().join(format!("ids-{i}"));
            let child = Command::new(&exe)
                .args(["--exact", "--nocapture", test])
                .env(CHILD, format!("{url} {} {}", out.display(), stop.display()))
                .spawn()
                .unwrap();
            (child, out)
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1_000));
    for round in 0..5 {
        let k = round % servers.len();
        let killed = servers.remove(k);
        servers.insert(k, killed.restart("KILL"));
        std::thread::sleep(Duration::from_millis(1_000));
    }
    std::fs::write(&stop, b"").unwrap();
    let (mut seen, mut per_stripe) = (HashSet::new(), vec![0usize; servers.len()]);
    for (mut child, out) in children {
        assert!(child.wait().unwrap().success(), "a client's call failed");
        for line in std::fs::read_to_string(&out).unwrap().lines() {
            let id: u64 = line.parse().unwrap();
            assert!(seen.insert(id), "{id} twice");
            per_stripe[stripe_of(id, servers.len() as u64) as usize] += 1;
        }
    }
    assert!(per_stripe.iter().all(|&n| n > 0), "{per_stripe:?}");
    eprintln!(
        "{} ids from {CLIENTS} processes x {THREADS} threads through 5 kill -9s, 0 failed calls, \
         0 duplicates; per stripe: {per_stripe:?}",
        seen.len()
    );
}

#[test]
fn two_sqlite_stripes_through_kill_9s() {
    if let Ok(args) = std::env::var(CHILD) {
        client(&args);
    }
    draw_through_kills("two_sqlite_stripes_through_kill_9s", vec![None, None]);
}

#[test]
fn three_stripes_on_postgres_mariadb_and_sqlite_through_kill_9s() {
    if let Ok(args) = std::env::var(CHILD) {
        client(&args);
    }
    let Some(pg) = common::fresh_database("IDFORGE_TEST_POSTGRES_URL", "stripes") else {
        return;
    };
    let Some(my) = common::fresh_database("IDFORGE_TEST_MYSQL_URL", "stripes") else {
        return;
    };
    draw_through_kills(
        "three_stripes_on_postgres_mariadb_and_sqlite_through_kill_9s",
        vec![Some(pg), Some(my), None],
    );
}

/// `idforge serve` on `dir` with `args` that must refuse to start: its stderr.
fn refused(dir: &Path, args: &[&str]) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_idforge"))
        .args(["serve", "--port=0"])
        .arg(format!("--data-dir={}", dir.join("data").display()))
        .args(args)
        .env("IDFORGE_LOG", "off")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Bounded: a server that did start is stopped, and the test fails.
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("started with {args:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success(), "started with {args:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_store_keeps_its_stripe_and_refuses_servers_of_another() {
    let dir = tempfile::tempdir().unwrap();
    let lease = |c: &mut common::Client| {
        let grant = c
            .cmd(&["IDF.WORKER", "ACQUIRE", "svc", "600000"])
            .into_array();
        grant[0].int()
    };
    // A store used without stripes is taken over only when asked: its ids so far stay below
    // the stripe's, and its live worker leases stay held.
    let mut plain = Server::start(dir.path(), &[]);
    let mut c = plain.client();
    let before = c.cmd(&["INCRBY", "t", "1500"]).int();
    assert_eq!((lease(&mut c), lease(&mut c)), (0, 1));
    plain.signal("TERM");
    let e = refused(dir.path(), &["--stripe=1/2", "--stripe-block=1000"]);
    assert!(e.contains("--stripe-takeover"), "{e}");
    let takeover = ["--stripe=1/2", "--stripe-block=1000", "--stripe-takeover"];
    let mut one = Server::start(dir.path(), &takeover);
    let mut c = one.client();
    let after = c.cmd(&["INCR", "t"]).int();
    assert!(after > before, "{after} <= {before}");
    assert_eq!((after - 1) / 1000 % 2, 1, "{after} is stripe 1's");
    assert_eq!(lease(&mut c), 3, "worker 1 is still leased");
    one.signal("TERM");
    for (args, why) in [
        (
            &["--stripe=0/2", "--stripe-block=1000"][..],
            "holds stripe 1/2/1000",
        ),
        (
            &["--stripe=1/3", "--stripe-block=1000"],
            "holds stripe 1/2/1000",
        ),
        (&["--stripe=1/2"], "holds stripe 1/2/1000"),
        (&[], "without --stripe"),
        (
            &["--stripe=0/2", "--stripe-block=1000", "--stripe-takeover"],
            "holds stripe 1/2/1000",
        ),
    ] {
        let e = refused(dir.path(), args);
        assert!(e.contains(why), "{args:?}: {e}");
    }
    // The runtime's SQL sources refuse a striped store (its marks are positions, not ids).
    let db = format!("sqlite://{}/data/idforge.db", dir.path().display());
    let options = SegmentOptions {
        timeout: Duration::from_secs(2),
        ..Default::default()
    };
    let e = Segments::open(&db, "t", options)
        .unwrap()
        .next()
        .unwrap_err();
    assert!(e.to_string().contains("striped idforge server"), "{e}");
    // The same settings start again, and go on above what was handed out.
    let again = Server::start(dir.path(), &["--stripe=1/2", "--stripe-block=1000"]);
    assert!(again.client().cmd(&["INCR", "t"]).int() > after);
}

#[test]
fn a_striped_server_hands_out_its_blocks_only() {
    let (_dir, server) =
        Server::start_fresh(&["--stripe=1/2", "--stripe-block=10", "--default-step=3"]);
    let mut c = server.client();
    // Stripe 1 of 2, blocks of 10: 11-20, 31-40, 51-60, …
    assert_eq!(c.cmd(&["INCR", "t"]).int(), 11);
    assert_eq!(c.cmd(&["INCRBY", "t", "5"]).int(), 16, "12-16");
    // 17-20 cannot hold 5: the range is the next block's first 5.
    assert_eq!(c.cmd(&["INCRBY", "t", "5"]).int(), 35, "31-35");
    assert!(
        c.cmd(&["INCRBY", "t", "11"])
            .error()
            .contains("stripe block")
    );
    assert_eq!(c.cmd(&["INCRBY", "t", "10"]).int(), 60, "51-60");
    let ids: Vec<i64> = (0..30).map(|_| c.cmd(&["INCR", "t"]).int()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    assert!(ids.iter().all(|id| (id - 1) / 10 % 2 == 1), "{ids:?}");
    let last = *ids.last().unwrap();
    assert_eq!(
        c.cmd(&["GET", "t"]),
        Value::Bulk(last.to_string().into_bytes())
    );
    let info = c.cmd(&["IDF.TAG", "INFO", "t"]).into_array();
    let field = |name: &str| {
        let at = info
            .iter()
            .position(|v| *v == Value::Bulk(name.as_bytes().to_vec()))
            .unwrap();
        info[at + 1].clone()
    };
    assert_eq!(field("last"), Value::Int(last));
    assert_eq!(field("stripe"), Value::Bulk(b"1/2".to_vec()));
    let Value::Int(max_id) = field("max_id") else {
        panic!("max_id is an integer")
    };
    assert!(max_id > last && (max_id - 1) / 10 % 2 == 1, "{max_id}");
    let Value::Bulk(text) = c.cmd(&["INFO", "server"]) else {
        panic!("INFO is text")
    };
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("stripe:1/2\r\n") && text.contains("stripe_block:10\r\n"));
    // START is the first id of this stripe at or above it.
    assert_eq!(
        c.cmd(&["IDF.TAG", "CREATE", "u", "START", "25"]),
        Value::Simple("OK".into())
    );
    assert_eq!(c.cmd(&["INCR", "u"]).int(), 31);
    assert_eq!(
        c.cmd(&["IDF.TAG", "CREATE", "v", "START", "15"]),
        Value::Simple("OK".into())
    );
    assert_eq!(c.cmd(&["INCR", "v"]).int(), 15);
    // Worker leases are striped one by one: 1, 3, 5, … below MAX.
    let lease = |c: &mut common::Client| {
        let Value::Array(grant) = c.cmd(&["IDF.WORKER", "ACQUIRE", "svc", "60000", "MAX", "6"])
        else {
            panic!("a grant is an array")
        };
        grant[0].int()
    };
    let workers: Vec<i64> = (0..3).map(|_| lease(&mut c)).collect();
    assert_eq!(workers, [1, 3, 5]);
    assert!(
        c.cmd(&["IDF.WORKER", "ACQUIRE", "svc", "60000", "MAX", "6"])
            .error()
            .contains("6")
    );
}

#[test]
fn clients_refuse_servers_whose_ids_could_meet() {
    let dir = tempfile::tempdir().unwrap();
    let open = |servers: &[&Server]| {
        let hosts: Vec<String> = servers
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port))
            .collect();
        let url = format!("idforge://{}?mode=any", hosts.join(","));
        let options = small_steps();
        // A server is checked before its first range: once both were asked, calls fail (the
        // first ranges may come from the first server alone).
        let segments = Segments::open(&url, "t", options).unwrap();
        (0..1_000)
            .find_map(|_| segments.next().err())
            .expect("calls fail once both servers were asked")
    };
    let sub = |name: &str| dir.path().join(name);
    let (a, b) = (
        Server::spawn(sub("a"), vec!["--stripe=0/2".into()]),
        Server::spawn(sub("b"), vec!["--stripe=0/2".into()]),
    );
    let e = open(&[&a, &b]);
    assert_eq!(e.code(), idforge::ErrorCode::SourceUnavailable);
    assert!(e.to_string().contains("could meet"), "{e}");
    let c = Server::spawn(sub("c"), vec!["--stripe=1/3".into()]);
    let e = open(&[&a, &c]);
    assert!(e.to_string().contains("could meet"), "{e}");
    let plain = Server::spawn(sub("d"), Vec::new());
    let e = open(&[&a, &plain]);
    assert!(e.to_string().contains("not a striped"), "{e}");
}

/// Two servers of a `mode=any` URL: `a` on stripe 0/3 at a fixed port, `b` on stripe 1/3.
/// (Fields drop in order: the client, then the servers, then their folder.)
struct Restriped {
    segments: Segments,
    a: Server,
    _b: Server,
    port: u16,
    dir: tempfile::TempDir,
}

impl Restriped {
    fn new() -> Restriped {
        let dir = tempfile::tempdir().unwrap();
        let port = common::free_port();
        let a = Server::spawn(dir.path().join("a"), Self::fixed(port, 0));
        let b = Server::spawn(dir.path().join("b"), vec!["--stripe=1/3".into()]);
        let url = format!("idforge://127.0.0.1:{port},127.0.0.1:{}?mode=any", b.port);
        let segments = Segments::open(&url, "t", small_steps()).unwrap();
        Restriped {
            dir,
            port,
            a,
            _b: b,
            segments,
        }
    }

    fn fixed(port: u16, k: usize) -> Vec<String> {
        vec![format!("--port={port}"), format!("--stripe={k}/3")]
    }

    /// Another server at `a`'s address: stripe 2 of 3, on a store of its own.
    fn spawn_c(&self) -> Server {
        Server::spawn(self.dir.path().join("c"), Self::fixed(self.port, 2))
    }
}

#[test]
fn a_server_back_on_another_stripe_is_refused() {
    let mut r = Restriped::new();
    for _ in 0..200 {
        r.segments.next().unwrap();
    }
    r.a.signal("KILL");
    let _c = r.spawn_c();
    // Whichever comes first: its stripe read again (after a failure), or its first range (a
    // kept connection re-opened without a failure seen), which lies outside stripe 0. Bounded
    // in time, not in ids: beside a build, 2,000 ids once came from the buffers and the other
    // server before the client tried the address again.
    let deadline = Instant::now() + Duration::from_secs(30);
    let e = (0u64..)
        .find_map(|i| {
            if i % 1_000 == 999 {
                std::thread::sleep(Duration::from_millis(10));
            }
            assert!(
                Instant::now() < deadline,
                "refused once the client meets it"
            );
            r.segments.next().err()
        })
        .unwrap();
    let text = e.to_string();
    assert!(
        text.contains("came back on stripe") || text.contains("outside its stripe 0/3"),
        "{e}"
    );
}

/// As above, with a caller that paces its calls as a service does: the client fails on the dead
/// address first (so it reads the stripe again, and refuses it, in a background refill), and the
/// other server could serve every refill after. The refusal must still reach the caller, and
/// stay.
#[test]
fn a_refusal_reaches_a_paced_caller_and_stays() {
    let mut r = Restriped::new();
    let segments = &r.segments;
    let paced = |until: Duration| {
        let deadline = Instant::now() + until;
        while Instant::now() < deadline {
            if let Err(e) = segments.next() {
                return Some(e);
            }
            std::thread::sleep(Duration::from_micros(500));
        }
        None
    };
    assert!(paced(Duration::from_millis(300)).is_none());
    r.a.signal("KILL");
    // Ids keep coming from b while a is down.
    assert!(paced(Duration::from_millis(600)).is_none());
    let _c = r.spawn_c();
    let e = paced(Duration::from_secs(30)).expect("the refusal reaches the caller");
    assert!(e.to_string().contains("came back on stripe"), "{e}");
    for _ in 0..20 {
        let again = segments.next().expect_err("the refusal stays");
        assert_eq!(again.to_string(), e.to_string());
    }
}
