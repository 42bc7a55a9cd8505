//! Leased snowflake generators against hosts' clocks that disagree: a fake `IDF.WORKER` server
//! on loopback (a thread here) grants node id 0 with a chosen time floor and server clock, so
//! the generator's side can be checked exactly: it waits for a floor within its budget, fails
//! with `CLOCK_BEHIND` past it, refuses (and gives back) a lease from a server whose clock is
//! too far from its own, and never holds a lease past the server's end.

use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use idforge::{Clock, ErrorCode, Layout, ManualClock, Policy, Snowflake};

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// What the fake server tells, relative to its own (real) clock at each request.
#[derive(Clone, Copy, Default)]
struct Tells {
    /// The floor, ms from now (`None`: a server before floors, which refuses `CLOCK` as
    /// wrong arguments and grants `[id, token, ttl]`).
    floor_in_ms: Option<i64>,
    /// The server's clock minus the real one.
    clock_off_ms: i64,
    /// `RENEW … CLOCK` refused as by a server before floors (a failover to one during a
    /// rolling upgrade), though the grant told the floor.
    renew_refuses_clock: bool,
    /// The grant's fields after the TTL replaced by these (how many, and their RESP).
    grant_tail: Option<(usize, &'static str)>,
    /// The server's clock in `RENEW … CLOCK` replies replaced by this.
    renew_server_ms: Option<i64>,
}

/// How a server before floors refuses `CLOCK` (its arity check).
const OLD_SERVER_REFUSAL: &str = "-ERR wrong arguments for 'idf.worker' (ACQUIRE service \
    ttl-ms [MAX n] | RENEW service id token [TIME ms] | RELEASE service id token [TIME ms] | \
    LIST service)\r\n";

/// A fake lease server; records every command it got. Stops when dropped or after 60 s.
struct Fake {
    port: u16,
    stop: Arc<AtomicBool>,
    log: Arc<Mutex<Vec<Vec<String>>>>,
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Fake {
    fn url(&self) -> String {
        format!("idforge://127.0.0.1:{}?timeout_ms=2000", self.port)
    }

    fn commands(&self, sub: &str) -> Vec<Vec<String>> {
        let log = self.log.lock().unwrap();
        log.iter().filter(|c| c[1] == sub).cloned().collect()
    }
}

/// Reads one RESP array of bulk strings.
fn read_command(r: &mut impl BufRead) -> Option<Vec<String>> {
    let mut line = String::new();
    r.read_line(&mut line).ok()?;
    let n: usize = line.trim().strip_prefix('*')?.parse().ok()?;
    let mut args = Vec::with_capacity(n);
    for _ in 0..n {
        line.clear();
        r.read_line(&mut line).ok()?;
        let len: usize = line.trim().strip_prefix('$')?.parse().ok()?;
        let mut buf = vec![0; len + 2];
        r.read_exact(&mut buf).ok()?;
        buf.truncate(len);
        args.push(String::from_utf8(buf).ok()?);
    }
    Some(args)
}

fn fake(tells: Tells) -> Fake {
    let stop = Arc::new(AtomicBool::new(false));
    let log = Arc::new(Mutex::new(Vec::new()));
    let logged = log.clone();
    let port = idforge_testkit::peer::loopback_peer(stop.clone(), move |stream, _| {
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut out = stream.try_clone().unwrap();
        let mut r = BufReader::new(stream);
        while let Some(args) = read_command(&mut r) {
            logged.lock().unwrap().push(args.clone());
            let server = now_ms() + tells.clock_off_ms;
            let floor = tells.floor_in_ms.map(|f| now_ms() + f);
            let clock = args.last().unwrap() == "CLOCK";
            let reply = match (args[1].as_str(), floor) {
                ("ACQUIRE" | "RENEW", None) if clock => OLD_SERVER_REFUSAL.to_owned(),
                ("RENEW", _) if clock && tells.renew_refuses_clock => OLD_SERVER_REFUSAL.to_owned(),
                ("ACQUIRE", Some(floor)) if clock => {
                    let (n, tail) = tells.grant_tail.map_or_else(
                        || (2, format!(":{floor}\r\n:{server}\r\n")),
                        |(n, tail)| (n, tail.to_owned()),
                    );
                    format!("*{}\r\n:0\r\n$4\r\ntokn\r\n:{}\r\n{tail}", 3 + n, args[3])
                }
                // Without CLOCK, any server grants the three fields of old.
                ("ACQUIRE", _) => format!("*3\r\n:0\r\n$4\r\ntokn\r\n:{}\r\n", args[3]),
                ("RENEW", _) if clock => format!(
                    "*3\r\n:{}\r\n:0\r\n:{}\r\n",
                    server + 10_000,
                    tells.renew_server_ms.unwrap_or(server)
                ),
                ("RENEW", _) => format!(":{}\r\n", server + 10_000),
                _ => "+OK\r\n".to_owned(),
            };
            if out.write_all(reply.as_bytes()).is_err() {
                return;
            }
        }
    });
    Fake { port, stop, log }
}

fn leased(url: &str, policy: Policy) -> idforge::Result<Snowflake> {
    Snowflake::builder(Layout::TWITTER)
        .policy(policy)
        .lease(url, "svc")
        .build()
}

fn wait(ms: u64) -> Policy {
    Policy::Wait {
        budget: Duration::from_millis(ms),
    }
}

#[test]
fn a_floor_ahead_of_the_clock_is_waited_for_within_the_budget() {
    let server = fake(Tells {
        floor_in_ms: Some(300),
        clock_off_ms: 0,
        ..Tells::default()
    });
    let g = leased(&server.url(), wait(3000)).unwrap();
    let floor = g.lease().unwrap().floor_ms();
    assert!(floor > now_ms() as u64, "the floor is ahead of this clock");
    let id = g.next().unwrap();
    assert!(
        g.decode(id).unwrap().time_ms > floor,
        "an id after the floor"
    );
    let mut more = [0u64; 1000];
    g.next_many(&mut more).unwrap();
    assert!(g.decode(more[0]).unwrap().time_ms > floor);
}

#[test]
fn a_floor_further_ahead_than_the_budget_fails_clock_behind_and_makes_no_id() {
    let server = fake(Tells {
        floor_in_ms: Some(5000),
        clock_off_ms: 0,
        ..Tells::default()
    });
    for policy in [wait(200), Policy::default(), Policy::Error] {
        let g = leased(&server.url(), policy).unwrap();
        let started = Instant::now();
        assert_eq!(g.next().unwrap_err().code(), ErrorCode::ClockBehind);
        assert_eq!(g.next_now().unwrap_err().code(), ErrorCode::ClockBehind);
        assert_eq!(
            g.next_many(&mut [0u64; 8]).unwrap_err().code(),
            ErrorCode::ClockBehind
        );
        // Refused at once: the wait could not have reached the floor.
        assert!(started.elapsed() < idforge_testkit::scaled(Duration::from_secs(4)));
    }
}

#[test]
fn a_server_clock_too_far_off_is_refused_at_acquire_and_the_lease_given_back() {
    for (off, words) in [(12_000, "behind"), (-2_000, "ahead"), (2_000, "behind")] {
        let server = fake(Tells {
            floor_in_ms: Some(-60_000),
            clock_off_ms: off,
            ..Tells::default()
        });
        let err = leased(&server.url(), Policy::default()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::ClockBehind, "{off}: {err}");
        assert!(err.to_string().contains(words), "{off}: {err}");
        assert_eq!(server.commands("RELEASE").len(), 1, "{off}: given back");
        // Allowed by the builder's bound or the URL's (with a TTL long enough for 12 s
        // behind: behind, a host is also allowed less than 90% of it).
        let g = Snowflake::builder(Layout::TWITTER)
            .lease(server.url(), "svc")
            .lease_ttl(Duration::from_secs(20))
            .lease_max_skew(Duration::from_secs(60))
            .build()
            .unwrap();
        assert!(g.lease().unwrap().clock_offset_ms().abs() > 1000);
        let url = format!("{}&max_skew_ms=60000", server.url());
        Snowflake::builder(Layout::TWITTER)
            .lease(url, "svc")
            .lease_ttl(Duration::from_secs(20))
            .build()
            .unwrap();
    }
    // Within the default second: granted.
    let server = fake(Tells {
        floor_in_ms: Some(-60_000),
        clock_off_ms: 400,
        ..Tells::default()
    });
    let g = leased(&server.url(), Policy::default()).unwrap();
    g.next().unwrap();
    assert!(server.commands("RELEASE").is_empty(), "kept");
    drop(g);
    assert_eq!(
        server.commands("RELEASE").len(),
        1,
        "given back when dropped"
    );
}

#[test]
fn a_clock_ahead_of_the_server_never_holds_past_the_servers_end() {
    let server = fake(Tells {
        floor_in_ms: Some(-60_000),
        clock_off_ms: -800,
        ..Tells::default()
    });
    let tight = Snowflake::builder(Layout::TWITTER)
        .lease(server.url(), "svc")
        .lease_ttl(Duration::from_millis(4000))
        .build()
        .unwrap();
    // 90% of the 4 s TTL is 3.6 s on this clock; the server's end, on this clock's numbers,
    // is 4 s - 0.8 s = 3.2 s from now: the holder stops there, so the server's lease end (the
    // next holder's floor) covers every id it made.
    let until = tight.lease().unwrap().valid_until_ms() as i64;
    assert!(until <= now_ms() + 3200, "{until} is past the server's end");
}

#[test]
fn a_server_without_floors_still_grants_and_renews_without_clock() {
    let server = fake(Tells {
        floor_in_ms: None,
        clock_off_ms: 0,
        ..Tells::default()
    });
    let g = Snowflake::builder(Layout::TWITTER)
        .lease(server.url(), "svc")
        .lease_ttl(Duration::from_millis(300))
        .build()
        .unwrap();
    assert_eq!(g.lease().unwrap().floor_ms(), 0);
    assert_eq!(g.lease().unwrap().clock_offset_ms(), 0);
    // Asked with CLOCK, refused, asked again as before floors.
    let acquires = server.commands("ACQUIRE");
    assert_eq!(acquires.len(), 2, "{acquires:?}");
    assert_eq!(acquires[0].last().unwrap(), "CLOCK");
    assert_ne!(acquires[1].last().unwrap(), "CLOCK");
    let first = g.next().unwrap();
    std::thread::sleep(Duration::from_millis(400));
    assert!(g.next().unwrap() > first, "renewed past the first TTL");
    let renews = server.commands("RENEW");
    assert!(!renews.is_empty());
    assert!(renews.iter().all(|c| c.last().unwrap() != "CLOCK"));
}

#[test]
fn a_grant_asks_for_the_floor_and_the_clock_with_clock() {
    let server = fake(Tells {
        floor_in_ms: Some(-5_000),
        ..Tells::default()
    });
    let g = leased(&server.url(), Policy::default()).unwrap();
    let acquires = server.commands("ACQUIRE");
    assert_eq!(acquires.len(), 1);
    assert_eq!(acquires[0][2..], ["svc", "10000", "MAX", "1024", "CLOCK"]);
    let floor = g.lease().unwrap().floor_ms() as i64;
    assert!(
        (now_ms() - 6_000..now_ms() - 4_000).contains(&floor),
        "{floor}"
    );
}

#[test]
fn renewals_refused_with_clock_after_a_failover_to_an_older_server_go_on_without_it() {
    // Granted by an upgraded server (floor and clock told), renewed by one not upgraded yet,
    // which refuses CLOCK as wrong arguments.
    let server = fake(Tells {
        floor_in_ms: Some(-60_000),
        renew_refuses_clock: true,
        ..Tells::default()
    });
    let g = Snowflake::builder(Layout::TWITTER)
        .lease(server.url(), "svc")
        .lease_ttl(Duration::from_millis(300))
        .build()
        .unwrap();
    let first = g.next().unwrap();
    // Three TTLs: a renewer that kept asking with CLOCK would have lost the lease.
    std::thread::sleep(Duration::from_millis(900));
    assert!(g.next().unwrap() > first, "renewed without CLOCK");
    let renews = server.commands("RENEW");
    let with_clock = renews.iter().filter(|c| c.last().unwrap() == "CLOCK");
    assert_eq!(with_clock.count(), 1, "CLOCK dropped after one refusal");
    assert!(renews.len() >= 3, "{renews:?}");
}

#[test]
fn a_malformed_grant_is_given_back_before_the_error() {
    for (n, tail) in [
        (1, ":5\r\n"),                          // the floor without the clock
        (2, ":5\r\n:0\r\n"),                    // the server's clock 0
        (2, ":5\r\n:-9223372036854775808\r\n"), // or negative
        (2, ":-1\r\n:1700000000000\r\n"),       // a negative floor
        (2, "$1\r\nx\r\n:1700000000000\r\n"),   // not a number
    ] {
        let server = fake(Tells {
            floor_in_ms: Some(0),
            grant_tail: Some((n, tail)),
            ..Tells::default()
        });
        let err = leased(&server.url(), Policy::default()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::SourceUnavailable, "{tail:?}: {err}");
        assert!(err.to_string().contains("malformed grant"), "{err}");
        let released = server.commands("RELEASE");
        assert_eq!(released.len(), 1, "{tail:?}: the lease given back");
        assert_eq!(released[0][2..5], ["svc", "0", "tokn"]);
    }
}

#[test]
fn a_hostile_clock_in_a_renewal_breaks_nothing() {
    // RENEW … CLOCK answered with the server's clock at i64::MIN: no overflow (the renewer
    // thread would die, and the lease with it), the lease goes on.
    let server = fake(Tells {
        floor_in_ms: Some(-60_000),
        renew_server_ms: Some(i64::MIN),
        ..Tells::default()
    });
    let g = Snowflake::builder(Layout::TWITTER)
        .lease(server.url(), "svc")
        .lease_ttl(Duration::from_millis(300))
        .build()
        .unwrap();
    let first = g.next().unwrap();
    std::thread::sleep(Duration::from_millis(900));
    assert!(g.next().unwrap() > first, "still renewed");
    assert!(g.lease().unwrap().clock_offset_ms().abs() < 1000);
}

#[test]
fn a_host_behind_by_most_of_a_short_ttl_is_refused_not_lost() {
    // A 1 s TTL, this host 950 ms behind the server (within the 1 s skew), the floor at the
    // server's clock: the first id would carry a time past the lease's first end on this
    // host's clock. Refused at ACQUIRE instead, and given back.
    let server = fake(Tells {
        floor_in_ms: Some(0),
        clock_off_ms: 950,
        ..Tells::default()
    });
    let err = Snowflake::builder(Layout::TWITTER)
        .lease(server.url(), "svc")
        .lease_ttl(Duration::from_millis(1000))
        .build()
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ClockBehind, "{err}");
    assert!(
        err.to_string().contains("90% of the lease's 1000 ms TTL"),
        "{err}"
    );
    assert_eq!(server.commands("RELEASE").len(), 1);
    // The same host with a 2 s TTL is granted and makes ids at once.
    let g = Snowflake::builder(Layout::TWITTER)
        .lease(server.url(), "svc")
        .lease_ttl(Duration::from_millis(2000))
        .build()
        .unwrap();
    g.next().unwrap();
}

#[test]
fn a_clock_stepped_back_while_holding_a_lease_repeats_nothing() {
    let server = fake(Tells {
        floor_in_ms: Some(-60_000),
        clock_off_ms: 0,
        ..Tells::default()
    });
    let clock = Arc::new(ManualClock::new(now_ms() as u64));
    let g = Snowflake::builder(Layout::TWITTER)
        .policy(wait(50))
        .clock(clock.clone())
        .lease(server.url(), "svc")
        .build()
        .unwrap();
    let mut seen = std::collections::HashSet::new();
    let mut ids = vec![0u64; 4096];
    g.next_many(&mut ids).unwrap();
    seen.extend(ids.iter().copied());
    let last = *ids.last().unwrap();
    // The clock goes back 5 s: nothing can be made until it is past the last id again.
    clock.set(clock.now_ms() - 5000);
    assert_eq!(g.next().unwrap_err().code(), ErrorCode::ClockBehind);
    clock.set(g.decode(last).unwrap().time_ms + 1);
    g.next_many(&mut ids).unwrap();
    assert!(ids[0] > last);
    assert!(ids.iter().all(|id| seen.insert(*id)), "an id repeated");
}
