//! MongoDB ObjectIds (12 bytes): generation from the process-wide generator and the codecs.

use std::ffi::c_char;

use runtime::{CoreError, ObjectId};

use crate::error::panic_boundary;
use crate::ptr;
use crate::status::idforge_status;

/// Bytes in an ObjectId.
pub const IDFORGE_OBJECTID_LEN: usize = 12;
/// Characters of an ObjectId in hex (a buffer needs one more, for the NUL).
pub const IDFORGE_OBJECTID_HEX_LEN: usize = 24;

/// Writes a fresh ObjectId (per the bson spec: 4-byte seconds, 5 random bytes per process, a
/// 3-byte counter) to the 12 bytes at `out`. Thread-safe; a forked child reseeds on its first
/// call, so parent and child never share ids. Fails only when the OS has no entropy (`IO`).
///
/// # Safety
/// `out` is NULL or points to 12 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_objectid_generate(out: *mut u8) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantee.
        let out = unsafe { ptr::out_bytes::<IDFORGE_OBJECTID_LEN>(out, "out") }?;
        // Written where the id is made: see `object_id_with`.
        runtime::object_id_with(|id| out.write(id.bytes()))?;
        Ok(())
    })
}

/// Writes the 24 lower-case hex digits of the ObjectId at `id` and a NUL to `out` (`len` >= 25,
/// else `BUFFER_TOO_SMALL`).
///
/// # Safety
/// `id` is NULL or points to 12 readable bytes; `out` is NULL or points to `len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_objectid_to_hex(
    id: *const u8,
    out: *mut c_char,
    len: usize,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantee.
        let id = ObjectId::from_bytes(unsafe { ptr::bytes(id, "id") }?);
        let mut buf = [0u8; IDFORGE_OBJECTID_HEX_LEN];
        // SAFETY: the caller's guarantee.
        unsafe { ptr::write_str(id.to_hex(&mut buf), out, len, "out") }
    })
}

/// Parses 24 hex digits (either case, NUL-terminated) into the 12 bytes at `out`:
/// `INVALID_HEX` otherwise.
///
/// # Safety
/// `hex` is NULL or NUL-terminated; `out` is NULL or points to 12 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_objectid_from_hex(
    hex: *const c_char,
    out: *mut u8,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (hex, out) = unsafe {
            (
                ptr::cstr(hex, "hex")?,
                ptr::out_bytes::<IDFORGE_OBJECTID_LEN>(out, "out")?,
            )
        };
        let text = hex
            .to_str()
            .map_err(|_| CoreError::InvalidHex("not 24 hex digits"))?;
        out.write(ObjectId::parse_hex(text)?.bytes());
        Ok(())
    })
}

/// The creation time of the ObjectId at `id`, in Unix seconds.
///
/// # Safety
/// `id` is NULL or points to 12 readable bytes; `out_seconds` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_objectid_timestamp(
    id: *const u8,
    out_seconds: *mut u32,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (id, out) = unsafe { (ptr::bytes(id, "id")?, ptr::out(out_seconds, "out_seconds")?) };
        out.write(ObjectId::from_bytes(id).timestamp());
        Ok(())
    })
}
