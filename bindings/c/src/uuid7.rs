//! UUIDv7s (RFC 9562; 16 big-endian bytes: 48-bit Unix ms, version 7, 12 bits `rand_a`, the
//! variant, 62 bits `rand_b`): the generator handle and the codecs.

use std::ffi::c_char;

use runtime::{CoreError, TimeOrdered, Ulid, Uuid7, Uuid7s};

use crate::error::panic_boundary;
use crate::ptr;
use crate::snowflake::idforge_policy;
use crate::status::idforge_status;
use crate::time_ordered::{self, Handle};

/// Bytes in a UUID.
pub const IDFORGE_UUID7_LEN: usize = 16;
/// Characters of the hyphenated text form (a buffer needs one more, for the NUL).
pub const IDFORGE_UUID7_TEXT_LEN: usize = 36;

/// The fields of a UUIDv7.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct idforge_uuid7_parts {
    /// Unix milliseconds (48 bits).
    pub time_ms: u64,
    /// The 12 bits after the version.
    pub rand_a: u16,
    /// The 62 bits after the variant.
    pub rand_b: u64,
}

/// A UUIDv7 generator: strictly increasing ids (as numbers, bytes and text) from any number of
/// threads. Each millisecond's 18-bit counter (`rand_a` and the top 6 bits of `rand_b`) starts
/// at a random value below 2^17, so a millisecond holds at least 131,072 ids before borrowing
/// the next; the other 56 bits are random. Thread-safe: every call but `idforge_uuid7_free`
/// may run concurrently on one handle. In a forked child it draws new random bits (never the
/// parent's ids); one with a state file returns `IDFORGE_STATUS_FORKED` there instead.
pub struct idforge_uuid7 {
    inner: Uuid7s,
}

impl Handle for idforge_uuid7 {
    type Id = Uuid7;
    fn wrap(inner: Uuid7s) -> Self {
        idforge_uuid7 { inner }
    }
    fn generator(&self) -> &TimeOrdered<Uuid7> {
        &self.inner
    }
}

/// Creates a generator with the default policy (borrow up to 1 s ahead of the clock); free it
/// with `idforge_uuid7_free`.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_uuid7_new(out: *mut *mut idforge_uuid7) -> idforge_status {
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
pub unsafe extern "C" fn idforge_uuid7_new_with_state_file(
    path: *const c_char,
    out: *mut *mut idforge_uuid7,
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
pub unsafe extern "C" fn idforge_uuid7_new_with_policy(
    policy: *const idforge_policy,
    state_file: *const c_char,
    out: *mut *mut idforge_uuid7,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { time_ordered::create(policy, state_file, out) }
}

/// Frees a generator; NULL is ignored. No other call may use the handle during or after this.
///
/// # Safety
/// `handle` is NULL or came from `idforge_uuid7_new*` and is not freed twice.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_uuid7_free(handle: *mut idforge_uuid7) {
    // SAFETY: the caller's guarantee.
    unsafe { ptr::free_handle(handle) }
}

/// Writes the next UUID to the 16 bytes at `out`. Thread-safe.
///
/// # Safety
/// `handle` is NULL or a live generator; `out` is NULL or points to 16 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_uuid7_next(
    handle: *const idforge_uuid7,
    out: *mut u8,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { time_ordered::next(handle, out) }
}

/// Writes `count` fresh UUIDs, in increasing order, to the `count * 16` bytes at `out` (one
/// clock read per run of ids that share a millisecond). Thread-safe. On failure the contents of
/// `out` are unspecified; ids written there are never issued again.
///
/// # Safety
/// `handle` is NULL or a live generator; `out` is NULL or points to `count * 16` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_uuid7_next_many(
    handle: *const idforge_uuid7,
    out: *mut u8,
    count: usize,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { time_ordered::next_batch(handle, out, count) }
}

fn uuid7(bytes: [u8; 16]) -> Result<Uuid7, CoreError> {
    Uuid7::from_bytes(bytes)
}

fn hyphenated(bytes: [u8; 16], buf: &mut [u8; IDFORGE_UUID7_TEXT_LEN]) -> Result<&str, CoreError> {
    Ok(uuid7(bytes)?.to_text(buf))
}

fn ulid_text(bytes: [u8; 16], buf: &mut [u8; Ulid::TEXT_LEN]) -> Result<&str, CoreError> {
    Ok(uuid7(bytes)?.to_ulid_text(buf))
}

/// Writes the 36-character hyphenated lower-case form and a NUL to `out` (`len` >= 37).
/// `INVALID_UUID` when the 16 bytes at `id` are not a version 7 UUID of the RFC 9562 variant.
///
/// # Safety
/// `id` is NULL or points to 16 readable bytes; `out` is NULL or points to `len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_uuid7_to_text(
    id: *const u8,
    out: *mut c_char,
    len: usize,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { time_ordered::to_text(id, out, len, hyphenated) }
}

/// Parses a UUIDv7 (NUL-terminated): hyphenated, 32 hex digits, in braces or after `urn:uuid:`,
/// either case, into the 16 bytes at `out`. `INVALID_UUID` for anything else, including a UUID
/// of another version or variant.
///
/// # Safety
/// `text` is NULL or NUL-terminated; `out` is NULL or points to 16 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_uuid7_parse(text: *const c_char, out: *mut u8) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { time_ordered::parse(text, out, |s| Ok(Uuid7::parse(s)?.to_bytes())) }
}

/// Checks that the 16 bytes at `id` are a version 7 UUID of the RFC 9562 variant
/// (`INVALID_UUID` otherwise).
///
/// # Safety
/// `id` is NULL or points to 16 readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_uuid7_validate(id: *const u8) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantee.
        uuid7(unsafe { ptr::bytes(id, "id") }?)?;
        Ok(())
    })
}

/// The Unix milliseconds of the UUIDv7 at `id`, into `*out_ms` (`INVALID_UUID` if it is not one).
///
/// # Safety
/// `id` is NULL or points to 16 readable bytes; `out_ms` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_uuid7_time(id: *const u8, out_ms: *mut u64) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { time_ordered::read(id, out_ms, |b| Ok(uuid7(b)?.time_ms())) }
}

/// Splits the UUIDv7 at `id` into its fields (`INVALID_UUID` if it is not one).
///
/// # Safety
/// `id` is NULL or points to 16 readable bytes; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_uuid7_decompose(
    id: *const u8,
    out: *mut idforge_uuid7_parts,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe {
        time_ordered::read(id, out, |b| {
            let id = uuid7(b)?;
            Ok(idforge_uuid7_parts {
                time_ms: id.time_ms(),
                rand_a: id.rand_a(),
                rand_b: id.rand_b(),
            })
        })
    }
}

/// Builds the UUIDv7 of `(time_ms, rand_a, rand_b)` into the 16 bytes at `out`: for range
/// queries and tests, not for issuing ids. `TIME_OUT_OF_RANGE` past 48 bits of milliseconds,
/// `INVALID_ARGUMENT` when `rand_a` exceeds 12 bits or `rand_b` 62.
///
/// # Safety
/// `out` is NULL or points to 16 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_uuid7_compose(
    time_ms: u64,
    rand_a: u16,
    rand_b: u64,
    out: *mut u8,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantee.
        let out = unsafe { ptr::out_bytes::<IDFORGE_UUID7_LEN>(out, "out") }?;
        out.write(Uuid7::from_fields(time_ms, rand_a, rand_b)?.to_bytes());
        Ok(())
    })
}

/// Writes the same 128 bits as ULID text (26 characters, the same millisecond) and a NUL to
/// `out` (`len` >= 27); `INVALID_UUID` when the bytes at `id` are not a UUIDv7.
///
/// # Safety
/// `id` is NULL or points to 16 readable bytes; `out` is NULL or points to `len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_uuid7_to_ulid_text(
    id: *const u8,
    out: *mut c_char,
    len: usize,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { time_ordered::to_text(id, out, len, ulid_text) }
}

/// Parses ULID text that holds a UUIDv7 into the 16 bytes at `out`: `INVALID_BASE32` for text
/// that is not a ULID, `INVALID_UUID` for a ULID whose bits are not a UUIDv7.
///
/// # Safety
/// `text` is NULL or NUL-terminated; `out` is NULL or points to 16 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_uuid7_from_ulid_text(
    text: *const c_char,
    out: *mut u8,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    unsafe { time_ordered::parse(text, out, |s| Ok(Uuid7::parse_ulid_text(s)?.to_bytes())) }
}
