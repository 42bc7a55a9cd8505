//! Runs the shared UUIDv7 and ULID vectors (`core/testdata/uuid7.json`, `ulid.json`, made by
//! `gen_uuid7_ulid.py`, an independent model). Every struct denies unknown fields, so a column
//! added to a file must be checked here.

use idforge_core::stamp::Stamp;
use idforge_core::ulid::Ulid;
use idforge_core::uuid7::Uuid7;
use serde::Deserialize;

mod common;
use common::{assert_err, int, load};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Uuid7File {
    #[allow(dead_code)]
    description: String,
    fields: Vec<Uuid7Row>,
    stamp: Vec<StampRow>,
    parse: Vec<ParseRow>,
    refuse: Vec<RefuseRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Uuid7Row {
    time_ms: u64,
    rand_a: u16,
    rand_b: String,
    text: String,
    bytes: String,
    ulid: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StampRow {
    time_ms: u64,
    counter: u32,
    random: String,
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ParseRow {
    input: String,
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RefuseRow {
    input: String,
    error: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UlidFile {
    #[allow(dead_code)]
    description: String,
    fields: Vec<UlidRow>,
    stamp: Vec<StampRow>,
    parse: Vec<ParseRow>,
    refuse: Vec<RefuseRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UlidRow {
    time_ms: u64,
    random: String,
    text: String,
    bytes: String,
}

fn bytes16(hex_text: &str) -> [u8; 16] {
    u128::from_str_radix(hex_text, 16).unwrap().to_be_bytes()
}

#[test]
fn uuid7_vectors() {
    let file: Uuid7File = load("uuid7.json");
    for row in &file.fields {
        let id = Uuid7::from_fields(row.time_ms, row.rand_a, int(&row.rand_b)).unwrap();
        assert_eq!(id.to_string(), row.text);
        assert_eq!(id.to_bytes(), bytes16(&row.bytes));
        assert_eq!(Uuid7::from_bytes(bytes16(&row.bytes)), Ok(id));
        assert_eq!(Uuid7::parse(&row.text), Ok(id));
        assert_eq!(
            (id.time_ms(), id.rand_a(), id.rand_b()),
            (row.time_ms, row.rand_a, int(&row.rand_b))
        );
        let mut buf = [0u8; Ulid::TEXT_LEN];
        assert_eq!(id.to_ulid_text(&mut buf), row.ulid);
        assert_eq!(Uuid7::parse_ulid_text(&row.ulid), Ok(id));
    }
    for row in &file.stamp {
        let id = Uuid7::stamp(row.time_ms, row.counter, int(&row.random));
        assert_eq!(id.to_string(), row.text, "{}", row.text);
    }
    for row in &file.parse {
        assert_eq!(Uuid7::parse(&row.input).unwrap().to_string(), row.text);
    }
    for row in &file.refuse {
        assert_err(Uuid7::parse(&row.input), &row.error, &row.input);
    }
}

#[test]
fn ulid_vectors() {
    let file: UlidFile = load("ulid.json");
    for row in &file.fields {
        let id = Ulid::from_parts(row.time_ms, int(&row.random)).unwrap();
        assert_eq!(id.to_string(), row.text);
        assert_eq!(id.to_bytes(), bytes16(&row.bytes));
        assert_eq!(Ulid::from_bytes(bytes16(&row.bytes)), id);
        assert_eq!(Ulid::parse(&row.text), Ok(id));
        assert_eq!((id.time_ms(), id.random()), (row.time_ms, int(&row.random)));
    }
    for row in &file.stamp {
        let id = Ulid::stamp(row.time_ms, row.counter, int(&row.random));
        assert_eq!(id.to_string(), row.text);
    }
    for row in &file.parse {
        assert_eq!(Ulid::parse(&row.input).unwrap().to_string(), row.text);
    }
    for row in &file.refuse {
        assert_err(Ulid::parse(&row.input), &row.error, &row.input);
    }
}
