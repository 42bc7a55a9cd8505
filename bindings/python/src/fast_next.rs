//! `Snowflake.next` as a hand-made `METH_NOARGS` method.
//!
//! A pyo3 method pays, per call, its trampoline (GIL-count bookkeeping in thread-local storage)
//! and a second type check of `self` through the lazily made type object: 62 -> 51 ns a call
//! without them (`timeit`). CPython has already checked `self` when it bound the method
//! descriptor to the instance (or when an unbound call went through the descriptor), so this
//! function goes straight to the generator and builds the `int`. Only the common case runs here:
//! an id made without waiting. A generator that may wait (its GIL is released) and every error go
//! through pyo3's usual machinery under `Python::with_gil`.
#![allow(unsafe_code)]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::null_mut;

use pyo3::Borrowed;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::error::OrRaise;
use crate::snowflake::Snowflake;

/// A `PyMethodDef` in a `static`: CPython only reads it, and it lives as long as the module.
struct MethodDef(ffi::PyMethodDef);

// SAFETY: the definition holds pointers to 'static C strings and a function; nothing mutates
// it after it is built, so sharing it between threads is sound.
unsafe impl Sync for MethodDef {}

static NEXT: MethodDef = MethodDef(ffi::PyMethodDef {
    ml_name: c"next".as_ptr(),
    ml_meth: ffi::PyMethodDefPointer { PyCFunction: next },
    ml_flags: ffi::METH_NOARGS,
    // The `--` line gives `inspect.signature` (and mypy.stubtest) the signature.
    ml_doc: c"next($self, /)\n--\n\nThe next id.".as_ptr(),
});

/// Adds `next` to the `Snowflake` type (after `add_class`).
pub(crate) fn install(ty: &Bound<'_, PyType>) -> PyResult<()> {
    let py = ty.py();
    // SAFETY: `ty` is a live type object and the GIL is held; `NEXT` is 'static and never
    // written (CPython takes `*mut` but only reads method definitions).
    let descr = unsafe {
        let raw = ffi::PyDescr_NewMethod(
            ty.as_type_ptr(),
            &NEXT.0 as *const ffi::PyMethodDef as *mut ffi::PyMethodDef,
        );
        Bound::from_owned_ptr_or_err(py, raw)?
    };
    ty.setattr("next", descr)
}

/// The method itself: `self` is a `Snowflake` (CPython checked it), the GIL is held.
unsafe extern "C" fn next(
    slf: *mut ffi::PyObject,
    _args: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // A panic must not unwind into CPython: it becomes a SystemError.
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: CPython calls a METH_NOARGS method with the GIL held and a borrowed `self`
        // that the method descriptor checked to be an instance of `Snowflake` (or a subclass),
        // whose layout pyo3 made; the class is frozen, so `get` needs no borrow flag.
        let obj = unsafe { Borrowed::from_ptr(Python::assume_gil_acquired(), slf) };
        // SAFETY: as above: `slf` is an instance of `Snowflake`.
        let this: &Snowflake = unsafe { obj.downcast_unchecked::<Snowflake>() }.get();
        let first = (!this.may_wait()).then(|| this.inner().next());
        match first {
            // SAFETY: the GIL is held; a NULL result has set MemoryError, as CPython expects.
            Some(Ok(id)) => unsafe { ffi::PyLong_FromUnsignedLongLong(id) },
            // The rare cases, with pyo3's GIL bookkeeping: a wait (GIL released) or an error.
            _ => Python::with_gil(|py| {
                let result = match first {
                    Some(r) => r,
                    None => py.allow_threads(|| this.inner().next()),
                };
                match result.or_raise() {
                    Ok(id) => id.into_pyobject(py).map_or(null_mut(), |n| n.into_ptr()),
                    Err(e) => {
                        e.restore(py);
                        null_mut()
                    }
                }
            }),
        }
    }));
    outcome.unwrap_or_else(|_| {
        // SAFETY: the GIL is held; both pointers are valid for the call.
        unsafe {
            ffi::PyErr_SetString(
                ffi::PyExc_SystemError,
                c"idforge: Snowflake.next panicked".as_ptr(),
            );
        }
        null_mut()
    })
}
