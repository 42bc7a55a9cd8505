//! A forked child inherits its parent's high-water marks: a source answering the child with a
//! range the parent already took is refused there too.
//!
//! One test in its own binary, so the process that forks runs no other test threads.
#![allow(unsafe_code)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use idforge::{ErrorCode, SegmentOptions, Segments};

/// A loopback RESP server that answers every request `:10` (ids 1..=10 every time), for 60 s.
fn liar() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                stream
                    .set_read_timeout(Some(Duration::from_secs(60)))
                    .unwrap();
                let mut buf = [0u8; 4096];
                while let Ok(1..) = stream.read(&mut buf) {
                    if stream.write_all(b":10\r\n").is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

fn options() -> SegmentOptions {
    SegmentOptions {
        step: 10,
        max_step: 10,
        dynamic_step: false,
        timeout: Duration::from_secs(5),
        ..Default::default()
    }
}

/// The child's checks, as an exit code (0: all held).
fn run_child(url: &str, inherited: &Segments) -> i32 {
    match inherited.next() {
        Err(e) if e.code() == ErrorCode::InvalidSegment => {}
        _ => return 2,
    }
    let Ok(fresh) = Segments::open(url, "forked", options()) else {
        return 3;
    };
    match fresh.next() {
        Err(e) if e.code() == ErrorCode::InvalidSegment => {}
        _ => return 4,
    }
    // A tag the parent never used is not affected.
    let Ok(other) = Segments::open(url, "child-only", options()) else {
        return 5;
    };
    match other.next() {
        Ok(1) => 0,
        _ => 6,
    }
}

#[test]
fn a_forked_child_inherits_the_marks() {
    let url = format!("idforge://127.0.0.1:{}?timeout_ms=2000", liar());
    let parent = Segments::open(&url, "forked", options()).unwrap();
    let ids: Vec<u64> = (0..10).map(|_| parent.next().unwrap()).collect();
    assert_eq!(ids, (1..=10).collect::<Vec<_>>());

    // SAFETY: the child only runs Rust code that allocates and makes syscalls, which glibc's
    // fork handlers keep usable, then leaves with `_exit` so no test-harness state is touched.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = run_child(&url, &parent);
        // SAFETY: ends the child at once, skipping destructors and atexit handlers meant for the
        // parent.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waits for the child we forked; `status` is a valid out-pointer.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child failed: status {status:#x} (exit code {})",
        libc::WEXITSTATUS(status)
    );
    // The parent, too, refuses the repeats.
    assert_eq!(parent.next().unwrap_err().code(), ErrorCode::InvalidSegment);
}
