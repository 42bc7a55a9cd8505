//! A forked child never repeats its parent's UUIDv7s: it continues the generator's counter but
//! draws its own random bits. One test in its own binary, so the process that forks runs no
//! other test threads.
#![allow(unsafe_code)]

use std::collections::HashSet;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

use idforge::{ErrorCode, Random, Uuid7s};

const COUNT: usize = 200_000;

#[test]
fn a_forked_child_never_repeats_its_parents_uuid7s() {
    let dir = tempfile::tempdir().unwrap();
    let ids = Uuid7s::new().unwrap();
    let with_file = Uuid7s::with_state_file(dir.path().join("state")).unwrap();
    let before: Vec<u128> = (0..1_000).map(|_| ids.next().unwrap().as_u128()).collect();
    with_file.next().unwrap();
    // A stream the caller owns (as the Python binding's, under the GIL), drawn from before the
    // fork: the child's copy must be seeded again, as the thread's own stream is.
    let mut random = Random::new();
    ids.next_with(&mut random).unwrap();
    // Every other id from each stream.
    let mut next = move |i: usize| {
        if i % 2 == 0 {
            ids.next()
        } else {
            ids.next_with(&mut random)
        }
    };

    let (mut parent_end, mut child_end) = UnixStream::pair().unwrap();
    // SAFETY: the child only runs Rust code that allocates and makes syscalls, which glibc's
    // fork handlers keep usable, then leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        drop(parent_end);
        let mut buf = Vec::with_capacity(COUNT * 16 + 4);
        let code = match with_file.next() {
            Ok(_) => 0,
            Err(e) => e.code().as_u32(),
        };
        buf.extend_from_slice(&code.to_le_bytes());
        for i in 0..COUNT {
            match next(i) {
                Ok(id) => buf.extend_from_slice(&id.to_bytes()),
                // SAFETY: ends the child at once, skipping the parent's destructors.
                Err(_) => unsafe { libc::_exit(3) },
            }
        }
        let code = if child_end.write_all(&buf).is_ok() {
            0
        } else {
            4
        };
        // SAFETY: as above.
        unsafe { libc::_exit(code) };
    }
    drop(child_end);
    let parent: Vec<u128> = (0..COUNT).map(|i| next(i).unwrap().as_u128()).collect();
    let mut bytes = Vec::new();
    parent_end.read_to_end(&mut bytes).unwrap();
    let mut status = 0;
    // SAFETY: waits for the child we forked; `status` is a valid out-pointer.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);

    let code = u32::from_le_bytes(bytes[..4].try_into().unwrap());
    assert_eq!(
        code,
        ErrorCode::Forked.as_u32(),
        "a state file is the parent's"
    );
    let child: Vec<u128> = bytes[4..]
        .chunks_exact(16)
        .map(|c| u128::from_be_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(child.len(), COUNT);
    assert!(child.windows(2).all(|w| w[0] < w[1]));
    let seen: HashSet<u128> = before.iter().chain(&parent).copied().collect();
    assert_eq!(seen.len(), before.len() + COUNT);
    // The child goes on from the parent's counter, so the two usually share (ms, counter)
    // pairs; its own random bits keep the ids apart.
    assert!(child.iter().all(|id| !seen.contains(id)), "no repeat");
}
