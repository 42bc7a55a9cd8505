//! `Snowflake`: the thread-safe generator.

use std::time::Duration;

use idforge::{Policy, Snowflake as RtSnowflake};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyBytes;

use crate::error::OrRaise;
use crate::layout::Layout;

/// A snowflake generator (`next`, `next_many`), safe to share between threads.
#[pyclass(frozen, subclass, module = "idforge._idforge")]
pub(crate) struct Snowflake {
    inner: RtSnowflake,
    layout: Layout,
    /// Whether a call may sleep for the clock (then the GIL is released around it).
    may_wait: bool,
}

/// A layout from a preset name, a spec or a `Layout`.
pub(crate) fn layout_of(value: &Bound<'_, PyAny>) -> PyResult<Layout> {
    if let Ok(text) = value.extract::<PyBackedStr>() {
        return idforge::Layout::parse(&text)
            .map(|inner| Layout { inner })
            .or_raise();
    }
    value.extract::<Layout>()
}

pub(crate) fn policy_of(name: &str, max_wait: Option<f64>) -> PyResult<Policy> {
    let duration = match max_wait {
        None => None,
        Some(s) if s.is_finite() && (0.0..1e12).contains(&s) => Some(Duration::from_secs_f64(s)),
        Some(_) => {
            return Err(idforge::CoreError::InvalidArgument(
                "max_wait must be a non-negative number of seconds",
            ))
            .or_raise();
        }
    };
    Policy::named(name, duration).map_err(crate::error::to_py)
}

impl Snowflake {
    /// The runtime generator.
    pub(crate) fn inner(&self) -> &RtSnowflake {
        &self.inner
    }

    /// Whether a call may sleep for the clock (then the GIL must be released around it).
    pub(crate) fn may_wait(&self) -> bool {
        self.may_wait
    }
}

#[pymethods]
impl Snowflake {
    #[new]
    #[pyo3(signature = (layout = None, node_id = 0, *, policy = "borrow", max_wait = None, state_file = None, lease = None, service = None, lease_ttl = None, random_start = false))]
    #[allow(clippy::too_many_arguments)] // Python keyword arguments
    fn new(
        py: Python<'_>,
        layout: Option<&Bound<'_, PyAny>>,
        node_id: u64,
        policy: &str,
        max_wait: Option<f64>,
        state_file: Option<std::path::PathBuf>,
        lease: Option<String>,
        service: Option<String>,
        lease_ttl: Option<f64>,
        random_start: bool,
    ) -> PyResult<Self> {
        let layout = match layout {
            Some(l) => layout_of(l)?,
            None => Layout {
                inner: idforge::Layout::TWITTER,
            },
        };
        let policy = policy_of(policy, max_wait)?;
        let mut builder = RtSnowflake::builder(layout.inner)
            .node(node_id)
            .policy(policy)
            .random_start(random_start);
        if let Some(path) = state_file {
            builder = builder.state_file(path);
        }
        match (lease, service) {
            (Some(url), Some(service)) => builder = builder.lease(url, service),
            (None, None) if lease_ttl.is_none() => {}
            _ => {
                return Err(crate::error::core_to_py(
                    idforge::CoreError::InvalidArgument(
                        "lease= and service= go together (lease_ttl= needs both)",
                    ),
                ));
            }
        }
        if let Some(ttl) = lease_ttl {
            if !(ttl.is_finite() && ttl > 0.0 && ttl < 1e9) {
                return Err(crate::error::core_to_py(
                    idforge::CoreError::InvalidArgument(
                        "lease_ttl is a positive number of seconds",
                    ),
                ));
            }
            builder = builder.lease_ttl(Duration::from_secs_f64(ttl));
        }
        // Leasing the node id is a round trip to the server: without the GIL.
        let inner = py.allow_threads(|| builder.build()).or_raise()?;
        Ok(Snowflake {
            inner,
            layout,
            may_wait: matches!(policy, Policy::Wait { .. }),
        })
    }

    // With the shortcuts on, `fast_next::install` replaces this with a hand-made method,
    // cheaper than pyo3's (same name, signature and doc).
    /// The next id.
    fn next(&self, py: Python<'_>) -> PyResult<u64> {
        let id = if self.may_wait {
            py.allow_threads(|| self.inner.next())
        } else {
            self.inner.next()
        };
        id.or_raise()
    }

    /// `n` fresh ids as the native-endian bytes of `n` uint64 (the package wraps them in an
    /// `array('Q')`). The GIL is released while they are made.
    fn next_many_bytes<'py>(&self, py: Python<'py>, n: u64) -> PyResult<Bound<'py, PyBytes>> {
        let n = idforge::batch_len(n).map_err(crate::error::to_py)?;
        crate::buffer::ids_bytes(py, n, |ids| self.inner.next_many(ids), crate::error::to_py)
    }

    /// `(tick, time_ms, node, seq)` of an id of this layout.
    fn decompose(&self, id: u64) -> PyResult<(u64, u64, u64, u64)> {
        let p = self.inner.decode(id).or_raise()?;
        Ok((p.tick, p.time_ms, p.node, p.seq))
    }

    #[getter]
    fn layout(&self) -> Layout {
        self.layout
    }

    #[getter]
    fn node_id(&self) -> u64 {
        self.inner.node()
    }

    /// Whether each tick's sequence starts at a random value below half its range.
    #[getter]
    fn random_start(&self) -> bool {
        self.inner.random_start()
    }
}
