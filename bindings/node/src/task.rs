//! Calls that may wait (for the clock or a segment refill) run on the libuv thread pool and
//! return a Promise, so the event loop never blocks.

use napi::bindgen_prelude::{BigInt, BigUint64Array, ToNapiValue, TypeName};
use napi::{Env, Task};

use crate::error::rejection;

type Job = Box<dyn FnMut() -> Result<Vec<u64>, idforge::Error> + Send>;

/// A waiting call: `job` runs off the event loop, `finish` turns its ids into the JS value.
pub struct Waiting<J> {
    job: Job,
    finish: fn(Vec<u64>) -> J,
}

impl<J> Waiting<J> {
    pub(crate) fn new(job: Job, finish: fn(Vec<u64>) -> J) -> Waiting<J> {
        Waiting { job, finish }
    }
}

/// The first id, as a `bigint`.
pub(crate) fn one(ids: Vec<u64>) -> BigInt {
    BigInt::from(ids.first().copied().unwrap_or_default())
}

/// All the ids, as a `BigUint64Array`.
pub(crate) fn many(ids: Vec<u64>) -> BigUint64Array {
    BigUint64Array::new(ids)
}

/// Nothing (`undefined`).
pub(crate) fn nothing(_: Vec<u64>) {}

impl<J: ToNapiValue + TypeName + 'static> Task for Waiting<J> {
    type Output = Result<Vec<u64>, idforge::Error>;
    type JsValue = J;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok((self.job)())
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<J> {
        match output {
            Ok(ids) => Ok((self.finish)(ids)),
            Err(e) => Err(rejection(&env, e)),
        }
    }
}
