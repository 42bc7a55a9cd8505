//! One SQLite library per database file and process.
//!
//! SQLite's locks are POSIX record locks, which belong to a process, not to a file descriptor:
//! two connections of one process never block each other, and closing any descriptor of a file
//! drops every lock the process holds on it. One SQLite library works around both with a table
//! of the files it has open; a second copy of SQLite in the same process (CPython's `sqlite3`
//! module, Node's `node:sqlite`, a C program's own libsqlite3, beside the one built into
//! idforge) has a table of its own, so the two read and bump the same `max_id` at once and hand
//! out the same ids. Nothing in SQLite reports it.
//!
//! So before and after each range, with no connection of ours open on the file (our fetches of
//! one file run one at a time, each on a connection it closes), the process's open descriptors
//! are listed (`/proc/self/fd`, else `/dev/fd`; where neither lists them the check lets every
//! fetch through): one on the database, its `-wal` or its `-shm` is someone else's, and the
//! range is refused with an error that names the hazard. It is transient (a caller waits, up to
//! its timeout, for the other connection to close; then it gets the error), since a connection
//! of ours dropped after a failure is closed by its driver thread a moment later. A Rust program whose own
//! connections use the same SQLite library (sqlx, rusqlite: Cargo links one `libsqlite3-sys`)
//! is safe and turns the check off with the URL option `other_sqlite=same`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorCode, Result};

use crate::platform::{FileId, file_id};

/// Whether a fetch of this process holds a database file.
#[derive(Debug, Default)]
struct FileLock {
    held: Mutex<bool>,
    freed: Condvar,
}

/// The locks of the database files, per file and process generation.
type Locks = Mutex<HashMap<(FileId, u64), Arc<FileLock>>>;

/// The lock of a database file in this process generation: a forked child gets locks of its
/// own, never one a parent thread (absent in the child) was holding.
fn lock_of(id: FileId) -> Arc<FileLock> {
    static LOCKS: OnceLock<Locks> = OnceLock::new();
    // The map's mutex is taken where no fork can happen, so a child never inherits it locked.
    crate::fork::quiesced(|| {
        let mut locks = LOCKS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        locks
            .entry((id, crate::fork::current()))
            .or_default()
            .clone()
    })
}

/// A database file held by one fetch of this process; let go on drop.
#[derive(Debug)]
pub(crate) struct Held(Arc<FileLock>);

impl Drop for Held {
    fn drop(&mut self) {
        *self.0.held.lock().unwrap_or_else(|p| p.into_inner()) = false;
        self.0.freed.notify_one();
    }
}

/// Waits (until `deadline`) until no other fetch of this process uses `db`, and holds it;
/// `None` when the file does not exist yet (nobody can have it open).
pub(crate) fn hold(db: &Path, deadline: Instant) -> Result<Option<Held>> {
    let Some(id) = file_id(db) else {
        return Ok(None);
    };
    let lock = lock_of(id);
    let mut held = lock.held.lock().unwrap_or_else(|p| p.into_inner());
    while *held {
        let now = Instant::now();
        if now >= deadline {
            return Err(Error::transient(
                ErrorCode::Timeout,
                format!(
                    "{}: another fetch of this process held the file until the deadline",
                    db.display()
                ),
            ));
        }
        held = lock
            .freed
            .wait_timeout(held, deadline - now)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
    *held = true;
    drop(held);
    Ok(Some(Held(lock)))
}

/// The database file and its `-wal` and `-shm`, as far as they exist.
fn files(db: &Path) -> Vec<FileId> {
    let mut files: Vec<FileId> = file_id(db).into_iter().collect();
    for suffix in ["-wal", "-shm"] {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        files.extend(file_id(Path::new(&name)));
    }
    files
}

/// The first descriptor of this process open on one of `files`, as `(fd, its target)`. `None`
/// also where the process's descriptors cannot be listed (no `/proc` and no `/dev/fd`): the
/// check then lets every fetch through.
fn open_descriptor(files: &[FileId]) -> Option<(String, PathBuf)> {
    let dir = std::fs::read_dir("/proc/self/fd")
        .or_else(|_| std::fs::read_dir("/dev/fd"))
        .ok()?;
    dir.flatten().find_map(|entry| {
        let id = file_id(&entry.path())?;
        files.contains(&id).then(|| {
            let target = std::fs::read_link(entry.path()).unwrap_or_default();
            (entry.file_name().to_string_lossy().into_owned(), target)
        })
    })
}

/// Fails when a descriptor of this process other than ours is open on `db` (call it while
/// holding the file, with no connection of ours open). A connection of ours dropped without a
/// clean close (after a failure) is closed by its driver thread a moment later: with
/// `patience`, up to 200 ms (and never past `deadline`) are given for that.
pub(crate) fn check(db: &Path, deadline: Instant, patience: bool) -> Result<()> {
    let until = if patience {
        (Instant::now() + Duration::from_millis(200)).min(deadline)
    } else {
        Instant::now()
    };
    loop {
        let Some((fd, target)) = open_descriptor(&files(db)) else {
            return Ok(());
        };
        if Instant::now() >= until {
            // Transient: it may be a connection of ours still closing, or one that closes soon.
            return Err(Error::transient(
                ErrorCode::SourceUnavailable,
                format!(
                    "{} is also open in this process outside idforge (descriptor {fd}: {}): \
                     another SQLite library in the same process (Python's sqlite3, \
                     node:sqlite, a program's own libsqlite3) does not see idforge's locks, and \
                     the two would hand out the same ids; close that connection, or allocate \
                     from another process or through idforge://, or add other_sqlite=same to \
                     the URL if that connection uses idforge's own SQLite (a Rust program's \
                     sqlx or rusqlite)",
                    db.display(),
                    target.display()
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_descriptor_open_elsewhere_fails_the_check_and_the_hold_waits_its_turn() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("leaf.db");
        let soon = || Instant::now() + Duration::from_secs(5);
        // Not made yet: nothing to hold, nothing open.
        assert!(hold(&db, soon()).unwrap().is_none());
        std::fs::write(&db, b"").unwrap();
        let held = hold(&db, soon()).unwrap().unwrap();
        check(&db, soon(), true).unwrap();
        // A second fetch of the process waits for the first, until its deadline.
        let e = hold(&db, Instant::now() + Duration::from_millis(50)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Timeout);
        drop(held);
        let held = hold(&db, soon()).unwrap().unwrap();
        let other = std::fs::File::open(&db).unwrap();
        let e = check(&db, soon(), true).unwrap_err();
        assert_eq!(e.code(), ErrorCode::SourceUnavailable);
        assert!(e.is_transient());
        assert!(e.to_string().contains("another SQLite library"), "{e}");
        drop(other);
        // The -wal counts too.
        let wal = dir.path().join("leaf.db-wal");
        std::fs::write(&wal, b"").unwrap();
        let other = std::fs::File::open(&wal).unwrap();
        assert!(
            check(&db, soon(), false)
                .unwrap_err()
                .to_string()
                .contains("leaf.db-wal")
        );
        drop(other);
        check(&db, soon(), false).unwrap();
        drop(held);
    }
}
