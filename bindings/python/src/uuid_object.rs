//! `uuid.UUID` objects made natively, as `uuid.UUID._from_int` (Python 3.14) makes them: the
//! object allocated, its `int` and `is_safe` slots filled, no `__init__` (which parses its
//! arguments in Python: 480 ns of the 650 ns `uuid_utils.compat.uuid7()` costs).
//!
//! Two shortcuts, both checked when the module loads and dropped when the check fails:
//! - the slots are written at their offsets, found by setting them once on a probe object and
//!   finding the values in its memory (`object.__setattr__` is the fallback);
//! - the 128-bit `int` is made from 16 bytes by CPython's own converter, found by name
//!   (`PyLong_FromUnsignedNativeBytes` from 3.13, `_PyLong_FromByteArray` before; the limited
//!   API has neither), else by pyo3's conversion.
//!
//! The objects are untracked by the cycle collector: they hold an `int` and a `SafeUUID`
//! member, which cannot form a cycle, so a loop that keeps millions of them does not pay for
//! the collector walking them (as it does not for `uuid_utils`' objects).
#![allow(unsafe_code)]

use std::ffi::{CStr, c_int, c_void};
use std::mem::size_of;
use std::ptr::null_mut;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyString, PyType};

/// `PyLong_FromUnsignedNativeBytes(buffer, n_bytes, flags)` (Python 3.13+).
type FromNativeBytes = unsafe extern "C" fn(*const c_void, usize, c_int) -> *mut ffi::PyObject;
/// `_PyLong_FromByteArray(bytes, n, little_endian, is_signed)` (Python 3.9 to 3.12 and after).
type FromByteArray = unsafe extern "C" fn(*const u8, usize, c_int, c_int) -> *mut ffi::PyObject;

/// How a 128-bit `int` is made.
#[derive(Clone, Copy)]
enum IntFrom {
    NativeBytes(FromNativeBytes),
    ByteArray(FromByteArray),
    /// pyo3's conversion (two halves, a shift and an or under the limited API).
    Pyo3,
}

/// Where the two slots of a `uuid.UUID` are, in bytes from the object's start.
#[derive(Clone, Copy)]
struct Slots {
    int: usize,
    is_safe: usize,
}

/// Makes `uuid.UUID` objects.
pub(crate) struct UuidMaker {
    ty: Py<PyType>,
    unknown: Py<PyAny>,
    int_name: Py<PyString>,
    is_safe_name: Py<PyString>,
    slots: Option<Slots>,
    int_from: IntFrom,
}

impl UuidMaker {
    /// Imports `uuid` and checks the shortcuts.
    pub(crate) fn new(py: Python<'_>) -> PyResult<UuidMaker> {
        let uuid = py.import("uuid")?;
        let ty = uuid.getattr("UUID")?.downcast_into::<PyType>()?;
        let mut maker = UuidMaker {
            unknown: uuid.getattr("SafeUUID")?.getattr("unknown")?.unbind(),
            int_name: PyString::intern(py, "int").unbind(),
            is_safe_name: PyString::intern(py, "is_safe").unbind(),
            slots: None,
            int_from: IntFrom::Pyo3,
            ty: ty.clone().unbind(),
        };
        maker.int_from = int_converter();
        if !maker.works(py) {
            maker.int_from = IntFrom::Pyo3;
        }
        maker.slots = find_slots(py, &ty, &maker);
        if !maker.works(py) {
            maker.slots = None;
        }
        Ok(maker)
    }

    /// Whether the objects made read back as `uuid.UUID(int=...)` does.
    fn works(&self, py: Python<'_>) -> bool {
        let value: u128 = 0x0189_abcd_ef01_7234_8567_89ab_cdef_0123;
        // SAFETY: the GIL is held (`py`).
        let made = unsafe { Bound::from_owned_ptr_or_err(py, self.make(value)) };
        let check = || -> PyResult<bool> {
            let made = made?;
            let expected = self
                .ty
                .bind(py)
                .call((), Some(&[("int", value)].into_py_dict(py)?))?;
            Ok(made.eq(&expected)?
                && made.getattr("int")?.extract::<u128>()? == value
                && made.getattr("is_safe")?.is(self.unknown.bind(py))
                && made.str()?.as_any().eq(expected.str()?)?
                && made.hash()? == expected.hash()?)
        };
        check().unwrap_or_else(|e| {
            drop(e); // a failed shortcut is not an error: the next method is tried
            false
        })
    }

    /// A new `uuid.UUID` holding `value` (a new reference), or NULL with an exception set.
    ///
    /// # Safety
    /// The GIL must be held.
    #[inline]
    pub(crate) unsafe fn make(&self, value: u128) -> *mut ffi::PyObject {
        // SAFETY: the GIL is held (this function's contract).
        let int = unsafe { self.int(value) };
        if int.is_null() {
            return null_mut();
        }
        let ty = self.ty.as_ptr().cast::<ffi::PyTypeObject>();
        // SAFETY: `ty` is `uuid.UUID`, a live type (held by `self`), whose `__new__` is
        // `object.__new__`, which allocates exactly so; the memory comes zeroed (empty slots).
        let obj = unsafe { ffi::PyType_GenericAlloc(ty, 0) };
        if obj.is_null() {
            // SAFETY: `int` is our new reference.
            unsafe { ffi::Py_DecRef(int) };
            return null_mut();
        }
        // SAFETY: `obj` is a new, GC-tracked object (the type has slots holding objects);
        // untracking an object that cannot be part of a cycle is what CPython does for
        // tuples of atoms.
        unsafe { ffi::PyObject_GC_UnTrack(obj.cast::<c_void>()) };
        let unknown = self.unknown.as_ptr();
        match self.slots {
            Some(slots) => {
                // SAFETY: `find_slots` found these offsets inside the type's basic size, where
                // `object.__setattr__` stores `int` and `is_safe`; they are empty (NULL) in a
                // new object, and each takes over one reference.
                unsafe {
                    ffi::Py_IncRef(unknown);
                    obj.cast::<u8>()
                        .add(slots.int)
                        .cast::<*mut ffi::PyObject>()
                        .write(int);
                    let safe = obj.cast::<u8>().add(slots.is_safe);
                    safe.cast::<*mut ffi::PyObject>().write(unknown);
                }
                obj
            }
            // SAFETY: the GIL is held; `obj` and `int` are our new references.
            None => unsafe { self.set_slots(obj, int) },
        }
    }

    /// Fills the slots by `object.__setattr__` (`UUID.__setattr__` refuses), consuming `int`.
    ///
    /// # Safety
    /// The GIL must be held; `obj` and `int` are new references, handed over.
    unsafe fn set_slots(
        &self,
        obj: *mut ffi::PyObject,
        int: *mut ffi::PyObject,
    ) -> *mut ffi::PyObject {
        // SAFETY: the GIL is held; every pointer is a live object.
        unsafe {
            let ok = ffi::PyObject_GenericSetAttr(obj, self.int_name.as_ptr(), int) == 0
                && ffi::PyObject_GenericSetAttr(
                    obj,
                    self.is_safe_name.as_ptr(),
                    self.unknown.as_ptr(),
                ) == 0;
            ffi::Py_DecRef(int);
            if ok {
                obj
            } else {
                ffi::Py_DecRef(obj);
                null_mut()
            }
        }
    }

    /// A new `int` of `value`, or NULL with an exception set.
    ///
    /// # Safety
    /// The GIL must be held.
    #[inline]
    unsafe fn int(&self, value: u128) -> *mut ffi::PyObject {
        let bytes = value.to_be_bytes();
        match self.int_from {
            // SAFETY: the GIL is held; the function reads the 16 bytes given (flags 0: big
            // endian, as an unsigned buffer by this function's definition).
            IntFrom::NativeBytes(f) => unsafe { f(bytes.as_ptr().cast(), bytes.len(), 0) },
            // SAFETY: as above (big endian, unsigned).
            IntFrom::ByteArray(f) => unsafe { f(bytes.as_ptr(), bytes.len(), 0, 0) },
            IntFrom::Pyo3 => {
                // SAFETY: the GIL is held.
                let py = unsafe { Python::assume_gil_acquired() };
                value.into_pyobject(py).map_or(null_mut(), Bound::into_ptr)
            }
        }
    }
}

/// CPython's converter from bytes, looked up in the running interpreter.
fn int_converter() -> IntFrom {
    if let Some(f) = symbol(c"PyLong_FromUnsignedNativeBytes") {
        // SAFETY: CPython 3.13+ defines the function with this signature.
        return IntFrom::NativeBytes(unsafe {
            std::mem::transmute::<*mut c_void, FromNativeBytes>(f)
        });
    }
    if let Some(f) = symbol(c"_PyLong_FromByteArray") {
        // SAFETY: CPython defines the function with this signature.
        return IntFrom::ByteArray(unsafe { std::mem::transmute::<*mut c_void, FromByteArray>(f) });
    }
    IntFrom::Pyo3
}

fn symbol(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: `name` is a C string; RTLD_DEFAULT searches the process's global symbols, where
    // the interpreter that loaded this module put its API.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!f.is_null()).then_some(f)
}

/// The offsets of `int` and `is_safe` in a `uuid.UUID`: set on a probe object, then found in
/// its memory. `None` when either is not found exactly once.
fn find_slots(py: Python<'_>, ty: &Bound<'_, PyType>, maker: &UuidMaker) -> Option<Slots> {
    let size: usize = ty.getattr("__basicsize__").ok()?.extract().ok()?;
    let int_mark = PyString::new(py, "int mark").into_any();
    // SAFETY: the GIL is held; as in `make`, `object.__new__(UUID)` is this allocation.
    let probe =
        unsafe { Bound::from_owned_ptr_or_opt(py, ffi::PyType_GenericAlloc(ty.as_type_ptr(), 0))? };
    // SAFETY: the GIL is held; the probe and the names and values are live objects.
    let set = unsafe {
        ffi::PyObject_GenericSetAttr(probe.as_ptr(), maker.int_name.as_ptr(), int_mark.as_ptr())
            == 0
            && ffi::PyObject_GenericSetAttr(
                probe.as_ptr(),
                maker.is_safe_name.as_ptr(),
                maker.unknown.as_ptr(),
            ) == 0
    };
    if !set {
        PyErr::take(py);
        return None;
    }
    let words = size / size_of::<*mut ffi::PyObject>();
    let find = |mark: *mut ffi::PyObject| {
        let base = probe.as_ptr().cast::<*mut ffi::PyObject>();
        // SAFETY: the probe's allocation holds at least `__basicsize__` bytes.
        let hits: Vec<usize> = (0..words)
            .filter(|&i| unsafe { base.add(i).read() } == mark)
            .collect();
        (hits.len() == 1).then(|| hits[0] * size_of::<*mut ffi::PyObject>())
    };
    Some(Slots {
        int: find(int_mark.as_ptr())?,
        is_safe: find(maker.unknown.as_ptr())?,
    })
}
