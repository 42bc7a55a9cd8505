//! The error enum: one variant per code of `core/testdata/errors.json`, which uniffi turns into
//! the sealed Kotlin class `IdforgeException` with a subclass per code.

use runtime::ErrorCode;

/// Every failure of idforge, by its stable code; the value is the message.
#[derive(Debug, uniffi::Error)]
#[uniffi(flat_error)]
#[allow(missing_docs)] // each variant is its code, documented in errors.json
pub enum IdforgeError {
    InvalidLayout(String),
    NodeOutOfRange(String),
    EpochInFuture(String),
    TimeOutOfRange(String),
    SequenceOutOfRange(String),
    InvalidHex(String),
    InvalidBase62(String),
    InvalidBase32(String),
    InvalidDecimal(String),
    InvalidLength(String),
    InvalidArgument(String),
    ClockBehind(String),
    Timeout(String),
    Forked(String),
    InvalidSegment(String),
    BufferFull(String),
    Overflow(String),
    SourceUnavailable(String),
    Io(String),
    InvalidUrl(String),
    LeaseLost(String),
    NullArgument(String),
    Panic(String),
    BufferTooSmall(String),
}

impl IdforgeError {
    /// The error of `code` with `message`.
    pub fn new(code: ErrorCode, message: String) -> IdforgeError {
        use ErrorCode as C;
        let make = match code {
            C::InvalidLayout => IdforgeError::InvalidLayout,
            C::NodeOutOfRange => IdforgeError::NodeOutOfRange,
            C::EpochInFuture => IdforgeError::EpochInFuture,
            C::TimeOutOfRange => IdforgeError::TimeOutOfRange,
            C::SequenceOutOfRange => IdforgeError::SequenceOutOfRange,
            C::InvalidHex => IdforgeError::InvalidHex,
            C::InvalidBase62 => IdforgeError::InvalidBase62,
            C::InvalidBase32 => IdforgeError::InvalidBase32,
            C::InvalidDecimal => IdforgeError::InvalidDecimal,
            C::InvalidLength => IdforgeError::InvalidLength,
            C::InvalidArgument => IdforgeError::InvalidArgument,
            C::ClockBehind => IdforgeError::ClockBehind,
            C::Timeout => IdforgeError::Timeout,
            C::Forked => IdforgeError::Forked,
            C::InvalidSegment => IdforgeError::InvalidSegment,
            C::BufferFull => IdforgeError::BufferFull,
            C::Overflow => IdforgeError::Overflow,
            C::SourceUnavailable => IdforgeError::SourceUnavailable,
            C::Io => IdforgeError::Io,
            C::InvalidUrl => IdforgeError::InvalidUrl,
            C::LeaseLost => IdforgeError::LeaseLost,
            C::NullArgument => IdforgeError::NullArgument,
            C::Panic => IdforgeError::Panic,
            C::BufferTooSmall => IdforgeError::BufferTooSmall,
            // A code newer than this binding (the unit test below keeps them in step).
            _ => IdforgeError::Panic,
        };
        make(message)
    }

    /// An `INVALID_ARGUMENT` error.
    pub(crate) fn argument(message: &str) -> IdforgeError {
        IdforgeError::InvalidArgument(message.to_owned())
    }

    fn message(&self) -> &str {
        use IdforgeError as E;
        match self {
            E::InvalidLayout(m)
            | E::NodeOutOfRange(m)
            | E::EpochInFuture(m)
            | E::TimeOutOfRange(m)
            | E::SequenceOutOfRange(m)
            | E::InvalidHex(m)
            | E::InvalidBase62(m)
            | E::InvalidBase32(m)
            | E::InvalidDecimal(m)
            | E::InvalidLength(m)
            | E::InvalidArgument(m)
            | E::ClockBehind(m)
            | E::Timeout(m)
            | E::Forked(m)
            | E::InvalidSegment(m)
            | E::BufferFull(m)
            | E::Overflow(m)
            | E::SourceUnavailable(m)
            | E::Io(m)
            | E::InvalidUrl(m)
            | E::LeaseLost(m)
            | E::NullArgument(m)
            | E::Panic(m)
            | E::BufferTooSmall(m) => m,
        }
    }
}

// A flat error crosses to Kotlin as its variant and this text (the exception's message).
impl std::fmt::Display for IdforgeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for IdforgeError {}

impl From<runtime::Error> for IdforgeError {
    fn from(e: runtime::Error) -> Self {
        IdforgeError::new(e.code(), e.to_string())
    }
}

impl From<runtime::CoreError> for IdforgeError {
    fn from(e: runtime::CoreError) -> Self {
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
