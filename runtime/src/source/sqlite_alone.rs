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
//! are listed (`/proc/self/fd`): one on the database, its `-wal` or its `-shm` is someone
//! else's, and the range is refused. The error is transient, so the wait goes on and a range
//! comes as soon as the other connection closes; a caller whose timeout passes first gets the
//! error's message, which names the hazard.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{Error, ErrorCode, Result};

/// A file's identity: device and inode.
type FileId = (u64, u64);

fn file_id(path: &Path) -> Option<FileId> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// The lock of each database file this process fetches from.
fn lock_of(id: FileId) -> Arc<Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<FileId, Arc<Mutex<()>>>>> = OnceLock::new();
    let mut locks = LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    locks.entry(id).or_default().clone()
}

/// The first descriptor of this process open on one of `files`, as `(fd, its target)`.
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

fn shared_error(db: &Path, fd: &str, target: &Path) -> Error {
    Error::transient(
        ErrorCode::SourceUnavailable,
        format!(
            "{} is also open in this process outside idforge (descriptor {fd}: {}): another \
             SQLite library in the same process (Python's sqlite3, node:sqlite, a program's own \
             libsqlite3) does not see idforge's locks, and the two would hand out the same ids; \
             close that connection, or allocate from another process or through idforge://",
            db.display(),
            target.display()
        ),
    )
}

/// Runs `fetch` (which opens and closes its own connection to `db`) when no other connection
/// of this process has `db` open, and refuses its range if one appeared meanwhile.
pub(crate) fn fetch_alone<T>(db: &Path, fetch: impl FnOnce() -> Result<T>) -> Result<T> {
    let Some(id) = file_id(db) else {
        // Not made yet: nobody can have it open.
        return fetch();
    };
    let lock = lock_of(id);
    let _alone = lock.lock().unwrap_or_else(|p| p.into_inner());
    let files = |db: &Path| -> Vec<FileId> {
        let mut files = vec![id];
        for suffix in ["-wal", "-shm"] {
            let mut name = db.as_os_str().to_owned();
            name.push(suffix);
            files.extend(file_id(Path::new(&name)));
        }
        files
    };
    // A connection of ours dropped without a clean close (after a failure) is closed by its
    // driver thread a moment later: give that a little time.
    let mut patience = 20;
    while let Some((fd, target)) = open_descriptor(&files(db)) {
        if patience == 0 {
            return Err(shared_error(db, &fd, &target));
        }
        patience -= 1;
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let fetched = fetch()?;
    // Our connection is closed: a descriptor now is one opened during the range.
    if let Some((fd, target)) = open_descriptor(&files(db)) {
        return Err(shared_error(db, &fd, &target));
    }
    Ok(fetched)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_descriptor_open_elsewhere_refuses_the_fetch_until_it_closes() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("leaf.db");
        // Not made yet: no check.
        assert_eq!(fetch_alone(&db, || Ok(1)).unwrap(), 1);
        std::fs::write(&db, b"").unwrap();
        assert_eq!(fetch_alone(&db, || Ok(2)).unwrap(), 2);
        let held = std::fs::File::open(&db).unwrap();
        let e = fetch_alone(&db, || Ok(3)).unwrap_err();
        assert_eq!(e.code(), ErrorCode::SourceUnavailable);
        assert!(e.is_transient());
        assert!(e.to_string().contains("another SQLite library"), "{e}");
        drop(held);
        // The -wal counts too, and one opened during the fetch refuses its range.
        let wal = dir.path().join("leaf.db-wal");
        std::fs::write(&wal, b"").unwrap();
        let mut opened = None;
        let e = fetch_alone(&db, || {
            opened = Some(std::fs::File::open(&wal).unwrap());
            Ok(4)
        })
        .unwrap_err();
        assert!(e.to_string().contains("leaf.db-wal"), "{e}");
        drop(opened);
        assert_eq!(fetch_alone(&db, || Ok(5)).unwrap(), 5);
    }
}
