//! 128-bit Python `int`s, made as cheaply as the running interpreter allows.
//!
//! The fastest way writes the 30-bit digits straight into a new `int` from `_PyLong_New`: about
//! 2 ns where CPython's own converter from bytes (a loop over bytes, then a normalisation) takes
//! about 8. It relies on the digits' place in the object, so it is taken only when the module
//! loads and finds them: `sys.int_info` says 30-bit digits in 4 bytes, the digits of a known
//! value made by the converter are found exactly once in its memory, and `int`s made this way
//! equal the converter's for a set of values. Otherwise the converter is used: found by name
//! (`PyLong_FromUnsignedNativeBytes` from 3.13, `_PyLong_FromByteArray` before; the limited API
//! has neither), else pyo3's conversion.
#![allow(unsafe_code)]

use std::ffi::{CStr, c_int, c_void};
use std::ptr::null_mut;

use pyo3::ffi;
use pyo3::prelude::*;

/// `_PyLong_New(n_digits)`: a new, positive `int` of `n_digits` digits not yet written.
type NewLong = unsafe extern "C" fn(ffi::Py_ssize_t) -> *mut ffi::PyObject;
/// `PyLong_FromUnsignedNativeBytes(buffer, n_bytes, flags)` (Python 3.13+).
type FromNativeBytes = unsafe extern "C" fn(*const c_void, usize, c_int) -> *mut ffi::PyObject;
/// `_PyLong_FromByteArray(bytes, n, little_endian, is_signed)` (Python 3.9 to 3.12 and after).
type FromByteArray = unsafe extern "C" fn(*const u8, usize, c_int, c_int) -> *mut ffi::PyObject;

/// Bits in one digit of a CPython `int` (the default build's `PYLONG_BITS_IN_DIGIT`).
const DIGIT_BITS: u32 = 30;
const DIGIT_MASK: u128 = (1 << DIGIT_BITS) - 1;

/// How an `int` is made from bytes.
#[derive(Clone, Copy)]
enum FromBytes {
    NativeBytes(FromNativeBytes),
    ByteArray(FromByteArray),
    /// pyo3's conversion (two halves, a shift and an or under the limited API).
    Pyo3,
}

/// Writing the digits into `_PyLong_New`'s object.
#[derive(Clone, Copy)]
struct Digits {
    new: NewLong,
    /// Where the first (least significant) digit is, in bytes from the object's start.
    offset: usize,
}

/// Makes `int`s of `u128` values.
#[derive(Clone, Copy)]
pub(crate) struct IntMaker {
    digits: Option<Digits>,
    bytes: FromBytes,
}

impl IntMaker {
    /// Finds the fastest way that makes the same `int`s as Python does.
    pub(crate) fn new(py: Python<'_>) -> IntMaker {
        let mut maker = IntMaker {
            digits: None,
            bytes: converter(),
        };
        if !maker.works(py) {
            maker.bytes = FromBytes::Pyo3;
        }
        maker.digits = crate::shortcuts::on(py)
            .then(|| find_digits(py, &maker))
            .flatten();
        if !maker.works(py) {
            maker.digits = None;
        }
        maker
    }

    /// Whether the `int`s made equal pyo3's, for values of every length up to 128 bits.
    fn works(&self, py: Python<'_>) -> bool {
        let values = (0..128)
            .step_by(7)
            .map(|bits| (u128::MAX >> bits) ^ (1 << ((127 - bits) / 2)));
        values.chain([0, 1, 1 << 30, u128::MAX]).all(|value| {
            // SAFETY: the GIL is held (`py`).
            let made = unsafe { Bound::from_owned_ptr_or_opt(py, self.make(value)) };
            let same = made.is_some_and(|made| {
                made.extract::<u128>().ok() == Some(value)
                    && made.eq(value).unwrap_or(false)
                    && made.hash().ok() == value.into_pyobject(py).ok().and_then(|v| v.hash().ok())
            });
            PyErr::take(py); // a failed way is not an error: the next is tried
            same
        })
    }

    /// A new `int` of `value`, or NULL with an exception set.
    ///
    /// # Safety
    /// The GIL must be held.
    #[inline]
    pub(crate) unsafe fn make(&self, value: u128) -> *mut ffi::PyObject {
        if let Some(digits) = self.digits {
            // Small values are shared objects in CPython: those come from the converter.
            if value > DIGIT_MASK {
                // SAFETY: the GIL is held (this function's contract).
                return unsafe { digits.make(value) };
            }
        }
        let bytes = value.to_be_bytes();
        match self.bytes {
            // SAFETY: the GIL is held; the function reads the 16 bytes given (flags 0: big
            // endian, as an unsigned buffer by this function's definition).
            FromBytes::NativeBytes(f) => unsafe { f(bytes.as_ptr().cast(), bytes.len(), 0) },
            // SAFETY: as above (big endian, unsigned).
            FromBytes::ByteArray(f) => unsafe { f(bytes.as_ptr(), bytes.len(), 0, 0) },
            FromBytes::Pyo3 => {
                // SAFETY: the GIL is held.
                let py = unsafe { Python::assume_gil_acquired() };
                value.into_pyobject(py).map_or(null_mut(), Bound::into_ptr)
            }
        }
    }
}

impl Digits {
    /// # Safety
    /// The GIL must be held; `value` needs more than one digit.
    #[inline]
    unsafe fn make(self, value: u128) -> *mut ffi::PyObject {
        let count = (128 - value.leading_zeros()).div_ceil(DIGIT_BITS) as usize;
        // SAFETY: the GIL is held; `count` is 2 to 5.
        let int = unsafe { (self.new)(count as ffi::Py_ssize_t) };
        if int.is_null() {
            return int;
        }
        let mut rest = value;
        for i in 0..count {
            // SAFETY: `find_digits` found the digits at `offset`, and `_PyLong_New(count)`
            // made room for `count` of them; the top one is not zero (`count` is exact).
            unsafe {
                int.cast::<u8>()
                    .add(self.offset + 4 * i)
                    .cast::<u32>()
                    .write_unaligned((rest & DIGIT_MASK) as u32);
            }
            rest >>= DIGIT_BITS;
        }
        int
    }
}

/// CPython's converter from bytes, looked up in the running interpreter.
fn converter() -> FromBytes {
    if let Some(f) = symbol(c"PyLong_FromUnsignedNativeBytes") {
        // SAFETY: CPython 3.13+ defines the function with this signature.
        return FromBytes::NativeBytes(unsafe {
            std::mem::transmute::<*mut c_void, FromNativeBytes>(f)
        });
    }
    if let Some(f) = symbol(c"_PyLong_FromByteArray") {
        // SAFETY: CPython defines the function with this signature.
        return FromBytes::ByteArray(unsafe {
            std::mem::transmute::<*mut c_void, FromByteArray>(f)
        });
    }
    FromBytes::Pyo3
}

/// `_PyLong_New` and where the digits are, when the interpreter's `int`s are as expected.
fn find_digits(py: Python<'_>, maker: &IntMaker) -> Option<Digits> {
    let info = py.import("sys").ok()?.getattr("int_info").ok()?;
    let bits: u32 = info.getattr("bits_per_digit").ok()?.extract().ok()?;
    let size: usize = info.getattr("sizeof_digit").ok()?.extract().ok()?;
    if bits != DIGIT_BITS || size != 4 {
        return None;
    }
    // SAFETY: CPython defines `_PyLong_New` with this signature (Include/cpython/longintrepr.h).
    let new = unsafe { std::mem::transmute::<*mut c_void, NewLong>(symbol(c"_PyLong_New")?) };
    let value: u128 = 0x0189_abcd_ef01_7234_8567_89ab_cdef_0123;
    // SAFETY: the GIL is held; `digits` is still None, so this is the converter.
    let known = unsafe { Bound::from_owned_ptr_or_opt(py, maker.make(value))? };
    let length: usize = known.call_method0("__sizeof__").ok()?.extract().ok()?;
    let want: Vec<u32> = (0..5)
        .map(|i| ((value >> (30 * i)) & DIGIT_MASK) as u32)
        .collect();
    let base = known.as_ptr().cast::<u8>();
    let hits: Vec<usize> = (0..=length.checked_sub(4 * want.len())?)
        .step_by(4)
        .filter(|&offset| {
            want.iter().enumerate().all(|(i, &digit)| {
                // SAFETY: `offset + 4 * i + 4 <= length`, inside the object's memory.
                unsafe { base.add(offset + 4 * i).cast::<u32>().read_unaligned() == digit }
            })
        })
        .collect();
    (hits.len() == 1).then(|| Digits {
        new,
        offset: hits[0],
    })
}

fn symbol(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: `name` is a C string; RTLD_DEFAULT searches the process's global symbols, where
    // the interpreter that loaded this module put its API.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!f.is_null()).then_some(f)
}
