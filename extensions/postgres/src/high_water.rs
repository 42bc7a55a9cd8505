//! The cluster's high-water time in a state file in the data directory, so that a clock stepped
//! back while PostgreSQL was down never repeats a snowflake or flake-128 id.
//!
//! The runtime's `StateFile` scheme, shared by the backends: an id whose time comes within half
//! a window of the file's mark `M` waits until one backend has durably written a new mark (temp
//! file, fsync, rename, fsync of the folder), so every id returned lies before `M - WINDOW/2`.
//! A restart resumes after that time (not after `M`), and a new mark is a window ahead of the
//! clock, or, when the ids run ahead of the clock (just after a restart), only [`STEP_MS`] past
//! what the next id needs: so quick restarts do not push the ids further and further ahead.

use std::path::Path;
use std::sync::atomic::Ordering;

use idforge::{Clock, ErrorCode, StateFile};

use crate::error::{PgError, Result};
use crate::shared::{BadStateFile, Shared};

/// The state file, relative to the data directory (every PostgreSQL process runs in it).
pub const PATH: &str = "idforge.state";

/// Persist this far ahead of the clock: one small write a second under load.
pub const WINDOW_MS: u64 = 2_000;

/// How far a new mark reaches past the id that asked for it when the ids are ahead of the clock.
const STEP_MS: u64 = 100;

/// The time every id of the last run lies before, given the mark `held` the file had.
pub fn resume_after(held: u64) -> u64 {
    held.saturating_sub(WINDOW_MS / 2)
}

/// The mark the file holds (0 when there is none yet), read by the postmaster at startup.
pub fn read_at_startup() -> std::result::Result<u64, BadStateFile> {
    StateFile::read_mark(Path::new(PATH)).map_err(|e| {
        pgrx::warning!("idforge: {e}");
        BadStateFile
    })
}

/// Makes sure an id in the tick starting at `time_ms` is covered by the file before it is
/// returned.
#[inline]
pub fn cover(shared: &Shared, time_ms: u64) -> Result<()> {
    if covered(shared, time_ms) {
        return Ok(());
    }
    cover_slow(shared, time_ms)
}

/// Whether the file's mark is more than half a window past `time_ms`.
#[inline]
fn covered(shared: &Shared, time_ms: u64) -> bool {
    time_ms.saturating_add(WINDOW_MS / 2) < shared.persisted_ms().load(Ordering::Acquire)
}

#[cold]
fn cover_slow(shared: &Shared, time_ms: u64) -> Result<()> {
    locked(shared, || {
        if covered(shared, time_ms) {
            return Ok(()); // another backend wrote it meanwhile
        }
        // Each id returned stays before mark - WINDOW/2: this one by STEP_MS at least.
        let now = shared.clock().now_ms();
        let mark = now
            .saturating_add(WINDOW_MS)
            .max(time_ms.saturating_add(WINDOW_MS / 2 + STEP_MS));
        if mark == u64::MAX {
            // Cannot happen for a layout that passed its checks; never return an uncovered id.
            return Err(PgError::new(
                ErrorCode::TimeOutOfRange,
                "the id's time is past what the state file can cover",
            ));
        }
        StateFile::write_mark_to(Path::new(PATH), mark)?;
        shared.persisted_ms().fetch_max(mark, Ordering::Release);
        Ok(())
    })
}

/// Runs `f` while no other backend writes the extension's files. (A backend that dies holding
/// the flag makes the postmaster reset shared memory, the flag with it.)
pub fn locked<T>(shared: &Shared, f: impl FnOnce() -> Result<T>) -> Result<T> {
    loop {
        if shared
            .writing()
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            let _writer = Writer(shared);
            return f();
        }
        // Another backend is writing (one fsync, a few ms at most): wait, but stay cancellable.
        std::thread::sleep(std::time::Duration::from_micros(100));
        pgrx::check_for_interrupts!();
    }
}

/// Clears the writer flag when the write ends, however it ends.
struct Writer<'a>(&'a Shared);

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        self.0.writing().store(false, Ordering::Release);
    }
}
