//! [`MemorySource`]: ranges from this process's memory, for tests, benchmarks and one process.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use idforge_core::Error as CoreError;
use idforge_core::segment::Segment;

use super::{SegmentSource, check_step, validate_tag};
use crate::error::{Error, ErrorCode, Result};

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
            // An outage, as a test sets it: may pass.
            return Err(Error::transient(
                ErrorCode::SourceUnavailable,
                "memory source set to fail".into(),
            ));
        }
        let mut map = self.max_ids.lock().unwrap_or_else(|p| p.into_inner());
        let max = map.entry(tag.to_owned()).or_insert(0);
        let next = max
            .checked_add(step)
            .ok_or(CoreError::Overflow("tag reached u64::MAX"))?;
        *max = next;
        self.fetches.fetch_add(1, Ordering::Relaxed);
        Ok(Segment::from_leaf(next, step)?)
    }
}
