//! Flake-128 ids (16 bytes, big-endian: 64-bit ms | 48-bit worker | 16-bit sequence): the
//! generator handle and the codecs.

use std::ffi::c_char;

use runtime::{CoreError, Flake128, Flake128s, WorkerId};

use crate::error::{FfiError, panic_boundary};
use crate::ptr;
use crate::status::idforge_status;

/// Bytes in a flake-128 id.
pub const IDFORGE_FLAKE128_LEN: usize = 16;
/// Characters of a flake-128 id in base62 (a buffer needs one more, for the NUL).
pub const IDFORGE_FLAKE128_BASE62_LEN: usize = 22;
/// Characters of a flake-128 id in hex (a buffer needs one more, for the NUL).
pub const IDFORGE_FLAKE128_HEX_LEN: usize = 32;

/// The fields of a flake-128 id.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct idforge_flake128_parts {
    /// Unix milliseconds.
    pub time_ms: u64,
    /// The 48-bit worker id.
    pub worker: u64,
    /// The sequence within the millisecond.
    pub seq: u16,
}

/// A flake-128 generator. Thread-safe: every call but `idforge_flake128_free` may run
/// concurrently on one handle.
pub struct idforge_flake128 {
    inner: Flake128s,
}

/// Creates a generator; `worker` is used only with `IDFORGE_WORKER_KIND_FIXED` (at most
/// 2^48 - 1, else `NODE_OUT_OF_RANGE`). Free it with `idforge_flake128_free`.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_flake128_new(
    worker_kind: u32,
    worker: u64,
    out: *mut *mut idforge_flake128,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantee.
        let out = unsafe { ptr::out(out, "out") }?;
        let worker = match worker_kind {
            0 => WorkerId::Random,
            1 => WorkerId::Mac,
            2 => WorkerId::Fixed(worker),
            _ => return Err(CoreError::InvalidArgument("unknown idforge_worker_kind").into()),
        };
        let inner = Flake128s::new(worker)?;
        out.write(ptr::into_handle(idforge_flake128 { inner }));
        Ok(())
    })
}

/// Frees a generator; NULL is ignored. No other call may use the handle during or after this.
///
/// # Safety
/// `handle` is NULL or came from `idforge_flake128_new` and is not freed twice.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_flake128_free(handle: *mut idforge_flake128) {
    // SAFETY: the caller's guarantee.
    unsafe { ptr::free_handle(handle) }
}

/// Writes the next id to the 16 bytes at `out`. Thread-safe.
///
/// # Safety
/// `handle` is NULL or a live generator; `out` is NULL or points to 16 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_flake128_next(
    handle: *const idforge_flake128,
    out: *mut u8,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (h, out) = unsafe {
            (
                ptr::get(handle, "handle")?,
                ptr::out_bytes::<IDFORGE_FLAKE128_LEN>(out, "out")?,
            )
        };
        out.write(h.inner.next()?.to_bytes());
        Ok(())
    })
}

/// The worker id of a generator, into `*out_worker`.
///
/// # Safety
/// `handle` is NULL or a live generator; `out_worker` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_flake128_worker(
    handle: *const idforge_flake128,
    out_worker: *mut u64,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (h, out) = unsafe {
            (
                ptr::get(handle, "handle")?,
                ptr::out(out_worker, "out_worker")?,
            )
        };
        out.write(h.inner.worker());
        Ok(())
    })
}

/// Writes the 22-character base62 form (`0-9A-Za-z`, zero-padded, sorts like the id) and a
/// NUL to `out` (`len` >= 23).
///
/// # Safety
/// `id` is NULL or points to 16 readable bytes; `out` is NULL or points to `len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_flake128_to_base62(
    id: *const u8,
    out: *mut c_char,
    len: usize,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantee.
        let id = Flake128::from_bytes(unsafe { ptr::bytes(id, "id") }?);
        let mut buf = [0u8; IDFORGE_FLAKE128_BASE62_LEN];
        // SAFETY: the caller's guarantee.
        unsafe { ptr::write_str(id.to_base62(&mut buf), out, len, "out") }
    })
}

/// Writes the 32 lower-case hex digits and a NUL to `out` (`len` >= 33).
///
/// # Safety
/// `id` is NULL or points to 16 readable bytes; `out` is NULL or points to `len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_flake128_to_hex(
    id: *const u8,
    out: *mut c_char,
    len: usize,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantee.
        let id = Flake128::from_bytes(unsafe { ptr::bytes(id, "id") }?);
        let mut buf = [0u8; IDFORGE_FLAKE128_HEX_LEN];
        // SAFETY: the caller's guarantee.
        unsafe { ptr::write_str(id.to_hex(&mut buf), out, len, "out") }
    })
}

/// Parses `text` (NUL-terminated) with `parse` into the 16 bytes at `out`; non-UTF-8 text gets
/// the parser's own error.
///
/// # Safety
/// `text` is NULL or NUL-terminated; `out` is NULL or points to 16 writable bytes.
unsafe fn parse_into(
    text: *const c_char,
    out: *mut u8,
    parse: fn(&str) -> Result<Flake128, CoreError>,
) -> Result<(), FfiError> {
    // SAFETY: the caller's guarantees.
    let (text, out) = unsafe {
        (
            ptr::cstr(text, "text")?,
            ptr::out_bytes::<IDFORGE_FLAKE128_LEN>(out, "out")?,
        )
    };
    // Invalid UTF-8 holds a byte outside every alphabet; the lossy form keeps the parser's
    // error (and its code) the same as for any other bad character.
    let id = parse(&text.to_string_lossy())?;
    out.write(id.to_bytes());
    Ok(())
}

/// Parses base62 (22 characters, or fewer as Boundary's unpadded form) into the 16 bytes at
/// `out`: `INVALID_BASE62` otherwise.
///
/// # Safety
/// `text` is NULL or NUL-terminated; `out` is NULL or points to 16 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_flake128_from_base62(
    text: *const c_char,
    out: *mut u8,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    panic_boundary(|| unsafe { parse_into(text, out, Flake128::parse_base62) })
}

/// Parses 32 hex digits (either case) into the 16 bytes at `out`: `INVALID_HEX` otherwise.
///
/// # Safety
/// `text` is NULL or NUL-terminated; `out` is NULL or points to 16 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_flake128_from_hex(
    text: *const c_char,
    out: *mut u8,
) -> idforge_status {
    // SAFETY: the caller's guarantees.
    panic_boundary(|| unsafe { parse_into(text, out, Flake128::parse_hex) })
}

/// Splits the id at `id` into its fields.
///
/// # Safety
/// `id` is NULL or points to 16 readable bytes; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_flake128_decompose(
    id: *const u8,
    out: *mut idforge_flake128_parts,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (id, out) = unsafe { (ptr::bytes(id, "id")?, ptr::out(out, "out")?) };
        let id = Flake128::from_bytes(id);
        out.write(idforge_flake128_parts {
            time_ms: id.time_ms(),
            worker: id.worker(),
            seq: id.seq(),
        });
        Ok(())
    })
}

/// Builds the id of `(time_ms, worker, seq)` into the 16 bytes at `out`; a worker over 48 bits
/// gets `NODE_OUT_OF_RANGE`.
///
/// # Safety
/// `out` is NULL or points to 16 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_flake128_compose(
    time_ms: u64,
    worker: u64,
    seq: u16,
    out: *mut u8,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantee.
        let out = unsafe { ptr::out_bytes::<IDFORGE_FLAKE128_LEN>(out, "out") }?;
        out.write(Flake128::from_parts(time_ms, worker, seq)?.to_bytes());
        Ok(())
    })
}
