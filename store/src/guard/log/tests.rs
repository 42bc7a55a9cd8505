//! The guard file through its [`Log`]: reopening, damage, failed appends, salvage, compaction.

use super::*;
use crate::guard::lines::{HEADER, LINES_PARSED, SALVAGE_TRIES, line, partial_line};
use std::collections::HashMap;

fn marks_of(log: &Log) -> Vec<(String, i64)> {
    let mut v: Vec<_> = log
        .marks()
        .tags
        .iter()
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    v.sort();
    v
}

#[test]
fn marks_survive_reopening_and_a_torn_tail_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g");
    {
        let mut log = Log::open(&path).unwrap();
        log.append(&[
            Mark::Identity("abc".into()),
            Mark::Tag("orders".into(), 1001),
            Mark::Tag("odd name/ü".into(), 7),
            Mark::Clock("ids".into(), 50),
            Mark::Clock("ids".into(), 40),
            Mark::Clock("back".into(), 90),
            Mark::ClockBack("back".into(), 60),
        ])
        .unwrap();
        log.append(&[Mark::Tag("gone".into(), 3), Mark::Dropped("gone".into())])
            .unwrap();
    }
    // A crash in the middle of an append.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"T 99999 orders 1234")
        .unwrap();
    let log = Log::open(&path).unwrap();
    assert!(
        matches!(
            log.fixes(),
            [Fix::TornTail {
                bytes: 19,
                cut: true,
                ..
            }]
        ),
        "{:?}",
        log.fixes()
    );
    assert!(
        log.fixes()[0]
            .to_string()
            .starts_with("cut a torn last line of 19 bytes")
    );
    assert_eq!(log.marks().identity.as_deref(), Some("abc"));
    assert_eq!(
        marks_of(&log),
        [("odd name/ü".to_string(), 7), ("orders".to_string(), 1001)]
    );
    assert_eq!(log.marks().clocks["ids"], 50);
    assert_eq!(
        log.marks().clocks["back"],
        60,
        "a clean stop brought it back"
    );
    drop(log);
    assert!(
        !std::fs::read_to_string(&path).unwrap().contains("99999"),
        "torn tail truncated"
    );
}

#[test]
fn a_damaged_line_in_the_middle_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g");
    {
        let mut log = Log::open(&path).unwrap();
        log.append(&[Mark::Tag("a".into(), 10), Mark::Tag("b".into(), 20)])
            .unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("T 10 a", "T 19 a", 1)).unwrap();
    let err = Log::open(&path).unwrap_err();
    assert!(matches!(err, LogError::Damaged { line: 2, .. }), "{err}");
    std::fs::write(&path, "hello\n").unwrap();
    assert!(matches!(
        Log::open(&path).unwrap_err(),
        LogError::Damaged { line: 1, .. }
    ));
}

fn open_with(path: &Path, marks: &[Mark]) -> Log {
    let mut log = Log::open(path).unwrap();
    log.append(marks).unwrap();
    log
}

#[test]
fn a_failed_append_leaves_the_file_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g");
    // Torn inside the line, and whole but not fsynced.
    for fail_after in [9, usize::MAX] {
        let mut log = open_with(
            &path,
            &[Mark::Identity("abc".into()), Mark::Tag("a".into(), 10)],
        );
        let before = std::fs::read(&path).unwrap();
        log.faults.fail_after = Some(fail_after);
        let err = log
            .append(&[Mark::Tag("a".into(), 99), Mark::Tag("b".into(), 99)])
            .unwrap_err();
        assert!(
            matches!(&err, LogError::Io { source, .. } if source.kind() == std::io::ErrorKind::StorageFull),
            "{err}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before, "cut back");
        assert_eq!(log.marks().tags["a"], 10, "a failed append is not taken");
        // Later appends follow the last whole line, so the file reads again.
        log.append(&[Mark::Tag("a".into(), 20)]).unwrap();
        drop(log);
        let log = Log::open(&path).unwrap();
        assert_eq!(log.marks().tags["a"], 20);
        assert!(!log.marks().tags.contains_key("b"));
        assert!(log.fixes().is_empty(), "{:?}", log.fixes());
        drop(log);
        std::fs::remove_file(&path).unwrap();
    }
}

#[test]
fn a_cut_that_failed_is_made_before_the_next_append() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g");
    let mut log = open_with(&path, &[Mark::Identity("abc".into())]);
    let before = std::fs::metadata(&path).unwrap().len();
    log.faults.fail_after = Some(7);
    log.faults.fail_cut = true;
    assert!(log.append(&[Mark::Tag("a".into(), 99)]).is_err());
    assert_eq!(std::fs::metadata(&path).unwrap().len(), before + 7);
    // A crash now leaves a torn tail, which the next open cuts.
    let crashed = parse(&std::fs::read(&path).unwrap(), false).unwrap();
    assert_eq!(
        crashed.fixes,
        [Fix::TornTail {
            offset: before,
            bytes: 7,
            cut: false
        }]
    );
    // The cut keeps failing: so does every append.
    assert!(log.append(&[Mark::Tag("a".into(), 5)]).is_err());
    log.faults.fail_cut = false;
    log.append(&[Mark::Tag("a".into(), 5)]).unwrap();
    drop(log);
    let log = Log::open(&path).unwrap();
    assert_eq!(log.marks().tags["a"], 5);
    assert!(log.fixes().is_empty());
}

/// A real full disk: a tmpfs of 64 KB filled up. Appends fail with part of a line written
/// (a write that fills the last page of the file, then ENOSPC); once space is back the
/// file must read whole, with every acknowledged mark.
#[test]
fn a_full_disk_leaves_a_guard_that_reads_once_space_is_back() {
    struct Mounted(tempfile::TempDir);
    impl Drop for Mounted {
        fn drop(&mut self) {
            let _ = rustix::mount::unmount(self.0.path(), rustix::mount::UnmountFlags::DETACH);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    // The mount call, not the mount command: a child process would hold a copy of the
    // other tests' guard locks from its fork until its exec.
    let size = c"size=64k";
    if let Err(e) = rustix::mount::mount(
        "tmpfs",
        dir.path(),
        "tmpfs",
        rustix::mount::MountFlags::empty(),
        size,
    ) {
        eprintln!("skipped: cannot mount a tmpfs here (needs root): {e}");
        return;
    }
    let fs = Mounted(dir);
    let path = fs.0.path().join("g");
    let mut log = open_with(&path, &[Mark::Identity("abc".into())]);
    let filler_path = fs.0.path().join("filler");
    let mut filler = File::create(&filler_path).unwrap();
    while filler.write_all(&[0u8; 64]).is_ok() {}
    let mut acknowledged = HashMap::new();
    let mut failed = 0;
    for round in 0..2000i64 {
        let marks: Vec<Mark> = (0..3)
            .map(|t| Mark::Tag(format!("tag-with-a-long-name-{t}"), round * 10 + t))
            .collect();
        if log.append(&marks).is_ok() {
            for m in marks {
                if let Mark::Tag(t, v) = m {
                    acknowledged.insert(t, v);
                }
            }
        } else {
            failed += 1;
            if failed == 20 {
                // Space is back.
                drop(filler);
                std::fs::remove_file(&filler_path).unwrap();
                break;
            }
        }
    }
    assert_eq!(failed, 20, "the disk never filled: the test proves nothing");
    log.append(&[Mark::Tag("after".into(), 1)]).unwrap();
    acknowledged.insert("after".into(), 1);
    drop(log);
    let log = Log::open(&path).unwrap();
    assert_eq!(log.marks().tags, acknowledged);
    assert!(log.fixes().is_empty(), "{:?}", log.fixes());
}

#[test]
fn a_file_with_the_remains_of_a_failed_append_is_refused_and_salvaged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g");
    drop(open_with(
        &path,
        &[Mark::Identity("abc".into()), Mark::Tag("a".into(), 10)],
    ));
    // What a failed append left before failed appends were cut off: part of a line, then
    // the next append's lines right after it.
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("T 500 b");
    text.push_str(&line(&Mark::Tag("a".into(), 20)));
    text.push_str(&line(&Mark::Tag("c".into(), 30)));
    std::fs::write(&path, &text).unwrap();
    let err = Log::open(&path).unwrap_err();
    assert!(matches!(err, LogError::Damaged { line: 4, .. }), "{err}");
    assert!(err.to_string().contains("idforge store repair"), "{err}");
    let log = Log::open_salvaging(&path).unwrap();
    assert_eq!(log.fixes(), [Fix::Fragment { line: 4, bytes: 7 }]);
    assert_eq!(log.marks().tags["a"], 20);
    assert_eq!(log.marks().tags["c"], 30);
    assert!(!log.marks().tags.contains_key("b"));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "left as it is"
    );
    drop(log);
    // A line that holds no whole line is lost, and said so.
    std::fs::write(&path, text.replace("T 500 bT 20 a", "T 500 bT 21 a")).unwrap();
    let mut log = Log::open_salvaging(&path).unwrap();
    assert!(
        matches!(log.fixes(), [Fix::Lost { line: 4, .. }]),
        "{:?}",
        log.fixes()
    );
    assert_eq!(log.marks().tags["a"], 10);
    // The next write replaces the file whole.
    log.append(&[Mark::Tag("d".into(), 1)]).unwrap();
    drop(log);
    let log = Log::open(&path).unwrap();
    assert_eq!(log.marks().tags.len(), 3);
    assert!(log.fixes().is_empty());
}

/// A crash leaves only a last line without its newline; a bad last line with one was
/// written whole, so it is damage, as in the middle: refused, and never cut (before, it was
/// taken for a torn tail and cut, and the newest mark was lost without a word).
#[test]
fn a_bad_last_line_with_its_newline_is_damage_not_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g");
    drop(open_with(
        &path,
        &[
            Mark::Identity("abc".into()),
            Mark::Tag("a".into(), 10),
            Mark::Tag("b".into(), 20),
        ],
    ));
    let whole = std::fs::read_to_string(&path).unwrap();
    // Bit-rot in the last line; and the remains of a failed append glued to it.
    let rotted = whole.replacen("T 20 b", "T 29 b", 1);
    let at = whole[..whole.len() - 1].rfind('\n').unwrap() + 1;
    let glued = format!("{}T 500 c{}", &whole[..at], &whole[at..]);
    for (text, fix) in [
        (&rotted, Fix::Lost { line: 4, bytes: 16 }),
        (&glued, Fix::Fragment { line: 4, bytes: 7 }),
    ] {
        std::fs::write(&path, text).unwrap();
        let err = Log::open(&path).unwrap_err();
        assert!(matches!(err, LogError::Damaged { line: 4, .. }), "{err}");
        assert_eq!(&std::fs::read_to_string(&path).unwrap(), text, "not cut");
        let log = Log::open_salvaging(&path).unwrap();
        assert_eq!(log.fixes(), std::slice::from_ref(&fix));
        assert_eq!(log.found(), Found::Written);
        assert_eq!(log.marks().tags["a"], 10);
        assert_eq!(
            log.marks().tags.get("b").copied(),
            matches!(fix, Fix::Fragment { .. }).then_some(20),
            "the whole line after the remains is kept"
        );
        drop(log);
        assert_eq!(&std::fs::read_to_string(&path).unwrap(), text, "not cut");
    }
}

/// Bytes before a whole line that are no start of a line were not left by a failed append
/// (before, they were dropped as such, and the mark of a line whose newline rotted was lost
/// without a word).
#[test]
fn a_line_whose_newline_rotted_is_lost_not_taken_for_remains() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g");
    drop(open_with(
        &path,
        &[
            Mark::Identity("abc".into()),
            Mark::Tag("a".into(), 10),
            Mark::Tag("b".into(), 20),
            Mark::Tag("c".into(), 30),
        ],
    ));
    let whole = std::fs::read_to_string(&path).unwrap();
    let a = line(&Mark::Tag("a".into(), 10));
    let rotted = whole.replacen(&a, &format!("{}x", a.trim_end()), 1);
    std::fs::write(&path, &rotted).unwrap();
    let log = Log::open_salvaging(&path).unwrap();
    assert_eq!(
        log.fixes(),
        [Fix::Lost {
            line: 3,
            bytes: a.len()
        }]
    );
    assert!(!log.marks().tags.contains_key("a"));
    assert_eq!(log.marks().tags["b"], 20);
    // What failed appends leave is still told from that.
    for remains in [
        "T",
        "T ",
        "T 5",
        "T 500 ",
        "C 17 ids",
        "T 500 b%2",
        "D 0 x 0badf0",
    ] {
        assert!(partial_line(remains.as_bytes()), "{remains:?}");
    }
    for rot in ["x", "T 5 b 0badf00d1", "T 5 b 0badf00d ", "t 5", "T 5 b/"] {
        assert!(!partial_line(rot.as_bytes()), "{rot:?}");
    }
}

/// A long damaged line is read in a bounded number of passes (before, every byte was a
/// start tried, each a pass over the rest: quadratic in the line's length).
#[test]
fn a_long_damaged_line_is_salvaged_in_bounded_passes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g");
    drop(open_with(&path, &[Mark::Identity("abc".into())]));
    let mut text = std::fs::read_to_string(&path).unwrap();
    // Every other byte starts a line kind, and the end looks like a checksum: each try
    // reads the whole rest.
    text.push_str(&"T ".repeat(1 << 16));
    text.push_str("0badf00d\n");
    text.push_str(&line(&Mark::Tag("a".into(), 10)));
    std::fs::write(&path, &text).unwrap();
    LINES_PARSED.with(|n| n.set(0));
    let log = Log::open_salvaging(&path).unwrap();
    let parsed = LINES_PARSED.with(|n| n.get());
    assert!(parsed <= 3 + SALVAGE_TRIES, "{parsed} lines parsed");
    assert_eq!(
        log.fixes(),
        [Fix::Lost {
            line: 3,
            bytes: (1 << 17) + 9
        }]
    );
    assert_eq!(log.marks().tags["a"], 10);
}

#[test]
fn guards_in_one_folder_rewrite_through_temp_files_of_their_own() {
    let a = tmp_path(Path::new("/var/lib/idforge/x.a"));
    let b = tmp_path(Path::new("/var/lib/idforge/x.b"));
    assert_eq!(a, Path::new("/var/lib/idforge/x.a.tmp"));
    assert_ne!(a, b);
    assert_eq!(
        tmp_path(Path::new("idforge.guard")),
        Path::new("idforge.guard.tmp")
    );
}

#[test]
fn an_emptied_or_cut_file_is_told_from_a_missing_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g");
    let log = Log::open(&path).unwrap();
    assert_eq!(log.found(), Found::Missing);
    assert!(
        !path.exists(),
        "written whole on the first write, not before"
    );
    drop(log);
    drop(open_with(&path, &[Mark::Identity("abc".into())]));
    assert_eq!(Log::open(&path).unwrap().found(), Found::Written);
    for (text, bytes) in [
        ("", 0),
        ("idforge-gu", 10),
        (HEADER, 16),
        (
            "idforge-guard 1
T 5",
            19,
        ),
    ] {
        std::fs::write(&path, text).unwrap();
        let log = Log::open(&path).unwrap();
        assert_eq!(log.found(), Found::NoIdentity { bytes }, "{text:?}");
        assert!(log.marks().identity.is_none());
    }
}

#[test]
fn one_process_per_guard() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g");
    let _held = Log::open(&path).unwrap();
    assert!(matches!(Log::open(&path), Err(LogError::Locked(_))));
}

#[test]
fn the_log_compacts_and_keeps_every_mark() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g");
    let mut log = Log::open(&path).unwrap();
    for round in 0..2000 {
        let marks: Vec<Mark> = (0..10)
            .map(|t| Mark::Tag(format!("t{t}"), round * 10 + t))
            .collect();
        log.append(&marks).unwrap();
    }
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size <= COMPACT_MIN + 4096, "compacted: {size} bytes");
    drop(log);
    let log = Log::open(&path).unwrap();
    assert_eq!(log.marks().tags.len(), 10);
    assert_eq!(log.marks().tags["t3"], 1999 * 10 + 3);
}
