//! `Snowflake.next` as a hand-made `METH_NOARGS` method (see [`crate::hand_made`]): the common
//! case, an id made without waiting, goes straight to the generator and builds the `int`; a
//! generator that may wait (its GIL is released) and every error go through pyo3.
#![allow(unsafe_code)]

use pyo3::Borrowed;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::error::OrRaise;
use crate::hand_made::{self, MethodDef};
use crate::snowflake::Snowflake;

static NEXT: MethodDef = MethodDef::noargs(c"next", next, c"next($self, /)\n--\n\nThe next id.");

/// Adds `next` to the `Snowflake` type (after `add_class`).
pub(crate) fn install(ty: &Bound<'_, PyType>) -> PyResult<()> {
    hand_made::install(ty, &NEXT)
}

/// The method itself: `self` is a `Snowflake` (CPython checked it), the GIL is held.
unsafe extern "C" fn next(
    slf: *mut ffi::PyObject,
    _args: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    hand_made::guarded(c"idforge: Snowflake.next panicked", || {
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
            _ => hand_made::finish(|py| {
                let result = match first {
                    Some(r) => r,
                    None => py.allow_threads(|| this.inner().next()),
                };
                Ok(result.or_raise()?.into_pyobject(py)?.into_any())
            }),
        }
    })
}
