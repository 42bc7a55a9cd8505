//! The one cap on a batch call of the bindings (`next_many(n)`), which allocate `n` ids before
//! drawing them: a count past it is refused before any memory is taken.

use idforge_core::Error as CoreError;

use crate::error::Result;

/// The most ids one batch call of a binding makes: 2^27, a 1 GiB buffer of `u64`.
pub const MAX_BATCH: usize = 1 << 27;

/// `n` as a buffer length, if it is at most [`MAX_BATCH`] (`INVALID_ARGUMENT` otherwise).
pub fn batch_len(n: u64) -> Result<usize> {
    match usize::try_from(n) {
        Ok(n) if n <= MAX_BATCH => Ok(n),
        _ => Err(CoreError::InvalidArgument("a batch holds 0 to 2^27 (134217728) ids").into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn the_cap_is_inclusive() {
        assert_eq!(batch_len(0).unwrap(), 0);
        assert_eq!(batch_len(MAX_BATCH as u64).unwrap(), MAX_BATCH);
        let err = batch_len(MAX_BATCH as u64 + 1).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
        assert!(batch_len(u64::MAX).is_err());
    }
}
