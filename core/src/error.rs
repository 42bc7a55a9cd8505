//! The one error type of idforge, and the stable numeric codes every binding exposes.
//!
//! [`ErrorCode`] values are frozen: they are the C `idforge_status` numbers, and
//! `core/testdata/errors.json` lists them with the C, Python and JavaScript names. That file is
//! the one list: `ci/gen/gen_errors.py` writes the enum (`error_code.rs`) and every binding's list
//! from it. A new error gets a new number; an existing number never changes meaning.

pub use crate::error_code::ErrorCode;

impl ErrorCode {
    /// The numeric value (the C status).
    pub const fn as_u32(self) -> u32 {
        self as u32
    }

    /// The code with this numeric value, if any.
    pub fn from_u32(value: u32) -> Option<ErrorCode> {
        Self::ALL.iter().copied().find(|c| c.as_u32() == value)
    }
}

/// Every way an idforge operation can fail.
///
/// Small and `Copy` so the core needs no allocation; richer context (paths, OS errors, server
/// messages) is added by the runtime around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A snowflake layout is not valid; the text says which rule it breaks.
    #[error("invalid layout: {0}")]
    InvalidLayout(&'static str),
    /// A node id does not fit the layout's node field.
    #[error("node id {node} is out of range (the layout allows 0..={max})")]
    NodeOutOfRange {
        /// The node id given.
        node: u64,
        /// The largest node id the layout can hold.
        max: u64,
    },
    /// The layout's epoch lies after the current time.
    #[error("the layout's epoch ({epoch_ms} ms) is in the future (now is {now_ms} ms)")]
    EpochInFuture {
        /// The epoch, in Unix milliseconds.
        epoch_ms: u64,
        /// The current time, in Unix milliseconds.
        now_ms: u64,
    },
    /// A time is before the epoch or after the last time the layout can encode.
    #[error("time {time_ms} ms is outside what the layout can encode")]
    TimeOutOfRange {
        /// The time, in Unix milliseconds.
        time_ms: u64,
    },
    /// A sequence number does not fit the layout's sequence field.
    #[error("sequence {seq} is out of range (the layout allows 0..={max})")]
    SequenceOutOfRange {
        /// The sequence given.
        seq: u64,
        /// The largest sequence the layout can hold.
        max: u64,
    },
    /// Text is not valid hexadecimal of the expected length.
    #[error("invalid hex: {0}")]
    InvalidHex(&'static str),
    /// Text is not valid base62 or does not fit.
    #[error("invalid base62: {0}")]
    InvalidBase62(&'static str),
    /// Text is not valid Crockford base32 or does not fit.
    #[error("invalid base32: {0}")]
    InvalidBase32(&'static str),
    /// Text is not a valid decimal number or does not fit.
    #[error("invalid decimal: {0}")]
    InvalidDecimal(&'static str),
    /// A byte string has the wrong length.
    #[error("invalid length: expected {expected} bytes, got {got}")]
    InvalidLength {
        /// The length required.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// An argument is out of its allowed range.
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    /// The generator is ahead of the clock by more than its policy lets it run or wait.
    #[error("the clock is {behind_ms} ms behind the last issued id, more than the policy allows")]
    ClockBehind {
        /// How far the clock would have to advance, in milliseconds.
        behind_ms: u64,
    },
    /// A wait exceeded its budget.
    #[error("timed out after {waited_ms} ms")]
    Timeout {
        /// How long the caller waited, in milliseconds.
        waited_ms: u64,
    },
    /// A fixed-node generator was used in a forked child, where it would repeat the parent's ids.
    #[error(
        "this generator was created before fork(); give the child its own node id (or lease one)"
    )]
    Forked,
    /// A segment is empty, inverted or longer than the buffer can index.
    #[error("invalid segment: {0}")]
    InvalidSegment(&'static str),
    /// Both buffers still hold unused ids.
    #[error("both segment buffers are in use")]
    BufferFull,
    /// A counter or range reached the end of its type.
    #[error("overflow: {0}")]
    Overflow(&'static str),
    /// A segment source failed or could not be reached.
    #[error("segment source unavailable: {0}")]
    SourceUnavailable(&'static str),
    /// An I/O operation failed.
    #[error("i/o error: {0}")]
    Io(&'static str),
    /// A source URL could not be parsed or its scheme is not supported.
    #[error("invalid url: {0}")]
    InvalidUrl(&'static str),
    /// The worker-id lease of a generator ended (lost, or not renewed in time).
    #[error("worker-id lease lost: {0}")]
    LeaseLost(&'static str),
    /// Text or bytes are not a UUID, or not of the version asked for.
    #[error("invalid uuid: {0}")]
    InvalidUuid(&'static str),
}

impl Error {
    /// The stable code of this error.
    pub const fn code(&self) -> ErrorCode {
        match self {
            Error::InvalidLayout(_) => ErrorCode::InvalidLayout,
            Error::NodeOutOfRange { .. } => ErrorCode::NodeOutOfRange,
            Error::EpochInFuture { .. } => ErrorCode::EpochInFuture,
            Error::TimeOutOfRange { .. } => ErrorCode::TimeOutOfRange,
            Error::SequenceOutOfRange { .. } => ErrorCode::SequenceOutOfRange,
            Error::InvalidHex(_) => ErrorCode::InvalidHex,
            Error::InvalidBase62(_) => ErrorCode::InvalidBase62,
            Error::InvalidBase32(_) => ErrorCode::InvalidBase32,
            Error::InvalidDecimal(_) => ErrorCode::InvalidDecimal,
            Error::InvalidLength { .. } => ErrorCode::InvalidLength,
            Error::InvalidArgument(_) => ErrorCode::InvalidArgument,
            Error::ClockBehind { .. } => ErrorCode::ClockBehind,
            Error::Timeout { .. } => ErrorCode::Timeout,
            Error::Forked => ErrorCode::Forked,
            Error::InvalidSegment(_) => ErrorCode::InvalidSegment,
            Error::BufferFull => ErrorCode::BufferFull,
            Error::Overflow(_) => ErrorCode::Overflow,
            Error::SourceUnavailable(_) => ErrorCode::SourceUnavailable,
            Error::Io(_) => ErrorCode::Io,
            Error::InvalidUrl(_) => ErrorCode::InvalidUrl,
            Error::LeaseLost(_) => ErrorCode::LeaseLost,
            Error::InvalidUuid(_) => ErrorCode::InvalidUuid,
        }
    }
}

/// Result with the core [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;
