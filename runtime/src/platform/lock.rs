//! Whole-file exclusive locks between processes (`flock` on Unix, `LockFileEx` on Windows,
//! through `fs4`) and a file's identity.
//!
//! The calls name `fs4::FileExt` explicitly: Rust 1.89 gave `File` inherent methods of the same
//! names, which a method call would pick on newer compilers only.

use std::fs::File;
use std::io;

/// Blocks until this open file holds the exclusive lock.
pub(crate) fn lock_exclusive(file: &File) -> io::Result<()> {
    fs4::FileExt::lock(file)
}

/// Why [`try_lock_exclusive`] did not take the lock.
#[derive(Debug)]
pub(crate) enum TryLock {
    /// Another open file (in this process or another) holds it.
    Held,
    /// The lock call itself failed.
    Failed(io::Error),
}

/// Takes the exclusive lock if no one holds it, without waiting.
pub(crate) fn try_lock_exclusive(file: &File) -> Result<(), TryLock> {
    match fs4::FileExt::try_lock(file) {
        Ok(()) => Ok(()),
        Err(fs4::TryLockError::WouldBlock) => Err(TryLock::Held),
        Err(fs4::TryLockError::Error(e)) => Err(TryLock::Failed(e)),
    }
}

/// Releases the lock explicitly (rather than by closing: on Unix a child forked meanwhile
/// shares the open file description, and a close would leave the lock held until it exits).
pub(crate) fn unlock(file: &File) -> io::Result<()> {
    fs4::FileExt::unlock(file)
}

/// A file's identity: two paths name one file when their identities are equal (the SQLite
/// source's per-file locks).
#[cfg(feature = "sql")]
pub(crate) type FileId = (u64, u64);

/// The device and inode of the file at `path` (so hard links and other spellings of one path
/// agree), or `None` when it cannot be read.
#[cfg(all(unix, feature = "sql"))]
pub(crate) fn file_id(path: &std::path::Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// A hash of the file's canonical path (stable Rust has no volume serial and file index on
/// Windows): other spellings of one path agree, hard links to one file do not.
#[cfg(all(not(unix), feature = "sql"))]
pub(crate) fn file_id(path: &std::path::Path) -> Option<FileId> {
    use std::hash::{Hash, Hasher};
    let canonical = std::fs::canonicalize(path).ok()?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    canonical.hash(&mut h);
    Some((0, h.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_open_file_waits_for_the_first_to_unlock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l");
        let a = File::create(&path).unwrap();
        let b = File::options().write(true).open(&path).unwrap();
        try_lock_exclusive(&a).unwrap();
        assert!(matches!(try_lock_exclusive(&b), Err(TryLock::Held)));
        unlock(&a).unwrap();
        try_lock_exclusive(&b).unwrap();
        assert!(matches!(try_lock_exclusive(&a), Err(TryLock::Held)));
        unlock(&b).unwrap();
        lock_exclusive(&a).unwrap();
    }

    #[cfg(feature = "sql")]
    #[test]
    fn two_spellings_of_one_path_are_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"x").unwrap();
        let other = dir.path().join(".").join("f");
        assert_eq!(file_id(&path), file_id(&other));
        assert!(file_id(&path).is_some());
        std::fs::write(dir.path().join("g"), b"x").unwrap();
        assert_ne!(file_id(&path), file_id(&dir.path().join("g")));
        assert_eq!(file_id(&dir.path().join("none")), None);
    }
}
