//! Errors: a runtime error becomes a JS `Error` whose `code` is the stable `IDFORGE_…` name from
//! `core/testdata/errors.json` (the C enumerator without `STATUS_`), with the runtime's message.

use std::sync::OnceLock;

use napi::bindgen_prelude::JsObjectValue;
use napi::{Env, JsValue, Status};
use runtime::ErrorCode;

/// An error code as JavaScript sees it (`error.code`).
pub struct Code(ErrorCode);

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        static NAMES: OnceLock<Vec<String>> = OnceLock::new();
        let names = NAMES.get_or_init(|| {
            ErrorCode::ALL
                .iter()
                .map(|c| format!("IDFORGE_{}", c.name()))
                .collect()
        });
        let at = ErrorCode::ALL.iter().position(|c| *c == self.0);
        at.map_or("IDFORGE_PANIC", |i| names[i].as_str())
    }
}

/// A JS error for `code` and `message`.
pub type JsErr = napi::Error<Code>;

/// Results of the addon's functions.
pub type Result<T> = std::result::Result<T, JsErr>;

/// Converts a runtime or core error.
#[cold]
pub(crate) fn to_js(e: impl Into<runtime::Error>) -> JsErr {
    let e = e.into();
    napi::Error::new(Code(e.code()), e.to_string())
}

/// An `INVALID_ARGUMENT` error.
#[cold]
pub(crate) fn invalid_argument(message: &'static str) -> JsErr {
    to_js(runtime::CoreError::InvalidArgument(message))
}

/// Shorthand for results of the runtime and the core.
pub(crate) trait OrThrow<T> {
    /// The value, or the JS error for its code.
    fn or_throw(self) -> Result<T>;
}

impl<T> OrThrow<T> for std::result::Result<T, runtime::Error> {
    #[inline]
    fn or_throw(self) -> Result<T> {
        self.map_err(to_js)
    }
}

impl<T> OrThrow<T> for std::result::Result<T, runtime::CoreError> {
    #[inline]
    fn or_throw(self) -> Result<T> {
        self.map_err(to_js)
    }
}

/// A rejection for a Promise made by an [`napi::Task`]: the task API carries `napi::Error`
/// (with a `Status`), so the JS error is built here with our `code` and handed over as a value.
pub(crate) fn rejection(env: &Env, e: runtime::Error) -> napi::Error {
    let build = || -> napi::Result<napi::Error> {
        let mut obj = env.create_error(napi::Error::new(Status::GenericFailure, e.to_string()))?;
        obj.set_named_property("code", Code(e.code()).as_ref())?;
        Ok(napi::Error::from(obj.to_unknown()))
    };
    build().unwrap_or_else(|failed| failed)
}

/// Every error code with its name, for the package's self-check against `errors.json`.
#[napi_derive::napi(object, object_from_js = false)]
pub struct ErrorCodeInfo {
    /// The C status value.
    pub code: u32,
    /// The stable name (`IDFORGE_…`), as in `error.code`.
    pub name: String,
}

/// Every error code the addon can throw, in `errors.json` order.
#[napi_derive::napi]
pub fn error_codes() -> Vec<ErrorCodeInfo> {
    ErrorCode::ALL
        .iter()
        .map(|c| ErrorCodeInfo {
            code: c.as_u32(),
            name: Code(*c).as_ref().to_owned(),
        })
        .collect()
}
