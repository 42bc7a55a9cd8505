//! Batches of ids handed to Python as one `bytes` object (the package wraps it in `array('Q')`).

use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Runs `fill` on `n` ids with the GIL released, then returns their native-endian bytes.
pub(crate) fn ids_bytes<'py, E>(
    py: Python<'py>,
    n: usize,
    fill: impl FnOnce(&mut [u64]) -> Result<(), E> + Send,
    raise: impl FnOnce(E) -> PyErr,
) -> PyResult<Bound<'py, PyBytes>>
where
    E: Send,
{
    let ids = py.allow_threads(|| {
        let mut ids = vec![0u64; n];
        fill(&mut ids).map(|()| ids)
    });
    let ids = ids.map_err(raise)?;
    PyBytes::new_with(py, n * 8, |buf| {
        for (chunk, id) in buf.chunks_exact_mut(8).zip(&ids) {
            chunk.copy_from_slice(&id.to_ne_bytes());
        }
        Ok(())
    })
}
