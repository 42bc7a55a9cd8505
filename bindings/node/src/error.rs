//! Errors: a runtime error becomes a JS `Error` whose `code` is the stable `IDFORGE_…` name from
//! `core/testdata/errors.json` (the C enumerator without `STATUS_`) and whose `status` is that
//! row's number (the C `idforge_status`, Python's `code`, Kotlin's `status`), with the runtime's
//! message.

use std::cell::Cell;
use std::ptr;
use std::sync::OnceLock;

use idforge::ErrorCode;
use napi::bindgen_prelude::{JsObjectValue, Object};
use napi::{Env, JsValue, Status, sys};

thread_local! {
    /// The Node-API environment of the JavaScript running on this thread (the main thread or a
    /// worker), set when the addon is loaded there and cleared when that environment ends.
    /// Errors returned by synchronous calls carry no environment, and an `Error` built by
    /// napi-rs from a name and a message gets only `code`; with it they are built here,
    /// `status` included.
    static ENV: Cell<sys::napi_env> = const { Cell::new(ptr::null_mut()) };
}

/// Runs when the addon is loaded into an environment: remembers it for [`to_js`].
#[napi_derive::napi(module_exports)]
pub fn remember_env(_exports: Object, env: Env) -> napi::Result<()> {
    ENV.with(|cell| cell.set(env.raw()));
    // Cleared when the environment is torn down (a worker ending), so no call can reach a
    // stale one. A runtime without cleanup hooks keeps the pointer; it is only read by calls
    // made from this environment's own JavaScript, which no longer runs then.
    let _ = env.add_env_cleanup_hook((), |()| ENV.with(|cell| cell.set(ptr::null_mut())));
    Ok(())
}

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

/// A JS error: the `Error` object [`to_js`] built, held by a reference until it is thrown.
pub type JsErr = napi::Error;

/// Results of the addon's functions.
pub type Result<T> = std::result::Result<T, JsErr>;

/// Converts a runtime or core error, in the environment of the calling thread's JavaScript.
#[cold]
pub(crate) fn to_js(e: impl Into<idforge::Error>) -> JsErr {
    let e = e.into();
    let env = ENV.with(Cell::get);
    if env.is_null() {
        // Not reached: every call that converts an error runs on a thread whose environment
        // loaded the addon. Should it happen, the code is kept in the message.
        let code = Code(e.code());
        return napi::Error::new(Status::GenericFailure, format!("{}: {e}", code.as_ref()));
    }
    js_error(&Env::from_raw(env), &e)
}

/// The JS `Error` of `e`: its message, `code` (`IDFORGE_…`) and `status` (the number).
fn js_error(env: &Env, e: &idforge::Error) -> napi::Error {
    let build = || -> napi::Result<napi::Error> {
        let code = e.code();
        let mut obj = env.create_error(napi::Error::new(Status::GenericFailure, e.to_string()))?;
        obj.set_named_property("code", Code(code).as_ref())?;
        obj.set_named_property("status", code.as_u32())?;
        Ok(napi::Error::from(obj.to_unknown()))
    };
    build().unwrap_or_else(|failed| failed)
}

/// An `INVALID_ARGUMENT` error.
#[cold]
pub(crate) fn invalid_argument(message: &'static str) -> JsErr {
    to_js(idforge::CoreError::InvalidArgument(message))
}

/// Shorthand for results of the runtime and the core.
pub(crate) trait OrThrow<T> {
    /// The value, or the JS error for its code.
    fn or_throw(self) -> Result<T>;
}

impl<T> OrThrow<T> for std::result::Result<T, idforge::Error> {
    #[inline]
    fn or_throw(self) -> Result<T> {
        self.map_err(to_js)
    }
}

impl<T> OrThrow<T> for std::result::Result<T, idforge::CoreError> {
    #[inline]
    fn or_throw(self) -> Result<T> {
        self.map_err(to_js)
    }
}

/// A rejection for a Promise made by an [`napi::Task`]: the same `Error` a synchronous call
/// throws, built in the environment the task resolves in.
pub(crate) fn rejection(env: &Env, e: idforge::Error) -> napi::Error {
    js_error(env, &e)
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
