//! What `Uuid7s` and `Ulids` share: building a runtime generator from Python's arguments, and
//! the process-wide generator behind `uuid7()` and `ulid()`.

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::OnceLock;

use idforge::{Policy, Random, SystemClock, TimeOrdered, TimeOrderedId};
use pyo3::prelude::*;
use pyo3::sync::GILProtected;

use crate::error::OrRaise;

/// A runtime generator and whether its calls may wait for the clock (then without the GIL).
pub(crate) struct Built<T: TimeOrderedId> {
    pub(crate) inner: TimeOrdered<T>,
    pub(crate) may_wait: bool,
}

impl<T: TimeOrderedId + Copy> Built<T> {
    /// The next id; without the GIL when the call may wait.
    pub(crate) fn next(&self, py: Python<'_>) -> PyResult<T> {
        if self.may_wait {
            py.allow_threads(|| self.inner.next()).or_raise()
        } else {
            next_under_gil(py, &self.inner).or_raise()
        }
    }

    /// `n` fresh ids, increasing, made with the GIL released; `blank` fills the vector first.
    pub(crate) fn many(&self, py: Python<'_>, n: u64, blank: T) -> PyResult<Vec<T>> {
        let n = idforge::batch_len(n).or_raise()?;
        py.allow_threads(|| {
            let mut ids = vec![blank; n];
            self.inner.next_many(&mut ids).map(|()| ids)
        })
        .or_raise()
    }
}

/// The `#[pymethods]` block of `Uuid7s` and `Ulids` (a struct with one field, `generator`, a
/// [`Built`]): the constructor and getters they share, then the class's own methods (pyo3 takes
/// one block per class).
macro_rules! time_ordered_methods {
    ($class:ident { $($own:tt)* }) => {
        #[pymethods]
        impl $class {
            #[new]
            #[pyo3(signature = (state_file = None, *, policy = "borrow", max_wait = None))]
            fn new(
                py: Python<'_>,
                state_file: Option<std::path::PathBuf>,
                policy: &str,
                max_wait: Option<f64>,
            ) -> PyResult<Self> {
                let generator = crate::time_ordered::build(py, state_file, policy, max_wait)?;
                Ok($class { generator })
            }

            /// The high-water time (Unix ms) kept in the state file, or `None` without one.
            #[getter]
            fn persisted_ms(&self) -> Option<u64> {
                self.generator.inner.persisted_ms()
            }

            /// The policy's name: `borrow`, `wait` or `error`.
            #[getter]
            fn policy(&self) -> &'static str {
                self.generator.inner.policy().name()
            }

            $($own)*
        }
    };
}
pub(crate) use time_ordered_methods;

/// A generator on the system clock with the policy named `policy` and an optional state file
/// (opened without the GIL).
pub(crate) fn build<T: TimeOrderedId>(
    py: Python<'_>,
    state_file: Option<PathBuf>,
    policy: &str,
    max_wait: Option<f64>,
) -> PyResult<Built<T>> {
    let policy = crate::snowflake::policy_of(policy, max_wait)?;
    let inner = py
        .allow_threads(|| TimeOrdered::build(policy, state_file, SystemClock::shared()))
        .or_raise()?;
    Ok(Built {
        inner,
        may_wait: matches!(policy, Policy::Wait { .. }),
    })
}

/// The random bits of ids made with the GIL held: one stream, which the GIL serialises, so an
/// id costs no thread-local lookup (about 6 ns of the 90 a kept `uuid7()` costs).
static RANDOM: GILProtected<RefCell<Random>> = GILProtected::new(RefCell::new(Random::new()));

/// The next id of `generator`, its random bits from the GIL's stream.
#[inline]
pub(crate) fn next_under_gil<T: TimeOrderedId>(
    py: Python<'_>,
    generator: &TimeOrdered<T>,
) -> idforge::Result<T> {
    match RANDOM.get(py).try_borrow_mut() {
        Ok(mut random) => generator.next_with(&mut random),
        // Nothing calls back into Python while it is borrowed; were it ever, the thread's own
        // stream serves.
        Err(_) => generator.next(),
    }
}

/// The process-wide generator in `cell` (default policy, no state file), made on first use.
pub(crate) fn shared<T: TimeOrderedId>(
    cell: &'static OnceLock<TimeOrdered<T>>,
) -> PyResult<&'static TimeOrdered<T>> {
    if let Some(g) = cell.get() {
        return Ok(g);
    }
    let g = TimeOrdered::new().or_raise()?;
    Ok(cell.get_or_init(|| g))
}
