//! What the UUIDv7 and ULID handles share: building a generator from the C options, and batch
//! calls into a caller's byte buffer.

use std::ffi::c_char;

use runtime::{CoreError, Policy, SystemClock, TimeOrdered, TimeOrderedId, Ulid, Uuid7};

use crate::error::{FfiError, panic_boundary};
use crate::ptr;
use crate::snowflake::idforge_policy;
use crate::status::idforge_status;

/// A 128-bit id as the 16 big-endian bytes C sees.
pub(crate) trait Bytes16: TimeOrderedId + Copy {
    /// Any value, to fill a scratch buffer before the generator writes it.
    const FILL: Self;
    /// The 16 big-endian bytes.
    fn bytes(&self) -> [u8; 16];
}

impl Bytes16 for Uuid7 {
    const FILL: Uuid7 = match Uuid7::from_fields(0, 0, 0) {
        Ok(id) => id,
        Err(_) => panic!("the zero fields are a UUIDv7"),
    };
    fn bytes(&self) -> [u8; 16] {
        self.to_bytes()
    }
}

impl Bytes16 for Ulid {
    const FILL: Ulid = Ulid::from_u128(0);
    fn bytes(&self) -> [u8; 16] {
        self.to_bytes()
    }
}

/// A generator with `policy` (NULL: the default) and `state_file` (NULL: none).
///
/// # Safety
/// `policy` is NULL or readable; `state_file` is NULL or NUL-terminated.
pub(crate) unsafe fn build<T: TimeOrderedId>(
    policy: *const idforge_policy,
    state_file: *const c_char,
) -> Result<TimeOrdered<T>, FfiError> {
    // SAFETY: the caller guarantees `policy` is NULL or readable.
    let policy = match unsafe { policy.as_ref() } {
        None => Policy::default(),
        Some(p) => p.to_policy()?,
    };
    let path = if state_file.is_null() {
        None
    } else {
        // SAFETY: non-NULL, and the caller guarantees it is NUL-terminated.
        let path = unsafe { ptr::cstr(state_file, "state_file") }?;
        Some(ptr::path(path)?)
    };
    Ok(TimeOrdered::build(policy, path, SystemClock::shared())?)
}

/// Ids drawn per run of the generator's batch call: a scratch buffer on the stack.
const CHUNK: usize = 256;

/// Fills the `count` ids of 16 bytes at `out` in increasing order.
///
/// # Safety
/// `out` is NULL or points to `count * 16` writable bytes.
pub(crate) unsafe fn next_many<T: Bytes16>(
    generator: &TimeOrdered<T>,
    out: *mut u8,
    count: usize,
) -> Result<(), FfiError> {
    let len = count
        .checked_mul(16)
        .ok_or(CoreError::InvalidArgument("count * 16 overflows size_t"))?;
    // SAFETY: the caller's guarantee.
    let out = unsafe { ptr::out_slice(out, len, "out") }?;
    let mut scratch = [T::FILL; CHUNK];
    for dest in out.chunks_mut(16 * CHUNK) {
        let ids = &mut scratch[..dest.len() / 16];
        generator.next_many(ids)?;
        for (bytes, id) in dest.chunks_exact_mut(16).zip(ids.iter()) {
            bytes.copy_from_slice(&id.bytes());
        }
    }
    Ok(())
}

/// A C handle over one time-ordered generator.
pub(crate) trait Handle: Sized {
    /// The id it makes.
    type Id: Bytes16;
    /// The handle of a generator.
    fn wrap(generator: TimeOrdered<Self::Id>) -> Self;
    /// Its generator.
    fn generator(&self) -> &TimeOrdered<Self::Id>;
}

/// Creates a handle into `*out` (see [`build`]).
///
/// # Safety
/// As [`build`]; `out` is NULL or writable.
pub(crate) unsafe fn create<H: Handle>(
    policy: *const idforge_policy,
    state_file: *const c_char,
    out: *mut *mut H,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (out, generator) = unsafe { (ptr::out(out, "out")?, build(policy, state_file)?) };
        out.write(ptr::into_handle(H::wrap(generator)));
        Ok(())
    })
}

/// Creates a handle with the default policy and the state file `path` (required) into `*out`.
///
/// # Safety
/// `path` is NULL or NUL-terminated; `out` is NULL or writable.
pub(crate) unsafe fn create_with_file<H: Handle>(
    path: *const c_char,
    out: *mut *mut H,
) -> idforge_status {
    if path.is_null() {
        return panic_boundary(|| Err(FfiError::Null("path")));
    }
    // SAFETY: the caller's guarantees.
    unsafe { create(std::ptr::null(), path, out) }
}

/// Writes the next id to the 16 bytes at `out`.
///
/// # Safety
/// `handle` is NULL or a live handle; `out` is NULL or points to 16 writable bytes.
pub(crate) unsafe fn next<H: Handle>(handle: *const H, out: *mut u8) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (h, out) = unsafe {
            (
                ptr::get(handle, "handle")?,
                ptr::out_bytes::<16>(out, "out")?,
            )
        };
        out.write(h.generator().next()?.bytes());
        Ok(())
    })
}

/// Fills `count` ids of 16 bytes at `out` (see [`next_many`]).
///
/// # Safety
/// `handle` is NULL or a live handle; `out` is NULL or points to `count * 16` writable bytes.
pub(crate) unsafe fn next_batch<H: Handle>(
    handle: *const H,
    out: *mut u8,
    count: usize,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        unsafe { next_many(ptr::get(handle, "handle")?.generator(), out, count) }
    })
}

/// Writes the text `format` makes of the 16 bytes at `id` and a NUL to `out` (`len` bytes).
///
/// # Safety
/// `id` is NULL or points to 16 readable bytes; `out` is NULL or points to `len` writable bytes.
pub(crate) unsafe fn to_text<const N: usize>(
    id: *const u8,
    out: *mut c_char,
    len: usize,
    format: for<'a> fn([u8; 16], &'a mut [u8; N]) -> Result<&'a str, CoreError>,
) -> idforge_status {
    panic_boundary(|| {
        let mut buf = [0u8; N];
        // SAFETY: the caller's guarantee.
        let text = format(unsafe { ptr::bytes(id, "id") }?, &mut buf)?;
        // SAFETY: the caller's guarantee.
        unsafe { ptr::write_str(text, out, len, "out") }
    })
}

/// Parses the NUL-terminated `text` with `parse` into the 16 bytes at `out`; non-UTF-8 text
/// gets the parser's own error.
///
/// # Safety
/// `text` is NULL or NUL-terminated; `out` is NULL or points to 16 writable bytes.
pub(crate) unsafe fn parse(
    text: *const c_char,
    out: *mut u8,
    parse: fn(&str) -> Result<[u8; 16], CoreError>,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (text, out) = unsafe { (ptr::cstr(text, "text")?, ptr::out_bytes::<16>(out, "out")?) };
        // A byte that is not UTF-8 is outside every alphabet: the lossy form keeps the parser's
        // error (and its code) the same as for any other bad character.
        out.write(parse(&text.to_string_lossy())?);
        Ok(())
    })
}

/// Writes `read` of the 16 bytes at `id` to `*out`.
///
/// # Safety
/// `id` is NULL or points to 16 readable bytes; `out` is NULL or writable.
pub(crate) unsafe fn read<V>(
    id: *const u8,
    out: *mut V,
    read: fn([u8; 16]) -> Result<V, CoreError>,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (id, out) = unsafe { (ptr::bytes(id, "id")?, ptr::out(out, "out")?) };
        out.write(read(id)?);
        Ok(())
    })
}
