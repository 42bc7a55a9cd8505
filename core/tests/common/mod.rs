//! Helpers shared by the vector tests: load a file of `core/testdata/`, parse the decimal strings
//! it uses for 64-bit values, and check an error's stable name.
// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use idforge_core::Result;
use serde::Deserialize;

/// Loads and parses `core/testdata/{name}`.
pub fn load<T: for<'de> Deserialize<'de>>(name: &str) -> T {
    let path = format!("{}/testdata/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Parses a decimal string from a vector file.
pub fn int<T: std::str::FromStr>(s: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    s.parse()
        .unwrap_or_else(|e| panic!("bad integer {s:?}: {e:?}"))
}

/// Asserts `got` is the error whose stable name is `name`.
pub fn assert_err<T: std::fmt::Debug>(got: Result<T>, name: &str, what: &dyn std::fmt::Debug) {
    match got {
        Err(e) => assert_eq!(e.code().name(), name, "{what:?}: {e}"),
        Ok(v) => panic!("{what:?}: expected {name}, got Ok({v:?})"),
    }
}
