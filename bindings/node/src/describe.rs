//! `describeId`: any id's fields, read by the runtime's rules (the package wraps it).

use idforge::text::TextForm;
use idforge::text::id::{FieldValue, IdKind, describe};
use napi::Env;
use napi::bindgen_prelude::{BigInt, Either, Object};
use napi_derive::napi;

use crate::error::{OrThrow, Result};
use crate::layout::{LayoutSpec, layout_of};

/// The largest integer a JavaScript number holds exactly (2^53 - 1).
const MAX_SAFE: u64 = (1 << 53) - 1;

/// Internal: the fields of the id written as `text`, in order (numbers as numbers, past 2^53 as
/// bigints; the rest as strings): of the type named `kind`, or detected; with `form`, a
/// snowflake in that text form; `layout` reads snowflakes (Twitter's when absent).
#[napi(
    ts_args_type = "text: string, kind?: string | undefined | null, form?: string | undefined | null, layout?: string | LayoutSpec | undefined | null",
    ts_return_type = "Record<string, string | number | bigint>"
)]
pub fn describe_id<'env>(
    env: &'env Env,
    text: String,
    kind: Option<String>,
    form: Option<String>,
    layout: Option<Either<String, LayoutSpec>>,
) -> Result<Object<'env>> {
    let kind = kind
        .as_deref()
        .map(str::parse::<IdKind>)
        .transpose()
        .or_throw()?;
    let form = form
        .as_deref()
        .map(str::parse::<TextForm>)
        .transpose()
        .or_throw()?;
    let layout = match layout {
        Some(l) => layout_of(l)?,
        None => idforge::Layout::TWITTER,
    };
    let fields = describe(&text, kind, form, &layout).or_throw()?;
    let mut obj = Object::new(env)?;
    for f in fields {
        match f.value {
            FieldValue::Text(t) => obj.set(f.key, t)?,
            FieldValue::Number(n) if n <= MAX_SAFE => obj.set(f.key, n as f64)?,
            FieldValue::Number(n) => obj.set(f.key, BigInt::from(n))?,
        }
    }
    Ok(obj)
}
