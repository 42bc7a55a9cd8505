//! Errors: a runtime error becomes an instance of the exception class the package `idforge`
//! defines for its code (`idforge._errors.by_code`), with the runtime's message.

use idforge::ErrorCode;
use pyo3::prelude::*;

/// Converts a runtime error into the package's exception for its code.
pub(crate) fn to_py(e: idforge::Error) -> PyErr {
    raise(e.code(), e.to_string())
}

/// Converts a core error into the package's exception for its code.
pub(crate) fn core_to_py(e: idforge::CoreError) -> PyErr {
    raise(e.code(), e.to_string())
}

fn raise(code: ErrorCode, message: String) -> PyErr {
    Python::with_gil(|py| {
        let made = py
            .import("idforge._errors")
            .and_then(|m| m.getattr("by_code"))
            .and_then(|f| f.call1((code.as_u32(), message)));
        match made {
            Ok(exception) => PyErr::from_value(exception),
            // The package is broken (its _errors module is missing): say so rather than hide it.
            Err(e) => e,
        }
    })
}

/// Every error code with its name, for the package's self-check against `errors.json`.
#[pyfunction]
pub(crate) fn error_codes() -> Vec<(u32, &'static str)> {
    ErrorCode::ALL
        .iter()
        .map(|c| (c.as_u32(), c.name()))
        .collect()
}

/// Shorthand for results of the runtime.
pub(crate) trait OrRaise<T> {
    /// The value, or the package's exception.
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, idforge::Error> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

impl<T> OrRaise<T> for Result<T, idforge::CoreError> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(core_to_py)
    }
}
