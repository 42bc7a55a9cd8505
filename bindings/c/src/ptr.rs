//! Checked conversions of C pointers into Rust references: every NULL becomes
//! `IDFORGE_STATUS_NULL_ARGUMENT` naming the argument, never a dereference.

use std::ffi::{CStr, c_char};

use crate::error::{FfiError, panic_boundary};
use crate::status::idforge_status;

/// `*p` as a shared reference.
///
/// # Safety
/// `p` is NULL or points to a valid, initialised `T` that outlives `'a` and is not written
/// during it.
pub(crate) unsafe fn get<'a, T>(p: *const T, name: &'static str) -> Result<&'a T, FfiError> {
    // SAFETY: the caller guarantees `p` is NULL or valid for reads of a `T` during 'a.
    unsafe { p.as_ref() }.ok_or(FfiError::Null(name))
}

/// An output pointer checked for NULL, written once the call has succeeded.
pub(crate) struct Out<T>(std::ptr::NonNull<T>);

impl<T> Out<T> {
    /// Stores `value` (the old pointee, possibly uninitialised, is not read or dropped).
    pub(crate) fn write(self, value: T) {
        // SAFETY: `out` (the only constructor) was given a pointer valid for writes of a `T`.
        unsafe { self.0.as_ptr().write(value) }
    }
}

/// Checks an output pointer; nothing is written until [`Out::write`].
///
/// # Safety
/// `p` is NULL or points to memory valid for writes of a `T` (aligned, not aliased by inputs)
/// until the `Out` is written or dropped.
pub(crate) unsafe fn out<T>(p: *mut T, name: &'static str) -> Result<Out<T>, FfiError> {
    std::ptr::NonNull::new(p)
        .map(Out)
        .ok_or(FfiError::Null(name))
}

/// The shape of a call that reads one answer of a live object into `*out_p`: both pointers
/// checked (a NULL one is `NULL_ARGUMENT` with its name from `names`), then `f`'s answer
/// written, inside the panic boundary. Inlined: the hot `*_next` calls compile as before.
///
/// # Safety
/// `p` is NULL or points to a valid `H` not written during the call ([`get`]); `out_p` is NULL
/// or valid for writes of a `T` ([`out`]).
#[inline(always)]
pub(crate) unsafe fn answer<H, T>(
    p: *const H,
    out_p: *mut T,
    names: (&'static str, &'static str),
    f: impl FnOnce(&H) -> Result<T, FfiError>,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (h, out) = unsafe { (get(p, names.0)?, out(out_p, names.1)?) };
        out.write(f(h)?);
        Ok(())
    })
}

/// The `N` bytes at `p`.
///
/// # Safety
/// `p` is NULL or points to `N` readable bytes.
pub(crate) unsafe fn bytes<const N: usize>(
    p: *const u8,
    name: &'static str,
) -> Result<[u8; N], FfiError> {
    // SAFETY: the caller guarantees `N` readable bytes; [u8; N] has alignment 1.
    unsafe { get(p.cast::<[u8; N]>(), name) }.copied()
}

/// Checks an output of `N` bytes at `p`.
///
/// # Safety
/// `p` is NULL or points to `N` writable bytes.
pub(crate) unsafe fn out_bytes<const N: usize>(
    p: *mut u8,
    name: &'static str,
) -> Result<Out<[u8; N]>, FfiError> {
    // SAFETY: the caller's guarantee; [u8; N] has alignment 1.
    unsafe { out(p.cast::<[u8; N]>(), name) }
}

/// `len` elements at `p` as an output slice; `p` may be NULL only when `len` is 0.
///
/// # Safety
/// When `len > 0`, `p` is NULL or points to `len` writable, unaliased `T`s.
pub(crate) unsafe fn out_slice<'a, T>(
    p: *mut T,
    len: usize,
    name: &'static str,
) -> Result<&'a mut [T], FfiError> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(FfiError::Null(name));
    }
    // SAFETY: non-NULL, and the caller guarantees `len` writable, unaliased elements.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}

/// A NUL-terminated C string.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn cstr<'a>(p: *const c_char, name: &'static str) -> Result<&'a CStr, FfiError> {
    if p.is_null() {
        return Err(FfiError::Null(name));
    }
    // SAFETY: non-NULL, and the caller guarantees a NUL-terminated string.
    Ok(unsafe { CStr::from_ptr(p) })
}

/// A path given as a C string: its bytes as they are on Unix (any bytes but NUL name a file
/// there); UTF-8 on Windows, where the C string's bytes have no one meaning (the ANSI code page
/// differs per machine), so other text is refused with `INVALID_ARGUMENT`.
pub(crate) fn path(c: &CStr) -> Result<std::path::PathBuf, FfiError> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(std::ffi::OsStr::from_bytes(c.to_bytes()).into())
    }
    #[cfg(not(unix))]
    {
        c.to_str().map(Into::into).map_err(|_| {
            runtime::CoreError::InvalidArgument("a path is not UTF-8 (Windows paths are UTF-8)")
                .into()
        })
    }
}

/// Copies `text` and a NUL into the C buffer `out` of `len` bytes, or fails with
/// `BUFFER_TOO_SMALL` writing nothing.
///
/// # Safety
/// `out` is NULL or points to `len` writable bytes.
pub(crate) unsafe fn write_str(
    text: &str,
    out: *mut c_char,
    len: usize,
    name: &'static str,
) -> Result<(), FfiError> {
    let needed = text.len() + 1;
    if out.is_null() {
        return Err(FfiError::Null(name));
    }
    if len < needed {
        return Err(FfiError::TooSmall { needed, got: len });
    }
    // SAFETY: the caller guarantees `len >= needed` writable bytes at `out`.
    let buf = unsafe { std::slice::from_raw_parts_mut(out.cast::<u8>(), needed) };
    buf[..text.len()].copy_from_slice(text.as_bytes());
    buf[text.len()] = 0;
    Ok(())
}

/// Moves `value` to the heap and returns the handle C owns until its `_free`.
pub(crate) fn into_handle<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// Takes back and drops a handle from [`into_handle`]; NULL is ignored.
///
/// # Safety
/// `p` is NULL or came from [`into_handle`] for this `T`, and is not used again.
pub(crate) unsafe fn free_handle<T>(p: *mut T) {
    if !p.is_null() {
        // SAFETY: the caller guarantees `p` came from Box::into_raw and is given back once.
        drop(unsafe { Box::from_raw(p) });
    }
}
