//! `idforge serve`, run as a process and driven over TCP: bad input, restarts after `kill -9`
//! and SIGTERM, auth, and the SQL stores (PostgreSQL and MariaDB when `ci/services.sh` started
//! them and exported their URLs).

use idforge_testkit as common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::{Client, Server, Value};

#[test]
fn incr_incrby_get_and_the_tag_commands() {
    let (_dir, server) = Server::start_fresh(&[]);
    let mut c = server.client();
    assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
    assert_eq!(c.cmd(&["GET", "orders"]), Value::Nil);
    assert_eq!(c.cmd(&["INCR", "orders"]).int(), 1);
    assert_eq!(c.cmd(&["incr", "orders"]).int(), 2);
    assert_eq!(c.cmd(&["INCRBY", "orders", "1000"]).int(), 1002);
    assert_eq!(c.cmd(&["GET", "orders"]), Value::Bulk(b"1002".to_vec()));
    assert_eq!(
        c.cmd(&["IDF.TAG", "CREATE", "inv", "STEP", "10", "START", "500"]),
        Value::Simple("OK".into())
    );
    assert!(
        c.cmd(&["IDF.TAG", "CREATE", "inv"])
            .error()
            .contains("exists")
    );
    // A step of 10 means a persist every few ids: still one increasing sequence.
    let ids: Vec<i64> = (0..100).map(|_| c.cmd(&["INCR", "inv"]).int()).collect();
    assert_eq!(ids, (500..600).collect::<Vec<_>>());
    let info = c.cmd(&["IDF.TAG", "INFO", "inv"]).into_array();
    assert_eq!(info[2], Value::Bulk(b"last".to_vec()));
    assert_eq!(info[3], Value::Int(599));
    assert_eq!(
        c.cmd(&["IDF.TAG", "LIST", "in*"]),
        Value::Array(vec![Value::Bulk(b"inv".to_vec())])
    );
    assert_eq!(c.cmd(&["IDF.TAG", "DROP", "inv"]), Value::Int(1));
    assert_eq!(c.cmd(&["GET", "inv"]), Value::Nil);
    // RESP3 after HELLO 3: nulls and maps change type.
    let hello = c.cmd(&["HELLO", "3"]).into_array();
    assert!(hello.contains(&Value::Bulk(b"idforge".to_vec())));
    assert_eq!(c.cmd(&["GET", "nothing"]), Value::Nil);
    assert_eq!(
        c.cmd(&["CLIENT", "SETNAME", "me"]),
        Value::Simple("OK".into())
    );
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]), Value::Bulk(b"me".to_vec()));
    assert_eq!(c.cmd(&["SELECT", "0"]), Value::Simple("OK".into()));
    assert_eq!(c.cmd(&["QUIT"]), Value::Simple("OK".into()));
    assert!(c.closed());
}

#[test]
fn a_data_dir_with_url_characters_keeps_its_store_in_it() {
    // `%41`, `?`, `#` and a space: pasted into the store's URL, the first named another folder
    // and the second cut the path.
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("a%41b?mode=ro#c d");
    std::fs::create_dir(&odd).unwrap();
    let server = Server::start(&odd, &[]);
    assert_eq!(server.client().cmd(&["INCRBY", "orders", "5"]).int(), 5);
    let server = server.restart("TERM");
    assert_eq!(server.client().cmd(&["INCR", "orders"]).int(), 6);
    assert!(odd.join("data").join("idforge.db").is_file());
    assert!(!dir.path().join("aAb").exists());
}

#[test]
fn server_snowflakes_and_decode() {
    let (_dir, server) = Server::start_fresh(&["--node-id=7"]);
    let mut c = server.client();
    let one = c.cmd(&["IDF.SNOWFLAKE", "events"]).int();
    let many = c
        .cmd(&["IDF.SNOWFLAKE", "events", "COUNT", "5000"])
        .into_array();
    let many: Vec<i64> = many.iter().map(Value::int).collect();
    assert_eq!(many.len(), 5000);
    assert!(one < many[0] && many.windows(2).all(|w| w[0] < w[1]));
    let fields = c.cmd(&["IDF.DECODE", &one.to_string()]).into_array();
    let node = fields
        .iter()
        .position(|v| *v == Value::Bulk(b"node".to_vec()));
    assert_eq!(fields[node.unwrap() + 1], Value::Bulk(b"7".to_vec()));
    let last = *many.last().unwrap();
    // The persisted time lead survives a crash: later ids are larger.
    let server = server.restart("KILL");
    let mut c = server.client();
    assert!(c.cmd(&["IDF.SNOWFLAKE", "events"]).int() > last);
    assert!(
        c.cmd(&["IDF.SNOWFLAKE", "events", "COUNT", "0"])
            .error()
            .starts_with("ERR")
    );
}

/// One `IDF.SNOWFLAKE` of `name`, and how long it took (printed, not asserted: the server's
/// `--alloc-timeout-ms` bounds the wait, and a longer one is a `TRYAGAIN` reply instead).
fn timed_snowflake(c: &mut Client, name: &str) -> (i64, Duration) {
    let t = std::time::Instant::now();
    let reply = c.cmd(&["IDF.SNOWFLAKE", name]);
    let took = t.elapsed();
    match reply {
        Value::Int(id) => (id, took),
        other => panic!("{name}: {other:?} after {took:?}"),
    }
}

#[test]
fn snowflake_names_serve_at_once_after_a_clean_stop_and_within_the_alloc_timeout_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    // The guard is on (the data dir's default): a clean stop brings the persisted time back in
    // the guard too, or the restart would refuse the store. A request may wait 200 ms for the
    // clock: more is refused (TRYAGAIN), so an id proves the wait stayed within it, however
    // loaded the machine (no wall-clock bound here).
    let server = Server::start(dir.path(), &["--alloc-timeout-ms=200"]);
    let mut c = server.client();
    let mut last = c.cmd(&["IDF.SNOWFLAKE", "restarts"]).int();
    // A clean stop brings the persisted time back to the last id: the next id at once (the
    // persisted time used to run a window ahead, and the first id waited for the clock).
    let mut server = server;
    for round in 0..3 {
        server = server.restart("TERM");
        let mut c = server.client();
        let (id, took) = timed_snowflake(&mut c, "restarts");
        eprintln!("after SIGTERM #{round}: next id in {took:?}");
        assert!(id > last, "ids keep increasing across a clean stop");
        let many = c
            .cmd(&["IDF.SNOWFLAKE", "restarts", "COUNT", "1000"])
            .into_array();
        last = many.last().map(Value::int).unwrap();
    }
    // A crash leaves the time persisted ahead: the name waits at most the window less the
    // lead, within the default --alloc-timeout-ms (5 s: an id, not TRYAGAIN), and never
    // answers below `last`.
    server.signal("KILL");
    let server = Server::start(dir.path(), &[]);
    let mut c = server.client();
    let (id, took) = timed_snowflake(&mut c, "restarts");
    eprintln!("after kill -9: next id in {took:?}");
    assert!(id > last);
}

#[test]
fn a_name_further_ahead_than_the_alloc_timeout_is_refused_with_tryagain() {
    let (_dir, server) = Server::start_fresh(&["--alloc-timeout-ms", "200"]);
    let mut c = server.client();
    let last = c.cmd(&["IDF.SNOWFLAKE", "ahead"]).int();
    // After a crash the persisted time is up to 4 s ahead: more than 200 ms of waiting is
    // refused at once with a typed error saying when to retry, never a stall.
    let server = server.restart("KILL");
    let mut c = server.client();
    // No wall-clock bound (a loaded machine stretches any): the reply itself shows whether the
    // server waited. Refused, it names a wait longer than the 200 ms it may wait; served, the
    // time left was within them (a slow restart used the rest).
    match c.cmd(&["IDF.SNOWFLAKE", "ahead"]) {
        Value::Int(id) => assert!(id > last),
        other => {
            let e = other.error().to_owned();
            assert!(e.starts_with("TRYAGAIN "), "{e}");
            let wait: u64 = e
                .rsplit("retry in ")
                .next()
                .and_then(|t| t.strip_suffix(" ms"))
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no wait in {e}"));
            assert!(
                wait > 200,
                "refused a wait of {wait} ms, within the timeout: {e}"
            );
        }
    }
}

#[test]
fn bad_input_gets_an_error_and_the_server_survives() {
    let (_dir, server) = Server::start_fresh(&[]);
    let mut c = server.client();
    assert_eq!(c.cmd(&["INCRBY", "t", "10"]).int(), 10);
    // Command errors: the connection stays usable.
    let table: &[(&[&str], &str)] = &[
        (
            &["INCRBY", "t", "-5"],
            "ERR the count must be a positive integer",
        ),
        (
            &["INCRBY", "t", "0"],
            "ERR the count must be a positive integer",
        ),
        (
            &["INCRBY", "t", "9223372036854775807"],
            "ERR increment would overflow",
        ),
        (
            &["INCRBY", "t", "99999999999999999999"],
            "ERR value is not an integer",
        ),
        (&["INCRBY", "t", "1.5"], "ERR value is not an integer"),
        (&["INCR", "bad tag"], "ERR invalid tag"),
        (&["INCR", ".hidden"], "ERR invalid tag"),
        (&["INCR"], "ERR wrong number of arguments for 'incr'"),
        (
            &["INCR", "t", "x"],
            "ERR wrong number of arguments for 'incr'",
        ),
        (&["GET"], "ERR wrong number of arguments for 'get'"),
        (&["DECR", "t"], "ERR unknown command 'DECR'"),
        (&["SELECT", "1"], "ERR DB index is out of range"),
        (&["HELLO", "4"], "NOPROTO"),
        (
            &["AUTH", "x"],
            "ERR AUTH <password> called without any password",
        ),
        (
            &["IDF.TAG", "CREATE", "n", "STEP", "0"],
            "ERR STEP must be between",
        ),
        (&["IDF.TAG", "FROB"], "ERR unknown subcommand"),
        (
            &["IDF.SNOWFLAKE", "s", "COUNT", "10001"],
            "ERR COUNT must be between",
        ),
        (&["IDF.DECODE", "zz!"], "ERR not a snowflake"),
        (&["IDF.DECODE", "nope"], "ERR not a snowflake"),
        // A snowflake's one text: a leading zero is another spelling, refused.
        (&["IDF.DECODE", "007"], "ERR invalid decimal: leading zero"),
    ];
    for (args, want) in table {
        let reply = c.cmd(args);
        assert!(reply.error().starts_with(want), "{args:?}: {reply:?}");
    }
    assert_eq!(
        c.cmd(&["INCR", "t"]).int(),
        11,
        "no id was taken by the errors"
    );
    // Protocol errors: an error reply, then the connection closes; the server carries on.
    let framing: &[&[u8]] = &[
        b"*1\r\n$99999999\r\n",
        b"*x\r\n",
        b"*-5\r\n",
        b"*2\r\n$4\r\nINCR\r\n$3\r\nabcde\r\n",
        b"*1\r\n:5\r\n",
        &[b'A'; 70 * 1024],
    ];
    for raw in framing {
        let mut bad = server.client();
        bad.send_raw(raw);
        let reply = bad.read();
        assert!(reply.error().starts_with("ERR Protocol error"), "{reply:?}");
        assert!(bad.closed());
    }
    // A bulk string split across many writes is still one request.
    let mut slow = server.client();
    for b in b"*2\r\n$4\r\nINCR\r\n$1\r\nt\r\n" {
        slow.send_raw(&[*b]);
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(slow.read().int(), 12);
    assert_eq!(c.cmd(&["INCR", "t"]).int(), 13);
}

#[test]
fn no_duplicates_after_kill_9_and_no_gap_after_sigterm() {
    let (_dir, server) = Server::start_fresh(&["--default-step=100"]);
    let mut c = server.client();
    let mut last = 0;
    for _ in 0..250 {
        last = c.cmd(&["INCR", "orders"]).int();
    }
    assert_eq!(last, 250);
    let server = server.restart("KILL");
    let mut c = server.client();
    let after_crash = c.cmd(&["INCR", "orders"]).int();
    assert!(after_crash > last, "{after_crash} after {last}");
    let last = c.cmd(&["INCRBY", "orders", "5000"]).int();
    // A clean stop gives back the unused cache: the next id follows on.
    let server = server.restart("TERM");
    let mut c = server.client();
    assert_eq!(c.cmd(&["INCR", "orders"]).int(), last + 1);
}

#[test]
fn auth_users_and_permissions() {
    let (_dir, server) = Server::start_fresh(&["--requirepass=sekret", "--metrics-port=0"]);
    let mut c = server.client();
    assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
    assert!(c.cmd(&["INCR", "t"]).error().starts_with("NOAUTH"));
    assert!(c.cmd(&["AUTH", "wrong"]).error().starts_with("WRONGPASS"));
    assert_eq!(c.cmd(&["AUTH", "sekret"]), Value::Simple("OK".into()));
    assert_eq!(c.cmd(&["INCR", "orders:eu"]).int(), 1);
    let ok = Value::Simple("OK".into());
    assert_eq!(
        c.cmd(&["IDF.USER", "SET", "app", "pw1", "alloc:orders*"]),
        ok
    );
    assert_eq!(c.cmd(&["IDF.USER", "SET", "viewer", "pw2", "read:*"]), ok);
    assert!(
        c.cmd(&["IDF.USER", "SET", "x", "pw", "write:*"])
            .error()
            .starts_with("ERR bad permission")
    );

    let mut app = server.client();
    assert!(
        app.cmd(&["AUTH", "app", "pw2"])
            .error()
            .starts_with("WRONGPASS")
    );
    let Value::Array(_) = app.cmd(&["HELLO", "3", "AUTH", "app", "pw1"]) else {
        panic!("HELLO with AUTH")
    };
    assert_eq!(app.cmd(&["INCR", "orders:eu"]).int(), 2);
    assert!(app.cmd(&["INCR", "users"]).error().starts_with("NOPERM"));
    assert!(
        app.cmd(&["IDF.TAG", "DROP", "orders:eu"])
            .error()
            .starts_with("NOPERM")
    );
    assert!(app.cmd(&["IDF.USER", "LIST"]).error().starts_with("NOPERM"));

    let mut viewer = server.client();
    assert_eq!(viewer.cmd(&["AUTH", "viewer", "pw2"]), ok);
    assert_eq!(
        viewer.cmd(&["GET", "orders:eu"]),
        Value::Bulk(b"2".to_vec())
    );
    assert!(
        viewer
            .cmd(&["INCR", "orders:eu"])
            .error()
            .starts_with("NOPERM")
    );

    // Users live in the store: they survive a restart.
    let server = server.restart("TERM");
    let mut app = server.client();
    assert_eq!(app.cmd(&["AUTH", "app", "pw1"]), ok);
    assert_eq!(app.cmd(&["INCR", "orders:eu"]).int(), 3);
    let mut admin = server.client();
    assert_eq!(admin.cmd(&["AUTH", "default", "sekret"]), ok);
    assert_eq!(admin.cmd(&["IDF.USER", "DEL", "app"]), Value::Int(1));
    let mut gone = server.client();
    assert!(
        gone.cmd(&["AUTH", "app", "pw1"])
            .error()
            .starts_with("WRONGPASS")
    );
}

#[test]
fn the_users_always_keep_an_admin() {
    // Without --requirepass, users are the only way in once one exists: a change that left users
    // but no admin would lock every client out of IDF.USER for good.
    let (_dir, server) = Server::start_fresh(&[]);
    let ok = Value::Simple("OK".into());
    let mut c = server.client();
    let first = c.cmd(&["IDF.USER", "SET", "app", "pw", "alloc:orders"]);
    assert!(
        first
            .error()
            .starts_with("ERR the first user must be an admin"),
        "{first:?}"
    );
    // Refused, so auth is still off.
    assert_eq!(c.cmd(&["INCR", "orders"]).int(), 1);
    assert_eq!(c.cmd(&["IDF.USER", "SET", "root", "rootpw", "admin"]), ok);

    let mut root = server.client();
    assert_eq!(root.cmd(&["AUTH", "root", "rootpw"]), ok);
    assert_eq!(
        root.cmd(&["IDF.USER", "SET", "app", "pw", "alloc:orders"]),
        ok
    );
    // The last admin is neither deleted nor demoted while other users remain.
    let del = root.cmd(&["IDF.USER", "DEL", "root"]);
    assert!(del.error().contains("'root' is the last admin"), "{del:?}");
    let demote = root.cmd(&["IDF.USER", "SET", "root", "rootpw", "read:*"]);
    assert!(
        demote.error().contains("'root' is the last admin"),
        "{demote:?}"
    );
    let mut app = server.client();
    assert_eq!(app.cmd(&["AUTH", "app", "pw"]), ok);
    assert_eq!(app.cmd(&["INCR", "orders"]).int(), 2);
    // Once another admin exists, the first may go; that one manages the users.
    assert_eq!(root.cmd(&["IDF.USER", "SET", "ops", "opspw", "admin"]), ok);
    assert_eq!(root.cmd(&["IDF.USER", "DEL", "root"]), Value::Int(1));
    let mut ops = server.client();
    assert_eq!(ops.cmd(&["AUTH", "ops", "opspw"]), ok);
    assert!(
        ops.cmd(&["IDF.USER", "DEL", "ops"])
            .error()
            .contains("last admin")
    );
    // Without other users, the last one may go: auth is off again, as on a fresh server.
    assert_eq!(ops.cmd(&["IDF.USER", "DEL", "app"]), Value::Int(1));
    assert_eq!(ops.cmd(&["IDF.USER", "DEL", "ops"]), Value::Int(1));
    let mut anyone = server.client();
    assert_eq!(anyone.cmd(&["INCR", "orders"]).int(), 3);
}

/// GET `path` on the metrics port; (status line, body). The port closes the connection after
/// one answer (or this read would not end).
fn http_get(port: u16, path: &str) -> (String, String) {
    let text = http_raw(port, &format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n")).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_owned(), body.to_owned())
}

/// `request` as written, on the metrics port: everything read until the server closes.
fn http_raw(port: u16, request: &str) -> std::io::Result<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))?;
    s.write_all(request.as_bytes())?;
    let mut text = String::new();
    s.read_to_string(&mut text)?;
    Ok(text)
}

#[test]
fn metrics_and_health_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let metrics_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let server = Server::start(
        dir.path(),
        &[&format!("--metrics-port={metrics_port}"), "--metrics-tags"],
    );
    let mut c = server.client();
    c.cmd(&["INCRBY", "orders", "5"]);
    c.cmd(&["NOPE"]);
    c.cmd(&["IDF.WORKER", "ACQUIRE", "svc", "60000"]);
    let (status, body) = http_get(metrics_port, "/metrics");
    assert_eq!(status, "HTTP/1.1 200 OK");
    for want in [
        "idforge_requests_total{command=\"incrby\"} 1",
        "idforge_errors_total{kind=\"usage\"} 1",
        "idforge_ids_allocated_total 5",
        "idforge_tag_cached_ids{tag=\"orders\"}",
        "idforge_persist_seconds_count",
        // The state the alert rules read: a lone server serves, its store is sound.
        "idforge_serving 1",
        "idforge_elected 0",
        "idforge_store_behind_guard 0",
        "idforge_persist_failing 0",
        "idforge_worker_leases 1",
        "idforge_worker_leases_limit 65536",
        "idforge_worker_leases_service_max 1",
        "idforge_worker_leases_service_limit 16384",
    ] {
        assert!(body.contains(want), "{want} missing:\n{body}");
    }
    let highest: i64 = body
        .lines()
        .find_map(|l| l.strip_prefix("idforge_tag_highest_id "))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no idforge_tag_highest_id in\n{body}"));
    assert!((5..=1_000_000).contains(&highest), "{highest}");
    assert!(!body.contains("idforge_tls_cert"), "no expiry without TLS");
    assert_eq!(
        http_get(metrics_port, "/healthz"),
        ("HTTP/1.1 200 OK".into(), "ok\n".into())
    );
    assert_eq!(http_get(metrics_port, "/nope").0, "HTTP/1.1 404 Not Found");
    // The query string is not part of the path.
    assert_eq!(http_get(metrics_port, "/healthz?x=1").1, "ok\n");
    let post = "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n";
    let answer = http_raw(metrics_port, post).unwrap();
    assert!(
        answer.starts_with("HTTP/1.1 405 Method Not Allowed"),
        "{answer}"
    );
    // A head past 8 KiB is refused (431), or its connection closed before the answer arrives.
    let big = format!(
        "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: {}\r\n\r\n",
        "a".repeat(9000)
    );
    if let Ok(answer) = http_raw(metrics_port, &big) {
        assert!(
            answer.is_empty() || answer.starts_with("HTTP/1.1 431 "),
            "{answer}"
        );
    }
}

#[test]
fn unknown_tags_are_refused_without_auto_create() {
    let (_dir, server) = Server::start_fresh(&["--auto-create=false"]);
    let mut c = server.client();
    assert!(
        c.cmd(&["INCR", "nope"])
            .error()
            .starts_with("ERR no such tag 'nope'")
    );
    c.cmd(&["IDF.TAG", "CREATE", "yes"]);
    assert_eq!(c.cmd(&["INCR", "yes"]).int(), 1);
}

/// The same restart checks on an external store, when its URL is exported (`ci/services.sh`).
fn sql_store_round_trip(var: &str) {
    let Some(url) = common::service_url(var) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A tag name of its own per run: the database outlives the test.
    let tag = format!("t{}", std::process::id());
    let store = format!("--store={url}");
    let server = Server::start(dir.path(), &[&store, "--default-step=50"]);
    let mut c = server.client();
    let mut last = 0;
    for _ in 0..120 {
        let id = c.cmd(&["INCR", &tag]).int();
        assert!(id > last);
        last = id;
    }
    let server = server.restart("KILL");
    let mut c = server.client();
    let id = c.cmd(&["INCR", &tag]).int();
    assert!(id > last, "{id} after {last}");
    let last = c.cmd(&["INCRBY", &tag, "1000"]).int();
    let server = server.restart("TERM");
    let mut c = server.client();
    assert_eq!(c.cmd(&["INCR", &tag]).int(), last + 1);
    assert_eq!(c.cmd(&["IDF.TAG", "DROP", &tag]), Value::Int(1));
}

#[test]
fn postgres_store() {
    sql_store_round_trip("IDFORGE_TEST_POSTGRES_URL");
}

#[test]
fn mysql_store() {
    sql_store_round_trip("IDFORGE_TEST_MYSQL_URL");
}

#[test]
fn one_thread_serves_and_verifies_passwords_off_the_loop() {
    // `--threads 1` runs on tokio's current-thread scheduler; argon2 still runs on the blocking
    // pool.
    let (_dir, server) = Server::start_fresh(&["--threads=1", "--requirepass=pw"]);
    let mut c = server.client();
    assert!(c.cmd(&["INCR", "t"]).error().starts_with("NOAUTH"));
    assert_eq!(c.cmd(&["AUTH", "pw"]), Value::Simple("OK".into()));
    assert_eq!(
        c.cmd(&["IDF.USER", "SET", "u", "secret", "admin"]),
        Value::Simple("OK".into())
    );
    let mut d = server.client_as(&["u", "secret"]);
    assert_eq!(d.cmd(&["INCR", "t"]).int(), 1);
    assert_eq!(c.cmd(&["INCRBY", "t", "10"]).int(), 11);
}

/// CPU time (user + system, in clock ticks) the process `pid` has used.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name (in parentheses, which may hold spaces).
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn one_thread_busy_polls_only_after_requests() {
    // `--threads 1` polls for requests for a while after each one instead of sleeping; past that
    // window an idle server must use (almost) no CPU, whatever the window.
    let (_dir, mut server) = Server::start_fresh(&["--threads=1", "--busy-poll-us=20000"]);
    let mut c = server.client();
    for i in 1..=2000 {
        assert_eq!(c.cmd(&["INCR", "t"]).int(), i);
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let pid = server.child.id();
    let before = cpu_ticks(pid);
    std::thread::sleep(std::time::Duration::from_secs(1));
    let idle = cpu_ticks(pid) - before;
    // A poller that never stopped would use ~100 ticks (a whole core) in that second.
    assert!(idle < 20, "idle server used {idle} ticks in 1 s");
    // And it still answers at once, then stops cleanly on SIGTERM.
    assert_eq!(c.cmd(&["INCR", "t"]).int(), 2001);
    drop(c);
    server.signal("TERM");
}

#[test]
fn a_log_written_to_a_file_has_no_colour_codes() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("serve.log");
    let port_file = dir.path().join("port");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_idforge"))
        .args(["serve", "--port=0"])
        .arg(format!("--port-file={}", port_file.display()))
        .arg(format!("--data-dir={}", dir.path().join("data").display()))
        .env("IDFORGE_LOG", "info")
        .env_remove("NO_COLOR")
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !port_file.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(child.wait().unwrap().success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("INFO"), "{text}");
    assert!(!text.contains('\x1b'), "colour codes in a file: {text:?}");
}
