//! A store that went back (a damaged write-ahead log, a deleted or emptied database, a restored
//! backup, an edited mark, another database) is refused at start with a clear message, and
//! `idforge store repair` makes the server continue above every id it handed out. Each case runs
//! the real server process on a throwaway data dir.

use idforge_testkit as common;

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Server;
use common::tmpfs::Tmpfs;

const TAGS: usize = 40;

/// Draws ids of `TAGS` tags until each handed out `rounds` INCRBY 100 ranges; the largest id
/// of each tag.
fn draw(server: &Server, rounds: usize) -> Vec<i64> {
    let mut c = server.client();
    let mut last = vec![0; TAGS];
    for _ in 0..rounds {
        for (t, l) in last.iter_mut().enumerate() {
            *l = c.cmd(&["INCRBY", &format!("t{t}"), "100"]).int();
        }
    }
    last
}

/// Runs `idforge serve` on `dir` expecting it to refuse: its stderr (bounded by a timeout).
fn refused(dir: &Path, extra: &[&str]) -> String {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_idforge"))
        .arg("serve")
        .arg("--port=0")
        .arg(format!("--data-dir={}", dir.join("data").display()))
        .args(extra)
        .env("IDFORGE_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(!status.success(), "a store that went back must be refused");
            break;
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("the server started (or hung) on a store that went back");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    err
}

fn idforge(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_idforge"))
        .args(args)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

/// After a repair the server starts, and every tag continues above the ids it handed out.
fn repaired_continues_above(dir: &Path, last: &[i64]) {
    let data = format!("--data-dir={}", dir.join("data").display());
    let (code, text) = idforge(&["store", "verify", &data]);
    assert_eq!(code, 1, "verify reports the store behind: {text}");
    assert!(text.contains("behind:"), "{text}");
    let (code, text) = idforge(&["store", "repair", &data]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("raised:"), "{text}");
    let (code, text) = idforge(&["store", "verify", &data]);
    assert_eq!(code, 0, "{text}");
    continues_above(dir, &[], last);
}

/// Removes the SQLite store's write-ahead log and shared memory in `dir` (as a copy of the
/// database file alone would be).
fn drop_log(dir: &Path) {
    for f in ["idforge.db-wal", "idforge.db-shm"] {
        let _ = std::fs::remove_file(dir.join("data").join(f));
    }
}

/// The server starts on `dir` (with `extra`), and every tag `t{i}` continues above `last[i]`.
fn continues_above(dir: &Path, extra: &[&str], last: &[i64]) {
    let server = Server::start(dir, extra);
    let mut c = server.client();
    for (t, l) in last.iter().enumerate() {
        let next = c.cmd(&["INCR", &format!("t{t}")]).int();
        assert!(next > *l, "tag t{t}: {next} after {l}: a duplicate");
    }
}

/// `store repair` of `data` (a `--data-dir=` argument) refuses to guess how far the store is
/// behind, and repairs when told (`--above` the highest id handed out).
fn repair_above(data: &str, last: &[i64]) {
    let (code, text) = idforge(&["store", "repair", data]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("--above N"), "{text}");
    let top = last.iter().max().unwrap().to_string();
    let (code, text) = idforge(&["store", "repair", data, "--above", &top]);
    assert_eq!(code, 0, "{text}");
}

#[test]
fn a_damaged_wal_after_kill_9_is_refused_then_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[]);
    let last = draw(&server, 30);
    server.signal("KILL");
    let wal = dir.path().join("data/idforge.db-wal");
    let len = std::fs::metadata(&wal).unwrap().len();
    assert!(len > 64 * 1024, "the marks are in the log: {len} bytes");
    // 4 KB of garbage in the middle: SQLite stops replaying there, as if later commits never
    // happened.
    let mut f = std::fs::OpenOptions::new().write(true).open(&wal).unwrap();
    f.seek(SeekFrom::Start(len / 2)).unwrap();
    f.write_all(&[0x5a; 4096]).unwrap();
    drop(f);
    let err = refused(dir.path(), &[]);
    assert!(err.contains("went back"), "{err}");
    assert!(err.contains("idforge store repair"), "the way out: {err}");
    repaired_continues_above(dir.path(), &last);
}

#[test]
fn a_deleted_or_emptied_database_is_refused() {
    for empty in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut server = Server::start(dir.path(), &[]);
        let last = draw(&server, 3);
        server.signal("TERM");
        let db = dir.path().join("data/idforge.db");
        drop_log(dir.path());
        if empty {
            std::fs::write(&db, b"").unwrap();
        } else {
            std::fs::remove_file(&db).unwrap();
        }
        let err = refused(dir.path(), &[]);
        assert!(err.contains("no identity"), "{err}");
        repaired_continues_above(dir.path(), &last);
    }
}

#[test]
fn a_restored_backup_is_refused_and_sigterm_leaves_a_complete_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[]);
    draw(&server, 3);
    server.signal("TERM");
    // A clean stop checkpoints: the database file alone is complete (a backup of it is whole).
    let wal = dir.path().join("data/idforge.db-wal");
    assert!(
        std::fs::metadata(&wal).map_or(0, |m| m.len()) == 0,
        "the log was emptied into the file"
    );
    let backup = dir.path().join("backup.db");
    std::fs::copy(dir.path().join("data/idforge.db"), &backup).unwrap();
    let server = Server::start(dir.path(), &[]);
    let last = draw(&server, 10);
    drop(server);
    std::fs::copy(&backup, dir.path().join("data/idforge.db")).unwrap();
    drop_log(dir.path());
    let err = refused(dir.path(), &[]);
    assert!(err.contains("tag t"), "names the tags behind: {err}");
    repaired_continues_above(dir.path(), &last);
}

#[test]
fn an_edited_mark_and_another_database_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[]);
    let last = draw(&server, 3);
    server.signal("TERM");
    let url = format!("sqlite://{}", dir.path().join("data/idforge.db").display());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        sqlx::any::install_default_drivers();
        let pool = sqlx::AnyPool::connect(&url).await.unwrap();
        sqlx::query("UPDATE leaf_alloc SET max_id = 2 WHERE biz_tag = 't7'")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    });
    let err = refused(dir.path(), &[]);
    assert!(err.contains("tag t7: max_id 2"), "{err}");
    // Another database under the same data dir's guard.
    let other = format!(
        "--store=sqlite://{}?mode=rwc",
        dir.path().join("other.db").display()
    );
    let err = refused(dir.path(), &[&other]);
    assert!(err.contains("no identity"), "{err}");
    repaired_continues_above(dir.path(), &last);
}

#[test]
fn a_damaged_or_foreign_file_is_reported_with_its_cause_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[]);
    draw(&server, 3);
    server.signal("TERM");
    let db = dir.path().join("data/idforge.db");
    let len = std::fs::metadata(&db).unwrap().len();
    let started = Instant::now();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&db)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let err = refused(dir.path(), &[]);
    assert!(
        err.contains("malformed") || err.contains("integrity"),
        "the cause, not a pool time-out: {err}"
    );
    assert!(!err.contains("timed out"), "{err}");
    std::fs::write(&db, vec![0x42u8; 8192]).unwrap();
    let err = refused(dir.path(), &[]);
    assert!(err.contains("not a database"), "{err}");
    assert!(
        started.elapsed() < common::scaled(Duration::from_secs(15)),
        "reported at once, not after a pool time-out"
    );
}

/// The guard file of a server started on `dir` (the default one in its data dir).
fn guard_of(dir: &Path) -> std::path::PathBuf {
    dir.join("data/idforge.guard")
}

#[test]
fn a_torn_last_guard_line_is_cut_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[]);
    draw(&server, 3);
    server.signal("TERM");
    let guard = guard_of(dir.path());
    let len = std::fs::metadata(&guard).unwrap().len();
    // A crash in the middle of an append.
    let tear = |g: &Path| {
        let mut f = std::fs::OpenOptions::new().append(true).open(g).unwrap();
        f.write_all(b"T 999999 t1 0a").unwrap();
    };
    tear(&guard);
    let data = format!("--data-dir={}", dir.path().join("data").display());
    let (code, text) = idforge(&["store", "verify", &data]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(&format!(
            "guard: cut a torn last line of 14 bytes at offset {len}"
        )),
        "{text}"
    );
    assert_eq!(std::fs::metadata(&guard).unwrap().len(), len);
    tear(&guard);
    let (code, text) = idforge(&["store", "repair", &data]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("guard: cut a torn last line of 14 bytes"),
        "{text}"
    );
}

#[test]
fn a_guard_with_the_remains_of_a_failed_append_is_refused_then_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[]);
    let last = draw(&server, 3);
    server.signal("TERM");
    // What a full disk left before failed appends were cut off: part of a line, and the next
    // append's first line glued to it.
    let guard = guard_of(dir.path());
    let text = std::fs::read_to_string(&guard).unwrap();
    // The line before the last (the last line: `a_damaged_last_guard_line_is_refused_not_cut`).
    let lines = text.lines().count() - 1;
    let before_last = text[..text.len() - 1].rfind('\n').unwrap();
    let at = text[..before_last].rfind('\n').unwrap() + 1;
    let damaged = format!("{}T 123456 t{}", &text[..at], &text[at..]);
    std::fs::write(&guard, &damaged).unwrap();
    let err = refused(dir.path(), &[]);
    assert!(err.contains(&format!("damaged at line {lines}")), "{err}");
    assert!(err.contains("idforge store repair"), "the way out: {err}");
    let data = format!("--data-dir={}", dir.path().join("data").display());
    let (code, text) = idforge(&["store", "verify", &data]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains(&format!(
            "guard: line {lines}: dropped 10 bytes left by a failed append"
        )),
        "{text}"
    );
    assert!(text.contains("GUARD DAMAGED"), "{text}");
    assert_eq!(
        std::fs::read_to_string(&guard).unwrap(),
        damaged,
        "verify changes nothing"
    );
    let (code, text) = idforge(&["store", "repair", &data]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("guard: rewrote"), "{text}");
    let (code, text) = idforge(&["store", "verify", &data]);
    assert_eq!(code, 0, "{text}");
    continues_above(dir.path(), &[], &last);
}

/// A bad last guard line that ends in its newline was written whole: it is damage (bit-rot, or
/// the remains of a failed append glued to an acknowledged line by an older build), refused by
/// serve and never cut by verify. Before, it was taken for a torn tail: serve and verify cut
/// it, and the newest mark was lost without a word.
#[test]
fn a_damaged_last_guard_line_is_refused_not_cut() {
    for glued in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut server = Server::start(dir.path(), &[]);
        let last = draw(&server, 3);
        server.signal("TERM");
        let guard = guard_of(dir.path());
        let text = std::fs::read_to_string(&guard).unwrap();
        let lines = text.lines().count();
        let at = text[..text.len() - 1].rfind('\n').unwrap() + 1;
        let damaged = if glued {
            format!("{}T 123456 t{}", &text[..at], &text[at..])
        } else {
            // One bit of the checksum's last digit flipped.
            let mut bytes = text.clone().into_bytes();
            let digit = bytes.len() - 2;
            bytes[digit] ^= 1;
            String::from_utf8(bytes).unwrap()
        };
        std::fs::write(&guard, &damaged).unwrap();
        let err = refused(dir.path(), &[]);
        assert!(err.contains(&format!("damaged at line {lines}")), "{err}");
        let data = format!("--data-dir={}", dir.path().join("data").display());
        let (code, text) = idforge(&["store", "verify", &data]);
        assert_eq!(code, 1, "{text}");
        assert!(!text.contains("torn"), "{text}");
        // (Or WENT BACK, when the lost line had lowered a mark on a handover.)
        assert!(
            text.contains("GUARD DAMAGED") || text.contains("WENT BACK"),
            "{text}"
        );
        assert_eq!(
            std::fs::read_to_string(&guard).unwrap(),
            damaged,
            "verify cuts nothing"
        );
        if glued {
            // The acknowledged line after the remains is kept.
            assert!(
                text.contains(&format!(
                    "guard: line {lines}: dropped 10 bytes left by a failed append"
                )),
                "{text}"
            );
            let (code, text) = idforge(&["store", "repair", &data]);
            assert_eq!(code, 0, "{text}");
            assert!(text.contains("guard: rewrote"), "{text}");
        } else {
            // Its mark is lost: the operator says how far the store may be behind.
            assert!(text.contains(&format!("guard: line {lines}: ")), "{text}");
            assert!(text.contains("the mark they held is lost"), "{text}");
            repair_above(&data, &last);
        }
        let (code, text) = idforge(&["store", "verify", &data]);
        assert_eq!(code, 0, "{text}");
        continues_above(dir.path(), &[], &last);
    }
}

/// The snowflake clocks of the SQLite store in `dir`.
fn clocks_of(dir: &Path) -> std::collections::HashMap<String, i64> {
    let url = format!("sqlite://{}", dir.join("data/idforge.db").display());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        sqlx::any::install_default_drivers();
        let pool = sqlx::AnyPool::connect(&url).await.unwrap();
        let rows: Vec<(String, i64)> = sqlx::query_as("SELECT name, time_ms FROM idforge_clock")
            .fetch_all(&pool)
            .await
            .unwrap();
        pool.close().await;
        rows.into_iter().collect()
    })
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// An emptied guard next to an older copy of the store that lacks a tag and a snowflake name
/// made since, and holds an older time for another: `repair --above N` raises what the store
/// holds (its clocks too: before, clocks were not raised at all), `--tag` and `--clock` put
/// back what it lost (before, there was no way: the lost tag started over at 1 on its first
/// use), and `--clock-above MS` names the time.
#[test]
fn repair_above_covers_the_tags_and_clocks_an_older_store_lost() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), &[]);
    draw(&server, 3);
    server.client().cmd(&["IDF.SNOWFLAKE", "sf"]).int();
    server.signal("TERM");
    let db = dir.path().join("data/idforge.db");
    let backup = dir.path().join("backup.db");
    std::fs::copy(&db, &backup).unwrap();
    let mut server = Server::start(dir.path(), &[]);
    let mut last = draw(&server, 10);
    let mut c = server.client();
    let mut late = 0;
    for _ in 0..3 {
        late = c.cmd(&["INCRBY", "late", "100"]).int();
    }
    c.cmd(&["IDF.SNOWFLAKE", "sf"]).int();
    c.cmd(&["IDF.SNOWFLAKE", "sf2"]).int();
    drop(c);
    server.signal("TERM");
    std::fs::copy(&backup, &db).unwrap();
    drop_log(dir.path());
    std::fs::write(guard_of(dir.path()), b"").unwrap();
    let err = refused(dir.path(), &[]);
    assert!(err.contains("--tag NAME or --clock NAME"), "{err}");
    let data = format!("--data-dir={}", dir.path().join("data").display());
    let (code, text) = idforge(&["store", "repair", &data]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("name each with --tag NAME or --clock NAME"),
        "{text}"
    );
    last.push(late);
    let top = *last.iter().max().unwrap();
    let before = now_ms();
    let (code, text) = idforge(&[
        "store",
        "repair",
        &data,
        "--above",
        &top.to_string(),
        "--tag",
        "late",
        "--clock",
        "sf2",
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(&format!("raised: tag late: max_id missing -> {}", top + 1)),
        "{text}"
    );
    assert!(text.contains("raised: clock sf2: missing -> "), "{text}");
    assert!(text.contains("raised: clock sf: "), "{text}");
    assert!(
        text.contains("a tag the store lost and none of these names starts over at 1"),
        "{text}"
    );
    // Without --clock-above: this host's clock at the repair, plus the 1 s and a tick ids
    // may lead it.
    let clocks = clocks_of(dir.path());
    for name in ["sf", "sf2"] {
        assert!(clocks[name] > before + 1000, "{name}: {clocks:?}");
    }
    let ahead = (now_ms() + 3_600_000).to_string();
    let (code, text) = idforge(&["store", "repair", &data, "--clock-above", &ahead]);
    assert_eq!(code, 0, "{text}");
    let clocks = clocks_of(dir.path());
    for name in ["sf", "sf2"] {
        assert_eq!(clocks[name].to_string(), ahead, "{name}");
    }
    let (code, text) = idforge(&["store", "repair", &data, "--clock-above=-1"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("out of range"), "{text}");
    let (code, text) = idforge(&["store", "verify", &data]);
    assert_eq!(code, 0, "{text}");
    let server = Server::start(dir.path(), &[]);
    let mut c = server.client();
    let names = (0..TAGS)
        .map(|t| format!("t{t}"))
        .chain(["late".to_owned()]);
    for (tag, l) in names.zip(&last) {
        let next = c.cmd(&["INCR", &tag]).int();
        assert!(next > *l, "tag {tag}: {next} after {l}: a duplicate");
    }
}

/// An emptied guard (0 bytes, or cut to its header) next to an older copy of the store: before,
/// the guard was taken for a new one and the old copy served its ids again.
#[test]
fn an_emptied_guard_with_an_older_store_is_refused() {
    for emptied in [&b""[..], &b"idforge-guard 1\n"[..]] {
        let dir = tempfile::tempdir().unwrap();
        let mut server = Server::start(dir.path(), &[]);
        draw(&server, 3);
        server.signal("TERM");
        let db = dir.path().join("data/idforge.db");
        let backup = dir.path().join("backup.db");
        std::fs::copy(&db, &backup).unwrap();
        let mut server = Server::start(dir.path(), &[]);
        let last = draw(&server, 10);
        server.signal("TERM");
        std::fs::copy(&backup, &db).unwrap();
        std::fs::write(guard_of(dir.path()), emptied).unwrap();
        let err = refused(dir.path(), &[]);
        assert!(err.contains("holds no marks"), "{err}");
        assert!(err.contains("idforge store repair --above N"), "{err}");
        assert!(err.contains("--trust-store"), "{err}");
        let data = format!("--data-dir={}", dir.path().join("data").display());
        let (code, text) = idforge(&["store", "verify", &data]);
        assert_eq!(code, 1, "{text}");
        assert!(
            text.contains("behind: the guard file holds no marks"),
            "{text}"
        );
        // A repair must be told how far the store may be behind.
        repair_above(&data, &last);
        let (code, text) = idforge(&["store", "verify", &data]);
        assert_eq!(code, 0, "{text}");
        continues_above(dir.path(), &[], &last);
    }
}

/// The guard on a disk that fills up while the server serves: requests fail while it is full
/// (no id without its mark on disk); once space is back the server serves again, and the guard
/// reads, verifies and guards (before, the appends after a failed one made it "damaged", and
/// serve, verify and repair all refused it).
#[test]
fn a_guard_on_a_full_disk_reads_once_space_is_back() {
    let Some(fs) = Tmpfs::mount("64k") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let guard = fs.path().join("idforge.guard");
    let guard_arg = format!("--guard={}", guard.display());
    let extra = [
        guard_arg.as_str(),
        "--alloc-timeout-ms=300",
        "--default-step=200",
    ];
    let mut server = Server::start(dir.path(), &extra);
    let mut last = draw(&server, 2);
    let filler_path = fs.path().join("filler");
    let mut filler = std::fs::File::create(&filler_path).unwrap();
    while filler.write_all(&[0u8; 64]).is_ok() {}
    // Draw until requests fail (the guard's appends no longer fit), then give the space back
    // and draw until they succeed again (the persister retries after a back-off).
    let mut c = server.client();
    let (mut failed, mut filler, mut back) = (0, Some(filler), false);
    let started = Instant::now();
    'draw: for _ in 0..400 {
        for (t, l) in last.iter_mut().enumerate() {
            match c.cmd(&["INCRBY", &format!("t{t}"), "100"]) {
                common::Value::Int(n) => {
                    assert!(n > *l, "tag t{t}: {n} after {l}: a duplicate");
                    *l = n;
                    if filler.is_none() {
                        back = true;
                        break 'draw;
                    }
                }
                common::Value::Error(e) => {
                    assert!(e.contains("store"), "{e}");
                    failed += 1;
                    if failed == 5 {
                        // Closed too: tmpfs frees the pages of an unlinked file on its last
                        // close.
                        drop(filler.take());
                        std::fs::remove_file(&filler_path).unwrap();
                    }
                }
                other => panic!("{other:?}"),
            }
            assert!(started.elapsed() < Duration::from_secs(120), "bounded");
        }
    }
    assert!(
        failed >= 5,
        "the full disk failed nothing: the test proves nothing"
    );
    assert!(back, "no id once space was back");
    // Appends after the failed ones.
    for (t, l) in last.iter_mut().enumerate() {
        for _ in 0..5 {
            let n = c.cmd(&["INCRBY", &format!("t{t}"), "100"]).int();
            assert!(n > *l, "tag t{t}: {n} after {l}: a duplicate");
            *l = n;
        }
    }
    drop(c);
    server.signal("TERM");
    let data = format!("--data-dir={}", dir.path().join("data").display());
    let (code, text) = idforge(&["store", "verify", &data, &guard_arg]);
    assert_eq!(code, 0, "{text}");
    continues_above(dir.path(), &extra, &last);
}
