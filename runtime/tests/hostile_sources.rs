//! Segment sources that lie or attack: the client must never repeat an id, crash, or wait past
//! `timeout_ms`. Fake RESP servers on loopback (threads here), served both as `idforge://` and
//! `redis://`; and the real Redis of `ci/services.sh` moved back with `SET`, as a Redis
//! restarted without `appendfsync always` would be (skipped when `IDFORGE_TEST_REDIS_URL` is
//! unset, unless `IDFORGE_REQUIRE_SERVICES` is set).

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use idforge::{Error, ErrorCode, Segments};
use idforge_testkit::fixed_step;

/// A fake server's behaviour.
#[derive(Clone)]
struct Script {
    /// The reply to the n-th request (from 0) of the whole server.
    reply: Arc<dyn Fn(u64) -> Vec<u8> + Send + Sync>,
    /// Pause before each byte of a reply.
    per_byte: Duration,
    /// Pause before each reply.
    per_reply: Duration,
}

impl Script {
    fn new(reply: impl Fn(u64) -> Vec<u8> + Send + Sync + 'static) -> Script {
        Script {
            reply: Arc::new(reply),
            per_byte: Duration::ZERO,
            per_reply: Duration::ZERO,
        }
    }
}

/// A RESP server on 127.0.0.1 that answers every request (one per read: the clients send one
/// command at a time) by `script`; `{port}` in a reply is its own port. Stops when the
/// returned flag is set, when the guard drops, or after 60 s.
struct Fake {
    port: u16,
    stop: Arc<AtomicBool>,
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn fake(script: Script) -> Fake {
    let stop = Arc::new(AtomicBool::new(false));
    let requests = Arc::new(AtomicU64::new(0));
    let stopping = stop.clone();
    let port = idforge_testkit::peer::loopback_peer(stop.clone(), move |mut stream, port| {
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut buf = [0u8; 4096];
        while let Ok(1..) = stream.read(&mut buf) {
            let n = requests.fetch_add(1, Ordering::SeqCst);
            let reply =
                String::from_utf8_lossy(&(script.reply)(n)).replace("{port}", &port.to_string());
            std::thread::sleep(script.per_reply);
            if script.per_byte.is_zero() {
                if stream.write_all(reply.as_bytes()).is_err() {
                    return;
                }
                continue;
            }
            for b in reply.as_bytes() {
                if stopping.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(script.per_byte);
                if stream.write_all(&[*b]).is_err() {
                    return;
                }
            }
        }
    });
    Fake { port, stop }
}

fn int(n: u64) -> Vec<u8> {
    format!(":{n}\r\n").into_bytes()
}

/// Draws ids until the first error (at most `max_ok` ids), into `ids`.
fn draw_until_error(s: &Segments, ids: &mut Vec<u64>, max_ok: usize) -> Error {
    for _ in 0..=max_ok {
        match s.next() {
            Ok(id) => ids.push(id),
            Err(e) => return e,
        }
    }
    panic!("no error after {max_ok} ids: {ids:?}");
}

/// The next id, allowing errors from fetches that were already under way (within 15 s).
fn next_eventually(s: &Segments) -> u64 {
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        match s.next() {
            Ok(id) => return id,
            Err(e) if Instant::now() < until => {
                assert_eq!(e.code(), ErrorCode::InvalidSegment, "{e}");
            }
            Err(e) => panic!("no id within 15 s: {e}"),
        }
    }
}

fn assert_unique_and_increasing(ids: &[u64]) {
    let distinct: HashSet<_> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len(), "duplicates among {ids:?}");
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "not increasing: {ids:?}"
    );
}

#[test]
fn a_source_that_repeats_or_goes_back_is_refused_and_no_id_repeats() {
    for scheme in ["idforge", "redis"] {
        // First 20 (ids 11..=20); then, while lying, 20 again (the same range) and 15 (ids
        // 6..=15, partly below); once honest, 110, 120, ...
        let lying = Arc::new(AtomicBool::new(true));
        let honest = Arc::new(AtomicU64::new(100));
        let (l, h) = (lying.clone(), honest.clone());
        let server = fake(Script::new(move |n| {
            if n == 0 {
                int(20)
            } else if l.load(Ordering::SeqCst) {
                int(if n % 2 == 1 { 20 } else { 15 })
            } else {
                int(h.fetch_add(10, Ordering::SeqCst) + 10)
            }
        }));
        let url = format!("{scheme}://127.0.0.1:{}?timeout_ms=2000", server.port);
        let s = Segments::open(&url, "liar", fixed_step(10)).unwrap();
        let mut ids = Vec::new();
        let e = draw_until_error(&s, &mut ids, 100);
        assert_eq!(e.code(), ErrorCode::InvalidSegment, "{scheme}: {e}");
        assert!(e.to_string().contains("refused"), "{e}");
        assert_eq!(ids, (11..=20).collect::<Vec<_>>(), "{scheme}");
        // Still refused while the source lies; the buffered ids are gone, nothing is repeated.
        let e = s.next().unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidSegment, "{scheme}: {e}");
        assert!(s.stats().fetch_errors >= 2, "{:?}", s.stats());

        lying.store(false, Ordering::SeqCst);
        ids.push(next_eventually(&s));
        while ids.len() < 40 {
            ids.push(s.next().unwrap());
        }
        assert_unique_and_increasing(&ids);
        assert!(ids[10] > 100, "{scheme}: {ids:?}");
    }
}

#[test]
fn generators_of_one_tag_share_the_mark_whatever_the_credentials() {
    // Every request, AUTH included, is answered 10: ids 1..=10 again and again.
    let server = fake(Script::new(|_| int(10)));
    let url = format!("redis://127.0.0.1:{}?timeout_ms=2000", server.port);
    let a = Segments::open(&url, "shared", fixed_step(10)).unwrap();
    let ids: Vec<u64> = (0..10).map(|_| a.next().unwrap()).collect();
    assert_eq!(ids, (1..=10).collect::<Vec<_>>());
    assert_eq!(a.next().unwrap_err().code(), ErrorCode::InvalidSegment);
    for other in [
        url.clone(),
        format!("redis://app:secret@127.0.0.1:{}/0", server.port),
    ] {
        let b = Segments::open(&other, "shared", fixed_step(10)).unwrap();
        let e = b.next().unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidSegment, "{other}: {e}");
    }
    // Another tag, or another database, is another counter.
    let c = Segments::open(&url, "other", fixed_step(10)).unwrap();
    assert_eq!(c.next().unwrap(), 1);
    let d = Segments::open(
        &format!("redis://127.0.0.1:{}/1", server.port),
        "shared",
        fixed_step(10),
    )
    .unwrap();
    assert_eq!(d.next().unwrap(), 1);
}

#[test]
fn a_hostile_reply_is_a_protocol_error_not_a_crash() {
    let huge_bulk = || {
        let mut r = b"$1000000000\r\n".to_vec();
        r.extend(std::iter::repeat_n(b'x', 4096));
        r
    };
    let cases: Vec<(&str, Script)> = vec![
        (
            "nests more than",
            Script::new(|_| [b"*1\r\n".repeat(10_000), b":10\r\n".to_vec()].concat()),
        ),
        ("elements", Script::new(|_| b"*4000000000\r\n".to_vec())),
        ("longer than", Script::new(move |_| huge_bulk())),
        ("without CRLF", Script::new(|_| vec![b'+'; 200_000])),
    ];
    for (why, script) in cases {
        let server = fake(script);
        for scheme in ["idforge", "redis"] {
            let url = format!("{scheme}://127.0.0.1:{}?timeout_ms=3000", server.port);
            let source = idforge::source::open(&url).unwrap();
            let e = source.fetch("t", 10).unwrap_err();
            assert_eq!(e.code(), ErrorCode::SourceUnavailable, "{url}: {e}");
            assert!(e.to_string().contains("protocol error"), "{e}");
            assert!(e.to_string().contains(why), "{e} / {why}");
            let s = Segments::open(&url, "t", fixed_step(10)).unwrap();
            assert_eq!(s.next().unwrap_err().code(), ErrorCode::SourceUnavailable);
        }
    }
}

#[test]
fn timeout_ms_bounds_the_whole_request() {
    // 300 ms a byte: 3 s for the reply, which no single read would notice.
    let trickle = Script {
        per_byte: Duration::from_millis(300),
        ..Script::new(|_| int(1_000_000))
    };
    // A redirect to itself every 400 ms: 2.4 s before the redirect limit.
    let moved = Script {
        per_reply: Duration::from_millis(400),
        ..Script::new(|_| b"-MOVED 0 127.0.0.1:{port}\r\n".to_vec())
    };
    for (name, script) in [("trickle", trickle), ("moved", moved)] {
        let server = fake(script);
        let url = format!("idforge://127.0.0.1:{}?timeout_ms=1000", server.port);
        let source = idforge::source::open(&url).unwrap();
        let started = Instant::now();
        let e = source.fetch("t", 10).unwrap_err();
        let took = started.elapsed();
        assert_eq!(e.code(), ErrorCode::Timeout, "{name}: {e}");
        assert!(e.to_string().contains("timeout_ms"), "{name}: {e}");
        // Generous: only proves the request did not run on past its deadline by whole seconds.
        assert!(
            took < idforge_testkit::scaled(Duration::from_secs(5)),
            "{name}: {took:?}"
        );
        eprintln!("{name}: TIMEOUT after {took:?} with timeout_ms=1000");
    }
}

#[test]
fn timeout_ms_bounds_connecting_to_a_silent_sql_server() {
    // Accepts connections and never says a word: the driver's handshake waits for it.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = stop.clone();
    let server = std::thread::spawn(move || {
        let mut held = Vec::new();
        let until = Instant::now() + Duration::from_secs(30);
        while !stopping.load(Ordering::Relaxed) && Instant::now() < until {
            if let Ok((stream, _)) = listener.accept() {
                held.push(stream);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    for scheme in ["postgres", "mysql"] {
        let url = format!("{scheme}://u:p@127.0.0.1:{port}/db?timeout_ms=500");
        let source = idforge::source::open(&url).unwrap();
        let started = Instant::now();
        let e = source.fetch("t", 10).unwrap_err();
        let took = started.elapsed();
        assert_eq!(e.code(), ErrorCode::Timeout, "{scheme}: {e}");
        assert!(
            took < idforge_testkit::scaled(Duration::from_secs(5)),
            "{scheme}: {took:?}"
        );
        eprintln!("{scheme}: TIMEOUT after {took:?} with timeout_ms=500");
    }
    stop.store(true, Ordering::Relaxed);
    server.join().unwrap();
}

/// One command to the (password-less) test Redis; the reply's first line.
fn redis_cmd(url: &str, args: &[&str]) -> String {
    let hostport = url
        .trim_start_matches("redis://")
        .split('/')
        .next()
        .unwrap();
    let mut stream = TcpStream::connect(hostport).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut req = format!("*{}\r\n", args.len());
    for a in args {
        req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    stream.write_all(req.as_bytes()).unwrap();
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line).unwrap();
    line
}

#[test]
fn a_real_redis_moved_back_is_refused() {
    let Some(url) = idforge_testkit::service_url("IDFORGE_TEST_REDIS_URL") else {
        return;
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let tag = format!("moved-back-{}-{nanos}", std::process::id());
    assert_eq!(redis_cmd(&url, &["SET", &tag, "1000000"]), "+OK\r\n");
    let s = Segments::open(&url, &tag, fixed_step(10)).unwrap();
    let mut ids: Vec<u64> = (0..15).map(|_| s.next().unwrap()).collect();
    assert!(ids[0] > 1_000_000, "{ids:?}");
    // The restart that lost the writes: the counter is back at 0.
    assert_eq!(redis_cmd(&url, &["SET", &tag, "0"]), "+OK\r\n");
    let e = draw_until_error(&s, &mut ids, 100);
    assert_eq!(e.code(), ErrorCode::InvalidSegment, "{e}");
    assert!(e.to_string().contains(&tag), "{e}");
    // Past the mark again (an operator's fix): ids flow, above everything taken.
    assert_eq!(redis_cmd(&url, &["SET", &tag, "2000000"]), "+OK\r\n");
    let first = next_eventually(&s);
    assert!(first > 2_000_000, "{first}");
    ids.push(first);
    ids.extend((0..20).map(|_| s.next().unwrap()));
    assert_unique_and_increasing(&ids);
    redis_cmd(&url, &["DEL", &tag]);
}
