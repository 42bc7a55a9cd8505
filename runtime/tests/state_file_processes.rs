//! Two processes on one state file: the second is refused, with an error that says the file is
//! in use, while the first holds it, and gets it once the first is gone. The test runs its own
//! binary again as the first process.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use idforge::{ErrorCode, StateFile, Uuid7s};

/// Set in the child: the state file it holds.
const CHILD: &str = "IDFORGE_TEST_STATE_FILE_CHILD";
const HOLDING: &str = "idforge-child-holds-the-state-file";
const NAME: &str = "a_second_process_is_refused_while_the_first_holds_the_state_file";

#[test]
fn a_second_process_is_refused_while_the_first_holds_the_state_file() {
    if let Some(path) = std::env::var_os(CHILD) {
        // The child: hold a generator on the file until the parent closes our stdin.
        let g = Uuid7s::with_state_file(path).unwrap();
        g.next().unwrap();
        println!("{HOLDING}");
        std::io::stdout().flush().unwrap();
        let _ = std::io::stdin().read_line(&mut String::new());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("uuid7.state");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
        .env(CHILD, &path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains(HOLDING) {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the child ended early"
        );
    }
    let err = Uuid7s::with_state_file(&path).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Io);
    let text = err.to_string();
    assert!(text.contains("in use by another generator"), "{text}");
    assert!(text.contains(&*path.to_string_lossy()), "{text}");
    assert!(StateFile::read_mark(&path).unwrap() > 0, "the child's mark");

    drop(child.stdin.take()); // the child lets go and exits
    std::io::copy(&mut out, &mut std::io::sink()).unwrap();
    assert!(child.wait().unwrap().success());
    // Settled by the child to its last id's millisecond: the next owner resumes after it.
    let settled = StateFile::read_mark(&path).unwrap();
    let g = Uuid7s::with_state_file(&path).unwrap();
    assert!(g.next().unwrap().time_ms() > settled);
}
