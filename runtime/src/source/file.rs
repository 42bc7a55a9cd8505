//! [`FileSource`]: ranges from a folder of locked counter files, shared by the host's processes.

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

use idforge_core::segment::Segment;

use super::{SegmentSource, check_step, validate_tag};
use crate::error::{Error, Result};
use crate::platform;

/// Ranges from a folder holding one counter file per tag, locked with `flock` and synced to
/// disk before a range is returned: shared by every process on the host, and a crash never
/// hands out a range twice.
#[derive(Debug)]
pub struct FileSource {
    dir: PathBuf,
}

impl FileSource {
    /// A source over `dir` (created if missing).
    pub fn new(dir: impl Into<PathBuf>) -> Result<FileSource> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|source| Error::StateFile {
            path: dir.clone(),
            source,
        })?;
        // Canonical, so two spellings of one folder share a high-water mark.
        let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
        Ok(FileSource { dir })
    }
}

impl SegmentSource for FileSource {
    /// Two: a tag whose file another process holds locked holds up only one lane.
    fn lanes(&self) -> usize {
        2
    }

    fn identity(&self) -> Option<String> {
        Some(format!("file://{}", self.dir.display()))
    }

    fn fetch(&self, tag: &str, step: u64) -> Result<Segment> {
        validate_tag(tag)?;
        check_step(step)?;
        let path = self.dir.join(tag);
        let io = |source| Error::StateFile {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        // Blocks until no other process holds the file.
        platform::lock_exclusive(&file).map_err(io)?;
        let result = self.bump(&mut file, step).map_err(io);
        // Unlock explicitly rather than by closing: a child forked meanwhile shares this open
        // file description, and a close would leave the lock held until the child exits.
        platform::unlock(&file).map_err(io)?;
        Ok(Segment::from_leaf(result?, step)?)
    }
}

impl FileSource {
    /// Reads the tag's counter, adds `step`, writes and syncs it; returns the new `max_id`.
    fn bump(&self, file: &mut std::fs::File, step: u64) -> std::io::Result<u64> {
        let mut text = String::new();
        file.read_to_string(&mut text)?;
        let bad =
            |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
        let max: u64 = if text.trim().is_empty() {
            0
        } else {
            text.trim().parse().map_err(|_| bad("not a counter"))?
        };
        let next = max
            .checked_add(step)
            .ok_or_else(|| bad("the tag reached u64::MAX"))?;
        // The new value is as long as or longer than the old one, so overwriting in place never
        // leaves stale digits; sync before any id of the range is used.
        file.seek(SeekFrom::Start(0))?;
        file.write_all(format!("{next}\n").as_bytes())?;
        file.sync_all()?;
        Ok(next)
    }
}
