//! `Segments`: ids of one tag from a segment source, refilled in the background.

use idforge::{SegmentOptions, SegmentOptionsInput, Segments as RtSegments};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::error::OrRaise;

/// Ids of one tag from a segment source (`idforge://`, `redis://`, `postgres://`, `mysql://`,
/// `sqlite://`, `file:///dir`, `memory:`). Thread-safe; in a forked child the parent's ranges
/// are dropped and fresh ones fetched.
#[pyclass(frozen, subclass, module = "idforge._idforge")]
pub(crate) struct Segments {
    inner: RtSegments,
}

/// Whole ms of `seconds`, saturating: NaN and negatives give 0 and infinity the largest value,
/// both out of every bound, so the runtime refuses them with its message for the option.
fn ms(seconds: f64) -> u64 {
    (seconds * 1000.0).round() as u64
}

/// A Python int in the runtime's range, saturating: a negative gives 0 and a huge one the
/// largest value, both out of every bound, so the runtime refuses them with its message.
fn saturate(v: i128) -> u64 {
    u64::try_from(v).unwrap_or(if v < 0 { 0 } else { u64::MAX })
}

#[pymethods]
impl Segments {
    /// Every option not given (`None`) takes the default that every language shares; the
    /// runtime checks the bounds.
    #[new]
    #[pyo3(signature = (url, tag, *, step = None, max_step = None, dynamic_step = None, target = None, prefetch_pct = None, timeout = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        url: &str,
        tag: &str,
        step: Option<i128>,
        max_step: Option<i128>,
        dynamic_step: Option<bool>,
        target: Option<f64>,
        prefetch_pct: Option<i128>,
        timeout: Option<f64>,
    ) -> PyResult<Self> {
        let options = SegmentOptions::resolve(SegmentOptionsInput {
            step: step.map(saturate),
            max_step: max_step.map(saturate),
            dynamic_step,
            target_ms: target.map(ms),
            prefetch_pct: prefetch_pct.map(|v| u32::try_from(saturate(v)).unwrap_or(u32::MAX)),
            timeout_ms: timeout.map(ms),
        })
        .or_raise()?;
        let inner = py
            .allow_threads(|| RtSegments::open(url, tag, options))
            .or_raise()?;
        Ok(Segments { inner })
    }

    /// The options in effect, under the constructor's names (`target` and `timeout` in
    /// seconds).
    fn options<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let o = self.inner.options();
        let d = PyDict::new(py);
        d.set_item("step", o.step)?;
        d.set_item("max_step", o.max_step)?;
        d.set_item("dynamic_step", o.dynamic_step)?;
        d.set_item("target", o.target_ms() as f64 / 1000.0)?;
        d.set_item("prefetch_pct", o.prefetch_pct)?;
        d.set_item("timeout", o.timeout_ms() as f64 / 1000.0)?;
        Ok(d)
    }

    /// The next id. The GIL is released: the call may wait for a refill.
    fn next(&self, py: Python<'_>) -> PyResult<u64> {
        py.allow_threads(|| self.inner.next()).or_raise()
    }

    /// The next id if one is buffered, else `None` at once (a refill is requested). Never waits.
    fn try_next(&self) -> PyResult<Option<u64>> {
        self.inner.try_next().or_raise()
    }

    /// Waits (GIL released) until an id is buffered, without taking one, through transient
    /// failures; raises a permanent failure at once, else the last failure or a timeout.
    fn ready(&self, py: Python<'_>) -> PyResult<()> {
        py.allow_threads(|| self.inner.ready()).or_raise()
    }

    /// `n` ids as the native-endian bytes of `n` uint64 (the package wraps them in an
    /// `array('Q')`).
    fn next_many_bytes<'py>(&self, py: Python<'py>, n: u64) -> PyResult<Bound<'py, PyBytes>> {
        let n = idforge::batch_len(n).map_err(crate::error::to_py)?;
        crate::buffer::ids_bytes(py, n, |ids| self.inner.next_many(ids), crate::error::to_py)
    }

    #[getter]
    fn tag(&self) -> &str {
        self.inner.tag()
    }

    /// The generator's counters.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        // By name, from the runtime's one declaration of the records (`idforge::SegmentStats`).
        let s = self.inner.stats();
        let d = PyDict::new(py);
        for (name, value) in s.fields() {
            d.set_item(name, value)?;
        }
        // The process-wide figures of the refill engine serving this source.
        let engine = PyDict::new(py);
        for (name, value) in s.engine.fields() {
            engine.set_item(name, value)?;
        }
        d.set_item("engine", engine)?;
        Ok(d)
    }
}
