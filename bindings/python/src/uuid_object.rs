//! `uuid.UUID` objects made natively, as `uuid.UUID._from_int` (Python 3.14) makes them: the
//! object allocated, its `int` and `is_safe` slots filled, no `__init__` (which parses its
//! arguments in Python: 480 ns of the 650 ns `uuid_utils.compat.uuid7()` costs).
//!
//! Three shortcuts, each checked when the module loads and dropped when the check fails:
//! - the object is allocated untracked by `PyObject_GC_New` and its slots zeroed, instead of
//!   `object.__new__`'s allocation, which links it into the collector's list only for it to be
//!   unlinked at once (the collector counts both allocations alike);
//! - the slots are written at their offsets, found by setting them once on a probe object and
//!   finding the values in its memory (`object.__setattr__` is the fallback);
//! - the 128-bit `int` is made by [`IntMaker`], its digits written directly when it can.
//!
//! The objects are untracked by the cycle collector: they hold an `int` and a `SafeUUID`
//! member, which cannot form a cycle, so a loop that keeps millions of them does not pay for
//! the collector walking them (as it does not for `uuid_utils`' objects).
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::mem::size_of;
use std::ptr::null_mut;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyString, PyType};

use crate::py_int::IntMaker;

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
    /// `uuid.UUID.__basicsize__` when objects are allocated untracked by `PyObject_GC_New`.
    untracked_size: Option<usize>,
    int: IntMaker,
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
            untracked_size: None,
            int: IntMaker::new(py),
            ty: ty.clone().unbind(),
        };
        let cpython = crate::shortcuts::on(py);
        maker.slots = cpython.then(|| find_slots(py, &ty, &maker)).flatten();
        if !maker.works(py) {
            maker.slots = None;
        }
        maker.untracked_size = cpython.then(|| untracked_size(&ty)).flatten();
        if !maker.works(py) {
            maker.untracked_size = None;
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
                && made.hash()? == expected.hash()?
                && !py
                    .import("gc")?
                    .call_method1("is_tracked", (&made,))?
                    .is_truthy()?)
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
        let int = unsafe { self.int.make(value) };
        if int.is_null() {
            return null_mut();
        }
        // SAFETY: the GIL is held.
        let obj = unsafe { self.alloc() };
        if obj.is_null() {
            // SAFETY: `int` is our new reference.
            unsafe { ffi::Py_DecRef(int) };
            return null_mut();
        }
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

    /// A new, empty `uuid.UUID` (slots NULL) that the cycle collector does not track, or NULL
    /// with an exception set.
    ///
    /// # Safety
    /// The GIL must be held.
    #[inline]
    unsafe fn alloc(&self) -> *mut ffi::PyObject {
        let ty = self.ty.as_ptr().cast::<ffi::PyTypeObject>();
        if let Some(size) = self.untracked_size {
            // SAFETY: `ty` is `uuid.UUID`, a live type (held by `self`) of GC objects with no
            // items; `PyObject_GC_New` allocates it untracked, counted by the collector as
            // `object.__new__`'s allocation is (the free takes that count back).
            let obj = unsafe { ffi::_PyObject_GC_New(ty) };
            if !obj.is_null() {
                let head = size_of::<ffi::PyObject>();
                let slots = obj
                    .cast::<u8>()
                    .wrapping_add(head)
                    .cast::<*mut ffi::PyObject>();
                // SAFETY: the object is `size` bytes; after its header come the slots, which
                // `PyObject_GC_New` leaves unwritten and `object.__new__` zeroes. Three slots
                // (`int`, `is_safe`, `__weakref__`) are written inline, not by `memset`.
                unsafe {
                    if size == head + 3 * size_of::<*mut ffi::PyObject>() {
                        slots.write(null_mut());
                        slots.add(1).write(null_mut());
                        slots.add(2).write(null_mut());
                    } else {
                        slots.cast::<u8>().write_bytes(0, size - head);
                    }
                }
            }
            return obj;
        }
        // SAFETY: as above; `object.__new__` allocates so, zeroed and tracked.
        let obj = unsafe { ffi::PyType_GenericAlloc(ty, 0) };
        if !obj.is_null() {
            // SAFETY: `obj` is new and tracked; untracking an object that cannot be part of a
            // cycle is what CPython does for tuples of atoms.
            unsafe { ffi::PyObject_GC_UnTrack(obj.cast::<c_void>()) };
        }
        obj
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
}

/// `uuid.UUID`'s size, when `PyObject_GC_New` can allocate it: a type of GC objects with no
/// items, larger than an object's header, whose `__new__` is `object.__new__`.
fn untracked_size(ty: &Bound<'_, PyType>) -> Option<usize> {
    let size: usize = ty.getattr("__basicsize__").ok()?.extract().ok()?;
    let items: usize = ty.getattr("__itemsize__").ok()?.extract().ok()?;
    let object_new = ty.py().get_type::<PyAny>().getattr("__new__").ok()?;
    // SAFETY: `ty` is a live type object.
    let gc = unsafe { ffi::PyType_IS_GC(ty.as_type_ptr()) } != 0;
    let plain = ty.getattr("__new__").ok()?.is(&object_new);
    (gc && plain && items == 0 && size > size_of::<ffi::PyObject>()).then_some(size)
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
