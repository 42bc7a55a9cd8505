//! Ids as text: reading a snowflake, ObjectId, flake-128, UUIDv7 or ULID (detecting which it
//! is), its fields as text and JSON, and the UUID form of a flake-128 (`idforge decode` and
//! `IDF.DECODE`).

use idforge::{ErrorCode, Flake128, Layout, ObjectId, Ulid, Uuid7};
use idforge_core::encode::{base32, base62, decimal};
use serde_json::{Value, json};

use crate::error::CliError;
use crate::text::time::{format_ms, format_secs};
use clap::ValueEnum;

/// An id read from the command line.
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

fn parse_snowflake(s: &str) -> Result<AnyId, CliError> {
    Ok(AnyId::Snowflake(decimal::decode_u64(s.as_bytes())?))
}

fn parse_flake128(s: &str) -> Result<AnyId, CliError> {
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
pub fn parse_id(s: &str, kind: Option<IdType>) -> Result<AnyId, CliError> {
    match kind {
        Some(IdType::Snowflake) => parse_snowflake(s),
        Some(IdType::Objectid) => Ok(AnyId::ObjectId(ObjectId::parse_hex(s)?)),
        Some(IdType::Flake128) => parse_flake128(s),
        Some(IdType::Uuid7) => Ok(AnyId::Uuid7(Uuid7::parse(s)?)),
        Some(IdType::Ulid) => Ok(AnyId::Ulid(Ulid::parse(s)?)),
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
                Err(CliError::new(
                    ErrorCode::InvalidArgument,
                    "not a snowflake (decimal), ObjectId (24 hex), flake-128 (22 base62, 32 hex \
                     or UUID), UUIDv7 or ULID (26 base32) id; pass --type to say which",
                ))
            }
        }
    }
}

/// The decoded fields as `(key, text value, JSON value)` rows.
pub fn fields(id: AnyId, layout: &Layout) -> Result<Vec<(&'static str, String, Value)>, CliError> {
    let row = |key, text: String, json: Value| (key, text, json);
    Ok(match id {
        AnyId::Snowflake(id) => {
            let parts = layout.decompose(id)?;
            vec![
                row("type", "snowflake".into(), json!("snowflake")),
                row("layout", layout.to_string(), json!(layout.to_string())),
                row("id", id.to_string(), json!(id.to_string())),
                row(
                    "time",
                    format_ms(parts.time_ms),
                    json!(format_ms(parts.time_ms)),
                ),
                row("time_ms", parts.time_ms.to_string(), json!(parts.time_ms)),
                row("node", parts.node.to_string(), json!(parts.node)),
                row("sequence", parts.seq.to_string(), json!(parts.seq)),
                row("tick", parts.tick.to_string(), json!(parts.tick)),
            ]
        }
        AnyId::ObjectId(id) => {
            let secs = u64::from(id.timestamp());
            vec![
                row("type", "objectid".into(), json!("objectid")),
                row("id", id.to_string(), json!(id.to_string())),
                row("time", format_secs(secs), json!(format_secs(secs))),
                row("timestamp", secs.to_string(), json!(secs)),
            ]
        }
        AnyId::Flake128(id) => {
            let worker = format!("{:012x}", id.worker());
            let mut rows = timed_head("flake128", id.to_string(), id.time_ms());
            rows.extend([
                row("worker", worker.clone(), json!(worker)),
                row("sequence", id.seq().to_string(), json!(id.seq())),
            ]);
            rows
        }
        AnyId::Uuid7(id) => {
            let mut buf = [0u8; Ulid::TEXT_LEN];
            let ulid = id.to_ulid_text(&mut buf).to_owned();
            let mut rows = timed_head("uuid7", id.to_string(), id.time_ms());
            rows.extend([
                row("rand_a", id.rand_a().to_string(), json!(id.rand_a())),
                row(
                    "rand_b",
                    id.rand_b().to_string(),
                    json!(id.rand_b().to_string()),
                ),
                row("ulid", ulid.clone(), json!(ulid)),
            ]);
            rows
        }
        AnyId::Ulid(id) => {
            let random = format!("{:020x}", id.random());
            let uuid = uuid_text(Flake128::from_u128(id.as_u128()));
            let mut rows = timed_head("ulid", id.to_string(), id.time_ms());
            rows.extend([
                row("random", random.clone(), json!(random)),
                row("uuid", uuid.clone(), json!(uuid)),
            ]);
            rows
        }
    })
}

/// The first rows of a millisecond-stamped id: its type, text, time and Unix milliseconds.
fn timed_head(
    kind: &'static str,
    text: String,
    time_ms: u64,
) -> Vec<(&'static str, String, Value)> {
    vec![
        ("type", kind.into(), json!(kind)),
        ("id", text.clone(), json!(text)),
        ("time", format_ms(time_ms), json!(format_ms(time_ms))),
        ("time_ms", time_ms.to_string(), json!(time_ms)),
    ]
}

/// The id types `decode` knows.
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
    fn detection() {
        let oid = "ffffffff0000000000000000";
        assert!(matches!(parse_id(oid, None), Ok(AnyId::ObjectId(_))));
        assert!(matches!(parse_id("123", None), Ok(AnyId::Snowflake(123))));
        let flake = Flake128::from_parts(1_700_000_000_000, 0xabc, 7).unwrap();
        let mut buf = [0u8; Flake128::HEX_LEN];
        let hex = flake.to_hex(&mut buf).to_owned();
        assert_eq!(parse_id(&hex, None), Ok(AnyId::Flake128(flake)));
        assert_eq!(
            parse_id(&flake.to_string(), None),
            Ok(AnyId::Flake128(flake))
        );
        let uuid = uuid_text(flake);
        assert_eq!(parse_id(&uuid, None), Ok(AnyId::Flake128(flake)));
        // Base62 shorter than a flake-128's 22 characters is a word, not an id, unless the
        // caller says it is one.
        for word in ["nope", "8HFaR8qWtRlGDHnO57"] {
            assert_eq!(
                parse_id(word, None).unwrap_err().code(),
                ErrorCode::InvalidArgument
            );
            assert!(parse_id(word, Some(IdType::Flake128)).is_ok());
        }
        // Explicit types.
        assert_eq!(
            parse_id("123", Some(IdType::Flake128)),
            Ok(AnyId::Flake128(Flake128::from_u128(62 * 62 + 2 * 62 + 3)))
        );
        let code = |s: &str, kind| parse_id(s, kind).unwrap_err().code();
        assert_eq!(
            code("12a", Some(IdType::Snowflake)),
            ErrorCode::InvalidDecimal
        );
        assert_eq!(code("12", Some(IdType::Objectid)), ErrorCode::InvalidHex);
        assert_eq!(
            code("a-b", Some(IdType::Flake128)),
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
        assert_eq!(parse_id(&v7.to_string(), None), Ok(AnyId::Uuid7(v7)));
        let simple = v7.to_string().replace('-', "");
        assert_eq!(parse_id(&simple, None), Ok(AnyId::Uuid7(v7)));
        // Every wrapping `Uuid7::parse` accepts is detected too.
        for wrapped in [
            format!("{{{v7}}}"),
            format!("urn:uuid:{v7}"),
            format!("URN:UUID:{simple}"),
            format!("{{{simple}}}"),
        ] {
            assert_eq!(Uuid7::parse(&wrapped), Ok(v7), "{wrapped}");
            assert_eq!(parse_id(&wrapped, None), Ok(AnyId::Uuid7(v7)), "{wrapped}");
        }
        assert_eq!(
            parse_id(&format!("{{{}}}", uuid_text(flake)), None),
            Ok(AnyId::Flake128(flake))
        );
        assert_eq!(code("{123}", None), ErrorCode::InvalidArgument);
        assert_eq!(code("urn:uuid:", None), ErrorCode::InvalidArgument);
        let ulid = Ulid::from(v7).to_string();
        assert_eq!(parse_id(&ulid, None), Ok(AnyId::Ulid(Ulid::from(v7))));
        assert_eq!(
            parse_id(&ulid.to_lowercase(), None),
            Ok(AnyId::Ulid(Ulid::from(v7)))
        );
        // An early UUIDv7 reads as a flake-128 unless the type is given.
        let early = Uuid7::from_fields(5, 0, 0).unwrap();
        assert!(matches!(
            parse_id(&early.to_string(), None),
            Ok(AnyId::Flake128(_))
        ));
        assert_eq!(
            parse_id(&early.to_string(), Some(IdType::Uuid7)),
            Ok(AnyId::Uuid7(early))
        );
        assert_eq!(
            code("2d7a6d0e-1c1a-4b5e-8f00-000000000000", Some(IdType::Uuid7)),
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
}
