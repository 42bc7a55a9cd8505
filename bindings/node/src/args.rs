//! Numbers from JavaScript: ids as `bigint`, safe-integer `number` or decimal `string`, checked
//! (a fraction, a negative or an unsafe integer is an error, never a silently rounded id).

use napi::bindgen_prelude::{BigInt, Either3, Uint8ArraySlice};

use crate::error::{OrThrow, Result, invalid_argument, to_js};

/// An id or other unsigned 64-bit value as JavaScript passes it (spelled out in the `#[napi]`
/// signatures, where the macro cannot see through an alias).
pub type Uint64Arg = Either3<BigInt, f64, String>;

/// The largest integer a `number` holds exactly.
pub(crate) const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// The value of `arg`.
pub(crate) fn uint64(arg: Uint64Arg) -> Result<u64> {
    match arg {
        Either3::A(big) => {
            let (negative, value, lossless) = big.get_u64();
            if negative || !lossless {
                return Err(invalid_argument("expected a bigint between 0 and 2^64 - 1"));
            }
            Ok(value)
        }
        Either3::B(number) => uint(number, "expected a non-negative safe integer"),
        // The decimal form's one text: "007" is refused, as every reader of ids refuses it.
        Either3::C(text) => {
            idforge::text::id_from_text(&text, idforge::text::TextForm::Decimal).or_throw()
        }
    }
}

/// A `number` that must be a non-negative safe integer.
pub(crate) fn uint(number: f64, message: &'static str) -> Result<u64> {
    if (0.0..=MAX_SAFE).contains(&number) && number.fract() == 0.0 {
        Ok(number as u64)
    } else {
        Err(invalid_argument(message))
    }
}

/// Writes `bytes` into `out`, a typed array the package made of exactly that length: native
/// code fills JavaScript's memory rather than returning a new `Buffer` (which costs an external
/// allocation and a finalizer, ten times the id itself).
pub(crate) fn write(mut out: Uint8ArraySlice, bytes: &[u8]) -> Result<()> {
    // SAFETY: JavaScript runs on this thread and is inside this call, so nothing else reads or
    // writes the array's memory until it returns.
    let out = unsafe { out.as_mut() };
    if out.len() != bytes.len() {
        return Err(to_js(idforge::CoreError::InvalidLength {
            expected: bytes.len(),
            got: out.len(),
        }));
    }
    out.copy_from_slice(bytes);
    Ok(())
}

/// A `u64` for JavaScript: a `number` when it is exact as one, else a `bigint`.
pub(crate) fn to_js_uint(value: u64) -> Either3<BigInt, f64, String> {
    if value as f64 <= MAX_SAFE {
        Either3::B(value as f64)
    } else {
        Either3::A(BigInt::from(value))
    }
}

/// A batch size: an integer from 0 to the runtime's [`idforge::MAX_BATCH`]; anything else gets
/// the runtime's error (a count that is not a whole non-negative number, as one past the cap).
pub(crate) fn count(n: f64) -> Result<usize> {
    let whole = n >= 0.0 && n.fract() == 0.0 && n <= u64::MAX as f64;
    idforge::batch_len(if whole { n as u64 } else { u64::MAX }).or_throw()
}
