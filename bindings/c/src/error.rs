//! Errors at the C boundary: the one conversion to `idforge_status`, the per-thread last error
//! message, and the panic boundary every export runs in.

use std::cell::RefCell;
use std::ffi::CString;
use std::panic::{self, AssertUnwindSafe};

use runtime::ErrorCode;

use crate::status::idforge_status;

/// Why a C call failed.
#[derive(Debug)]
pub(crate) enum FfiError {
    /// An error of the runtime (or of the core, through it).
    Runtime(runtime::Error),
    /// A required pointer argument was NULL; names the argument.
    Null(&'static str),
    /// An output buffer of `got` bytes, where `needed` are required.
    TooSmall { needed: usize, got: usize },
}

impl From<runtime::Error> for FfiError {
    fn from(e: runtime::Error) -> Self {
        FfiError::Runtime(e)
    }
}

impl From<runtime::CoreError> for FfiError {
    fn from(e: runtime::CoreError) -> Self {
        FfiError::Runtime(e.into())
    }
}

impl FfiError {
    fn status(&self) -> idforge_status {
        match self {
            FfiError::Runtime(e) => idforge_status::of(e.code()),
            FfiError::Null(_) => idforge_status::of(ErrorCode::NullArgument),
            FfiError::TooSmall { .. } => idforge_status::of(ErrorCode::BufferTooSmall),
        }
    }

    fn message(&self) -> String {
        match self {
            FfiError::Runtime(e) => e.to_string(),
            FfiError::Null(arg) => format!("argument `{arg}` is NULL"),
            FfiError::TooSmall { needed, got } => {
                format!("output buffer too small: {got} bytes, {needed} needed")
            }
        }
    }
}

/// Result of the safe body of an export.
pub(crate) type FfiResult = Result<(), FfiError>;

thread_local! {
    /// The message of this thread's last failed call (set only on failure).
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

fn set_last_error(message: String) {
    // Messages are ours and never hold NUL; strip one defensively rather than lose the text.
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // `try_with`: during thread teardown the slot may be gone; the status still tells the error.
    let _ = LAST_ERROR.try_with(|slot| *slot.borrow_mut() = Some(message));
}

/// Runs the body of an export: converts its error to a status (recording the message) and a
/// panic to `IDFORGE_STATUS_PANIC`, so nothing unwinds into C.
pub(crate) fn panic_boundary(body: impl FnOnce() -> FfiResult) -> idforge_status {
    // AssertUnwindSafe: after a panic the handle may be mid-update, but every handle's state is
    // atomics whose invariants hold at each step, so later calls stay sound.
    match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => idforge_status::Ok,
        Ok(Err(e)) => failed(e),
        Err(payload) => panicked(payload),
    }
}

/// Records the message of a failed call; out of line so the success path of every export stays
/// small (fewer registers saved, a smaller stack frame).
#[cold]
#[inline(never)]
fn failed(e: FfiError) -> idforge_status {
    set_last_error(e.message());
    e.status()
}

#[cold]
#[inline(never)]
fn panicked(payload: Box<dyn std::any::Any + Send>) -> idforge_status {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    set_last_error(format!(
        "idforge panicked (a bug, please report it): {text}"
    ));
    idforge_status::Panic
}

/// Copies this thread's last error message into `buf` (see `idforge_last_error`).
pub(crate) fn last_error_into(buf: Option<&mut [u8]>, needed: Option<&mut usize>) -> FfiResult {
    LAST_ERROR.with(|slot| {
        let slot = slot.borrow();
        let bytes = slot
            .as_deref()
            .map_or(&b"\0"[..], |m| m.to_bytes_with_nul());
        if let Some(needed) = needed {
            *needed = bytes.len();
        }
        let got = buf.as_ref().map_or(0, |b| b.len());
        match buf {
            Some(buf) if buf.len() >= bytes.len() => {
                buf[..bytes.len()].copy_from_slice(bytes);
                Ok(())
            }
            _ => Err(FfiError::TooSmall {
                needed: bytes.len(),
                got,
            }),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let status = panic_boundary(|| panic!("boom"));
        assert_eq!(status, idforge_status::Panic);
        let mut buf = [0u8; 128];
        let mut needed = 0;
        last_error_into(Some(&mut buf), Some(&mut needed)).unwrap();
        let text = std::str::from_utf8(&buf[..needed - 1]).unwrap();
        assert!(text.contains("boom"), "{text}");
    }

    #[test]
    fn a_short_buffer_reports_the_size_needed() {
        let status = panic_boundary(|| Err(FfiError::Null("out")));
        assert_eq!(status, idforge_status::NullArgument);
        let mut buf = [0u8; 4];
        let mut needed = 0;
        let err = last_error_into(Some(&mut buf), Some(&mut needed)).unwrap_err();
        assert!(matches!(err, FfiError::TooSmall { .. }));
        assert_eq!(needed, "argument `out` is NULL".len() + 1);
        assert_eq!(buf, [0u8; 4], "nothing is written on failure");
    }
}
