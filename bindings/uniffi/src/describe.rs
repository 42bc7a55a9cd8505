//! Any id's fields on the JVM: `describeId`, read by the runtime's rules (the ones
//! `idforge decode` uses).

use std::sync::Arc;

use idforge::text::id::{self as rt, FieldValue};

use crate::error::Result;
use crate::id_text::TextForm;
use crate::layout::Layout;

/// The kind of id `describeId` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum IdKind {
    /// A snowflake in decimal.
    Snowflake,
    /// A MongoDB ObjectId in hex.
    ObjectId,
    /// A flake-128 in base62, hex or UUID form.
    Flake128,
    /// A UUIDv7 (hyphenated, 32 hex, braces or urn:uuid:).
    Uuid7,
    /// A ULID (26 Crockford base32 characters).
    Ulid,
}

impl From<IdKind> for rt::IdKind {
    fn from(kind: IdKind) -> Self {
        match kind {
            IdKind::Snowflake => rt::IdKind::Snowflake,
            IdKind::ObjectId => rt::IdKind::ObjectId,
            IdKind::Flake128 => rt::IdKind::Flake128,
            IdKind::Uuid7 => rt::IdKind::Uuid7,
            IdKind::Ulid => rt::IdKind::Ulid,
        }
    }
}

/// One field of an id: its key, its value as text, and the number when it is one.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct IdField {
    /// The field's name (`type`, `id`, `time`, `time_ms`, ...).
    pub key: String,
    /// The value as `idforge decode` prints it.
    pub text: String,
    /// The value, when it is a number (its 64 bits, as every id on the JVM).
    pub number: Option<i64>,
}

/// The fields of the id written as `text_in`, in the order `idforge decode` prints them: of
/// `kind`, or detected; with `form`, a snowflake in that text form; `layout` reads snowflakes
/// (Twitter's when absent). Text that is no id is `InvalidArgument`, or the error of the kind it
/// was read as.
#[uniffi::export(default(kind = None, form = None, layout = None))]
pub fn describe_id(
    text_in: String,
    kind: Option<IdKind>,
    form: Option<TextForm>,
    layout: Option<Arc<Layout>>,
) -> Result<Vec<IdField>> {
    // No id text is longer than 45 characters: a longer one is refused all the same.
    let cut = text_in
        .char_indices()
        .nth(64)
        .map_or(text_in.len(), |(i, _)| i);
    let layout = layout.map_or(idforge::Layout::TWITTER, |l| l.inner);
    let fields = rt::describe(
        &text_in[..cut],
        kind.map(Into::into),
        form.map(Into::into),
        &layout,
    )?;
    Ok(fields
        .into_iter()
        .map(|f| IdField {
            key: f.key.to_owned(),
            text: f.value.to_string(),
            number: match f.value {
                FieldValue::Number(n) => Some(n as i64),
                FieldValue::Text(_) => None,
            },
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_one_to_one_and_fields_keep_their_order() {
        let kinds = [
            IdKind::Snowflake,
            IdKind::ObjectId,
            IdKind::Flake128,
            IdKind::Uuid7,
            IdKind::Ulid,
        ];
        let mapped: Vec<rt::IdKind> = kinds.into_iter().map(Into::into).collect();
        assert_eq!(mapped, rt::IdKind::ALL);
        let fields = describe_id("ffffffff0000000000000000".into(), None, None, None).unwrap();
        let keys: Vec<&str> = fields.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(keys, ["type", "id", "time", "timestamp"]);
        assert_eq!(fields[3].number, Some(4_294_967_295));
        assert_eq!(fields[2].text, "2106-02-07T06:28:15Z");
        let long = "1".repeat(1_000_000);
        assert!(describe_id(long, None, None, None).is_err());
    }
}
