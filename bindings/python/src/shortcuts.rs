//! The one switch for the speed tricks: the hand-made methods ([`crate::hand_made`]) and the
//! objects built from CPython's layouts ([`crate::py_int`], [`crate::uuid_object`]). On for
//! CPython unless `IDFORGE_PYTHON_SHORTCUTS=0` is set when the module loads; off, every call goes
//! through pyo3's plain machinery. CI runs the Python suite both ways, so a CPython change that
//! breaks a shortcut shows as a failed load-time check (a speed loss), never as a wrong id.

use std::sync::OnceLock;

use pyo3::prelude::*;

/// The environment variable that turns the shortcuts off (`0`).
const SWITCH: &str = "IDFORGE_PYTHON_SHORTCUTS";

static ON: OnceLock<bool> = OnceLock::new();

/// Whether the shortcuts may be taken: CPython (whose layouts they read; they are checked at
/// load too, but another interpreter is not probed at all) and not switched off.
pub(crate) fn on(py: Python<'_>) -> bool {
    *ON.get_or_init(|| std::env::var_os(SWITCH).is_none_or(|v| v != "0") && cpython(py))
}

fn cpython(py: Python<'_>) -> bool {
    let name = || -> PyResult<String> {
        py.import("sys")?
            .getattr("implementation")?
            .getattr("name")?
            .extract()
    };
    name().is_ok_and(|name| name == "cpython")
}
