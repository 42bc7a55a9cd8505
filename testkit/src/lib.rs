//! What the black-box tests of the server share (its own suites, the store's, and the benches
//! that need a proxy): a RESP test client, a spawned `idforge serve`, loopback proxies that
//! delay or cut, a loopback peer that plays a server, test certificates, a small tmpfs, and the CI services' URLs.
//!
//! A test-support crate rather than files included by `#[path]`: one copy, compiled once, with
//! its own dependencies. Not published.

pub mod cut_proxy;
pub mod delay_proxy;
pub mod etcd;
pub mod peer;
#[cfg(feature = "tls")]
pub mod tls;
pub mod tmpfs;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A reply, as far as these tests need to tell replies apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// `+text`.
    Simple(String),
    /// `-text`.
    Error(String),
    /// `:n`.
    Int(i64),
    /// `$n` and its bytes.
    Bulk(Vec<u8>),
    /// `$-1`, `*-1` or RESP3's `_`.
    Nil,
    /// `*n` and its elements.
    Array(Vec<Value>),
}

impl Value {
    /// The integer; panics on any other reply.
    pub fn int(&self) -> i64 {
        match self {
            Value::Int(n) => *n,
            other => panic!("expected an integer, got {other:?}"),
        }
    }

    /// The elements of an array; panics on any other reply.
    pub fn array(&self) -> &[Value] {
        match self {
            Value::Array(items) => items,
            other => panic!("expected an array, got {other:?}"),
        }
    }

    /// The elements of an array, owned; panics on any other reply.
    pub fn into_array(self) -> Vec<Value> {
        match self {
            Value::Array(items) => items,
            other => panic!("expected an array, got {other:?}"),
        }
    }

    /// A bulk string as UTF-8 text; panics on any other reply.
    pub fn text(&self) -> String {
        match self {
            Value::Bulk(b) => String::from_utf8(b.clone()).unwrap(),
            other => panic!("expected a bulk string, got {other:?}"),
        }
    }

    /// The error's text; panics on any other reply.
    pub fn error(&self) -> &str {
        match self {
            Value::Error(e) => e,
            other => panic!("expected an error, got {other:?}"),
        }
    }
}

/// A byte stream a test client talks over: TCP, or TLS over it.
pub trait Duplex: Read + Write + Send {}
impl<T: Read + Write + Send> Duplex for T {}

/// A RESP client that sends one command and reads its reply.
pub struct Client {
    reader: BufReader<Box<dyn Duplex>>,
}

impl Client {
    /// Connects to 127.0.0.1:`port` (reads time out after 20 s).
    pub fn connect(port: u16) -> Client {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        Client::over(Box::new(stream))
    }

    /// A client on a stream already open (a TLS one, say).
    pub fn over(stream: Box<dyn Duplex>) -> Client {
        Client {
            reader: BufReader::new(stream),
        }
    }

    /// Writes bytes as they are (a half request, a bad frame).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.reader.get_mut().write_all(bytes).unwrap();
    }

    /// Sends a command as an array of bulk strings and reads its reply.
    pub fn cmd(&mut self, args: &[&str]) -> Value {
        let mut req = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            req.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
        }
        self.send_raw(&req);
        self.read()
    }

    /// Reads one reply.
    pub fn read(&mut self) -> Value {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("a reply");
        assert!(line.ends_with("\r\n"), "reply line {line:?}");
        let (kind, rest) = line.trim_end().split_at(1);
        match kind {
            "+" => Value::Simple(rest.into()),
            "-" => Value::Error(rest.into()),
            ":" => Value::Int(rest.parse().unwrap()),
            "_" => Value::Nil,
            "$" if rest == "-1" => Value::Nil,
            "$" => {
                let mut data = vec![0; rest.parse::<usize>().unwrap() + 2];
                self.reader.read_exact(&mut data).unwrap();
                data.truncate(data.len() - 2);
                Value::Bulk(data)
            }
            "*" | "%" => {
                let n: usize = rest.parse().unwrap();
                let n = if kind == "%" { 2 * n } else { n };
                Value::Array((0..n).map(|_| self.read()).collect())
            }
            _ => panic!("unexpected reply {line:?}"),
        }
    }

    /// Whether the server closed the connection.
    pub fn closed(&mut self) -> bool {
        let mut byte = [0u8; 1];
        matches!(self.reader.read(&mut byte), Ok(0) | Err(_))
    }
}

/// An `idforge serve` started by a test on a port of its own; killed when dropped.
pub struct Server {
    /// The process.
    pub child: Child,
    /// The RESP port it listens on.
    pub port: u16,
    dir: PathBuf,
    extra: Vec<String>,
}

impl Server {
    /// Starts the server with its data in `dir/data` and `extra` arguments, and waits for its
    /// port.
    pub fn start(dir: &Path, extra: &[&str]) -> Server {
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        Server::spawn(dir.to_path_buf(), extra)
    }

    /// [`Server::start`] with owned arguments.
    pub fn spawn(dir: PathBuf, extra: Vec<String>) -> Server {
        let port_file = dir.join("port");
        let _ = std::fs::remove_file(&port_file);
        // A fixed `--port=N` among the extras (to restart on the same port), else any free one.
        let any_port = if extra.iter().any(|a| a.starts_with("--port=")) {
            None
        } else {
            Some("--port=0")
        };
        let child = Command::new(server_bin())
            .arg("serve")
            .args(any_port)
            .arg(format!("--port-file={}", port_file.display()))
            .arg(format!("--data-dir={}", dir.join("data").display()))
            .args(&extra)
            .env("IDFORGE_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("idforge serve starts");
        let deadline = Instant::now() + Duration::from_secs(30);
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                if let Ok(port) = text.trim().parse() {
                    break port;
                }
            }
            assert!(Instant::now() < deadline, "the server did not start");
            std::thread::sleep(Duration::from_millis(20));
        };
        Server {
            child,
            port,
            dir,
            extra,
        }
    }

    /// A server in a fresh folder, with `extra` arguments. Bind both, in this order
    /// (`let (_dir, server) = …`), so the server stops before its folder is removed.
    pub fn start_fresh(extra: &[&str]) -> (tempfile::TempDir, Server) {
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(dir.path(), extra);
        (dir, server)
    }

    /// A new client connection to it.
    pub fn client(&self) -> Client {
        Client::connect(self.port)
    }

    /// A new client connection, logged in with `AUTH` and these arguments (a password, or a
    /// user and a password); panics unless the server says `OK`.
    pub fn client_as(&self, auth: &[&str]) -> Client {
        let mut c = self.client();
        let reply = c.cmd(&[&["AUTH"], auth].concat());
        assert_eq!(reply, Value::Simple("OK".into()), "AUTH {auth:?}");
        c
    }

    /// The `idforge://` URL of this server (what the runtime's leases and sources take).
    pub fn url(&self) -> String {
        format!("idforge://127.0.0.1:{}", self.port)
    }

    /// Sends `sig` (as `kill -SIG` names it) and waits for the exit; SIGTERM must exit cleanly.
    pub fn signal(&mut self, sig: &str) {
        self.signal_only(sig);
        let status = self.child.wait().unwrap();
        if sig == "TERM" {
            assert!(status.success(), "SIGTERM exit: {status:?}");
        }
    }

    /// Sends `sig` and does not wait (SIGSTOP, SIGCONT).
    pub fn signal_only(&self, sig: &str) {
        let status = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits until the server serves the worker `service` (on etcd it elects a leader first,
    /// and after a `kill -9` the old leader's etcd lease must run out): at most 30 s.
    pub fn wait_serving(&self, service: &str) {
        let mut c = self.client();
        poll(
            Duration::from_secs(30),
            50,
            "the server never served",
            || (!matches!(c.cmd(&["IDF.WORKER", "LIST", service]), Value::Error(_))).then_some(()),
        );
    }

    /// Stops the server with `sig` and starts it again on the same data.
    pub fn restart(mut self, sig: &str) -> Server {
        self.signal(sig);
        let (dir, extra) = (self.dir.clone(), std::mem::take(&mut self.extra));
        std::mem::forget(self);
        Server::spawn(dir, extra)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Calls `attempt` every `every_ms` until it gives `Some`, and returns that; fails the test with
/// `what` once `within` has passed (a wait that must end, bounded so a test never hangs).
pub fn poll<T>(
    within: Duration,
    every_ms: u64,
    what: &str,
    mut attempt: impl FnMut() -> Option<T>,
) -> T {
    let deadline = std::time::Instant::now() + within;
    loop {
        if let Some(done) = attempt() {
            return done;
        }
        assert!(std::time::Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(every_ms));
    }
}

/// The `idforge` binary of the build running this test: cargo puts a test binary in
/// `target/PROFILE/deps/` and the package's binaries in `target/PROFILE/` (what
/// `CARGO_BIN_EXE_idforge` names in the server's own tests). `IDFORGE_TEST_SERVER_BIN`
/// overrides it.
pub fn server_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("IDFORGE_TEST_SERVER_BIN") {
        return PathBuf::from(bin);
    }
    let exe = std::env::current_exe().expect("the test's own path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("a test binary in target/PROFILE/deps");
    let bin = profile_dir.join(format!("idforge{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{} is not built: build idforge-server first (cargo test -p idforge-server builds it)",
        bin.display()
    );
    bin
}

/// How much slower than an idle machine this one runs now: `IDFORGE_TEST_SLOWDOWN`, which
/// `ci/test.sh` measures before each step (wall time over CPU time of a short busy loop, so 2
/// when another process takes half the CPU), between 1 and 20; 1 when unset.
pub fn slowdown() -> f64 {
    std::env::var("IDFORGE_TEST_SLOWDOWN")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|f| f.is_finite())
        .map_or(1.0, |f| f.clamp(1.0, 20.0))
}

/// `base` scaled by [`slowdown`], for the few bounds a test keeps on how long something may
/// take (a refusal that must not wait out a timeout): what is fast on an idle machine is
/// proportionally slower on a loaded one, and a bound that does not follow fails there.
pub fn scaled(base: Duration) -> Duration {
    base.mul_f64(slowdown())
}

/// A loopback port nothing listens on right now (bound, then released).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Says why a test skips, on stderr, when something it needs from outside (a service, a tool)
/// is missing; with `IDFORGE_REQUIRE_SERVICES` set (CI, where every test must run) the test
/// fails instead.
pub fn skip(why: &str) {
    assert!(
        std::env::var_os("IDFORGE_REQUIRE_SERVICES").is_none(),
        "{why}, but IDFORGE_REQUIRE_SERVICES is set"
    );
    eprintln!("skipped: {why}");
}

/// The URL in `var` (exported by ci/services.sh), or `None` to [`skip`] the test.
pub fn service_url(var: &str) -> Option<String> {
    let url = std::env::var(var).ok();
    if url.is_none() {
        skip(&format!("{var} is not set (ci/services.sh sets it)"));
    }
    url
}

/// libfaketime (multi-threaded, at Debian's path): `LD_PRELOAD` it with `FAKETIME=-3600` to set
/// a child's wall clock back.
pub const FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

/// Whether [`FAKETIME`] is installed; else the test should return, [`skip`]ped.
pub fn faketime_present() -> bool {
    let present = Path::new(FAKETIME).exists();
    if !present {
        skip(&format!(
            "{FAKETIME} is missing (ci/install/install-deps.sh faketime installs it)"
        ));
    }
    present
}

/// A store a test runs on: its name (for messages) and the variable that holds its URL, `None`
/// for the embedded SQLite (always there).
#[derive(Debug, Clone, Copy)]
pub struct Store {
    /// `sqlite`, `postgres`, `mariadb` or `etcd`.
    pub name: &'static str,
    /// The variable ci/services.sh exports with the store's URL.
    pub var: Option<&'static str>,
}

impl Store {
    /// The embedded SQLite store.
    pub const fn sqlite() -> Store {
        Store {
            name: "sqlite",
            var: None,
        }
    }

    /// PostgreSQL, at `IDFORGE_TEST_POSTGRES_URL`.
    pub const fn postgres() -> Store {
        Store {
            name: "postgres",
            var: Some("IDFORGE_TEST_POSTGRES_URL"),
        }
    }

    /// MariaDB (MySQL), at `IDFORGE_TEST_MYSQL_URL`.
    pub const fn mariadb() -> Store {
        Store {
            name: "mariadb",
            var: Some("IDFORGE_TEST_MYSQL_URL"),
        }
    }

    /// etcd, at `IDFORGE_TEST_ETCD_URL`.
    pub const fn etcd() -> Store {
        Store {
            name: "etcd",
            var: Some("IDFORGE_TEST_ETCD_URL"),
        }
    }
}

/// One `#[test]` per store for a test written as `fn name(store: Store)`:
/// `per_store!(name: sqlite, postgres, mariadb, etcd);` makes the module `name` with the tests
/// `name::sqlite`, `name::postgres`, … (a store whose variable is unset skips, as
/// [`service_url`] says).
#[macro_export]
macro_rules! per_store {
    ($test:ident: $($store:ident),+ $(,)?) => {
        mod $test {
            $(
                #[test]
                fn $store() {
                    super::$test($crate::Store::$store());
                }
            )+
        }
    };
}

/// `--store=URL` of the external store in `var` (etcd: under a key prefix of its own, named
/// after `what`), `Some(None)` for the embedded SQLite (`var` is `None`), `None` to skip.
pub fn store_arg(var: Option<&str>, what: &str) -> Option<Option<String>> {
    let Some(var) = var else {
        return Some(None);
    };
    let url = service_url(var)?;
    Some(Some(if url.starts_with("etcd://") {
        format!("--store={url}/{}", unique(what))
    } else {
        format!("--store={url}")
    }))
}

/// A server in a fresh folder, on the store of `var` as [`store_arg`] names it (the embedded
/// SQLite for `None`), with `extra` arguments; `None` to skip. Keep the folder as long as the
/// server: bind them in this order (`let Some((_dir, server)) = …`), so the server stops first.
pub fn server_on_store(
    var: Option<&str>,
    what: &str,
    extra: &[&str],
) -> Option<(tempfile::TempDir, Server)> {
    let store = store_arg(var, what)?;
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    args.extend(store);
    let server = Server::spawn(dir.path().to_path_buf(), args);
    Some((dir, server))
}

/// `what` made unique to this process and moment (etcd prefixes, lease services).
pub fn unique(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{what}-{}-{nanos}", std::process::id())
}

/// Segment options with a fixed step (no dynamic step) and a 5 s timeout.
pub fn fixed_step(step: u64) -> idforge::SegmentOptions {
    idforge::SegmentOptions {
        step,
        max_step: step,
        dynamic_step: false,
        timeout: Duration::from_secs(5),
        ..Default::default()
    }
}

/// Opens a source on `url` (tag `orders`, a fixed step of 100) to `server`, draws 1000 ids (1 to
/// 1000: a fresh tag), kills the server with SIGKILL and restarts it on its port, and draws 1000
/// more: the source reconnects and nothing repeats (they go up, past the first 1000). Returns
/// the server, the source and the ids after the restart.
pub fn draw_across_a_kill_9(url: &str, server: Server) -> (Server, idforge::Segments, Vec<u64>) {
    let segments = idforge::Segments::open(url, "orders", fixed_step(100)).unwrap();
    let before: Vec<u64> = (0..1000).map(|_| segments.next().unwrap()).collect();
    assert_eq!(before, (1..=1000).collect::<Vec<_>>());
    let server = server.restart("KILL");
    let after: Vec<u64> = (0..1000).map(|_| segments.next().unwrap()).collect();
    assert!(after.windows(2).all(|w| w[0] < w[1]));
    assert!(after[0] > before[999]);
    (server, segments, after)
}

/// The end of a child process that drew ids on `threads` (each gives its ids and its failed
/// calls): each thread's ids checked to go up when `increasing`, every id written to `out` one a
/// line, each failed call to stderr; exits with 1 when a call failed, else 0.
pub fn finish_drawing_child(
    threads: Vec<std::thread::JoinHandle<(Vec<u64>, Vec<String>)>>,
    out: &str,
    increasing: bool,
) -> ! {
    let (mut all, mut failed) = (Vec::new(), Vec::new());
    for t in threads {
        let (ids, errors) = t.join().unwrap();
        assert!(
            !increasing || ids.windows(2).all(|w| w[0] < w[1]),
            "a thread's ids went back"
        );
        all.extend(ids);
        failed.extend(errors);
    }
    let text: Vec<String> = all.iter().map(u64::to_string).collect();
    std::fs::write(out, text.join("\n")).unwrap();
    for e in &failed {
        eprintln!("failed call: {e}");
    }
    std::process::exit(i32::from(!failed.is_empty()));
}

/// `threads` threads calling `segments.next()` every 200 µs while `keep_going()` holds, each
/// keeping its ids and its failed calls (a steady load, not a flood: the tests are about
/// outages).
pub fn draw_threads(
    segments: &std::sync::Arc<idforge::Segments>,
    threads: usize,
    keep_going: impl Fn() -> bool + Clone + Send + 'static,
) -> Vec<std::thread::JoinHandle<(Vec<u64>, Vec<String>)>> {
    (0..threads)
        .map(|_| {
            let (segments, keep_going) = (segments.clone(), keep_going.clone());
            std::thread::spawn(move || {
                let (mut ids, mut errors) = (Vec::new(), Vec::new());
                while keep_going() {
                    match segments.next() {
                        Ok(id) => ids.push(id),
                        Err(e) => errors.push(e.to_string()),
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
                (ids, errors)
            })
        })
        .collect()
}

/// Threads drawing from one `Segments` until stopped, keeping every id and every error.
pub struct Drawing {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<(Vec<u64>, Vec<String>)>>,
}

impl Drawing {
    /// Starts `threads` threads calling `segments.next()` at a steady pace.
    pub fn start(segments: &std::sync::Arc<idforge::Segments>, threads: usize) -> Drawing {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let threads = draw_threads(segments, threads, move || {
            !flag.load(std::sync::atomic::Ordering::Relaxed)
        });
        Drawing { stop, threads }
    }

    /// Stops the threads and checks that no call failed, each thread's ids went up and no id
    /// was drawn twice; returns how many were drawn.
    pub fn stop_and_check(self) -> usize {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let mut all = std::collections::HashSet::new();
        let mut drawn = 0;
        for thread in self.threads {
            let (ids, errors) = thread.join().unwrap();
            assert!(
                errors.is_empty(),
                "calls failed through the outage: {errors:?}"
            );
            assert!(
                ids.windows(2).all(|w| w[0] < w[1]),
                "a thread's ids went back"
            );
            drawn += ids.len();
            all.extend(ids);
        }
        assert_eq!(all.len(), drawn, "duplicates");
        drawn
    }
}

/// A new database on the PostgreSQL or MariaDB of ci/services.sh (`var` names its URL), for a
/// test whose store must be its own (a leader row, a stripe); `None` to skip the test.
#[cfg(feature = "services")]
pub fn fresh_database(var: &str, name: &str) -> Option<String> {
    let base = service_url(var)?;
    let db = format!(
        "t_{name}_{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        use sqlx::Connection;
        let create = format!("CREATE DATABASE {db}");
        if base.starts_with("mysql") {
            let mut conn = sqlx::MySqlConnection::connect(&base).await.unwrap();
            sqlx::query(&create).execute(&mut conn).await.unwrap();
        } else {
            let mut conn = sqlx::PgConnection::connect(&base).await.unwrap();
            sqlx::query(&create).execute(&mut conn).await.unwrap();
        }
    });
    let (prefix, _) = base.rsplit_once('/').unwrap();
    Some(format!("{prefix}/{db}"))
}
