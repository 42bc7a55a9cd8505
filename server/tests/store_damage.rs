//! A store that went back (a damaged write-ahead log, a deleted or emptied database, a restored
//! backup, an edited mark, another database) is refused at start with a clear message, and
//! `idforge store repair` makes the server continue above every id it handed out. Each case runs
//! the real server process on a throwaway data dir.

mod common;

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Server;

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
    let server = Server::start(dir, &[]);
    let mut c = server.client();
    for (t, l) in last.iter().enumerate() {
        let next = c.cmd(&["INCR", &format!("t{t}")]).int();
        assert!(next > *l, "tag t{t}: {next} after {l}: a duplicate");
    }
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
        for f in ["idforge.db-wal", "idforge.db-shm"] {
            let _ = std::fs::remove_file(dir.path().join("data").join(f));
        }
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
    for f in ["idforge.db-wal", "idforge.db-shm"] {
        let _ = std::fs::remove_file(dir.path().join("data").join(f));
    }
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
        started.elapsed() < Duration::from_secs(15),
        "reported at once, not after a pool time-out"
    );
}
