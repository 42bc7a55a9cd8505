//! Ids as text on the command line and the RESP port: the `--type` values and the fields as
//! JSON. The rules (detection, fields) are the runtime's [`idforge::text::id`].

use clap::ValueEnum;
use idforge::text::id::{Field, FieldMap, IdKind};
use serde_json::Value;

/// The id types `decode --type` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IdType {
    /// A 64-bit snowflake id in decimal.
    Snowflake,
    /// A MongoDB ObjectId in hex.
    Objectid,
    /// A flake-128 id in base62, hex or UUID form.
    Flake128,
    /// A version 7 UUID (hyphenated, 32 hex, braces or urn:uuid:).
    Uuid7,
    /// A ULID (26 Crockford base32 characters).
    Ulid,
}

impl From<IdType> for IdKind {
    fn from(t: IdType) -> IdKind {
        match t {
            IdType::Snowflake => IdKind::Snowflake,
            IdType::Objectid => IdKind::ObjectId,
            IdType::Flake128 => IdKind::Flake128,
            IdType::Uuid7 => IdKind::Uuid7,
            IdType::Ulid => IdKind::Ulid,
        }
    }
}

/// The fields as one JSON object (keys sorted, as `serde_json` keeps a map).
pub fn to_json(fields: &[Field]) -> Value {
    serde_json::to_value(FieldMap(fields)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_names_its_kind() {
        for t in IdType::value_variants() {
            let name = t.to_possible_value().unwrap().get_name().to_owned();
            assert_eq!(IdKind::from(*t).name(), name);
        }
    }
}
