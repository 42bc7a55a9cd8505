//! Text forms of 64-bit ids: `id_to_text` and `id_from_text` (the package wraps them as
//! `idforge.id_to_text` / `idforge.id_from_text`).

use idforge::text::{self, TextForm};
use pyo3::prelude::*;

use crate::error::OrRaise;

fn form_of(name: &str) -> PyResult<TextForm> {
    name.parse::<TextForm>().or_raise()
}

/// `id` written in the form named `form` (`decimal`, `base32` or `base62`).
#[pyfunction]
fn id_to_text(id: u64, form: &str) -> PyResult<String> {
    Ok(text::id_to_text(id, form_of(form)?))
}

/// The id whose text in the form named `form` is `text`.
#[pyfunction]
fn id_from_text(text: &str, form: &str) -> PyResult<u64> {
    text::id_from_text(text, form_of(form)?).or_raise()
}

/// Adds the functions to the module.
pub(crate) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(id_to_text, m)?)?;
    m.add_function(wrap_pyfunction!(id_from_text, m)?)?;
    Ok(())
}
