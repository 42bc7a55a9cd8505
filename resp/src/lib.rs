//! The Redis protocol (RESP2 and RESP3): parsing requests and writing replies.
//!
//! Hand-written rather than taken from a RESP crate: the server only ever reads one shape (an
//! array of bulk strings, or an inline line) and must bound every length before it buffers it,
//! and the parser hands back offsets into the connection's buffer so a pipelined `INCR` costs no
//! allocation. Fuzzed by `fuzz/fuzz_targets/resp.rs`; the server (`idforge-server`) is its user.

use std::ops::Range;

/// The most arguments one command may have.
pub const MAX_ARGS: usize = 1024;
/// The longest bulk string a request may carry (tags are ≤ 128 bytes; passwords and patterns
/// are short). Longer declared lengths are refused before anything is buffered.
pub const MAX_BULK: usize = 64 * 1024;
/// The longest inline (space-separated) request line.
pub const MAX_INLINE: usize = 64 * 1024;
/// The most bytes one request may declare in all, whatever `--max-request-bytes` says.
pub const MAX_REQUEST: usize = 1024 * 1024;

/// A request the stream cannot recover from; the connection answers with it and closes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub &'static str);

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Protocol error: {}", self.0)
    }
}

impl std::error::Error for ProtocolError {}

/// Parses one request at the start of `buf`.
///
/// On success returns how many bytes it took, with `args` holding each argument's range in
/// `buf` (empty for a blank inline line or `*0`, which are skipped); `Ok(None)` when `buf` holds
/// only part of a request.
pub fn parse(buf: &[u8], args: &mut Vec<Range<usize>>) -> Result<Option<usize>, ProtocolError> {
    parse_limited(buf, args, MAX_REQUEST)
}

/// [`parse`] with requests (and so what a half-sent one may make the connection buffer) limited
/// to `max` bytes (at most [`MAX_REQUEST`]).
pub fn parse_limited(
    buf: &[u8],
    args: &mut Vec<Range<usize>>,
    max: usize,
) -> Result<Option<usize>, ProtocolError> {
    args.clear();
    let max = max.min(MAX_REQUEST);
    match buf.first() {
        None => Ok(None),
        Some(b'*') => parse_multibulk(buf, args, max),
        Some(_) => parse_inline(buf, args, max),
    }
}

/// The position of the `\r\n` ending the line that starts at `from`, if buffered.
fn line_end(buf: &[u8], from: usize) -> Option<usize> {
    let nl = memchr::memchr(b'\n', &buf[from..])? + from;
    Some(nl)
}

/// A non-negative decimal of at most 18 digits (lengths), or -1 when `allow_null`.
fn length(digits: &[u8], allow_null: bool) -> Option<i64> {
    if allow_null && digits == b"-1" {
        return Some(-1);
    }
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        digits
            .iter()
            .fold(0i64, |n, d| n * 10 + i64::from(d - b'0')),
    )
}

/// The line between `from` and its `\r\n` (the `\r` is required), and the offset after it.
fn line(buf: &[u8], from: usize, max: usize) -> Result<Option<(&[u8], usize)>, ProtocolError> {
    let Some(nl) = line_end(buf, from) else {
        if buf.len() - from > max {
            return Err(ProtocolError("too big request line"));
        }
        return Ok(None);
    };
    if nl == from || buf[nl - 1] != b'\r' {
        return Err(ProtocolError("expected CRLF"));
    }
    Ok(Some((&buf[from..nl - 1], nl + 1)))
}

fn parse_multibulk(
    buf: &[u8],
    args: &mut Vec<Range<usize>>,
    max: usize,
) -> Result<Option<usize>, ProtocolError> {
    let Some((digits, mut at)) = line(buf, 1, 32)? else {
        return Ok(None);
    };
    let n = length(digits, true).ok_or(ProtocolError("invalid multibulk length"))?;
    if n > MAX_ARGS as i64 {
        return Err(ProtocolError("invalid multibulk length"));
    }
    for _ in 0..n.max(0) {
        match buf.get(at) {
            None => return Ok(None),
            Some(b'$') => {}
            Some(_) => return Err(ProtocolError("expected '$'")),
        }
        let Some((digits, data)) = line(buf, at + 1, 32)? else {
            return Ok(None);
        };
        let len = length(digits, false).ok_or(ProtocolError("invalid bulk length"))? as usize;
        if len > MAX_BULK {
            return Err(ProtocolError("invalid bulk length"));
        }
        let end = data + len;
        if end > max {
            return Err(ProtocolError("request too big"));
        }
        if buf.len() < end + 2 {
            return Ok(None);
        }
        if &buf[end..end + 2] != b"\r\n" {
            return Err(ProtocolError("expected CRLF after bulk string"));
        }
        args.push(data..end);
        at = end + 2;
    }
    Ok(Some(at))
}

fn parse_inline(
    buf: &[u8],
    args: &mut Vec<Range<usize>>,
    max: usize,
) -> Result<Option<usize>, ProtocolError> {
    let Some(nl) = line_end(buf, 0) else {
        if buf.len() > MAX_INLINE.min(max) {
            return Err(ProtocolError("too big inline request"));
        }
        return Ok(None);
    };
    let text_end = if nl > 0 && buf[nl - 1] == b'\r' {
        nl - 1
    } else {
        nl
    };
    let mut i = 0;
    while i < text_end {
        while i < text_end && buf[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while i < text_end && !buf[i].is_ascii_whitespace() {
            i += 1;
        }
        if i > start {
            if args.len() == MAX_ARGS {
                return Err(ProtocolError("too many arguments"));
            }
            args.push(start..i);
        }
    }
    Ok(Some(nl + 1))
}

/// Writes replies in the connection's protocol version.
#[derive(Debug, Default)]
pub struct Reply {
    /// The encoded replies, written to the socket in one go per batch of requests.
    pub buf: Vec<u8>,
    /// RESP3 (after `HELLO 3`): maps and nulls get their own types.
    pub resp3: bool,
}

impl Reply {
    fn line(&mut self, kind: u8, text: &[u8]) {
        self.buf.push(kind);
        self.buf.extend_from_slice(text);
        self.buf.extend_from_slice(b"\r\n");
    }

    fn count(&mut self, kind: u8, n: u64) {
        self.buf.push(kind);
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
        self.buf.extend_from_slice(b"\r\n");
    }

    /// `+OK`-style status.
    pub fn simple(&mut self, text: &str) {
        self.line(b'+', text.as_bytes());
    }

    /// `+OK`.
    pub fn ok(&mut self) {
        self.buf.extend_from_slice(b"+OK\r\n");
    }

    /// An error; `text` starts with its code (`ERR`, `WRONGPASS`, …) and has no line breaks.
    pub fn error(&mut self, text: &str) {
        self.buf.push(b'-');
        self.buf.extend(
            text.bytes()
                .map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
        );
        self.buf.extend_from_slice(b"\r\n");
    }

    /// An integer.
    pub fn int(&mut self, n: i64) {
        self.buf.push(b':');
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
        self.buf.extend_from_slice(b"\r\n");
    }

    /// A bulk string.
    pub fn bulk(&mut self, data: &[u8]) {
        self.count(b'$', data.len() as u64);
        self.buf.extend_from_slice(data);
        self.buf.extend_from_slice(b"\r\n");
    }

    /// The null reply (`$-1` in RESP2, `_` in RESP3).
    pub fn null(&mut self) {
        if self.resp3 {
            self.buf.extend_from_slice(b"_\r\n");
        } else {
            self.buf.extend_from_slice(b"$-1\r\n");
        }
    }

    /// The header of an array of `n` items.
    pub fn array(&mut self, n: usize) {
        self.count(b'*', n as u64);
    }

    /// The header of a map of `n` pairs (a flat array of 2n items in RESP2).
    pub fn map(&mut self, n: usize) {
        if self.resp3 {
            self.count(b'%', n as u64);
        } else {
            self.count(b'*', 2 * n as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Parsed = Option<(Vec<Vec<u8>>, usize)>;

    fn args_of(buf: &[u8]) -> Result<Parsed, ProtocolError> {
        let mut ranges = Vec::new();
        Ok(parse(buf, &mut ranges)?
            .map(|n| (ranges.iter().map(|r| buf[r.clone()].to_vec()).collect(), n)))
    }

    #[test]
    fn multibulk_and_inline_requests() {
        let buf = b"*2\r\n$4\r\nINCR\r\n$6\r\norders\r\n*1\r\n$4\r\nPING\r\n";
        let (args, n) = args_of(buf).unwrap().unwrap();
        assert_eq!(args, [b"INCR".to_vec(), b"orders".to_vec()]);
        let (args, m) = args_of(&buf[n..]).unwrap().unwrap();
        assert_eq!((args, n + m), (vec![b"PING".to_vec()], buf.len()));
        let (args, n) = args_of(b"incrby  t 5\r\nrest").unwrap().unwrap();
        assert_eq!(args, [b"incrby".to_vec(), b"t".to_vec(), b"5".to_vec()]);
        assert_eq!(n, 13);
        assert_eq!(args_of(b"\r\n").unwrap().unwrap(), (vec![], 2));
        assert_eq!(args_of(b"*0\r\n").unwrap().unwrap(), (vec![], 4));
        // Binary-safe bulk strings: a CRLF inside is data.
        let (args, _) = args_of(b"*1\r\n$4\r\na\r\nb\r\n").unwrap().unwrap();
        assert_eq!(args, [b"a\r\nb".to_vec()]);
    }

    #[test]
    fn every_prefix_of_a_request_is_incomplete() {
        let buf = b"*3\r\n$6\r\nINCRBY\r\n$1\r\nt\r\n$4\r\n1000\r\n";
        for cut in 0..buf.len() {
            assert_eq!(args_of(&buf[..cut]), Ok(None), "cut at {cut}");
        }
        assert!(args_of(buf).unwrap().is_some());
    }

    #[test]
    fn malformed_and_oversized_requests_are_errors() {
        for bad in [
            &b"*x\r\n"[..],
            b"*-2\r\n",
            b"*99999999\r\n",
            b"*1\r\n:4\r\n",
            b"*1\r\n$-1\r\n",
            b"*1\r\n$99999999999\r\n",
            b"*1\r\n$1000000\r\n",
            b"*1\r\n$+4\r\nPING\r\n",
            b"*1\r\n$4\r\nPINGxx",
            b"*1\n",
            b"*1\r\n$4\nPING\r\n",
            b"*1\r\n$99999999999999999999999\r\n",
        ] {
            assert!(args_of(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        // Lines that never end are refused once they pass the limit, not buffered forever.
        assert!(args_of(&vec![b'a'; MAX_INLINE + 1]).is_err());
        assert!(args_of(&[b"*1\r\n$".as_slice(), &[b'1'; 40]].concat()).is_err());
        // A smaller --max-request-bytes refuses a half-sent request once it would pass it.
        let mut ranges = Vec::new();
        let big = b"*2\r\n$4\r\nECHO\r\n$3000\r\nxx";
        assert_eq!(parse(big, &mut ranges), Ok(None));
        assert!(parse_limited(big, &mut ranges, 2048).is_err());
        assert!(parse_limited(&[b'a'; 2049], &mut ranges, 2048).is_err());
        assert_eq!(parse_limited(&[b'a'; 2000], &mut ranges, 2048), Ok(None));
    }

    #[test]
    fn replies_in_both_protocols() {
        let mut r = Reply::default();
        r.int(-42);
        r.bulk(b"ab");
        r.null();
        r.map(1);
        r.error("ERR bad\r\nthing");
        assert_eq!(
            r.buf,
            b":-42\r\n$2\r\nab\r\n$-1\r\n*2\r\n-ERR bad  thing\r\n"
        );
        let mut r = Reply {
            resp3: true,
            ..Reply::default()
        };
        r.null();
        r.map(2);
        r.int(i64::MIN);
        assert_eq!(r.buf, b"_\r\n%2\r\n:-9223372036854775808\r\n");
    }
}
