//! The persisted high-water time of a snowflake generator, so that a clock stepped back while
//! the process was down cannot make it repeat ids.
//!
//! Like March's high-water mark: the file holds a time `H` ahead of every id issued; ids are
//! issued freely below `H`, and when they come within half a window of it a new `H` is written
//! (temp file, fsync, rename, fsync of the folder) before any id at or past the old `H` is
//! returned. A restart resumes after `H`.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

const HEADER: &str = "idforge-high-water-ms v1";

/// A durable high-water mark in a small text file.
#[derive(Debug)]
pub struct StateFile {
    path: PathBuf,
    window_ms: u64,
    /// Ids in ticks before this time (Unix ms) are covered by the file.
    persisted_ms: AtomicU64,
    write: Mutex<()>,
}

impl StateFile {
    /// Persist this far ahead of the ids (10 s: one small write every ~5 s under load).
    pub const DEFAULT_WINDOW_MS: u64 = 10_000;

    /// Opens (or prepares to create) the file at `path`; returns it with the high-water time it
    /// holds (0 when the file does not exist yet).
    pub fn open(path: impl Into<PathBuf>, window_ms: u64) -> Result<(StateFile, u64)> {
        let path = path.into();
        let held = StateFile::read_mark(&path)?;
        let file = StateFile {
            path,
            window_ms: window_ms.max(2),
            persisted_ms: AtomicU64::new(0),
            write: Mutex::new(()),
        };
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
        time_ms + self.window_ms / 2 >= self.persisted_ms()
    }

    /// Makes sure ids up to `time_ms` (and half a window beyond) are covered, writing a new mark
    /// if needed. Returns once the mark is durable.
    pub fn cover(&self, time_ms: u64) -> Result<()> {
        if !self.needs_persist(time_ms) {
            return Ok(()); // covered already: no lock on the common path
        }
        let _guard = self.write.lock().unwrap_or_else(|p| p.into_inner());
        if !self.needs_persist(time_ms) {
            return Ok(()); // another thread wrote it meanwhile
        }
        let mark = time_ms + self.window_ms;
        StateFile::write_mark_to(&self.path, mark)?;
        self.persisted_ms.store(mark, Ordering::Release);
        Ok(())
    }
}

impl StateFile {
    /// Lowers the mark to `high_water_ms` when its generator is done (dropped): every id it
    /// issued lies at or before that time, so a restart soon after need not wait out the rest of
    /// the window. Only ever lowers to a time at or past every issued id; call it only from the
    /// process that issued them (never a forked child, whose copy of the generator is behind its
    /// parent's). On failure the old, higher mark stays, which is safe.
    pub fn settle(&self, high_water_ms: u64) -> Result<()> {
        let _guard = self.write.lock().unwrap_or_else(|p| p.into_inner());
        if high_water_ms >= self.persisted_ms() {
            return Ok(());
        }
        StateFile::write_mark_to(&self.path, high_water_ms)?;
        self.persisted_ms.store(high_water_ms, Ordering::Release);
        Ok(())
    }
}

/// Writes `text` to `path`: temp file, fsync, rename, fsync of the folder.
fn write_file(path: &Path, text: &str) -> io::Result<()> {
    // A bare file name's parent is "": the folder is then the current one, and its entry must
    // be synced too, or the rename may not survive a power loss.
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // `<name>.tmp`: files that differ only in their extension get temp files of their own.
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    {
        let mut f = File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    File::open(dir)?.sync_all()?;
    Ok(())
}

fn parse(text: &str) -> Option<u64> {
    let mut lines = text.lines();
    if lines.next()? != HEADER {
        return None;
    }
    lines.next()?.trim().parse().ok()
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
}
