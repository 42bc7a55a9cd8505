//! The runtime's error: the core's stable [`ErrorCode`]s with the context only std can carry.

use std::path::PathBuf;

pub use idforge_core::{Error as CoreError, ErrorCode};

/// Every way a runtime operation can fail. [`Error::code`] gives the stable code the bindings
/// expose (C status, Python exception class, JavaScript `error.code`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An error from the core algorithms (bad input, clock behind, ...).
    #[error(transparent)]
    Core(#[from] CoreError),
    /// The state file could not be read, parsed or written.
    #[error("state file {path}: {source}")]
    StateFile {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// A segment source failed.
    #[error("segment source: {message}")]
    Source {
        /// The code that best describes the failure.
        code: ErrorCode,
        /// The source's own words.
        message: String,
        /// Whether trying again may succeed (a connection refused or reset, a server restarting
        /// or failing over, a request that timed out, a busy database): a waiting caller keeps
        /// waiting through these, up to its own timeout. Permanent failures (authentication
        /// refused, an unknown tag, an overflow, a key that is no counter, a malformed reply, a
        /// range below ids already taken) end the wait at once.
        transient: bool,
    },
    /// Text that is not what it should be (an id, a time), in words that name the text.
    #[error("{message}")]
    Text {
        /// The code of the refusal (`INVALID_ARGUMENT`, `INVALID_DECIMAL`,
        /// `TIME_OUT_OF_RANGE`, ...).
        code: ErrorCode,
        /// What is wrong with the text.
        message: String,
    },
}

impl Error {
    /// The stable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Core(e) => e.code(),
            Error::StateFile { .. } => ErrorCode::Io,
            Error::Source { code, .. } | Error::Text { code, .. } => *code,
        }
    }

    /// Whether the operation may succeed if tried again (see [`Error::Source`]'s `transient`).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Error::Source {
                transient: true,
                ..
            }
        )
    }

    /// A refusal of text, with its code and words.
    pub fn text(code: ErrorCode, message: impl Into<String>) -> Error {
        Error::Text {
            code,
            message: message.into(),
        }
    }

    /// A source failure that trying again will not mend.
    pub(crate) fn permanent(code: ErrorCode, message: String) -> Error {
        Error::Source {
            code,
            message,
            transient: false,
        }
    }

    /// The same failure again, for another request of one batch (a source error keeps its
    /// code, words and whether it may pass; any other error is a permanent one in its words).
    pub(crate) fn again(&self) -> Error {
        match self {
            Error::Source {
                code,
                message,
                transient,
            } => Error::Source {
                code: *code,
                message: message.clone(),
                transient: *transient,
            },
            other => Error::permanent(other.code(), other.to_string()),
        }
    }

    /// A source failure that may pass: a caller waiting for a range keeps waiting.
    pub(crate) fn transient(code: ErrorCode, message: String) -> Error {
        Error::Source {
            code,
            message,
            transient: true,
        }
    }
}

/// Result with the runtime [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
