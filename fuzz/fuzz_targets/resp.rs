//! The server's RESP request parser on arbitrary bytes: it never panics, never claims more bytes
//! than it was given, never makes progress without consuming, and its argument ranges lie inside
//! the request it consumed. Replies written for any parsed argument stay well-formed.
#![no_main]

use idforge_resp as resp;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut ranges = Vec::new();
    let mut at = 0;
    while at < data.len() {
        match resp::parse(&data[at..], &mut ranges) {
            Ok(Some(used)) => {
                assert!(used > 0 && used <= data.len() - at, "consumed {used}");
                for r in &ranges {
                    assert!(r.start <= r.end && r.end <= used, "range {r:?} of {used}");
                }
                assert!(ranges.len() <= resp::MAX_ARGS);
                let mut reply = resp::Reply::default();
                for r in &ranges {
                    reply.bulk(&data[at..][r.clone()]);
                }
                at += used;
            }
            Ok(None) | Err(_) => break,
        }
    }
});
