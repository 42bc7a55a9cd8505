//! The real `idforge` binary, run as a user would.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

// The calendar is the runtime's, checked there against walked dates and the shared vectors; here,
// that the tool prints it.
use idforge::text::time::format_ms;
use idforge::{Flake128, Layout, ObjectId, Ulid, Uuid7};

fn idforge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_idforge"))
        .args(args)
        .output()
        .expect("the idforge binary runs")
}

/// Runs a command that must succeed and returns its standard output.
fn ok(args: &[&str]) -> String {
    let out = idforge(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?} failed: {stderr}");
    assert!(out.stderr.is_empty(), "{args:?} wrote to stderr: {stderr}");
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// The value of `key` in `key value` output.
fn field<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines()
        .find_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some(key)).then(|| words.next().unwrap_or(""))
        })
        .unwrap_or_else(|| panic!("no {key} in {text}"))
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[test]
fn gen_snowflake_gives_unique_increasing_ids_of_the_node() {
    let text = ok(&["gen", "snowflake", "--node", "37", "--count", "1000"]);
    let ids: Vec<u64> = text.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 1000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
    let now = now_ms();
    for &id in &ids {
        let parts = Layout::TWITTER.decompose(id).unwrap();
        assert_eq!(parts.node, 37);
        assert!(parts.time_ms.abs_diff(now) < 60_000, "{}", parts.time_ms);
    }
}

#[test]
fn gen_snowflake_in_other_layouts() {
    let text = ok(&[
        "gen",
        "snowflake",
        "--layout",
        "Sonyflake",
        "--node",
        "65535",
    ]);
    let id: u64 = text.trim().parse().unwrap();
    assert_eq!(Layout::SONYFLAKE.decompose(id).unwrap().node, 65535);
    let spec = "epoch=1577836800000,tick=1,time=41,node=4,seq=8";
    let text = ok(&[
        "gen",
        "snowflake",
        "--layout",
        spec,
        "--node",
        "3",
        "--count",
        "5",
    ]);
    for line in text.lines() {
        let id: u64 = line.parse().unwrap();
        assert!(id < 1 << 53);
        assert_eq!(Layout::JS_SAFE.decompose(id).unwrap().node, 3);
    }
}

#[test]
fn gen_objectid_is_hex_with_the_current_time() {
    let before = now_ms() / 1000;
    let text = ok(&["gen", "objectid", "--count", "100"]);
    let after = now_ms() / 1000;
    let ids: Vec<ObjectId> = text
        .lines()
        .map(|l| {
            assert_eq!(l.len(), 24);
            assert!(
                l.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
                "{l}"
            );
            ObjectId::parse_hex(l).unwrap()
        })
        .collect();
    assert_eq!(ids.len(), 100);
    for id in &ids {
        let t = u64::from(id.timestamp());
        assert!(before.saturating_sub(3) <= t && t <= after + 3, "{t}");
    }
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 100);
}

#[test]
fn gen_flake128_formats_round_trip() {
    let now = now_ms();
    let parse = |format: &str, text: &str| -> Flake128 {
        match format {
            "base62" => {
                assert_eq!(text.len(), 22);
                Flake128::parse_base62(text).unwrap()
            }
            "hex" => {
                assert_eq!(text.len(), 32);
                Flake128::parse_hex(text).unwrap()
            }
            "decimal" => Flake128::from_u128(text.parse().unwrap()),
            "uuid" => {
                let dashes: Vec<usize> = text.match_indices('-').map(|(i, _)| i).collect();
                assert_eq!(dashes, [8, 13, 18, 23], "{text}");
                Flake128::parse_hex(&text.replace('-', "")).unwrap()
            }
            _ => unreachable!(),
        }
    };
    for format in ["base62", "hex", "decimal", "uuid"] {
        let text = ok(&["gen", "flake128", "--count", "50", "--format", format]);
        let ids: Vec<Flake128> = text.lines().map(|l| parse(format, l)).collect();
        assert_eq!(ids.len(), 50);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{format}");
        assert!(ids.iter().all(|id| id.worker() == ids[0].worker()));
        assert!(ids[0].time_ms().abs_diff(now) < 60_000);
        // The tool decodes its own output in every form but decimal (ambiguous with hex).
        if format != "decimal" {
            let first = text.lines().next().unwrap();
            let decoded = ok(&["decode", first]);
            assert_eq!(field(&decoded, "type"), "flake128");
            assert_eq!(field(&decoded, "id"), ids[0].to_string());
            assert_eq!(
                field(&decoded, "worker"),
                format!("{:012x}", ids[0].worker())
            );
            assert_eq!(field(&decoded, "sequence"), ids[0].seq().to_string());
        }
    }
    // Default: base62.
    let text = ok(&["gen", "flake128"]);
    assert_eq!(text.trim().len(), 22);
}

#[test]
fn gen_uuid7_and_ulid_increase_decode_and_continue_after_a_state_file() {
    let before = now_ms();
    let text = ok(&["gen", "uuid7", "--count", "1000"]);
    let ids: Vec<Uuid7> = text.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 1000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    // The coarse clock may trail by a kernel tick.
    assert!(ids[0].time_ms() + 50 >= before && ids[999].time_ms() <= now_ms());
    let decoded = ok(&["decode", &ids[0].to_string()]);
    assert_eq!(field(&decoded, "type"), "uuid7");
    assert_eq!(field(&decoded, "time_ms"), ids[0].time_ms().to_string());
    assert_eq!(field(&decoded, "time"), format_ms(ids[0].time_ms()));
    assert_eq!(field(&decoded, "ulid"), Ulid::from(ids[0]).to_string());

    let ulids: Vec<Ulid> = ok(&["gen", "ulid", "--count", "100"])
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert!(ulids.windows(2).all(|w| w[0] < w[1]));
    let decoded = ok(&["decode", &ulids[0].to_string().to_lowercase()]);
    assert_eq!(field(&decoded, "type"), "ulid");
    assert_eq!(field(&decoded, "time_ms"), ulids[0].time_ms().to_string());

    let as_ulid = ok(&["gen", "uuid7", "--format", "ulid"]);
    assert!(Uuid7::parse_ulid_text(as_ulid.trim()).is_ok());

    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("uuid7.state");
    let state = state.to_str().unwrap();
    let first = ok(&["gen", "uuid7", "--state-file", state, "--count", "10"]);
    let second = ok(&["gen", "uuid7", "--state-file", state, "--count", "10"]);
    let last: Uuid7 = first.lines().last().unwrap().parse().unwrap();
    let next: Uuid7 = second.lines().next().unwrap().parse().unwrap();
    assert!(next > last);

    let v4 = "2d7a6d0e-1c1a-4b5e-8f00-000000000000";
    let out = idforge(&["decode", "--type", "uuid7", v4]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("(INVALID_UUID)"), "{err}");
}

#[test]
fn gen_snowflake_random_start_spreads_low_bits() {
    // One id per call: a new process, a new tick, a random start each time.
    let mut low = std::collections::HashSet::new();
    for _ in 0..12 {
        let id: u64 = ok(&["gen", "snowflake", "--random-start"])
            .trim()
            .parse()
            .unwrap();
        low.insert(id % 16);
    }
    assert!(low.len() > 3, "random starts vary: {low:?}");
    let plain: u64 = ok(&["gen", "snowflake"]).trim().parse().unwrap();
    assert_eq!(plain % 4096, 0, "the default start is 0");
}

#[test]
fn decode_a_known_twitter_id() {
    let id = 1_212_161_842_325_159_937u64;
    let time_ms = (id >> 22) + 1_288_834_974_657;
    let expected = format_ms(time_ms);
    assert_eq!(expected, "2020-01-01T00:01:18.745Z");
    let text = ok(&["decode", &id.to_string()]);
    assert_eq!(field(&text, "type"), "snowflake");
    assert_eq!(field(&text, "time"), expected);
    assert_eq!(field(&text, "node"), ((id >> 12) & 0x3ff).to_string());
    assert_eq!(field(&text, "sequence"), (id & 0xfff).to_string());
    assert_eq!(field(&text, "tick"), (id >> 22).to_string());

    let json: serde_json::Value =
        serde_json::from_str(&ok(&["decode", &id.to_string(), "--json"])).unwrap();
    assert_eq!(json["time"], expected);
    assert_eq!(json["id"], id.to_string());
    assert_eq!(json["node"], (id >> 12) & 0x3ff);
    assert_eq!(json["sequence"], id & 0xfff);
    assert_eq!(json["tick"], id >> 22);
    assert_eq!(json["layout"], "twitter");

    // The same id read with an explicit type and layout spec.
    let spec = "epoch=1288834974657,tick=1,time=41,node=10,seq=12";
    let text = ok(&[
        "decode",
        &id.to_string(),
        "--type",
        "snowflake",
        "--layout",
        spec,
    ]);
    assert_eq!(field(&text, "time"), expected);
}

#[test]
fn decode_objectids_from_the_spec_table() {
    for (hex, time, secs) in [
        (
            "ffffffff0000000000000000",
            "2106-02-07T06:28:15Z",
            4_294_967_295u64,
        ),
        (
            "7fffffff0000000000000000",
            "2038-01-19T03:14:07Z",
            2_147_483_647,
        ),
        ("000000000000000000000000", "1970-01-01T00:00:00Z", 0),
        (
            "80000000AABBCC1234000001",
            "2038-01-19T03:14:08Z",
            2_147_483_648,
        ),
    ] {
        let text = ok(&["decode", hex]);
        assert_eq!(field(&text, "type"), "objectid");
        assert_eq!(field(&text, "time"), time, "{hex}");
        assert_eq!(field(&text, "timestamp"), secs.to_string());
        assert_eq!(field(&text, "id"), hex.to_ascii_lowercase());
        let json: serde_json::Value =
            serde_json::from_str(&ok(&["decode", "--json", hex, "--type", "objectid"])).unwrap();
        assert_eq!(json["time"], time);
        assert_eq!(json["timestamp"], secs);
    }
}

#[test]
fn compose_bounds_match_the_library() {
    let t = "2024-01-01T00:00:00Z";
    let t_ms = 1_704_067_200_000u64;
    for (layout, name) in [
        (Layout::TWITTER, "twitter"),
        (Layout::SONYFLAKE, "sonyflake"),
    ] {
        let (min, max) = layout.bounds_at(t_ms).unwrap();
        let text = ok(&["compose", "--time", t, "--layout", name]);
        assert_eq!(text, format!("min {min}\nmax {max}\n"));
        // The same instant as Unix ms, with an offset, and with a fraction inside the tick.
        assert_eq!(
            ok(&["compose", "--time", &t_ms.to_string(), "--layout", name]),
            text
        );
        assert_eq!(
            ok(&[
                "compose",
                "--time",
                "2023-12-31T19:00:00.0009-05:00",
                "--layout",
                name
            ]),
            text
        );
        let json: serde_json::Value =
            serde_json::from_str(&ok(&["compose", "--time", t, "--layout", name, "--json"]))
                .unwrap();
        assert_eq!(json["min"], min.to_string());
        assert_eq!(json["max"], max.to_string());
    }
    let tick = Layout::TWITTER.tick_of(t_ms).unwrap();
    let id = Layout::TWITTER.compose(tick, 5, 17).unwrap();
    let text = ok(&["compose", "--time", t, "--node", "5", "--seq", "17"]);
    assert_eq!(text, format!("{id}\n"));
    let decoded = ok(&["decode", &id.to_string()]);
    assert_eq!(field(&decoded, "time"), "2024-01-01T00:00:00.000Z");
    // A time as psql prints it (the README's SQL example) means the same.
    assert_eq!(
        ok(&["compose", "--time", "2025-01-08 14:30:47.630+00"]),
        ok(&["compose", "--time", "2025-01-08T14:30:47.630Z"])
    );
}

#[test]
fn layouts_lists_every_preset() {
    let text = ok(&["layouts"]);
    for (name, _) in Layout::PRESETS {
        assert!(text.lines().any(|l| l.starts_with(name)), "{name}: {text}");
    }
    let json: serde_json::Value = serde_json::from_str(&ok(&["layouts", "--json"])).unwrap();
    assert_eq!(json.as_array().unwrap().len(), Layout::PRESETS.len());
}

#[test]
fn bad_input_is_one_line_with_a_code_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["decode", "not-an-id!"], "INVALID_ARGUMENT"),
        // A word is not an id (base62, but not the 22 characters of a flake-128).
        (&["decode", "nope"], "INVALID_ARGUMENT"),
        (&["decode", ""], "INVALID_ARGUMENT"),
        (&["decode", "99999999999999999999"], "INVALID_DECIMAL"),
        (&["decode", "9223372036854775808"], "INVALID_ARGUMENT"),
        (&["decode", "12", "--type", "objectid"], "INVALID_HEX"),
        (&["decode", "1x", "--type", "snowflake"], "INVALID_DECIMAL"),
        (&["decode", "a!", "--type", "flake128"], "INVALID_BASE62"),
        (&["decode", "1", "--layout", "nope"], "INVALID_LAYOUT"),
        (
            &["decode", "1", "--layout", "epoch=1,tick=1,time=41,node=10"],
            "INVALID_LAYOUT",
        ),
        (
            &[
                "decode",
                "1",
                "--layout",
                "epoch=1,tick=1,time=41,node=10,seq=12,x=1",
            ],
            "INVALID_LAYOUT",
        ),
        (
            &[
                "decode",
                "1",
                "--layout",
                "epoch=z,tick=1,time=41,node=10,seq=12",
            ],
            "INVALID_LAYOUT",
        ),
        (&["gen", "snowflake", "--node", "1024"], "NODE_OUT_OF_RANGE"),
        (&["gen", "snowflake", "--node", "-1"], "INVALID_DECIMAL"),
        (
            &["gen", "snowflake", "--layout", "js_safe", "--node", "16"],
            "NODE_OUT_OF_RANGE",
        ),
        (&["gen", "snowflake", "--count", "0"], "INVALID_ARGUMENT"),
        (
            &["gen", "objectid", "--count", "10000001"],
            "INVALID_ARGUMENT",
        ),
        (&["gen", "flake128", "--count", "many"], "INVALID_DECIMAL"),
        (
            &[
                "gen",
                "snowflake",
                "--layout",
                "epoch=99999999999999,tick=1,time=41,node=10,seq=12",
            ],
            "EPOCH_IN_FUTURE",
        ),
        (&["compose", "--time", "yesterday"], "INVALID_ARGUMENT"),
        (
            &["compose", "--time", "2024-02-30T00:00:00Z"],
            "INVALID_ARGUMENT",
        ),
        (
            &["compose", "--time", "2024-01-01T00:00:00"],
            "INVALID_ARGUMENT",
        ),
        (
            &["compose", "--time", "1969-12-31T23:00:00Z"],
            "TIME_OUT_OF_RANGE",
        ),
        (
            &["compose", "--time", "2000-01-01T00:00:00Z"],
            "TIME_OUT_OF_RANGE",
        ),
        (
            &["compose", "--time", "0", "--layout", "discord"],
            "TIME_OUT_OF_RANGE",
        ),
        (
            &[
                "compose",
                "--time",
                "2024-01-01T00:00:00Z",
                "--node",
                "1",
                "--seq",
                "4096",
            ],
            "SEQUENCE_OUT_OF_RANGE",
        ),
        (
            &[
                "compose",
                "--time",
                "2024-01-01T00:00:00Z",
                "--node",
                "1024",
                "--seq",
                "0",
            ],
            "NODE_OUT_OF_RANGE",
        ),
    ];
    for (args, code) in cases {
        let out = idforge(args);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("idforge: error: "), "{args:?}: {stderr}");
        assert!(
            stderr.ends_with(&format!(" ({code})\n")),
            "{args:?}: expected {code}, got {stderr}"
        );
    }
}

#[test]
fn decode_takes_only_the_one_text_of_a_snowflake() {
    // core/testdata/id_text.json's describe_errors, on every path that reads a snowflake:
    // detected, named (--type snowflake) and by form (--form decimal). "007" is not 7.
    let file: serde_json::Value =
        serde_json::from_str(include_str!("../../core/testdata/id_text.json")).unwrap();
    for row in file["describe_errors"].as_array().unwrap() {
        let text = row["text"].as_str().unwrap();
        let code = row["error"].as_str().unwrap();
        let mut paths: Vec<Vec<&str>> = vec![
            vec!["decode", "--type", "snowflake", "--", text],
            vec!["decode", "--form", "decimal", "--", text],
        ];
        if row["kind"] == "any" {
            paths.push(vec!["decode", "--", text]);
        }
        for args in paths {
            let out = idforge(&args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(out.stdout.is_empty(), "{args:?}");
            assert!(
                stderr.ends_with(&format!(" ({code})\n")),
                "{args:?}: {stderr}"
            );
        }
    }
    assert_eq!(field(&ok(&["decode", "0"]), "type"), "snowflake");
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["gen"][..],
        &["gen", "uuid"],
        &["decode"],
        &["compose"],
        &["compose", "--time", "0", "--seq", "1"],
        &["gen", "flake128", "--format", "base64"],
        &["layouts", "--frob"],
    ] {
        let out = idforge(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
    let help = idforge(&["--help"]);
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("compose"));
}

#[test]
fn a_closed_stdout_ends_quietly() {
    for kind in ["snowflake", "objectid", "flake128"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_idforge"))
            .args(["gen", kind, "--count", "10000000"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        {
            let stdout = child.stdout.take().unwrap();
            let mut reader = BufReader::new(stdout);
            reader.read_line(&mut first).unwrap();
            // Dropping the reader closes our end of the pipe, like `| head -1`.
        }
        let out = child.wait_with_output().unwrap();
        assert!(!first.trim().is_empty(), "{kind}");
        assert_eq!(out.status.code(), Some(0), "{kind}");
        assert!(
            out.stderr.is_empty(),
            "{kind}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn serve_help_names_every_store_scheme() {
    let help = ok(&["serve", "--help"]);
    for scheme in ["sqlite://", "postgres://", "mysql://", "etcd://"] {
        assert!(help.contains(scheme), "serve --help omits {scheme}");
    }
}
