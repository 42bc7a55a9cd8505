//! The private extension module `idforge._idforge`: pyo3 glue over the `idforge` runtime. The
//! public API, docs and the exception classes live in the Python package `idforge` (`python/`).

use pyo3::prelude::*;

mod buffer;
mod describe;
mod error;
mod fast_next;
mod flake128;
mod hand_made;
mod id_text;
mod layout;
mod objectid;
mod py_int;
mod segments;
mod shortcuts;
mod snowflake;
mod time_ordered;
mod ulid;
mod uuid7;
mod uuid_object;

/// Does nothing: the floor of a call into this module, for the benchmarks.
#[pyfunction]
fn _noop() {}

/// The module `idforge._idforge`.
#[pymodule]
fn _idforge(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<layout::Layout>()?;
    m.add_class::<snowflake::Snowflake>()?;
    if shortcuts::on(m.py()) {
        fast_next::install(&m.py().get_type::<snowflake::Snowflake>())?;
    }
    m.add_class::<objectid::ObjectId>()?;
    m.add_class::<flake128::Flake128>()?;
    m.add_class::<flake128::Flake128Generator>()?;
    m.add_class::<segments::Segments>()?;
    uuid7::add(m)?;
    ulid::add(m)?;
    id_text::add(m)?;
    describe::add(m)?;
    m.add_function(wrap_pyfunction!(error::error_codes, m)?)?;
    m.add_function(wrap_pyfunction!(_noop, m)?)?;
    // Which way this load went (tests and benchmarks read it).
    m.add("_shortcuts", shortcuts::on(m.py()))?;
    Ok(())
}
