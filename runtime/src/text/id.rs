//! Ids as text, of any kind: reading a snowflake, ObjectId, flake-128, UUIDv7 or ULID (detecting
//! which it is), its fields ([`describe`]), and the UUID form of a flake-128. The command line's
//! `decode`, the server's `IDF.DECODE` and every binding's describe call read ids with these
//! rules, so they agree on every text.
//!
//! ```
//! use idforge::Layout;
//! use idforge::text::id::{FieldValue, describe};
//!
//! let fields = describe("1700000000000000000", None, None, &Layout::TWITTER).unwrap();
//! assert_eq!(fields[0].key, "type");
//! assert_eq!(fields[0].value, FieldValue::Text("snowflake".into()));
//! ```

use std::fmt;
use std::str::FromStr;

use idforge_core::encode::{base32, base62};

use crate::text::TextForm;
use crate::text::time::{format_ms, format_secs};
use crate::{Error, ErrorCode, Flake128, Layout, ObjectId, Result, Ulid, Uuid7};

/// An id read from text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnyId {
    /// A 64-bit snowflake id.
    Snowflake(u64),
    /// A MongoDB ObjectId.
    ObjectId(ObjectId),
    /// A flake-128 id.
    Flake128(Flake128),
    /// A version 7 UUID.
    Uuid7(Uuid7),
    /// A ULID.
    Ulid(Ulid),
}

/// The least UUIDv7 millisecond that detection reads as a UUIDv7 (1970-02-19): a flake-128 in
/// UUID form has its time's top bits there, always below it, so a 128-bit text is a UUIDv7 only
/// when its version bits say so and its time is past this.
const UUID7_MIN_DETECTED_MS: u64 = 1 << 32;

/// A 128-bit value read as hex or UUID text: a UUIDv7 when its bits make it one, else a
/// flake-128.
fn uuid7_or_flake(value: u128) -> AnyId {
    match Uuid7::from_u128(value) {
        Ok(id) if id.time_ms() >= UUID7_MIN_DETECTED_MS => AnyId::Uuid7(id),
        _ => AnyId::Flake128(Flake128::from_u128(value)),
    }
}

fn all(s: &str, pred: fn(&u8) -> bool) -> bool {
    !s.is_empty() && s.as_bytes().iter().all(pred)
}

/// The 32 hex digits of an 8-4-4-4-12 UUID text, or `None` if `s` does not have that shape.
fn uuid_hex(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let dashes = [8, 13, 18, 23];
    let shaped = b.len() == 36
        && b.iter().enumerate().all(|(i, c)| {
            (*c == b'-') == dashes.contains(&i) && (*c == b'-' || c.is_ascii_hexdigit())
        });
    shaped.then(|| s.chars().filter(|&c| c != '-').collect())
}

/// What is inside `{…}` or after `urn:uuid:` (in any case), if `s` is so wrapped.
fn uuid_unwrapped(s: &str) -> Option<&str> {
    if let Some(inner) = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        return Some(inner);
    }
    let prefix = s.get(..9)?;
    prefix.eq_ignore_ascii_case("urn:uuid:").then(|| &s[9..])
}

/// A snowflake's text is the decimal form's one text (no sign, no leading zero): `"007"` is not
/// another spelling of 7 here either, as in every other reader of ids.
fn parse_snowflake(s: &str) -> Result<AnyId> {
    Ok(AnyId::Snowflake(crate::text::id_from_text(
        s,
        TextForm::Decimal,
    )?))
}

fn parse_flake128(s: &str) -> Result<AnyId> {
    let id = if let Some(hex) = uuid_hex(s) {
        Flake128::parse_hex(&hex)?
    } else if s.len() == Flake128::HEX_LEN {
        Flake128::parse_hex(s)?
    } else {
        Flake128::parse_base62(s)?
    };
    Ok(AnyId::Flake128(id))
}

/// Reads `s` as an id of `kind`, or detects the kind: 24 hex characters are an ObjectId; 32 hex
/// characters or a UUID text are a UUIDv7 when their version and variant bits say so and the
/// time is after 1970-02-19, else a flake-128, as are 22 base62 characters that are not all
/// digits; 26 Crockford base32 characters are a ULID; all digits are a snowflake.
pub fn parse_id(s: &str, kind: Option<IdKind>) -> Result<AnyId> {
    match kind {
        Some(IdKind::Snowflake) => parse_snowflake(s),
        Some(IdKind::ObjectId) => Ok(AnyId::ObjectId(ObjectId::parse_hex(s)?)),
        Some(IdKind::Flake128) => parse_flake128(s),
        Some(IdKind::Uuid7) => Ok(AnyId::Uuid7(Uuid7::parse(s)?)),
        Some(IdKind::Ulid) => Ok(AnyId::Ulid(Ulid::parse(s)?)),
        None => {
            // The wrappings `Uuid7::parse` (and Python's `uuid.UUID`) accept: `{…}` and
            // `urn:uuid:…` around a UUID text or 32 hex digits.
            if let Some(inner) = uuid_unwrapped(s) {
                if uuid_hex(inner).is_some()
                    || (inner.len() == Flake128::HEX_LEN && all(inner, u8::is_ascii_hexdigit))
                {
                    return parse_id(inner, None);
                }
            }
            let hex = all(s, u8::is_ascii_hexdigit);
            if hex && s.len() == ObjectId::HEX_LEN {
                Ok(AnyId::ObjectId(ObjectId::parse_hex(s)?))
            } else if (hex && s.len() == Flake128::HEX_LEN) || uuid_hex(s).is_some() {
                match parse_flake128(s)? {
                    AnyId::Flake128(id) => Ok(uuid7_or_flake(id.as_u128())),
                    other => Ok(other),
                }
            } else if s.len() == Ulid::TEXT_LEN
                && all(s, |b| base32::ALPHABET.contains(&b.to_ascii_uppercase()))
            {
                Ok(AnyId::Ulid(Ulid::parse(s)?))
            } else if all(s, u8::is_ascii_digit) {
                parse_snowflake(s)
            // Only the full width: a short word ("nope") is base62 too, and would decode as a
            // flake-128 from 1970.
            } else if s.len() == Flake128::BASE62_LEN && all(s, |b| base62::is_digit(*b)) {
                parse_flake128(s)
            } else {
                Err(Error::text(
                    ErrorCode::InvalidArgument,
                    "not a snowflake (decimal), ObjectId (24 hex), flake-128 (22 base62, 32 hex \
                     or UUID), UUIDv7 or ULID (26 base32) id; pass --type to say which",
                ))
            }
        }
    }
}

/// A field's value: text, or a number. Values that are 64 bits by nature (a snowflake id, a
/// UUIDv7's `rand_b`) are text, so JSON readers keep them exact; the numbers stay below 2^53
/// except a snowflake's `tick`, `time_ms` and `node` in a layout with that many bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue {
    /// Text (an id, a time, hex).
    Text(String),
    /// A number.
    Number(u64),
}

impl fmt::Display for FieldValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldValue::Text(t) => f.write_str(t),
            FieldValue::Number(n) => write!(f, "{n}"),
        }
    }
}

/// One decoded field: its key and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The field's name (`type`, `id`, `time`, `time_ms`, ...).
    pub key: &'static str,
    /// Its value.
    pub value: FieldValue,
}

fn text(key: &'static str, value: impl Into<String>) -> Field {
    Field {
        key,
        value: FieldValue::Text(value.into()),
    }
}

fn number(key: &'static str, value: u64) -> Field {
    Field {
        key,
        value: FieldValue::Number(value),
    }
}

/// The fields of `id`, in a fixed order: `type` and `id` first (a snowflake's `layout` between
/// them), then its time (RFC 3339 UTC) and the rest. `layout` reads snowflakes.
pub fn fields(id: AnyId, layout: &Layout) -> Result<Vec<Field>> {
    Ok(match id {
        AnyId::Snowflake(id) => {
            let parts = layout.decompose(id)?;
            vec![
                text("type", "snowflake"),
                text("layout", layout.to_string()),
                text("id", id.to_string()),
                text("time", format_ms(parts.time_ms)),
                number("time_ms", parts.time_ms),
                number("node", parts.node),
                number("sequence", parts.seq),
                number("tick", parts.tick),
            ]
        }
        AnyId::ObjectId(id) => {
            let secs = u64::from(id.timestamp());
            vec![
                text("type", "objectid"),
                text("id", id.to_string()),
                text("time", format_secs(secs)),
                number("timestamp", secs),
            ]
        }
        AnyId::Flake128(id) => {
            let mut rows = timed_head("flake128", id.to_string(), id.time_ms());
            rows.extend([
                text("worker", format!("{:012x}", id.worker())),
                number("sequence", u64::from(id.seq())),
            ]);
            rows
        }
        AnyId::Uuid7(id) => {
            let mut buf = [0u8; Ulid::TEXT_LEN];
            let ulid = id.to_ulid_text(&mut buf).to_owned();
            let mut rows = timed_head("uuid7", id.to_string(), id.time_ms());
            rows.extend([
                number("rand_a", u64::from(id.rand_a())),
                // Text: 62 bits do not fit a JSON reader's double.
                text("rand_b", id.rand_b().to_string()),
                text("ulid", ulid),
            ]);
            rows
        }
        AnyId::Ulid(id) => {
            let uuid = uuid_text(Flake128::from_u128(id.as_u128()));
            let mut rows = timed_head("ulid", id.to_string(), id.time_ms());
            rows.extend([
                text("random", format!("{:020x}", id.random())),
                text("uuid", uuid),
            ]);
            rows
        }
    })
}

/// The fields as one map in their order (the `serde` feature): a JSON writer keeps the order,
/// `serde_json::Value` sorts the keys. Numbers are numbers, the rest strings.
#[cfg(feature = "serde")]
#[derive(Debug, Clone, Copy)]
pub struct FieldMap<'a>(pub &'a [Field]);

#[cfg(feature = "serde")]
impl serde::Serialize for FieldMap<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> core::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for f in self.0 {
            match &f.value {
                FieldValue::Text(t) => map.serialize_entry(f.key, t)?,
                FieldValue::Number(n) => map.serialize_entry(f.key, n)?,
            }
        }
        map.end()
    }
}

/// The first fields of a millisecond-stamped id: its type, text, time and Unix milliseconds.
fn timed_head(kind: &'static str, id: String, time_ms: u64) -> Vec<Field> {
    vec![
        text("type", kind),
        text("id", id),
        text("time", format_ms(time_ms)),
        number("time_ms", time_ms),
    ]
}

/// The fields of the id written as `text` ([`fields`] of [`parse_id`]): of `kind`, or detected;
/// with `form`, a snowflake in that text form (only its one text). `kind` and `form` together
/// are refused unless `kind` is a snowflake.
pub fn describe(
    text: &str,
    kind: Option<IdKind>,
    form: Option<TextForm>,
    layout: &Layout,
) -> Result<Vec<Field>> {
    let id = match (form, kind) {
        (Some(form), None | Some(IdKind::Snowflake)) => {
            AnyId::Snowflake(crate::text::id_from_text(text, form)?)
        }
        (Some(_), Some(kind)) => {
            return Err(Error::text(
                ErrorCode::InvalidArgument,
                format!("a text form reads snowflakes, not a {}", kind.name()),
            ));
        }
        (None, kind) => parse_id(text, kind)?,
    };
    fields(id, layout)
}

/// The kinds of id [`parse_id`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdKind {
    /// A 64-bit snowflake id in decimal.
    Snowflake,
    /// A MongoDB ObjectId in hex.
    ObjectId,
    /// A flake-128 id in base62, hex or UUID form.
    Flake128,
    /// A version 7 UUID (hyphenated, 32 hex, braces or urn:uuid:).
    Uuid7,
    /// A ULID (26 Crockford base32 characters).
    Ulid,
}

impl IdKind {
    /// Every kind, in the order the help texts list them.
    pub const ALL: [IdKind; 5] = [
        IdKind::Snowflake,
        IdKind::ObjectId,
        IdKind::Flake128,
        IdKind::Uuid7,
        IdKind::Ulid,
    ];

    /// The kind's name, as the `type` field says it: `snowflake`, `objectid`, `flake128`,
    /// `uuid7` or `ulid`.
    pub const fn name(self) -> &'static str {
        match self {
            IdKind::Snowflake => "snowflake",
            IdKind::ObjectId => "objectid",
            IdKind::Flake128 => "flake128",
            IdKind::Uuid7 => "uuid7",
            IdKind::Ulid => "ulid",
        }
    }
}

impl FromStr for IdKind {
    type Err = Error;

    /// A kind by its [`name`](IdKind::name); anything else is `INVALID_ARGUMENT`.
    fn from_str(s: &str) -> Result<IdKind> {
        IdKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let shown: String = s.chars().take(32).collect();
                Error::text(
                    ErrorCode::InvalidArgument,
                    format!(
                        "unknown id type {shown:?}: snowflake, objectid, flake128, uuid7 or ulid"
                    ),
                )
            })
    }
}

/// The 16 big-endian bytes of `id` as 8-4-4-4-12 lower-case hex.
pub fn uuid_text(id: Flake128) -> String {
    let mut buf = [0u8; Flake128::HEX_LEN];
    let hex = id.to_hex(&mut buf);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_refuses_a_second_text_of_an_id() {
        // core/testdata/id_text.json's describe_errors: a snowflake's text is the decimal
        // form's one text, detected or named ("007" is not 7).
        let file: serde_json::Value =
            serde_json::from_str(include_str!("../../../core/testdata/id_text.json")).unwrap();
        let rows = file["describe_errors"].as_array().unwrap();
        assert!(rows.len() >= 3);
        for row in rows {
            let text = row["text"].as_str().unwrap();
            let kind = match row["kind"].as_str().unwrap() {
                "any" => None,
                "snowflake" => Some(IdKind::Snowflake),
                other => panic!("kind {other}"),
            };
            let err = describe(text, kind, None, &Layout::TWITTER).unwrap_err();
            assert_eq!(
                err.code().name(),
                row["error"].as_str().unwrap(),
                "{text:?}"
            );
        }
        assert!(describe("0", None, None, &Layout::TWITTER).is_ok());
    }

    fn read(s: &str, kind: Option<IdKind>) -> Option<AnyId> {
        parse_id(s, kind).ok()
    }

    #[test]
    fn detection() {
        let oid = "ffffffff0000000000000000";
        assert!(matches!(read(oid, None), Some(AnyId::ObjectId(_))));
        assert!(matches!(read("123", None), Some(AnyId::Snowflake(123))));
        let flake = Flake128::from_parts(1_700_000_000_000, 0xabc, 7).unwrap();
        let mut buf = [0u8; Flake128::HEX_LEN];
        let hex = flake.to_hex(&mut buf).to_owned();
        assert_eq!(read(&hex, None), Some(AnyId::Flake128(flake)));
        assert_eq!(read(&flake.to_string(), None), Some(AnyId::Flake128(flake)));
        let uuid = uuid_text(flake);
        assert_eq!(read(&uuid, None), Some(AnyId::Flake128(flake)));
        // Base62 shorter than a flake-128's 22 characters is a word, not an id, unless the
        // caller says it is one.
        for word in ["nope", "8HFaR8qWtRlGDHnO57"] {
            assert_eq!(
                parse_id(word, None).unwrap_err().code(),
                ErrorCode::InvalidArgument
            );
            assert!(parse_id(word, Some(IdKind::Flake128)).is_ok());
        }
        // Explicit types.
        assert_eq!(
            read("123", Some(IdKind::Flake128)),
            Some(AnyId::Flake128(Flake128::from_u128(62 * 62 + 2 * 62 + 3)))
        );
        let code = |s: &str, kind| parse_id(s, kind).unwrap_err().code();
        assert_eq!(
            code("12a", Some(IdKind::Snowflake)),
            ErrorCode::InvalidDecimal
        );
        assert_eq!(code("12", Some(IdKind::ObjectId)), ErrorCode::InvalidHex);
        assert_eq!(
            code("a-b", Some(IdKind::Flake128)),
            ErrorCode::InvalidBase62
        );
        assert_eq!(code("", None), ErrorCode::InvalidArgument);
        assert_eq!(code("hello world", None), ErrorCode::InvalidArgument);
        assert_eq!(
            code("00000000000000000000000", None),
            ErrorCode::InvalidDecimal
        );
        assert_eq!(code("é", None), ErrorCode::InvalidArgument);
        // UUIDv7 and ULID.
        let v7 = Uuid7::from_fields(1_700_000_000_000, 0xabc, 42).unwrap();
        assert_eq!(read(&v7.to_string(), None), Some(AnyId::Uuid7(v7)));
        let simple = v7.to_string().replace('-', "");
        assert_eq!(read(&simple, None), Some(AnyId::Uuid7(v7)));
        // Every wrapping `Uuid7::parse` accepts is detected too.
        for wrapped in [
            format!("{{{v7}}}"),
            format!("urn:uuid:{v7}"),
            format!("URN:UUID:{simple}"),
            format!("{{{simple}}}"),
        ] {
            assert_eq!(Uuid7::parse(&wrapped), Ok(v7), "{wrapped}");
            assert_eq!(read(&wrapped, None), Some(AnyId::Uuid7(v7)), "{wrapped}");
        }
        assert_eq!(
            read(&format!("{{{}}}", uuid_text(flake)), None),
            Some(AnyId::Flake128(flake))
        );
        assert_eq!(code("{123}", None), ErrorCode::InvalidArgument);
        assert_eq!(code("urn:uuid:", None), ErrorCode::InvalidArgument);
        let ulid = Ulid::from(v7).to_string();
        assert_eq!(read(&ulid, None), Some(AnyId::Ulid(Ulid::from(v7))));
        assert_eq!(
            read(&ulid.to_lowercase(), None),
            Some(AnyId::Ulid(Ulid::from(v7)))
        );
        // An early UUIDv7 reads as a flake-128 unless the type is given.
        let early = Uuid7::from_fields(5, 0, 0).unwrap();
        assert!(matches!(
            read(&early.to_string(), None),
            Some(AnyId::Flake128(_))
        ));
        assert_eq!(
            read(&early.to_string(), Some(IdKind::Uuid7)),
            Some(AnyId::Uuid7(early))
        );
        assert_eq!(
            code("2d7a6d0e-1c1a-4b5e-8f00-000000000000", Some(IdKind::Uuid7)),
            ErrorCode::InvalidUuid
        );
        assert_eq!(
            code("8ZZZZZZZZZZZZZZZZZZZZZZZZZ", None),
            ErrorCode::InvalidBase32
        );
        // A UUID with a misplaced dash is not one.
        assert_eq!(
            code("0102030-40506-0708-090a-0b0c0d0e0f10", None),
            ErrorCode::InvalidArgument
        );
    }

    #[test]
    fn describe_reads_kinds_and_forms() {
        let layout = Layout::TWITTER;
        let id = 1_700_000_000_000_000_000u64;
        let by_decimal = describe(&id.to_string(), None, None, &layout).unwrap();
        let base32 = crate::text::id_to_text(id, TextForm::Base32);
        for kind in [None, Some(IdKind::Snowflake)] {
            let by_form = describe(&base32, kind, Some(TextForm::Base32), &layout).unwrap();
            assert_eq!(by_form, by_decimal);
        }
        assert_eq!(by_decimal[2], text("id", id.to_string()));
        let err = describe(&base32, Some(IdKind::Ulid), Some(TextForm::Base32), &layout);
        assert_eq!(err.unwrap_err().code(), ErrorCode::InvalidArgument);
        // Numbers stay numbers; the text of each field is its value's.
        assert!(
            by_decimal
                .iter()
                .any(|f| f.key == "node" && matches!(f.value, FieldValue::Number(_)))
        );
        for kind in IdKind::ALL {
            assert_eq!(kind.name().parse::<IdKind>().unwrap(), kind);
        }
        let unknown = "Snowflake".parse::<IdKind>().unwrap_err();
        assert_eq!(unknown.code(), ErrorCode::InvalidArgument);
    }

    #[cfg(feature = "serde")]
    #[test]
    fn the_field_map_keeps_the_order_and_the_types() {
        let fields = describe("ffffffff0000000000000000", None, None, &Layout::TWITTER).unwrap();
        let json = serde_json::to_string(&FieldMap(&fields)).unwrap();
        assert_eq!(
            json,
            r#"{"type":"objectid","id":"ffffffff0000000000000000","time":"2106-02-07T06:28:15Z","timestamp":4294967295}"#
        );
    }
}
