//! `describe_id`: any id's fields, read by the runtime's rules (the package wraps it as
//! `idforge.describe_id`; `python -m idforge decode` prints it).

use idforge::text::TextForm;
use idforge::text::id::{FieldValue, IdKind, describe};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::error::OrRaise;
use crate::snowflake::layout_of;

/// The fields of the id written as `text`, in order (numbers as ints, the rest as str): of the
/// type named `kind`, or detected; with `form`, a snowflake in that text form. `layout` (a
/// preset name, a spec or a `Layout`) reads snowflakes; `None` is Twitter's.
#[pyfunction]
#[pyo3(signature = (text, kind = None, form = None, layout = None))]
fn describe_id<'py>(
    py: Python<'py>,
    text: &str,
    kind: Option<&str>,
    form: Option<&str>,
    layout: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let kind = kind.map(str::parse::<IdKind>).transpose().or_raise()?;
    let form = form.map(str::parse::<TextForm>).transpose().or_raise()?;
    let layout = match layout {
        Some(l) => layout_of(l)?.inner,
        None => idforge::Layout::TWITTER,
    };
    let fields = describe(text, kind, form, &layout).or_raise()?;
    let d = PyDict::new(py);
    for f in fields {
        match f.value {
            FieldValue::Text(t) => d.set_item(f.key, t)?,
            FieldValue::Number(n) => d.set_item(f.key, n)?,
        }
    }
    Ok(d)
}

/// Adds the function to the module.
pub(crate) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(describe_id, m)?)
}
