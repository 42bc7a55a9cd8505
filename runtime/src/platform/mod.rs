//! What differs between operating systems, behind one small API: the monotonic clocks, file
//! locks and a file's identity. Linux is the reference; macOS and the other Unixes read the same
//! POSIX clocks; Windows reads `QueryPerformanceCounter` through [`std::time::Instant`].
//! docs/guarantees.md ("Platforms") says what each guarantee rests on where.

mod clock;
mod durable;
mod lock;

pub(crate) use clock::{coarse_ms, mono_ms, mono_ns};
pub(crate) use durable::sync_rename;
#[cfg(feature = "sql")]
pub(crate) use lock::{FileId, file_id};
pub(crate) use lock::{TryLock, lock_exclusive, try_lock_exclusive, unlock};
