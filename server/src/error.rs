//! The command-line tool's error: a stable [`ErrorCode`], a message, and the exit status that
//! follows from them.

use std::fmt;
use std::io;

use idforge::ErrorCode;
use idforge_core::Error as CoreError;

/// Exit status of a run that succeeded (or whose reader went away, as with `| head -1`).
pub const EXIT_OK: u8 = 0;
/// Exit status of a failure that is not the input's fault (I/O, a clock far behind).
pub const EXIT_FAILURE: u8 = 1;
/// Exit status of bad input: a bad id, layout, time, node or count, and clap's usage errors.
pub const EXIT_USAGE: u8 = 2;

/// Why a command failed, printed as one line: `idforge: error: <message> (<CODE>)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    code: ErrorCode,
    message: String,
    broken_pipe: bool,
}

impl CliError {
    /// An error with this code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> CliError {
        CliError {
            code,
            message: message.into(),
            broken_pipe: false,
        }
    }

    /// An [`ErrorCode::InvalidArgument`] error.
    pub fn invalid(message: impl Into<String>) -> CliError {
        CliError::new(ErrorCode::InvalidArgument, message)
    }

    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The message, without the code.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether the output's reader went away: the run ends quietly and successfully.
    pub fn is_broken_pipe(&self) -> bool {
        self.broken_pipe
    }

    /// The process exit status: 0 for a closed output pipe, 1 for failures that are not the
    /// input's fault, 2 for bad input.
    pub fn exit_code(&self) -> u8 {
        if self.broken_pipe {
            return EXIT_OK;
        }
        match self.code {
            ErrorCode::ClockBehind
            | ErrorCode::Timeout
            | ErrorCode::Forked
            | ErrorCode::BufferFull
            | ErrorCode::SourceUnavailable
            | ErrorCode::Io
            | ErrorCode::Panic => EXIT_FAILURE,
            _ => EXIT_USAGE,
        }
    }

    /// The one line printed on standard error (without the newline).
    pub fn line(&self) -> String {
        format!("idforge: error: {} ({})", self.message, self.code.name())
    }
}

/// The message alone.
impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

impl From<CoreError> for CliError {
    fn from(e: CoreError) -> CliError {
        CliError::new(e.code(), e.to_string())
    }
}

impl From<idforge::Error> for CliError {
    fn from(e: idforge::Error) -> CliError {
        CliError::new(e.code(), e.to_string())
    }
}

/// Output errors: a closed pipe is remembered so that the run can end quietly.
impl From<io::Error> for CliError {
    fn from(e: io::Error) -> CliError {
        CliError {
            code: ErrorCode::Io,
            message: format!("writing the output: {e}"),
            broken_pipe: e.kind() == io::ErrorKind::BrokenPipe,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_exit_codes() {
        let e = CliError::from(CoreError::InvalidLayout("bad"));
        assert_eq!(
            e.line(),
            "idforge: error: invalid layout: bad (INVALID_LAYOUT)"
        );
        assert_eq!(e.exit_code(), EXIT_USAGE);
        assert_eq!(CliError::new(ErrorCode::Io, "x").exit_code(), EXIT_FAILURE);
        let pipe = CliError::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(pipe.is_broken_pipe());
        assert_eq!(pipe.exit_code(), EXIT_OK);
        let other = CliError::from(io::Error::from(io::ErrorKind::PermissionDenied));
        assert_eq!(other.code(), ErrorCode::Io);
        assert_eq!(other.exit_code(), EXIT_FAILURE);
    }
}
