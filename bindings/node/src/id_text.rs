//! Text forms of 64-bit ids (`idToText` / `idFromText` in the package).

use idforge::text::{self, TextForm};
use napi::bindgen_prelude::{BigInt, Either3};
use napi_derive::napi;

use crate::args::uint64;
use crate::error::{OrThrow, Result};

fn form_of(name: &str) -> Result<TextForm> {
    name.parse::<TextForm>().or_throw()
}

/// `id` written in the form named `form` (`decimal`, `base32` or `base62`).
#[napi(ts_args_type = "id: bigint | number | string, form: string")]
pub fn id_to_text(id: Either3<BigInt, f64, String>, form: String) -> Result<String> {
    Ok(text::id_to_text(uint64(id)?, form_of(&form)?))
}

/// The id whose text in the form named `form` is `text`, as a `bigint`.
#[napi]
pub fn id_from_text(text: String, form: String) -> Result<BigInt> {
    Ok(BigInt::from(
        text::id_from_text(&text, form_of(&form)?).or_throw()?,
    ))
}
