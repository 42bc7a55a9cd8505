//! idforge errors as PostgreSQL errors: the errors.json name leads the message, and the
//! SQLSTATE is the closest standard class, so callers can match on either.

use idforge::{CoreError, ErrorCode};
use pgrx::pg_sys::errcodes::PgSqlErrorCode;

/// An error of the extension: an idforge code and its words.
#[derive(Debug)]
pub struct PgError {
    /// The stable code (errors.json).
    pub code: ErrorCode,
    /// What happened.
    pub message: String,
    /// The SQLSTATE, when not the code's usual one ([`sqlstate`]).
    pub state: Option<PgSqlErrorCode>,
}

/// The extension's result.
pub type Result<T> = std::result::Result<T, PgError>;

impl PgError {
    /// An error with this code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> PgError {
        PgError {
            code,
            message: message.into(),
            state: None,
        }
    }

    /// A setup problem of this server (the library not preloaded, a standby): SQLSTATE 55000,
    /// object not in prerequisite state.
    pub fn setup(message: impl Into<String>) -> PgError {
        PgError {
            state: Some(PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
            ..PgError::new(ErrorCode::InvalidArgument, message)
        }
    }
}

impl From<idforge::Error> for PgError {
    fn from(e: idforge::Error) -> PgError {
        PgError::new(e.code(), e.to_string())
    }
}

impl From<CoreError> for PgError {
    fn from(e: CoreError) -> PgError {
        PgError::new(e.code(), e.to_string())
    }
}

/// The SQLSTATE for an idforge error code.
pub fn sqlstate(code: ErrorCode) -> PgSqlErrorCode {
    use PgSqlErrorCode as S;
    match code {
        ErrorCode::InvalidLayout
        | ErrorCode::InvalidArgument
        | ErrorCode::NodeOutOfRange
        | ErrorCode::SequenceOutOfRange
        | ErrorCode::EpochInFuture => S::ERRCODE_INVALID_PARAMETER_VALUE,
        ErrorCode::TimeOutOfRange => S::ERRCODE_DATETIME_FIELD_OVERFLOW,
        ErrorCode::Overflow => S::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
        ErrorCode::InvalidHex
        | ErrorCode::InvalidBase62
        | ErrorCode::InvalidBase32
        | ErrorCode::InvalidDecimal
        | ErrorCode::InvalidLength
        | ErrorCode::InvalidUuid => S::ERRCODE_INVALID_TEXT_REPRESENTATION,
        // The clock is behind the ids already issued, or the server is not set up for the
        // call: retrying later, or after fixing the setup, can succeed.
        ErrorCode::ClockBehind | ErrorCode::Timeout | ErrorCode::SourceUnavailable => {
            S::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE
        }
        ErrorCode::Io => S::ERRCODE_IO_ERROR,
        _ => S::ERRCODE_INTERNAL_ERROR,
    }
}

/// Unwraps `result`, raising its error as a PostgreSQL ERROR: `NAME: what happened`.
pub fn or_raise<T>(result: Result<T>) -> T {
    match result {
        Ok(value) => value,
        Err(e) => {
            pgrx::ereport!(
                ERROR,
                e.state.unwrap_or_else(|| sqlstate(e.code)),
                format!("{}: {}", e.code.name(), e.message)
            );
        }
    }
}
