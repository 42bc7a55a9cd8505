//! Segment sources: where ranges of ids come from.
//!
//! Network sources (our server, Redis, SQL) arrive with their own issue; this module holds the
//! trait, a process-local [`MemorySource`] and a cross-process [`FileSource`] (a locked counter
//! file per tag), and [`open`] to choose one by URL.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use idforge_core::Error as CoreError;
use idforge_core::segment::Segment;

use crate::error::{Error, ErrorCode, Result};

/// A central allocator of id ranges.
///
/// `fetch` must never return an id it returned before for the same tag (within the durability
/// the source promises). It may block (the refill worker calls it, never the hot path).
pub trait SegmentSource: Send + Sync + 'static {
    /// Allocates `step` fresh ids of `tag`.
    fn fetch(&self, tag: &str, step: u64) -> Result<Segment>;
}

/// Checks a tag: 1-128 characters of `A-Za-z0-9_-.:` (safe as a file name and a Redis key).
pub fn validate_tag(tag: &str) -> Result<()> {
    let ok = !tag.is_empty()
        && tag.len() <= 128
        && !tag.starts_with('.')
        && tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.:".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(CoreError::InvalidArgument(
            "a tag is 1-128 characters of A-Za-z0-9_-.: not starting with '.'",
        )
        .into())
    }
}

fn leaf_segment(max_id: u64, step: u64) -> Result<Segment> {
    Ok(Segment::from_leaf(max_id, step)?)
}

fn check_step(step: u64) -> Result<()> {
    if step == 0 || step > Segment::MAX_LEN {
        return Err(CoreError::InvalidArgument("step must be in 1..=2^38").into());
    }
    Ok(())
}

/// Ranges from memory: ids start at 1 per tag. Unique within this process only (a forked
/// child continues from a copy): for tests, benchmarks and single-process use.
#[derive(Debug, Default)]
pub struct MemorySource {
    max_ids: Mutex<HashMap<String, u64>>,
    delay_ms: AtomicU64,
    failing: AtomicBool,
    fetches: AtomicU64,
}

impl MemorySource {
    /// An empty source.
    pub fn new() -> MemorySource {
        MemorySource::default()
    }

    /// Makes every fetch take `delay` (to test prefetching and stalls).
    pub fn set_delay(&self, delay: Duration) {
        self.delay_ms
            .store(delay.as_millis() as u64, Ordering::Relaxed);
    }

    /// Makes fetches fail with `SOURCE_UNAVAILABLE` while `failing` is true.
    pub fn set_failing(&self, failing: bool) {
        self.failing.store(failing, Ordering::Relaxed);
    }

    /// How many ranges were handed out.
    pub fn fetches(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }
}

impl SegmentSource for MemorySource {
    fn fetch(&self, tag: &str, step: u64) -> Result<Segment> {
        validate_tag(tag)?;
        check_step(step)?;
        let delay = self.delay_ms.load(Ordering::Relaxed);
        if delay > 0 {
            std::thread::sleep(Duration::from_millis(delay));
        }
        if self.failing.load(Ordering::Relaxed) {
            return Err(Error::Source {
                code: ErrorCode::SourceUnavailable,
                message: "memory source set to fail".into(),
            });
        }
        let mut map = self.max_ids.lock().unwrap_or_else(|p| p.into_inner());
        let max = map.entry(tag.to_owned()).or_insert(0);
        let next = max
            .checked_add(step)
            .ok_or(CoreError::Overflow("tag reached u64::MAX"))?;
        *max = next;
        self.fetches.fetch_add(1, Ordering::Relaxed);
        leaf_segment(next, step)
    }
}

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
        Ok(FileSource { dir })
    }
}

impl SegmentSource for FileSource {
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
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| io(e.into()))?;
        let result = self.bump(&mut file, step).map_err(io);
        // Unlock explicitly rather than by closing: a child forked meanwhile shares this open
        // file description, and a close would leave the lock held until the child exits.
        rustix::fs::flock(&file, rustix::fs::FlockOperation::Unlock).map_err(|e| io(e.into()))?;
        leaf_segment(result?, step)
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

/// Opens a source by URL: `memory:` (this process only) or `file:///path/to/dir`. Network
/// schemes are refused with `INVALID_URL` until their sources exist.
pub fn open(url: &str) -> Result<Arc<dyn SegmentSource>> {
    if url == "memory:" || url == "memory://" {
        return Ok(Arc::new(MemorySource::new()));
    }
    if let Some(path) = url.strip_prefix("file://") {
        if !path.starts_with('/') {
            return Err(CoreError::InvalidUrl("file:// URLs need an absolute path").into());
        }
        return Ok(Arc::new(FileSource::new(path)?));
    }
    Err(CoreError::InvalidUrl("supported schemes: memory:, file:///dir").into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_source_hands_out_consecutive_ranges_per_tag() {
        let s = MemorySource::new();
        assert_eq!(s.fetch("a", 10).unwrap(), Segment::new(1, 11).unwrap());
        assert_eq!(s.fetch("a", 5).unwrap(), Segment::new(11, 16).unwrap());
        assert_eq!(s.fetch("b", 1).unwrap(), Segment::new(1, 2).unwrap());
        s.set_failing(true);
        assert_eq!(
            s.fetch("a", 1).unwrap_err().code(),
            ErrorCode::SourceUnavailable
        );
        assert_eq!(
            s.fetch("../x", 1).unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            s.fetch("a", 0).unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
    }

    #[test]
    fn file_source_persists_across_instances() {
        let dir = tempfile::tempdir().unwrap();
        let a = FileSource::new(dir.path()).unwrap();
        assert_eq!(
            a.fetch("orders", 100).unwrap(),
            Segment::new(1, 101).unwrap()
        );
        let b = FileSource::new(dir.path()).unwrap();
        assert_eq!(
            b.fetch("orders", 100).unwrap(),
            Segment::new(101, 201).unwrap()
        );
        std::fs::write(dir.path().join("bad"), "x").unwrap();
        assert_eq!(a.fetch("bad", 1).unwrap_err().code(), ErrorCode::Io);
    }

    #[test]
    fn urls() {
        assert!(open("memory:").is_ok());
        let dir = tempfile::tempdir().unwrap();
        assert!(open(&format!("file://{}", dir.path().display())).is_ok());
        assert_eq!(
            open("file://relative").err().unwrap().code(),
            ErrorCode::InvalidUrl
        );
        assert_eq!(
            open("redis://127.0.0.1").err().unwrap().code(),
            ErrorCode::InvalidUrl
        );
    }
}
