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
    },
}

impl Error {
    /// The stable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Core(e) => e.code(),
            Error::StateFile { .. } => ErrorCode::Io,
            Error::Source { code, .. } => *code,
        }
    }
}

/// Result with the runtime [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
