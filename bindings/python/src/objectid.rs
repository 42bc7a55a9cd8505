//! `ObjectId`: a MongoDB ObjectId value; `ObjectId()` makes a fresh one.

use idforge::ObjectId as RtObjectId;
use pyo3::basic::CompareOp;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyBytes;

use crate::error::OrRaise;

/// A MongoDB ObjectId (12 bytes).
#[pyclass(frozen, subclass, module = "idforge._idforge")]
pub(crate) struct ObjectId {
    inner: RtObjectId,
}

#[pymethods]
impl ObjectId {
    /// A fresh id, or the id given as 24 hex digits, 12 bytes, an `ObjectId` or any object with
    /// a 12-byte `binary` attribute (pymongo's `bson.ObjectId`).
    #[new]
    #[pyo3(signature = (oid = None))]
    fn new(oid: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let inner = match oid {
            None => idforge::object_id().or_raise()?,
            Some(v) => {
                if let Ok(text) = v.extract::<PyBackedStr>() {
                    RtObjectId::parse_hex(&text).or_raise()?
                } else if let Ok(bytes) = v.downcast::<PyBytes>() {
                    RtObjectId::try_from_slice(bytes.as_bytes()).or_raise()?
                } else if let Ok(other) = v.downcast::<ObjectId>() {
                    other.get().inner
                } else if let Ok(binary) = v.getattr("binary") {
                    let bytes = binary.downcast::<PyBytes>()?;
                    RtObjectId::try_from_slice(bytes.as_bytes()).or_raise()?
                } else {
                    return Err(PyTypeError::new_err(
                        "ObjectId() takes a hex str, 12 bytes, or an ObjectId",
                    ));
                }
            }
        };
        Ok(ObjectId { inner })
    }

    /// The 12 bytes (as pymongo's `ObjectId.binary`).
    #[getter]
    fn binary<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.bytes())
    }

    /// The creation time in Unix seconds.
    #[getter]
    fn timestamp(&self) -> u32 {
        self.inner.timestamp()
    }

    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        self.binary(py)
    }

    fn __str__(&self) -> String {
        let mut buf = [0u8; RtObjectId::HEX_LEN];
        self.inner.to_hex(&mut buf).to_owned()
    }

    fn __repr__(&self) -> String {
        format!("ObjectId('{}')", self.__str__())
    }

    fn __hash__(&self) -> u64 {
        let b = self.inner.bytes();
        // The counter and timestamp bytes vary most; fold all 12 bytes.
        let hi = u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        let lo = u32::from_be_bytes([b[8], b[9], b[10], b[11]]);
        hi.rotate_left(17) ^ u64::from(lo).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyObject {
        let py = other.py();
        match other.downcast::<ObjectId>() {
            Ok(o) => op
                .matches(self.inner.bytes().cmp(&o.get().inner.bytes()))
                .into_pyobject(py)
                .map(|b| b.to_owned().into_any().unbind())
                .unwrap_or_else(|_| py.NotImplemented()),
            Err(_) => py.NotImplemented(),
        }
    }
}
