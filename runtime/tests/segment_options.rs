//! Runs the shared vectors of `core/testdata/segment_options.json`: the options a caller gives,
//! and the options in effect or the exact message of the bound they break.

use std::time::Duration;

use idforge::{ErrorCode, SegmentOptions, SegmentOptionsInput, Segments};
use serde_json::Value;

fn load() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../core/testdata/segment_options.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn input(given: &Value) -> SegmentOptionsInput {
    let int = |key: &str| given.get(key).map(|v| v.as_u64().unwrap());
    SegmentOptionsInput {
        step: int("step"),
        max_step: int("max_step"),
        dynamic_step: given.get("dynamic_step").map(|v| v.as_bool().unwrap()),
        target_ms: int("target_ms"),
        prefetch_pct: int("prefetch_pct").map(|v| u32::try_from(v).unwrap()),
        timeout_ms: int("timeout_ms"),
    }
}

fn resolved(want: &Value) -> SegmentOptions {
    let int = |key: &str| want[key].as_u64().unwrap();
    SegmentOptions {
        step: int("step"),
        max_step: int("max_step"),
        dynamic_step: want["dynamic_step"].as_bool().unwrap(),
        target: Duration::from_millis(int("target_ms")),
        prefetch_pct: u8::try_from(int("prefetch_pct")).unwrap(),
        timeout: Duration::from_millis(int("timeout_ms")),
    }
}

#[test]
fn the_defaults_are_the_runtimes() {
    assert_eq!(resolved(&load()["defaults"]), SegmentOptions::default());
}

#[test]
fn given_options_resolve_to_the_same_options_in_effect() {
    for row in load()["valid"].as_array().unwrap() {
        let got = SegmentOptions::resolve(input(&row["given"]))
            .unwrap_or_else(|e| panic!("{}: {e}", row["given"]));
        assert_eq!(got, resolved(&row["resolved"]), "{}", row["given"]);
        // A generator keeps them as they are.
        let s = Segments::open("memory:", "t", got).unwrap();
        assert_eq!(s.options(), got);
    }
}

#[test]
fn options_out_of_bounds_are_refused_with_one_message() {
    for row in load()["invalid"].as_array().unwrap() {
        let e = SegmentOptions::resolve(input(&row["given"])).unwrap_err();
        assert_eq!(e.code().name(), row["error"], "{}", row["given"]);
        let message = row["message"].as_str().unwrap();
        assert_eq!(e.to_string(), format!("invalid argument: {message}"));
    }
}

#[test]
fn options_built_directly_meet_the_same_bounds() {
    let e = Segments::open(
        "memory:",
        "t",
        SegmentOptions {
            prefetch_pct: 0,
            ..SegmentOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert_eq!(
        e.to_string(),
        "invalid argument: prefetch_pct must be between 1 and 99"
    );
}
