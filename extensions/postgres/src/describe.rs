//! `idforge_describe(text, type, layout)`: any id's fields as jsonb, read by the runtime's rules
//! (the ones `idforge decode` uses).

use idforge::Layout;
use idforge::text::id::{FieldMap, IdKind, describe};
use pgrx::JsonB;
use pgrx::prelude::*;

use crate::error::{PgError, or_raise};

/// The fields of the id written as `text_in`, as jsonb: of the kind named `kind` (`snowflake`,
/// `objectid`, `flake128`, `uuid7`, `ulid`), or detected when NULL; `layout` (a preset name or
/// a spec; NULL: Twitter's) reads snowflakes. 64-bit values such as a snowflake's `id` are
/// strings. NULL text gives NULL.
#[pg_extern(immutable, parallel_safe)]
fn idforge_describe(
    text_in: Option<&str>,
    kind: Option<&str>,
    layout: Option<&str>,
) -> Option<JsonB> {
    let text_in = text_in?;
    let kind = kind.map(|k| or_raise(k.parse::<IdKind>().map_err(PgError::from)));
    let layout = layout.map_or(Layout::TWITTER, |l| {
        or_raise(Layout::parse(l).map_err(PgError::from))
    });
    let fields = or_raise(describe(text_in, kind, None, &layout).map_err(PgError::from));
    Some(JsonB(
        serde_json::to_value(FieldMap(&fields)).unwrap_or_default(),
    ))
}
