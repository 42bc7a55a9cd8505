//! Checks `core/testdata/errors.json`, the error table every binding tests against, against
//! [`ErrorCode`]: the same codes in the same order, no code missing and none extra, and the C,
//! JavaScript and Python names following their rules.

use std::collections::BTreeSet;

use idforge_core::{Error, ErrorCode};
use serde::Deserialize;

mod common;
use common::load;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorsFile {
    #[allow(dead_code)]
    description: String,
    ok: OkRow,
    python_root: String,
    errors: Vec<ErrorRow>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct OkRow {
    code: u32,
    c: String,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct ErrorRow {
    code: u32,
    name: String,
    c: String,
    python: String,
    python_bases: Vec<String>,
    js: String,
    description: String,
    c_only: bool,
}

/// The built-in Python exceptions a binding may derive from.
const PYTHON_BUILTINS: [&str; 8] = [
    "ValueError",
    "TypeError",
    "TimeoutError",
    "OverflowError",
    "ConnectionError",
    "OSError",
    "RuntimeError",
    "IOError",
];

/// One value of every [`Error`] variant (the enum is `#[non_exhaustive]`, so this list is kept
/// by hand: a new variant must be added here and to errors.json).
fn every_error() -> Vec<Error> {
    vec![
        Error::InvalidLayout("x"),
        Error::NodeOutOfRange { node: 1, max: 0 },
        Error::EpochInFuture {
            epoch_ms: 2,
            now_ms: 1,
        },
        Error::TimeOutOfRange { time_ms: 0 },
        Error::SequenceOutOfRange { seq: 1, max: 0 },
        Error::InvalidHex("x"),
        Error::InvalidBase62("x"),
        Error::InvalidBase32("x"),
        Error::InvalidDecimal("x"),
        Error::InvalidLength {
            expected: 1,
            got: 0,
        },
        Error::InvalidArgument("x"),
        Error::ClockBehind { behind_ms: 1 },
        Error::Timeout { waited_ms: 1 },
        Error::Forked,
        Error::InvalidSegment("x"),
        Error::BufferFull,
        Error::Overflow("x"),
        Error::SourceUnavailable("x"),
        Error::Io("x"),
        Error::InvalidUrl("x"),
        Error::LeaseLost("x"),
        Error::InvalidUuid("x"),
    ]
}

#[test]
fn error_table_equals_error_code() {
    let file: ErrorsFile = load("errors.json");
    assert_eq!(file.ok.code, 0);
    assert_eq!(file.ok.c, "IDFORGE_STATUS_OK");
    assert_eq!(ErrorCode::from_u32(0), None, "0 is success, never an error");
    assert_eq!(file.python_root, "IdforgeError");

    // Same codes, same order, both directions.
    let table: Vec<(u32, &str)> = file
        .errors
        .iter()
        .map(|r| (r.code, r.name.as_str()))
        .collect();
    let rust: Vec<(u32, &str)> = ErrorCode::ALL
        .iter()
        .map(|c| (c.as_u32(), c.name()))
        .collect();
    assert_eq!(
        table, rust,
        "errors.json must list ErrorCode::ALL, in order"
    );
    assert!(
        rust.windows(2).all(|w| w[0].0 < w[1].0),
        "ErrorCode::ALL is in numeric order"
    );

    for row in &file.errors {
        let code = ErrorCode::from_u32(row.code).unwrap_or_else(|| panic!("{row:?}: no such code"));
        assert_eq!(code.as_u32(), row.code, "{row:?}");
        assert_eq!(code.name(), row.name, "{row:?}");
        assert_eq!(row.c, format!("IDFORGE_STATUS_{}", row.name), "{row:?}");
        assert_eq!(row.js, format!("IDFORGE_{}", row.name), "{row:?}");
        assert!(
            row.name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'),
            "{row:?}"
        );
        assert!(
            row.python.ends_with("Error")
                && row.python.starts_with(|c: char| c.is_ascii_uppercase())
                && row.python.chars().all(|c| c.is_ascii_alphanumeric()),
            "{row:?}"
        );
        assert!(
            !PYTHON_BUILTINS.contains(&row.python.as_str()) && row.python != file.python_root,
            "{row:?}: must not shadow a built-in or the root class"
        );
        assert!(!row.python_bases.is_empty(), "{row:?}");
        for base in &row.python_bases {
            assert!(PYTHON_BUILTINS.contains(&base.as_str()), "{row:?}: {base}");
        }
        assert!(!row.description.trim().is_empty(), "{row:?}");
        // The C-only codes are the 100s; the others are the codes of `Error` values.
        assert_eq!(row.c_only, row.code >= 100, "{row:?}");
    }

    // Names are unique in every language.
    for names in [
        file.errors.iter().map(|r| &r.name).collect::<BTreeSet<_>>(),
        file.errors.iter().map(|r| &r.python).collect(),
        file.errors.iter().map(|r| &r.js).collect(),
        file.errors.iter().map(|r| &r.c).collect(),
    ] {
        assert_eq!(names.len(), file.errors.len());
    }

    // No number outside the table maps to a code.
    let listed: BTreeSet<u32> = file.errors.iter().map(|r| r.code).collect();
    for n in (0..=1024).chain([u32::MAX]) {
        assert_eq!(
            ErrorCode::from_u32(n).is_some(),
            listed.contains(&n),
            "code {n}"
        );
    }

    // Every error the core can return has a row that is not C-only, and every such row is
    // reachable from an `Error`.
    let from_errors: BTreeSet<u32> = every_error()
        .iter()
        .map(|e| {
            assert!(!e.to_string().is_empty());
            e.code().as_u32()
        })
        .collect();
    let portable: BTreeSet<u32> = file
        .errors
        .iter()
        .filter(|r| !r.c_only)
        .map(|r| r.code)
        .collect();
    assert_eq!(from_errors, portable);
}
