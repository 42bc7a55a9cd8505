//! The random bits of UUIDv7 and ULID: a ChaCha12 stream per backend process, seeded from the
//! operating system in that process.
//!
//! Backends (and parallel workers) are forked from the postmaster, which never draws from the
//! stream; the stream is tagged with the process id it was seeded in (PostgreSQL's `MyProcPid`,
//! set right after the fork, a plain read), so a process that was forked after drawing seeds
//! again instead of repeating its parent's bits. ChaCha12 is a cryptographically secure
//! generator (RFC 9562 section 6.9 asks ids to be hard to guess); uniqueness does not depend on
//! it: the shared (millisecond, counter) is never handed out twice.

use std::cell::RefCell;

use idforge::ErrorCode;
use rand_chacha::ChaCha12Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};

use crate::error::{PgError, Result};

thread_local! {
    /// This process's stream and the process id it was seeded in.
    static STREAM: RefCell<Option<(i32, ChaCha12Rng)>> = const { RefCell::new(None) };
}

/// 64 random bits.
#[inline]
pub(crate) fn u64() -> Result<u64> {
    // SAFETY: PostgreSQL sets MyProcPid in every process right after it is forked, before any
    // function runs; a plain read of an int in this single-threaded process.
    let pid = unsafe { pgrx::pg_sys::MyProcPid };
    STREAM.with_borrow_mut(|slot| match slot {
        Some((seeded_in, rng)) if *seeded_in == pid => Ok(rng.next_u64()),
        _ => Ok(slot.insert((pid, seeded()?)).1.next_u64()),
    })
}

#[cold]
fn seeded() -> Result<ChaCha12Rng> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| {
        PgError::new(
            ErrorCode::Io,
            format!("the operating system gave no random bytes: {e}"),
        )
    })?;
    Ok(ChaCha12Rng::from_seed(seed))
}
