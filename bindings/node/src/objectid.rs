//! ObjectId codecs and generation. The package's `ObjectId` class is JavaScript (a native object
//! per id would cost a wrapper and a finalizer each); these functions do the work.

use idforge::ObjectId as CoreObjectId;
use napi::bindgen_prelude::{Uint8Array, Uint8ArraySlice};
use napi_derive::napi;

use crate::error::{OrThrow, Result};

/// Fills `buf` with fresh ObjectIds (12 bytes each, from the process-wide generator) and
/// returns how many: `floor(buf.length / 12)`.
#[napi(ts_args_type = "buf: Uint8Array")]
pub fn object_id_fill(mut buf: Uint8ArraySlice) -> Result<u32> {
    // SAFETY: JavaScript runs on this thread and is inside this call, so nothing else reads or
    // writes the array's memory until it returns.
    let out = unsafe { buf.as_mut() };
    crate::millis::touch();
    let mut n = 0;
    for chunk in out.chunks_exact_mut(CoreObjectId::LEN) {
        idforge::object_id_with(|id| chunk.copy_from_slice(&id.bytes())).or_throw()?;
        n += 1;
    }
    Ok(n)
}

/// Writes into `out` (12 bytes) the ObjectId written as 24 hex digits (either case).
#[napi(ts_args_type = "hex: string, out: Uint8Array")]
pub fn object_id_from_hex(hex: String, out: Uint8ArraySlice) -> Result<()> {
    crate::args::write(out, &CoreObjectId::parse_hex(&hex).or_throw()?.bytes())
}

/// Copies into `out` (12 bytes) `bytes`, which must be the 12 bytes of an ObjectId.
#[napi(ts_args_type = "bytes: Uint8Array, out: Uint8Array")]
pub fn object_id_from_bytes(bytes: Uint8Array, out: Uint8ArraySlice) -> Result<()> {
    crate::args::write(
        out,
        &CoreObjectId::try_from_slice(&bytes).or_throw()?.bytes(),
    )
}

/// The creation time of an ObjectId, in Unix seconds.
#[napi]
pub fn object_id_timestamp(bytes: Uint8Array) -> Result<u32> {
    Ok(CoreObjectId::try_from_slice(&bytes).or_throw()?.timestamp())
}
