//! The C ABI of idforge: `libidforge.so`, `libidforge.a` and `include/idforge.h` (generated from
//! this crate by cbindgen).
//!
//! Thin glue over the `idforge` runtime: opaque handles with `_new`/`_free`, an
//! [`idforge_status`] from every fallible call, outputs written only on success, a per-thread
//! message from `idforge_last_error`, and every export run under a panic boundary so nothing
//! unwinds into C. No algorithm lives here.

// C names: `idforge_snowflake`, `idforge_status`, ... as the header spells them.
#![allow(non_camel_case_types)]

mod describe;
mod enums;
mod error;
mod flake128;
mod id_text;
mod layout;
mod objectid;
mod ptr;
mod segments;
mod snowflake;
mod status;
mod status_codes;
mod time_ordered;
mod ulid;
mod uuid7;

use std::ffi::c_char;

pub use describe::*;
pub use enums::*;
pub use flake128::*;
pub use id_text::*;
pub use layout::*;
pub use objectid::*;
pub use segments::*;
pub use snowflake::*;
pub use status::idforge_status;
pub use ulid::*;
pub use uuid7::*;

/// The library's version, e.g. `"0.1.0"`: compare with `IDFORGE_VERSION_STRING` to check that
/// the header and the library linked at run time agree.
#[unsafe(no_mangle)]
pub extern "C" fn idforge_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The name of a status, e.g. `"IDFORGE_STATUS_INVALID_HEX"`: a static string, never NULL;
/// `"IDFORGE_STATUS_UNKNOWN"` for a value that is not a status. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn idforge_status_str(status: u32) -> *const c_char {
    idforge_status::name_c(status).as_ptr().cast()
}

/// Copies the message of the calling thread's last failed call (NUL-terminated) into `buf` of
/// `len` bytes, and its size with the NUL into `*needed` when `needed` is not NULL.
///
/// The message is per thread and kept until the thread's next failure; successful calls leave
/// it alone, so read it right after the failing call. With no failure yet it is `""`. Returns
/// `IDFORGE_STATUS_BUFFER_TOO_SMALL` (writing only `*needed`) when `buf` is NULL or shorter
/// than the message; this does not replace the recorded message.
///
/// # Safety
/// `buf` is NULL or points to `len` writable bytes; `needed` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_last_error(
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> idforge_status {
    let buf = if buf.is_null() || len == 0 {
        None
    } else {
        // SAFETY: non-NULL, and the caller guarantees `len` writable bytes.
        Some(unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), len) })
    };
    // SAFETY: the caller guarantees `needed` is NULL or writable.
    let needed = unsafe { needed.as_mut() };
    // Not `panic_boundary`: a failure here must not overwrite the message being read.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        error::last_error_into(buf, needed)
    })) {
        Ok(Ok(())) => idforge_status::Ok,
        Ok(Err(_)) => idforge_status::BufferTooSmall,
        Err(_) => idforge_status::Panic,
    }
}
