//! UUIDv7 as `uuid.UUID`: the generator `Uuid7s`, the process-wide `uuid7()` and the codecs.
//! `uuid7()` and `Uuid7s.next` are hand-made methods (see [`crate::hand_made`]): with
//! [`UuidMaker`] and the GIL's random stream they cost less than `uuid_utils.uuid7()` does,
//! though they return a real `uuid.UUID` (BENCHMARKS.md, "Python UUIDv7").
#![allow(unsafe_code)]

use std::sync::OnceLock;

use idforge::{Uuid7, Uuid7s as RtUuid7s};
use pyo3::Borrowed;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyModule};

use crate::error::OrRaise;
use crate::hand_made::{self, MethodDef};
use crate::time_ordered::{Built, time_ordered_methods};
use crate::uuid_object::UuidMaker;

static MAKER: OnceLock<UuidMaker> = OnceLock::new();
static SHARED: OnceLock<RtUuid7s> = OnceLock::new();

/// A new `uuid.UUID` of `id`.
fn to_uuid(py: Python<'_>, id: Uuid7) -> PyResult<Bound<'_, PyAny>> {
    let maker = maker()?;
    // SAFETY: the GIL is held (`py`); `make` returns a new reference or NULL with an error set.
    unsafe { Bound::from_owned_ptr_or_err(py, maker.make(id.as_u128())) }
}

fn maker() -> PyResult<&'static UuidMaker> {
    MAKER.get().ok_or_else(|| {
        pyo3::exceptions::PySystemError::new_err("idforge: the uuid module is not loaded")
    })
}

/// UUIDv7s (RFC 9562) as `uuid.UUID`, strictly increasing, safe to share between threads.
#[pyclass(frozen, subclass, module = "idforge._idforge")]
pub(crate) struct Uuid7s {
    generator: Built<Uuid7>,
}

time_ordered_methods!(Uuid7s {
    // With the shortcuts on, `add` replaces this with a hand-made method, cheaper than pyo3's
    // (same name, signature and doc).
    /// The next UUIDv7, a uuid.UUID.
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_uuid(py, self.generator.next(py)?)
    }

    /// `n` fresh UUIDs, increasing, in a list (made with the GIL released, then wrapped).
    fn next_many<'py>(&self, py: Python<'py>, n: u64) -> PyResult<Bound<'py, PyList>> {
        let ids = self.generator.many(py, n, Uuid7::from_fields(0, 0, 0).or_raise()?)?;
        let objects = ids.into_iter().map(|id| to_uuid(py, id));
        PyList::new(py, objects.collect::<PyResult<Vec<_>>>()?)
    }
});

static NEXT: MethodDef = MethodDef::noargs(
    c"next",
    next,
    c"next($self, /)\n--\n\nThe next UUIDv7, a uuid.UUID.",
);
static UUID7: MethodDef = MethodDef::noargs(
    c"uuid7",
    uuid7,
    c"uuid7($module, /)\n--\n\nA fresh UUIDv7 from the process-wide generator, a uuid.UUID.",
);

/// Adds `Uuid7s` (with its hand-made `next`), `uuid7` and the codecs to the module.
pub(crate) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    if MAKER.get().is_none() {
        let made = UuidMaker::new(py)?;
        let _ = MAKER.set(made);
    }
    m.add_class::<Uuid7s>()?;
    if crate::shortcuts::on(py) {
        hand_made::install(&py.get_type::<Uuid7s>(), &NEXT)?;
        hand_made::add_function(m, &UUID7)?;
    } else {
        m.add_function(wrap_pyfunction!(plain_uuid7, m)?)?;
    }
    m.add_function(wrap_pyfunction!(uuid7_parse, m)?)?;
    m.add_function(wrap_pyfunction!(uuid7_from_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(uuid7_from_fields, m)?)?;
    Ok(())
}

/// One id made by `next` as a `uuid.UUID`: the common case at once (its random bits from the
/// GIL's stream), a wait (without the GIL) or an error through pyo3. The GIL is held.
fn made(may_wait: bool, generator: &RtUuid7s) -> *mut ffi::PyObject {
    // SAFETY: the hand-made methods run with the GIL held (CPython calls them so).
    let py = unsafe { Python::assume_gil_acquired() };
    let first = (!may_wait).then(|| crate::time_ordered::next_under_gil(py, generator));
    if let (Some(Ok(id)), Some(maker)) = (&first, MAKER.get()) {
        // SAFETY: the GIL is held (the hand-made methods' contract).
        return unsafe { maker.make(id.as_u128()) };
    }
    hand_made::finish(|py| {
        let result = match first {
            Some(r) => r,
            None => py.allow_threads(|| generator.next()),
        };
        to_uuid(py, result.or_raise()?)
    })
}

/// `Uuid7s.next`: `self` is a `Uuid7s` (CPython checked it), the GIL is held.
unsafe extern "C" fn next(
    slf: *mut ffi::PyObject,
    _args: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    hand_made::guarded(c"idforge: Uuid7s.next panicked", || {
        // SAFETY: CPython calls a METH_NOARGS method with the GIL held and a borrowed `self`
        // that the method descriptor checked to be an instance of `Uuid7s` (or a subclass),
        // whose layout pyo3 made; the class is frozen, so `get` needs no borrow flag.
        let obj = unsafe { Borrowed::from_ptr(Python::assume_gil_acquired(), slf) };
        // SAFETY: as above: `slf` is an instance of `Uuid7s`.
        let this: &Uuid7s = unsafe { obj.downcast_unchecked::<Uuid7s>() }.get();
        made(this.generator.may_wait, &this.generator.inner)
    })
}

/// `uuid7()`: the process-wide generator (default policy: never waits in practice).
unsafe extern "C" fn uuid7(
    _module: *mut ffi::PyObject,
    _args: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    hand_made::guarded(c"idforge: uuid7 panicked", || match SHARED.get() {
        Some(g) => made(false, g),
        None => hand_made::finish(|py| {
            let g = crate::time_ordered::shared(&SHARED)?;
            to_uuid(py, g.next().or_raise()?)
        }),
    })
}

// `uuid7()` without the shortcuts (same name, signature and doc as the hand-made one).
/// A fresh UUIDv7 from the process-wide generator, a uuid.UUID.
#[pyfunction(name = "uuid7")]
fn plain_uuid7(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let generator = crate::time_ordered::shared(&SHARED)?;
    let id = crate::time_ordered::next_under_gil(py, generator).or_raise()?;
    to_uuid(py, id)
}

/// The UUIDv7 written as text: hyphenated, 32 hex digits, in braces or after `urn:uuid:`, in
/// either case; another version or variant raises `InvalidUuidError`.
#[pyfunction]
fn uuid7_parse<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    to_uuid(py, Uuid7::parse(text).or_raise()?)
}

/// The UUIDv7 of these 16 bytes; another length raises `InvalidLengthError`, another version
/// or variant `InvalidUuidError`.
#[pyfunction]
fn uuid7_from_bytes<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    to_uuid(py, Uuid7::try_from_slice(data).or_raise()?)
}

/// The UUIDv7 of `(time_ms, rand_a, rand_b)` (48, 12 and 62 bits).
#[pyfunction]
fn uuid7_from_fields(
    py: Python<'_>,
    time_ms: u64,
    rand_a: u64,
    rand_b: u64,
) -> PyResult<Bound<'_, PyAny>> {
    let rand_a = u16::try_from(rand_a).unwrap_or(u16::MAX);
    to_uuid(py, Uuid7::from_fields(time_ms, rand_a, rand_b).or_raise()?)
}
