//! Runs the shared, language-neutral vectors in `core/testdata/` for the codecs, ObjectId and
//! flake-128. Every struct denies unknown fields, so a column added to a file must be checked here.

use idforge_core::encode::{base32, base62, decimal, hex};
use idforge_core::flake128::Flake128;
use idforge_core::objectid::ObjectId;
use idforge_core::{Error, Result};
use serde::Deserialize;

mod common;
use common::{assert_err, int, load};

fn bytes_of(hex_text: &str) -> Vec<u8> {
    (0..hex_text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex_text[i..i + 2], 16).unwrap())
        .collect()
}

/// Unix seconds as RFC 3339 UTC, computed by counting days (independent of the code under test).
fn rfc3339(secs: u32) -> String {
    let mut days = u64::from(secs) / 86_400;
    let rem = u64::from(secs) % 86_400;
    let leap = |y: u64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mut year = 1970;
    while days >= if leap(year) { 366 } else { 365 } {
        days -= if leap(year) { 366 } else { 365 };
        year += 1;
    }
    let lengths = [
        31,
        if leap(year) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut month = 0;
    while days >= lengths[month] {
        days -= lengths[month];
        month += 1;
    }
    format!(
        "{year:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        month + 1,
        days + 1,
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

// ---------------------------------------------------------------- encode.json

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EncodeFile {
    #[allow(dead_code)]
    description: String,
    u64: Vec<U64Row>,
    u128: Vec<U128Row>,
    decode: Vec<DecodeRow>,
    invalid: Vec<InvalidRow>,
    hex_bytes: Vec<HexBytesRow>,
    hex_bytes_decode: Vec<HexBytesDecodeRow>,
    hex_bytes_invalid: Vec<HexBytesInvalidRow>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct U64Row {
    value: String,
    base62: String,
    base32: String,
    hex: String,
    decimal: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct U128Row {
    value: String,
    base62: String,
    base32: String,
    hex: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct DecodeRow {
    codec: String,
    bits: u32,
    input: String,
    value: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct InvalidRow {
    codec: String,
    bits: u32,
    input: String,
    error: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct HexBytesRow {
    bytes: Vec<u8>,
    hex: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct HexBytesDecodeRow {
    input: String,
    bytes: Vec<u8>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct HexBytesInvalidRow {
    op: String,
    #[serde(default)]
    input: Option<String>,
    #[serde(default)]
    bytes: Option<Vec<u8>>,
    out_len: usize,
    error: String,
}

/// Decodes with the codec a row names, widened to u128 for comparison.
fn decode(codec: &str, bits: u32, input: &[u8]) -> Result<u128> {
    match (codec, bits) {
        ("base62", 64) => base62::decode_u64(input).map(u128::from),
        ("base62", 128) => base62::decode_u128(input),
        ("base32", 64) => base32::decode_u64(input).map(u128::from),
        ("base32", 128) => base32::decode_u128(input),
        ("hex", 64) => hex::decode_u64(input).map(u128::from),
        ("hex", 128) => hex::decode_u128(input),
        ("decimal", 64) => decimal::decode_u64(input).map(u128::from),
        other => panic!("unknown codec {other:?}"),
    }
}

#[test]
fn encode_vectors() {
    let file: EncodeFile = load("encode.json");
    assert!(!file.u64.is_empty() && !file.u128.is_empty() && !file.invalid.is_empty());

    for row in &file.u64 {
        let v: u64 = int(&row.value);
        assert_eq!(
            base62::encode_u64(v, &mut [0; base62::U64_LEN]),
            row.base62,
            "{row:?}"
        );
        assert_eq!(
            base32::encode_u64(v, &mut [0; base32::U64_LEN]),
            row.base32,
            "{row:?}"
        );
        assert_eq!(
            hex::encode_u64(v, &mut [0; hex::U64_LEN]),
            row.hex,
            "{row:?}"
        );
        assert_eq!(
            decimal::encode_u64(v, &mut [0; decimal::U64_LEN]),
            row.decimal,
            "{row:?}"
        );
        assert_eq!(base62::decode_u64(row.base62.as_bytes()), Ok(v), "{row:?}");
        assert_eq!(base32::decode_u64(row.base32.as_bytes()), Ok(v), "{row:?}");
        assert_eq!(hex::decode_u64(row.hex.as_bytes()), Ok(v), "{row:?}");
        assert_eq!(
            decimal::decode_u64(row.decimal.as_bytes()),
            Ok(v),
            "{row:?}"
        );
    }
    for row in &file.u128 {
        let v: u128 = int(&row.value);
        assert_eq!(
            base62::encode_u128(v, &mut [0; base62::U128_LEN]),
            row.base62,
            "{row:?}"
        );
        assert_eq!(
            base32::encode_u128(v, &mut [0; base32::U128_LEN]),
            row.base32,
            "{row:?}"
        );
        assert_eq!(
            hex::encode_u128(v, &mut [0; hex::U128_LEN]),
            row.hex,
            "{row:?}"
        );
        assert_eq!(base62::decode_u128(row.base62.as_bytes()), Ok(v), "{row:?}");
        assert_eq!(base32::decode_u128(row.base32.as_bytes()), Ok(v), "{row:?}");
        assert_eq!(hex::decode_u128(row.hex.as_bytes()), Ok(v), "{row:?}");
    }
    for row in &file.decode {
        let want: u128 = int(&row.value);
        assert_eq!(
            decode(&row.codec, row.bits, row.input.as_bytes()),
            Ok(want),
            "{row:?}"
        );
    }
    for row in &file.invalid {
        assert_err(
            decode(&row.codec, row.bits, row.input.as_bytes()),
            &row.error,
            row,
        );
    }

    for row in &file.hex_bytes {
        let mut out = vec![0u8; row.bytes.len() * 2];
        assert_eq!(
            hex::encode_bytes(&row.bytes, &mut out),
            Ok(row.hex.as_str()),
            "{row:?}"
        );
        let mut back = vec![0u8; row.bytes.len()];
        assert_eq!(
            hex::decode_bytes(row.hex.as_bytes(), &mut back),
            Ok(()),
            "{row:?}"
        );
        assert_eq!(back, row.bytes, "{row:?}");
    }
    for row in &file.hex_bytes_decode {
        let mut out = vec![0u8; row.bytes.len()];
        assert_eq!(
            hex::decode_bytes(row.input.as_bytes(), &mut out),
            Ok(()),
            "{row:?}"
        );
        assert_eq!(out, row.bytes, "{row:?}");
    }
    for row in &file.hex_bytes_invalid {
        let mut out = vec![0u8; row.out_len];
        match row.op.as_str() {
            "decode" => {
                let input = row.input.as_deref().expect("decode rows have input");
                assert_err(
                    hex::decode_bytes(input.as_bytes(), &mut out),
                    &row.error,
                    row,
                );
            }
            "encode" => {
                let bytes = row.bytes.as_deref().expect("encode rows have bytes");
                assert_err(hex::encode_bytes(bytes, &mut out), &row.error, row);
            }
            other => panic!("unknown op {other}"),
        }
    }
}

// ---------------------------------------------------------------- objectid.json

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ObjectIdFile {
    #[allow(dead_code)]
    description: String,
    timestamps: Vec<TimestampRow>,
    from_parts: Vec<OidPartsRow>,
    legacy: Vec<LegacyRow>,
    parse: Vec<ParseRow>,
    invalid_hex: Vec<InvalidTextRow>,
    invalid_bytes: Vec<InvalidBytesRow>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct TimestampRow {
    hex: String,
    seconds: u32,
    rfc3339: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct OidPartsRow {
    seconds: u32,
    process_hex: String,
    counter: u32,
    hex: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct LegacyRow {
    hex: String,
    seconds: u32,
    rfc3339: String,
    machine_hex: String,
    pid: u16,
    counter: u32,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct ParseRow {
    input: String,
    hex: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct InvalidTextRow {
    input: String,
    error: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct InvalidBytesRow {
    bytes_hex: String,
    error: String,
}

#[test]
fn objectid_vectors() {
    let file: ObjectIdFile = load("objectid.json");
    assert!(file.timestamps.len() >= 4 && !file.legacy.is_empty());

    for row in &file.timestamps {
        let id = ObjectId::parse_hex(&row.hex).unwrap();
        assert_eq!(id.timestamp(), row.seconds, "{row:?}");
        assert_eq!(rfc3339(id.timestamp()), row.rfc3339, "{row:?}");
        assert_eq!(id.to_string(), row.hex, "{row:?}");
    }
    for row in &file.from_parts {
        let process: [u8; 5] = bytes_of(&row.process_hex).try_into().unwrap();
        let id = ObjectId::from_parts(row.seconds, process, row.counter);
        assert_eq!(id.to_hex(&mut [0; ObjectId::HEX_LEN]), row.hex, "{row:?}");
        assert_eq!(id.timestamp(), row.seconds, "{row:?}");
        assert_eq!(row.hex.parse::<ObjectId>(), Ok(id), "{row:?}");
        assert_eq!(
            ObjectId::try_from_slice(&bytes_of(&row.hex)),
            Ok(id),
            "{row:?}"
        );
    }
    for row in &file.legacy {
        let id = ObjectId::parse_hex(&row.hex).unwrap();
        assert_eq!(id.timestamp(), row.seconds, "{row:?}");
        assert_eq!(rfc3339(id.timestamp()), row.rfc3339, "{row:?}");
        let b = id.bytes();
        assert_eq!(b[4..7], bytes_of(&row.machine_hex)[..], "{row:?}");
        assert_eq!(u16::from_be_bytes([b[7], b[8]]), row.pid, "{row:?}");
        assert_eq!(
            u32::from_be_bytes([0, b[9], b[10], b[11]]),
            row.counter,
            "{row:?}"
        );
        assert_eq!(id.to_string(), row.hex, "{row:?}");
    }
    for row in &file.parse {
        let id: ObjectId = row.input.parse().unwrap();
        assert_eq!(id.to_string(), row.hex, "{row:?}");
    }
    for row in &file.invalid_hex {
        assert_err(ObjectId::parse_hex(&row.input), &row.error, row);
        assert_err(row.input.parse::<ObjectId>(), &row.error, row);
    }
    for row in &file.invalid_bytes {
        assert_err(
            ObjectId::try_from_slice(&bytes_of(&row.bytes_hex)),
            &row.error,
            row,
        );
    }
}

// ---------------------------------------------------------------- flake128.json

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FlakeFile {
    #[allow(dead_code)]
    description: String,
    parts: Vec<FlakePartsRow>,
    boundary_base62: Vec<BoundaryRow>,
    invalid_base62: Vec<InvalidTextRow>,
    invalid_hex: Vec<InvalidTextRow>,
    invalid_bytes: Vec<InvalidBytesRow>,
    invalid_parts: Vec<InvalidPartsRow>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct FlakePartsRow {
    time_ms: String,
    worker: u64,
    seq: u16,
    u128: String,
    hex: String,
    base62: String,
    bytes_hex: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct BoundaryRow {
    input: String,
    u128: String,
    time_ms: String,
    worker: u64,
    seq: u16,
    base62: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct InvalidPartsRow {
    time_ms: String,
    worker: u64,
    seq: u16,
    error: String,
}

#[test]
fn flake128_vectors() {
    let file: FlakeFile = load("flake128.json");
    assert!(!file.parts.is_empty() && !file.boundary_base62.is_empty());

    for row in &file.parts {
        let f = Flake128::from_parts(int(&row.time_ms), row.worker, row.seq).unwrap();
        assert_eq!(f.as_u128(), int::<u128>(&row.u128), "{row:?}");
        assert_eq!(
            (f.time_ms(), f.worker(), f.seq()),
            (int(&row.time_ms), row.worker, row.seq)
        );
        assert_eq!(f.to_hex(&mut [0; Flake128::HEX_LEN]), row.hex, "{row:?}");
        assert_eq!(
            f.to_base62(&mut [0; Flake128::BASE62_LEN]),
            row.base62,
            "{row:?}"
        );
        assert_eq!(f.to_string(), row.base62, "{row:?}");
        assert_eq!(f.to_bytes().to_vec(), bytes_of(&row.bytes_hex), "{row:?}");
        assert_eq!(Flake128::parse_hex(&row.hex), Ok(f), "{row:?}");
        assert_eq!(Flake128::parse_base62(&row.base62), Ok(f), "{row:?}");
        assert_eq!(row.base62.parse::<Flake128>(), Ok(f), "{row:?}");
        assert_eq!(
            Flake128::try_from_slice(&bytes_of(&row.bytes_hex)),
            Ok(f),
            "{row:?}"
        );
    }
    for row in &file.boundary_base62 {
        let f = Flake128::parse_base62(&row.input).unwrap();
        assert_eq!(f.as_u128(), int::<u128>(&row.u128), "{row:?}");
        assert_eq!(
            (f.time_ms(), f.worker(), f.seq()),
            (int(&row.time_ms), row.worker, row.seq)
        );
        assert_eq!(f.to_string(), row.base62, "{row:?}");
    }
    for row in &file.invalid_base62 {
        assert_err(Flake128::parse_base62(&row.input), &row.error, row);
        assert_err(row.input.parse::<Flake128>(), &row.error, row);
    }
    for row in &file.invalid_hex {
        assert_err(Flake128::parse_hex(&row.input), &row.error, row);
    }
    for row in &file.invalid_bytes {
        assert_err(
            Flake128::try_from_slice(&bytes_of(&row.bytes_hex)),
            &row.error,
            row,
        );
    }
    for row in &file.invalid_parts {
        let got = Flake128::from_parts(int(&row.time_ms), row.worker, row.seq);
        assert_err(got, &row.error, row);
        if let Err(Error::NodeOutOfRange { node, .. }) = got {
            assert_eq!(node, row.worker, "{row:?}");
        }
    }
}

#[test]
fn rfc3339_helper_is_right() {
    // Guards the helper the ObjectId rows rely on.
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(rfc3339(u32::MAX), "2106-02-07T06:28:15Z");
}
