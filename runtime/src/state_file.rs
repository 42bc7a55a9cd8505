//! The persisted high-water time of a snowflake generator, so that a clock stepped back while
//! the process was down cannot make it repeat ids.
//!
//! Like March's high-water mark: the file holds a time `H` ahead of every id issued; ids are
//! issued freely below `H`, and when they come within half a window of it a new `H` is written
//! (temp file, fsync, rename, fsync of the folder) before any id at or past the old `H` is
//! returned. A restart resumes after `H`.
//!
//! The mark on disk never goes down below what it was when the generator opened it: a mark the
//! generator cannot reach is refused without a write, and settling on drop never lowers it past
//! that. One generator owns a file at a time: it holds an exclusive `flock` on `<file>.lock`
//! for as long as it lives, so a second one (in this process or another) is refused.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use idforge_core::Error as CoreError;

use crate::error::{Error, Result};
use crate::platform::{self, TryLock};

const HEADER: &str = "idforge-high-water-ms v1";

/// A durable high-water mark in a small text file.
#[derive(Debug)]
pub struct StateFile {
    path: PathBuf,
    window_ms: u64,
    /// Ids in ticks before this time (Unix ms) are covered by the file.
    persisted_ms: AtomicU64,
    /// The mark the file held when it was opened: ids up to it may have been issued by an
    /// earlier run, so no write ever goes below it.
    floor_ms: u64,
    /// The last time the generator can stamp: a later time is refused, never written.
    max_ms: u64,
    write: Mutex<()>,
    /// The exclusive lock on `<file>.lock`, held while the generator lives.
    lock: File,
    /// The process that took the lock: only it unlocks (a forked child shares the lock).
    owner_pid: u32,
}

impl StateFile {
    /// Persist this far ahead of the ids (10 s: one small write every ~5 s under load).
    pub const DEFAULT_WINDOW_MS: u64 = 10_000;

    /// Opens (or prepares to create) the file at `path`; returns it with the high-water time it
    /// holds (0 when the file does not exist yet).
    ///
    /// Takes an exclusive lock on `<path>.lock` (created if missing, never removed) for as long
    /// as the `StateFile` lives: while another one holds it, in this process or another, this
    /// fails with an error that says the file is in use.
    pub fn open(path: impl Into<PathBuf>, window_ms: u64) -> Result<(StateFile, u64)> {
        StateFile::open_within(path, window_ms, u64::MAX)
    }

    /// [`open`](Self::open) for a generator whose last time is `max_ms`: a mark past it (no id
    /// could follow it) is refused with `TIME_OUT_OF_RANGE`, the file left as it is, and so is a
    /// later [`cover`](Self::cover) of a time past it.
    pub(crate) fn open_within(
        path: impl Into<PathBuf>,
        window_ms: u64,
        max_ms: u64,
    ) -> Result<(StateFile, u64)> {
        let (path, lock) = take_lock(&path.into())?;
        let mut file = StateFile {
            path,
            window_ms: window_ms.max(2),
            persisted_ms: AtomicU64::new(0),
            floor_ms: 0,
            max_ms,
            write: Mutex::new(()),
            lock,
            owner_pid: std::process::id(),
        };
        // Read under the lock, so no other owner rewrites the mark after we read it.
        let held = StateFile::read_mark(&file.path)?;
        if held > max_ms {
            return Err(CoreError::TimeOutOfRange { time_ms: held }.into());
        }
        file.floor_ms = held;
        Ok((file, held))
    }

    /// The high-water time held by the file at `path` (0 when it does not exist yet). For
    /// processes that share one mark through other means (the PostgreSQL extension's shared
    /// memory) and so cannot use a `StateFile` of their own.
    pub fn read_mark(path: &Path) -> Result<u64> {
        match StateFile::read_small(path)? {
            Some(text) => parse(&text).ok_or_else(|| Error::StateFile {
                path: path.to_path_buf(),
                source: io::Error::new(io::ErrorKind::InvalidData, "not an idforge state file"),
            }),
            None => Ok(0),
        }
    }

    /// The text of the small file at `path` (`None` when it does not exist): at most
    /// [`MAX_FILE_BYTES`](Self::MAX_FILE_BYTES), so a damaged or hostile file cannot make the
    /// process read (and hold) more; a larger one is an error.
    pub fn read_small(path: &Path) -> Result<Option<String>> {
        let failed = |source| Error::StateFile {
            path: path.to_path_buf(),
            source,
        };
        let file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(failed(e)),
        };
        let mut text = String::new();
        file.take(StateFile::MAX_FILE_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(failed)?;
        if text.len() as u64 > StateFile::MAX_FILE_BYTES {
            return Err(failed(io::Error::new(
                io::ErrorKind::InvalidData,
                "larger than a state file can be",
            )));
        }
        Ok(Some(text))
    }

    /// The largest state file [`read_small`](Self::read_small) reads.
    pub const MAX_FILE_BYTES: u64 = 4096;

    /// Durably replaces the file at `path` with the mark `mark` (temp file, fsync, rename,
    /// fsync of the folder); the caller makes sure no two writers race.
    pub fn write_mark_to(path: &Path, mark: u64) -> Result<()> {
        StateFile::write_durably(path, &format!("{HEADER}\n{mark}\n"))
    }

    /// Durably replaces the file at `path` with `text`: a temp file beside it, fsync, rename,
    /// fsync of the folder (so neither a crash nor a power loss leaves an older file, or none).
    pub fn write_durably(path: &Path, text: &str) -> Result<()> {
        write_file(path, text).map_err(|source| Error::StateFile {
            path: path.to_path_buf(),
            source,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The time up to which ids are covered.
    #[inline]
    pub fn persisted_ms(&self) -> u64 {
        self.persisted_ms.load(Ordering::Acquire)
    }

    /// Whether an id in the tick starting at `time_ms` needs a new mark first (it is within
    /// half a window of the persisted one).
    #[inline]
    pub fn needs_persist(&self, time_ms: u64) -> bool {
        // Saturating: a time near u64::MAX needs a mark (which `cover` then refuses).
        time_ms.saturating_add(self.window_ms / 2) >= self.persisted_ms()
    }

    /// Makes sure ids up to `time_ms` (and half a window beyond) are covered, writing a new mark
    /// if needed. Returns once the mark is durable. A time past what the generator can stamp,
    /// or whose mark would not fit a `u64`, is `TIME_OUT_OF_RANGE` and writes nothing.
    pub fn cover(&self, time_ms: u64) -> Result<()> {
        if !self.needs_persist(time_ms) {
            return Ok(()); // covered already: no lock on the common path
        }
        // Checked: a wrapped sum would replace a high mark with a small one.
        let mark = match time_ms.checked_add(self.window_ms) {
            Some(mark) if time_ms <= self.max_ms => mark,
            _ => return Err(CoreError::TimeOutOfRange { time_ms }.into()),
        };
        let _guard = self.write.lock().unwrap_or_else(|p| p.into_inner());
        if !self.needs_persist(time_ms) {
            return Ok(()); // another thread wrote it meanwhile
        }
        StateFile::write_mark_to(&self.path, mark)?;
        self.persisted_ms.store(mark, Ordering::Release);
        Ok(())
    }
}

impl StateFile {
    /// Lowers the mark to `high_water_ms` when its generator is done (dropped): every id it
    /// issued lies at or before that time, so a restart soon after need not wait out the rest of
    /// the window. Only ever lowers to a time at or past every issued id, and never below the
    /// mark the file held when it was opened; call it only from the process that issued them
    /// (never a forked child, whose copy of the generator is behind its parent's). On failure
    /// the old, higher mark stays, which is safe.
    pub fn settle(&self, high_water_ms: u64) -> Result<()> {
        let _guard = self.write.lock().unwrap_or_else(|p| p.into_inner());
        // An earlier run may have issued ids up to the opening mark, and a generator that cannot
        // reach it reports a lower high water (the time-ordered one stops at 2^45 ms).
        let mark = high_water_ms.max(self.floor_ms);
        if mark >= self.persisted_ms() {
            return Ok(());
        }
        StateFile::write_mark_to(&self.path, mark)?;
        self.persisted_ms.store(mark, Ordering::Release);
        Ok(())
    }
}

impl Drop for StateFile {
    fn drop(&mut self) {
        // Unlock rather than only close: a child forked meanwhile shares the lock, and a close
        // would leave it held until the child exits. Not in that child, whose unlock would free
        // the lock of the parent that still owns the file.
        if std::process::id() == self.owner_pid {
            let _ = platform::unlock(&self.lock);
        }
    }
}

/// Takes the exclusive lock of the state file at `path`: a `flock` on `<real path>.lock` (the
/// state file itself is replaced by each write, so a lock on it would not outlive the first
/// one). Returns the real path with it, which the caller reads and writes from then on: a
/// symbolic link to the file, or to a folder on its way, leads to the one lock, and a write
/// replaces the file, not the link.
pub(crate) fn take_lock(path: &Path) -> Result<(PathBuf, File)> {
    let path = real_path(path).map_err(|source| Error::StateFile {
        path: path.to_path_buf(),
        source,
    })?;
    let lock_path = suffixed(&path, ".lock");
    let failed = |source| Error::StateFile {
        path: lock_path.clone(),
        source,
    };
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(failed)?;
    match platform::try_lock_exclusive(&file) {
        Ok(()) => Ok((path, file)),
        Err(TryLock::Held) => Err(Error::StateFile {
            path,
            source: io::Error::new(
                io::ErrorKind::WouldBlock,
                "in use by another generator (in another process or this one)",
            ),
        }),
        Err(TryLock::Failed(e)) => Err(failed(e)),
    }
}

/// The path of the file `path` reaches, links resolved; for a file not there yet, its folder's
/// real path and its name. Anything but a regular file (a folder, a FIFO that would block the
/// read, a device) is refused.
fn real_path(path: &Path) -> io::Result<PathBuf> {
    let real = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let name = path.file_name().ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "a state file path names a file",
                )
            })?;
            let folder = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            return Ok(std::fs::canonicalize(folder)?.join(name));
        }
        Err(e) => return Err(e),
    };
    if !std::fs::metadata(&real)?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a folder, a FIFO or a device)",
        ));
    }
    Ok(real)
}

/// `path` with `suffix` added to its whole name: files that differ only in their extension get
/// companions of their own.
fn suffixed(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Numbers the temp files of this process.
static TEMP_FILES: AtomicU64 = AtomicU64::new(0);

/// Writes `text` to `path`: temp file, fsync, rename, and the rename made durable (the
/// folder's fsync on Unix).
fn write_file(path: &Path, text: &str) -> io::Result<()> {
    let (tmp, mut f) = create_temp(path)?;
    let written = f
        .write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .and_then(|()| fs::rename(&tmp, path));
    if let Err(e) = written {
        // A half-written copy (a full disk) must neither stay behind nor keep the space it took.
        drop(f);
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    platform::sync_rename(path)
}

/// A new temp file beside `path` that no other writer uses: `<path>.<pid>.<n>.tmp`, created
/// exclusively (two writers renaming one shared temp file made the second fail with "No such
/// file or directory").
fn create_temp(path: &Path) -> io::Result<(PathBuf, File)> {
    let pid = std::process::id();
    let mut taken = 0;
    loop {
        let n = TEMP_FILES.fetch_add(1, Ordering::Relaxed);
        let tmp = suffixed(path, &format!(".{pid}.{n}.tmp"));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            // Left by a crashed process that had our pid, or a writer with our pid in another
            // pid namespace: try the next number.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && taken < 64 => taken += 1,
            Err(e) => return Err(e),
        }
    }
}

/// The mark in `text`: the header line, then the number and its newline. The writer always
/// ends the number with one, so a number without it was cut short and is refused like any
/// other torn file. Anything after the number's line is ignored.
fn parse(text: &str) -> Option<u64> {
    let (header, rest) = text.split_once('\n')?;
    if header.strip_suffix('\r').unwrap_or(header) != HEADER {
        return None;
    }
    let (number, _) = rest.split_once('\n')?;
    number.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_garbage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hw");
        let (f, held) = StateFile::open(&path, 1000).unwrap();
        assert_eq!(held, 0);
        assert!(f.needs_persist(5));
        f.cover(5000).unwrap();
        assert_eq!(f.persisted_ms(), 6000);
        assert!(!f.needs_persist(5400));
        assert!(f.needs_persist(5500));
        drop(f); // one owner at a time
        let (_, held) = StateFile::open(&path, 1000).unwrap();
        assert_eq!(held, 6000);
        // The free functions (for processes that share the mark otherwise) read the same file.
        assert_eq!(StateFile::read_mark(&path).unwrap(), 6000);
        StateFile::write_mark_to(&path, 42).unwrap();
        assert_eq!(StateFile::open(&path, 1000).unwrap().1, 42);
        assert_eq!(StateFile::read_mark(&dir.path().join("none")).unwrap(), 0);
        fs::write(&path, "hello").unwrap();
        let err = StateFile::open(&path, 1000).unwrap_err();
        assert_eq!(err.code(), crate::ErrorCode::Io);
        assert_eq!(
            StateFile::read_mark(&path).unwrap_err().code(),
            crate::ErrorCode::Io
        );
        // The worst size: a file one byte past the bound is refused without reading it all.
        let mark = format!("{HEADER}\n1\n");
        let padded = format!("{mark}{}", " ".repeat(StateFile::MAX_FILE_BYTES as usize));
        fs::write(&path, &padded[..StateFile::MAX_FILE_BYTES as usize + 1]).unwrap();
        assert_eq!(
            StateFile::read_mark(&path).unwrap_err().code(),
            crate::ErrorCode::Io
        );
        fs::write(&path, &padded[..StateFile::MAX_FILE_BYTES as usize]).unwrap();
        assert_eq!(StateFile::read_mark(&path).unwrap(), 1);
    }

    #[test]
    fn a_mark_that_would_wrap_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hw");
        let held = u64::MAX - 5;
        StateFile::write_mark_to(&path, held).unwrap();
        let (f, got) = StateFile::open(&path, 10_000).unwrap();
        assert_eq!(got, held);
        assert!(f.needs_persist(held) && f.needs_persist(u64::MAX));
        // held + window does not fit a u64: refused, not wrapped to a small mark.
        assert_eq!(
            f.cover(held).unwrap_err().code(),
            crate::ErrorCode::TimeOutOfRange
        );
        assert_eq!(f.persisted_ms(), 0, "nothing was persisted");
        drop(f);
        assert_eq!(
            StateFile::read_mark(&path).unwrap(),
            held,
            "the file kept it"
        );
    }

    #[test]
    fn settling_never_goes_below_the_mark_found_on_opening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hw");
        StateFile::write_mark_to(&path, 50_000).unwrap();
        let (f, held) = StateFile::open(&path, 1000).unwrap();
        f.cover(held).unwrap();
        assert_eq!(StateFile::read_mark(&path).unwrap(), 51_000);
        // A generator that cannot reach the mark reports a lower high water.
        f.settle(10).unwrap();
        assert_eq!(StateFile::read_mark(&path).unwrap(), 50_000);
        assert_eq!(f.persisted_ms(), 50_000);
    }

    #[test]
    fn a_mark_cut_before_its_newline_is_refused_like_other_torn_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hw");
        fs::write(&path, "hello").unwrap();
        let garbage = StateFile::read_mark(&path).unwrap_err();
        let whole = format!("{HEADER}\n1700000000000\n");
        // Every cut of the file the writer makes, up to its last byte.
        for len in 0..whole.len() {
            fs::write(&path, &whole[..len]).unwrap();
            let err = StateFile::read_mark(&path).unwrap_err();
            assert_eq!(err.code(), crate::ErrorCode::Io, "cut at {len}");
            assert_eq!(err.to_string(), garbage.to_string(), "cut at {len}");
            assert_eq!(
                StateFile::open(&path, 1000).unwrap_err().code(),
                crate::ErrorCode::Io
            );
        }
        fs::write(&path, &whole).unwrap();
        assert_eq!(StateFile::read_mark(&path).unwrap(), 1_700_000_000_000);
    }

    #[test]
    fn one_owner_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hw");
        let (first, _) = StateFile::open(&path, 1000).unwrap();
        first.cover(5000).unwrap();
        let err = StateFile::open(&path, 1000).unwrap_err();
        assert_eq!(err.code(), crate::ErrorCode::Io);
        let text = err.to_string();
        assert!(text.contains(&*path.to_string_lossy()), "{text}");
        assert!(text.contains("in use by another generator"), "{text}");
        // Another file in the same folder is not held up.
        StateFile::open(dir.path().join("hw2"), 1000).unwrap();
        drop(first);
        let (second, held) = StateFile::open(&path, 1000).unwrap();
        assert_eq!(held, 6000);
        second.cover(held).unwrap();
    }

    #[test]
    fn concurrent_writers_each_use_a_temp_file_of_their_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hw");
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let path = &path;
                s.spawn(move || {
                    for i in 0..50 {
                        StateFile::write_mark_to(path, t * 1000 + i).unwrap();
                    }
                });
            }
        });
        assert!(StateFile::read_mark(&path).unwrap() % 1000 == 49);
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["hw"], "no temp file left");
    }

    #[test]
    fn a_failed_write_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        // A folder that is not empty cannot be renamed over: the write fails at its last step.
        let path = dir.path().join("hw");
        fs::create_dir(&path).unwrap();
        fs::write(path.join("inside"), "x").unwrap();
        let err = StateFile::write_mark_to(&path, 7).unwrap_err();
        assert_eq!(err.code(), crate::ErrorCode::Io);
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["hw"], "the temp file was removed");
    }
}
