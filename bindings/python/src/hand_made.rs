//! Hand-made `METH_NOARGS` methods and functions, for the calls where pyo3's machinery costs
//! more than the work.
//!
//! A pyo3 method pays, per call, its trampoline (GIL-count bookkeeping in thread-local storage)
//! and a second type check of `self` through the lazily made type object: 62 -> 51 ns a call
//! without them (`timeit`, `Snowflake.next`). CPython has already checked `self` when it bound
//! the method descriptor to the instance (or when an unbound call went through the
//! descriptor), so a hand-made method may go straight to the object. Only the common case runs
//! there; waits and errors go through pyo3's usual machinery under `Python::with_gil`
//! ([`finish`]).
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::null_mut;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyModule, PyType};

/// A `PyMethodDef` in a `static`: CPython only reads it, and it lives as long as the module.
pub(crate) struct MethodDef(pub(crate) ffi::PyMethodDef);

// SAFETY: the definition holds pointers to 'static C strings and a function; nothing mutates
// it after it is built, so sharing it between threads is sound.
unsafe impl Sync for MethodDef {}

impl MethodDef {
    /// A `METH_NOARGS` definition; `doc` starts with the signature line
    /// (`name($self, /)\n--\n\n`), which `inspect.signature` and mypy.stubtest read.
    pub(crate) const fn noargs(
        name: &'static CStr,
        meth: ffi::PyCFunction,
        doc: &'static CStr,
    ) -> MethodDef {
        MethodDef(ffi::PyMethodDef {
            ml_name: name.as_ptr(),
            ml_meth: ffi::PyMethodDefPointer { PyCFunction: meth },
            ml_flags: ffi::METH_NOARGS,
            ml_doc: doc.as_ptr(),
        })
    }

    fn as_mut_ptr(&'static self) -> *mut ffi::PyMethodDef {
        // CPython takes `*mut` but only reads method definitions.
        &self.0 as *const ffi::PyMethodDef as *mut ffi::PyMethodDef
    }

    fn name(&self) -> &'static CStr {
        // SAFETY: every definition is built by `noargs` from a 'static C string.
        unsafe { CStr::from_ptr(self.0.ml_name) }
    }
}

/// Adds `def` as a method of `ty` (after `add_class`).
pub(crate) fn install(ty: &Bound<'_, PyType>, def: &'static MethodDef) -> PyResult<()> {
    let py = ty.py();
    // SAFETY: `ty` is a live type object and the GIL is held; `def` is 'static and never
    // written.
    let descr = unsafe {
        let raw = ffi::PyDescr_NewMethod(ty.as_type_ptr(), def.as_mut_ptr());
        Bound::from_owned_ptr_or_err(py, raw)?
    };
    ty.setattr(def.name().to_str()?, descr)
}

/// Adds `def` as a function of module `m` (its `self` is the module).
pub(crate) fn add_function(m: &Bound<'_, PyModule>, def: &'static MethodDef) -> PyResult<()> {
    let py = m.py();
    let name = m.name()?;
    // SAFETY: `m` and `name` are live objects and the GIL is held; `def` is 'static and never
    // written.
    let function = unsafe {
        let raw = ffi::PyCFunction_NewEx(def.as_mut_ptr(), m.as_ptr(), name.as_ptr());
        Bound::from_owned_ptr_or_err(py, raw)?
    };
    m.add(def.name().to_str()?, function)
}

/// Runs `body` so that a panic does not unwind into CPython: it becomes a SystemError that
/// names `what`. For the hand-made methods, which CPython calls with the GIL held.
pub(crate) fn guarded(
    what: &'static CStr,
    body: impl FnOnce() -> *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| {
        // SAFETY: the GIL is held (the caller's contract); both pointers are valid for the
        // call.
        unsafe { ffi::PyErr_SetString(ffi::PyExc_SystemError, what.as_ptr()) };
        null_mut()
    })
}

/// The rare path of a hand-made method, with pyo3's GIL bookkeeping: `slow` makes the value
/// (it may release the GIL to wait) or an error, which is set as the current exception.
pub(crate) fn finish(
    slow: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>>,
) -> *mut ffi::PyObject {
    // Hand-made methods run with the GIL held: this acquires nothing.
    Python::with_gil(|py| match slow(py) {
        Ok(value) => value.into_ptr(),
        Err(e) => {
            e.restore(py);
            null_mut()
        }
    })
}
