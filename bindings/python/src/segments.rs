//! `Segments`: ids of one tag from a segment source, refilled in the background.

use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use runtime::{SegmentOptions, Segments as RtSegments};

use crate::error::OrRaise;

/// Ids of one tag from a segment source (`idforge://`, `redis://`, `postgres://`, `mysql://`,
/// `sqlite://`, `file:///dir`, `memory:`). Thread-safe; in a forked child the parent's ranges
/// are dropped and fresh ones fetched.
#[pyclass(frozen, subclass, module = "idforge._idforge")]
pub(crate) struct Segments {
    inner: RtSegments,
}

fn seconds(value: f64, what: &'static str) -> PyResult<Duration> {
    if value.is_finite() && value > 0.0 {
        Ok(Duration::from_secs_f64(value))
    } else {
        Err(runtime::CoreError::InvalidArgument(what)).or_raise()
    }
}

#[pymethods]
impl Segments {
    #[new]
    #[pyo3(signature = (url, tag, *, step = 1000, max_step = 1_000_000, dynamic_step = true, target = 900.0, prefetch_pct = 10, timeout = 3.0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        url: &str,
        tag: &str,
        step: u64,
        max_step: u64,
        dynamic_step: bool,
        target: f64,
        prefetch_pct: u8,
        timeout: f64,
    ) -> PyResult<Self> {
        let options = SegmentOptions {
            step,
            max_step,
            dynamic_step,
            target: seconds(target, "target must be a positive number of seconds")?,
            prefetch_pct,
            timeout: seconds(timeout, "timeout must be a positive number of seconds")?,
        };
        let inner = py
            .allow_threads(|| RtSegments::open(url, tag, options))
            .or_raise()?;
        Ok(Segments { inner })
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
        let n = runtime::batch_len(n).map_err(crate::error::to_py)?;
        crate::buffer::ids_bytes(py, n, |ids| self.inner.next_many(ids), crate::error::to_py)
    }

    #[getter]
    fn tag(&self) -> &str {
        self.inner.tag()
    }

    /// The generator's counters.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.inner.stats();
        let d = PyDict::new(py);
        d.set_item("ranges_fetched", s.ranges_fetched)?;
        d.set_item("fetch_errors", s.fetch_errors)?;
        d.set_item("fetch_micros_total", s.fetch_micros_total)?;
        d.set_item("fetch_micros_last", s.fetch_micros_last)?;
        d.set_item("waits", s.waits)?;
        d.set_item("step", s.step)?;
        d.set_item("buffered", s.buffered)?;
        // The process-wide figures of the refill engine serving this source.
        let engine = PyDict::new(py);
        engine.set_item("generators", s.engine.generators)?;
        engine.set_item("threads", s.engine.threads)?;
        engine.set_item("connections", s.engine.connections)?;
        engine.set_item("round_trips", s.engine.round_trips)?;
        engine.set_item("refills", s.engine.refills)?;
        engine.set_item("batched_refills", s.engine.batched_refills)?;
        engine.set_item("queued", s.engine.queued)?;
        d.set_item("engine", engine)?;
        Ok(d)
    }
}
