//! The error enum: one variant per code of `core/testdata/errors.json`, which uniffi turns into
//! the sealed Kotlin class `IdforgeException` with a subclass per code.

use idforge::ErrorCode;

pub use crate::error_codes::IdforgeError;

impl IdforgeError {
    pub(crate) fn argument(message: &str) -> IdforgeError {
        IdforgeError::InvalidArgument(message.to_owned())
    }
}

// A flat error crosses to Kotlin as its variant and this text (the exception's message).
impl std::fmt::Display for IdforgeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for IdforgeError {}

impl From<idforge::Error> for IdforgeError {
    fn from(e: idforge::Error) -> Self {
        IdforgeError::new(e.code(), e.to_string())
    }
}

impl From<idforge::CoreError> for IdforgeError {
    fn from(e: idforge::CoreError) -> Self {
        IdforgeError::new(e.code(), e.to_string())
    }
}

/// Result of this crate's exported calls.
pub type Result<T, E = IdforgeError> = std::result::Result<T, E>;

/// One stable error code: the C status value and the name.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ErrorCodeInfo {
    /// The C `idforge_status` value.
    pub status: i32,
    /// The name, as in `errors.json` (`INVALID_LAYOUT`).
    pub name: String,
}

/// Every error code in order, for the self-check against `errors.json`.
#[uniffi::export]
pub fn error_codes() -> Vec<ErrorCodeInfo> {
    ErrorCode::ALL
        .iter()
        .map(|c| ErrorCodeInfo {
            status: c.as_u32() as i32,
            name: c.name().to_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_maps_to_its_own_variant() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            let e = IdforgeError::new(code, code.name().to_owned());
            assert_eq!(e.to_string(), code.name());
            assert!(
                seen.insert(std::mem::discriminant(&e)),
                "{code:?} shares a variant"
            );
        }
    }
}
