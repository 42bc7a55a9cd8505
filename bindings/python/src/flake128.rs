//! `Flake128` values and `Flake128Generator`.

use std::sync::OnceLock;

use idforge::{Flake128 as RtFlake128, Flake128s, WorkerId};
use pyo3::basic::CompareOp;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyBytes;

use crate::error::OrRaise;

/// A 128-bit flake id: 64-bit ms | 48-bit worker | 16-bit sequence.
#[pyclass(frozen, subclass, module = "idforge._idforge")]
pub(crate) struct Flake128 {
    inner: RtFlake128,
}

fn shared() -> PyResult<&'static Flake128s> {
    static SHARED: OnceLock<Flake128s> = OnceLock::new();
    if let Some(g) = SHARED.get() {
        return Ok(g);
    }
    let g = Flake128s::new(WorkerId::Random).or_raise()?;
    Ok(SHARED.get_or_init(|| g))
}

#[pymethods]
impl Flake128 {
    /// A fresh id from the process-wide generator (random worker), or the id given as an int,
    /// 16 bytes, base62 or hex text, or a `Flake128`.
    #[new]
    #[pyo3(signature = (value = None))]
    fn new(value: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let inner = match value {
            None => shared()?.next().or_raise()?,
            Some(v) => {
                if let Ok(other) = v.downcast::<Flake128>() {
                    other.get().inner
                } else if let Ok(bytes) = v.downcast::<PyBytes>() {
                    RtFlake128::try_from_slice(bytes.as_bytes()).or_raise()?
                } else if let Ok(text) = v.extract::<PyBackedStr>() {
                    if text.len() == RtFlake128::HEX_LEN {
                        RtFlake128::parse_hex(&text).or_raise()?
                    } else {
                        RtFlake128::parse_base62(&text).or_raise()?
                    }
                } else if let Ok(n) = v.extract::<u128>() {
                    RtFlake128::from_u128(n)
                } else {
                    return Err(PyTypeError::new_err(
                        "Flake128() takes an int, 16 bytes, base62 or hex text, or a Flake128",
                    ));
                }
            }
        };
        Ok(Flake128 { inner })
    }

    /// From parts; a worker over 48 bits raises `NodeOutOfRangeError`.
    #[staticmethod]
    fn from_parts(time_ms: u64, worker: u64, seq: u16) -> PyResult<Self> {
        Ok(Flake128 {
            inner: RtFlake128::from_parts(time_ms, worker, seq).or_raise()?,
        })
    }

    /// Parses base62 (22 characters, or Boundary's unpadded form).
    #[staticmethod]
    fn from_base62(text: &str) -> PyResult<Self> {
        Ok(Flake128 {
            inner: RtFlake128::parse_base62(text).or_raise()?,
        })
    }

    /// Parses 32 hex digits.
    #[staticmethod]
    fn from_hex(text: &str) -> PyResult<Self> {
        Ok(Flake128 {
            inner: RtFlake128::parse_hex(text).or_raise()?,
        })
    }

    #[getter]
    fn time_ms(&self) -> u64 {
        self.inner.time_ms()
    }
    #[getter]
    fn worker(&self) -> u64 {
        self.inner.worker()
    }
    #[getter]
    fn seq(&self) -> u16 {
        self.inner.seq()
    }

    /// The 22-character base62 form (sorts like the id).
    #[getter]
    fn base62(&self) -> String {
        let mut buf = [0u8; RtFlake128::BASE62_LEN];
        self.inner.to_base62(&mut buf).to_owned()
    }

    /// The 32 hex digits.
    #[getter]
    fn hex(&self) -> String {
        let mut buf = [0u8; RtFlake128::HEX_LEN];
        self.inner.to_hex(&mut buf).to_owned()
    }

    fn __int__(&self) -> u128 {
        self.inner.as_u128()
    }

    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }

    fn __str__(&self) -> String {
        self.base62()
    }

    fn __repr__(&self) -> String {
        format!("Flake128('{}')", self.base62())
    }

    fn __hash__(&self) -> u64 {
        let v = self.inner.as_u128();
        (v as u64) ^ ((v >> 64) as u64).rotate_left(29)
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyObject {
        let py = other.py();
        match other.downcast::<Flake128>() {
            Ok(o) => op
                .matches(self.inner.cmp(&o.get().inner))
                .into_pyobject(py)
                .map(|b| b.to_owned().into_any().unbind())
                .unwrap_or_else(|_| py.NotImplemented()),
            Err(_) => py.NotImplemented(),
        }
    }
}

/// A flake-128 generator with its own worker id.
#[pyclass(frozen, subclass, module = "idforge._idforge")]
pub(crate) struct Flake128Generator {
    inner: Flake128s,
}

#[pymethods]
impl Flake128Generator {
    /// `worker`: `None` for 48 random bits (drawn again in a forked child), `"mac"` for the
    /// first MAC address, or an int (a forked child then raises `ForkedError`).
    #[new]
    #[pyo3(signature = (worker = None))]
    fn new(worker: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let worker = match worker {
            None => WorkerId::Random,
            Some(w) if w.extract::<PyBackedStr>().is_ok_and(|s| &*s == "mac") => WorkerId::Mac,
            Some(w) => WorkerId::Fixed(w.extract::<u64>()?),
        };
        Ok(Flake128Generator {
            inner: Flake128s::new(worker).or_raise()?,
        })
    }

    /// The next id.
    fn next(&self) -> PyResult<Flake128> {
        Ok(Flake128 {
            inner: self.inner.next().or_raise()?,
        })
    }

    #[getter]
    fn worker(&self) -> u64 {
        self.inner.worker()
    }
}
