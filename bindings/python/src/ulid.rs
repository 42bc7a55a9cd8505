//! ULID as text: the generator `Ulids`, the process-wide `ulid()` and the codecs.

use std::sync::OnceLock;

use idforge::{Ulid, Ulids as RtUlids};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyModule};

use crate::error::OrRaise;
use crate::time_ordered::{Built, time_ordered_methods};

static SHARED: OnceLock<RtUlids> = OnceLock::new();

fn text(id: Ulid) -> String {
    let mut buf = [0u8; Ulid::TEXT_LEN];
    id.to_text(&mut buf).to_owned()
}

/// ULIDs (26 characters of Crockford base32), strictly increasing (the spec's monotonic
/// mode), safe to share between threads.
#[pyclass(frozen, subclass, module = "idforge._idforge")]
pub(crate) struct Ulids {
    generator: Built<Ulid>,
}

time_ordered_methods!(Ulids {
    /// The next ULID.
    fn next(&self, py: Python<'_>) -> PyResult<String> {
        Ok(text(self.generator.next(py)?))
    }

    /// `n` fresh ULIDs, increasing, in a list.
    fn next_many(&self, py: Python<'_>, n: u64) -> PyResult<Vec<String>> {
        let ids = self.generator.many(py, n, Ulid::from_u128(0))?;
        Ok(ids.into_iter().map(text).collect())
    }
});

/// A fresh ULID from the process-wide generator.
#[pyfunction]
fn ulid(py: Python<'_>) -> PyResult<String> {
    let generator = crate::time_ordered::shared(&SHARED)?;
    Ok(text(
        crate::time_ordered::next_under_gil(py, generator).or_raise()?,
    ))
}

/// The 16 big-endian bytes of ULID text (26 characters, either case, Crockford's aliases);
/// anything else raises `InvalidBase32Error`.
#[pyfunction]
fn ulid_parse<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyBytes>> {
    Ok(PyBytes::new(py, &Ulid::parse(text).or_raise()?.to_bytes()))
}

/// The ULID text of 16 big-endian bytes.
#[pyfunction]
fn ulid_from_bytes(data: &[u8]) -> PyResult<String> {
    Ok(text(Ulid::try_from_slice(data).or_raise()?))
}

/// The ULID text of `(time_ms, random)` (48 and 80 bits).
#[pyfunction]
fn ulid_from_fields(time_ms: u64, random: u128) -> PyResult<String> {
    Ok(text(Ulid::from_parts(time_ms, random).or_raise()?))
}

/// Adds `Ulids`, `ulid` and the codecs to the module.
pub(crate) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Ulids>()?;
    m.add_function(wrap_pyfunction!(ulid, m)?)?;
    m.add_function(wrap_pyfunction!(ulid_parse, m)?)?;
    m.add_function(wrap_pyfunction!(ulid_from_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(ulid_from_fields, m)?)?;
    Ok(())
}
