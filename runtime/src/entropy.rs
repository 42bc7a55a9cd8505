//! Random bytes from the operating system.

use idforge_core::Error as CoreError;

use crate::error::Result;

/// Fills `buf` with OS randomness.
pub(crate) fn fill(buf: &mut [u8]) -> Result<()> {
    getrandom::fill(buf).map_err(|_| CoreError::Io("the OS random source failed").into())
}

/// A random `u64`.
pub(crate) fn u64() -> Result<u64> {
    let mut b = [0u8; 8];
    fill(&mut b)?;
    Ok(u64::from_le_bytes(b))
}
