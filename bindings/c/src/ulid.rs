//! ULIDs (16 big-endian bytes: 48-bit Unix ms, 80 random bits; text: 26 characters of
//! Crockford base32): the generator handle (the ULID spec's monotonic mode) and the codecs.

use std::ffi::c_char;

use runtime::{CoreError, TimeOrdered, Ulid, Ulids};

use crate::error::panic_boundary;
use crate::ptr;
use crate::snowflake::idforge_policy;
use crate::status::idforge_status;
use crate::time_ordered::{self, Handle};

/// Bytes in a ULID.
pub const IDFORGE_ULID_LEN: usize = 16;
/// Characters of ULID text (a buffer needs one more, for the NUL).
pub const IDFORGE_ULID_TEXT_LEN: usize = 26;
/// Random bytes in a ULID (after its 6 bytes of time).
pub const IDFORGE_ULID_RANDOM_LEN: usize = 10;

/// A ULID generator in the spec's monotonic mode: strictly increasing ids (as bytes and as
/// text) from any number of threads. Each millisecond's 18-bit counter (the top of the 80
/// random bits) starts at a random value below 2^17, so a millisecond holds at least 131,072
/// ids before borrowing the next; the other 62 bits are random. Thread-safe: every call but
/// `idforge_ulid_free` may run concurrently on one handle. In a forked child it draws new
/// random bits; one with a state file returns `IDFORGE_STATUS_FORKED` there instead.
pub struct idforge_ulid {
    inner: Ulids,
}

impl Handle for idforge_ulid {
    type Id = Ulid;
    fn wrap(inner: Ulids) -> Self {
        idforge_ulid { inner }
    }
    fn generator(&self) -> &TimeOrdered<Ulid> {
        &self.inner
    }
}

/// Creates a generator with the default policy (borrow up to 1 s ahead of the clock); free it
/// with `idforge_ulid_free`.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_ulid_new(out: *mut *mut idforge_ulid) -> idforge_status {
    // SAFETY: NULL options, and the caller's guarantee on `out`.
    unsafe { time_ordered::create(std::ptr::null(), std::ptr::null(), out) }
}

/// Creates a generator that keeps a high-water time in the file `path`, so its ids keep
/// increasing across restarts even if the clock was set back meanwhile. `IO` when the file
/// cannot be created, read or written.
///
/// # Safety
/// `path` is NULL or NUL-terminated; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_ulid_new_with_state_file(
    path: *const c_char,
    out: *mut *mut idforge_ulid,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { time_ordered::create_with_file(path, out) }
}

/// Creates a generator with a clock policy (`policy` NULL: the default) and an optional state
/// file (`state_file` NULL: none). `INVALID_ARGUMENT` for an unknown policy kind.
///
/// # Safety
/// `policy` is NULL or readable; `state_file` is NULL or NUL-terminated; `out` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_ulid_new_with_policy(
    policy: *const idforge_policy,
    state_file: *const c_char,
    out: *mut *mut idforge_ulid,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { time_ordered::create(policy, state_file, out) }
}

/// Frees a generator; NULL is ignored. No other call may use the handle during or after this.
///
/// # Safety
/// `handle` is NULL or came from `idforge_ulid_new*` and is not freed twice.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_ulid_free(handle: *mut idforge_ulid) {
    // SAFETY: the caller's guarantee.
    unsafe { ptr::free_handle(handle) }
}

/// Writes the next ULID to the 16 bytes at `out`. Thread-safe.
///
/// # Safety
/// `handle` is NULL or a live generator; `out` is NULL or points to 16 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_ulid_next(
    handle: *const idforge_ulid,
    out: *mut u8,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { time_ordered::next(handle, out) }
}

/// Writes `count` fresh ULIDs, in increasing order, to the `count * 16` bytes at `out`.
/// Thread-safe. On failure the contents of `out` are unspecified; ids written there are never
/// issued again.
///
/// # Safety
/// `handle` is NULL or a live generator; `out` is NULL or points to `count * 16` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_ulid_next_many(
    handle: *const idforge_ulid,
    out: *mut u8,
    count: usize,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { time_ordered::next_batch(handle, out, count) }
}

fn crockford(bytes: [u8; 16], buf: &mut [u8; IDFORGE_ULID_TEXT_LEN]) -> Result<&str, CoreError> {
    Ok(Ulid::from_bytes(bytes).to_text(buf))
}

/// Writes the 26 characters of upper-case Crockford base32 and a NUL to `out` (`len` >= 27).
/// Every 16 bytes are a ULID.
///
/// # Safety
/// `id` is NULL or points to 16 readable bytes; `out` is NULL or points to `len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_ulid_to_text(
    id: *const u8,
    out: *mut c_char,
    len: usize,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { time_ordered::to_text(id, out, len, crockford) }
}

/// Parses ULID text (NUL-terminated; exactly 26 characters, either case, with Crockford's
/// aliases I and L for 1, O for 0) into the 16 bytes at `out`: `INVALID_BASE32` otherwise.
///
/// # Safety
/// `text` is NULL or NUL-terminated; `out` is NULL or points to 16 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_ulid_parse(text: *const c_char, out: *mut u8) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { time_ordered::parse(text, out, |s| Ok(Ulid::parse(s)?.to_bytes())) }
}

/// The Unix milliseconds of the ULID at `id`, into `*out_ms`.
///
/// # Safety
/// `id` is NULL or points to 16 readable bytes; `out_ms` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_ulid_time(id: *const u8, out_ms: *mut u64) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { time_ordered::read(id, out_ms, |b| Ok(Ulid::from_bytes(b).time_ms())) }
}

/// Builds the ULID of `time_ms` and the 10 bytes at `random` into the 16 bytes at `out`: for
/// range queries and tests, not for issuing ids. `TIME_OUT_OF_RANGE` past 48 bits.
///
/// # Safety
/// `random` is NULL or points to 10 readable bytes; `out` is NULL or points to 16 writable
/// bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_ulid_compose(
    time_ms: u64,
    random: *const u8,
    out: *mut u8,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (random, out) = unsafe {
            (
                ptr::bytes::<IDFORGE_ULID_RANDOM_LEN>(random, "random")?,
                ptr::out_bytes::<IDFORGE_ULID_LEN>(out, "out")?,
            )
        };
        let mut wide = [0u8; 16];
        wide[6..].copy_from_slice(&random);
        out.write(Ulid::from_parts(time_ms, u128::from_be_bytes(wide))?.to_bytes());
        Ok(())
    })
}
