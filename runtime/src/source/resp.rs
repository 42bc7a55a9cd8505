//! A small blocking RESP2 client: one request, one reply, within one deadline.
//!
//! Written by hand rather than with the `redis` crate: the sources need four commands on a
//! blocking socket they own (so a forked child can drop it), and every binding would otherwise
//! compile a full async-capable client.
//!
//! The server is not trusted: a reply is read without recursion and within [`MAX_DEPTH`]
//! nested arrays; the replies to one request (all of a pipeline's together) get
//! [`MAX_ELEMENTS`] array elements and [`MAX_REPLY_BYTES`] bytes; past a bound it is a protocol
//! error (`SOURCE_UNAVAILABLE`). Every socket read and write gets the time
//! left before the request's deadline, so a server trickling bytes cannot stretch a request.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use rustls::{ClientConnection, StreamOwned};

use super::tls::TlsParams;

use crate::error::{Error, ErrorCode, Result};

/// Most arrays nested in one reply (the sources read at most one level).
pub(crate) const MAX_DEPTH: usize = 8;
/// Most array elements in the replies to one request, all levels together.
pub(crate) const MAX_ELEMENTS: usize = 1024;
/// Most bytes in the replies to one request (a pipeline's together, so 256 replies cannot hold
/// 256 times as much), framing included: the sources only read short ones.
pub(crate) const MAX_REPLY_BYTES: usize = 1 << 20;
/// Longest line (a simple string, an error, a header).
const MAX_LINE: usize = 64 * 1024;

/// A reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// `+OK`
    Simple(String),
    /// `-ERR …`, as sent.
    Error(String),
    /// `:42`
    Int(i64),
    /// `$n` data.
    Bulk(Vec<u8>),
    /// A null bulk or array.
    Nil,
    /// `*n` replies.
    Array(Vec<Reply>),
}

/// When a request must be over: its start plus the source's `timeout_ms`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    at: Instant,
    timeout: Duration,
}

impl Deadline {
    /// `timeout` from now.
    pub(crate) fn after(timeout: Duration) -> Deadline {
        Deadline {
            at: Instant::now() + timeout,
            timeout,
        }
    }

    /// The time left, or a `TimedOut` error once it has passed.
    fn left(&self) -> std::io::Result<Duration> {
        let left = self.at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(self.passed());
        }
        Ok(left)
    }

    fn passed(&self) -> std::io::Error {
        std::io::Error::new(
            ErrorKind::TimedOut,
            format!(
                "the request took longer than timeout_ms ({} ms)",
                self.timeout.as_millis()
            ),
        )
    }

    /// `e`, or the deadline's own error when `e` is a socket timeout.
    fn explain(&self, e: std::io::Error) -> std::io::Error {
        match e.kind() {
            ErrorKind::TimedOut | ErrorKind::WouldBlock => self.passed(),
            _ => e,
        }
    }
}

/// The socket, each read and write bounded by the time left of the current request's deadline
/// (set again before every system call, so a peer trickling bytes cannot stretch a request).
#[derive(Debug)]
struct TimedTcp {
    tcp: TcpStream,
    deadline: Deadline,
}

impl Read for TimedTcp {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.tcp.set_read_timeout(Some(self.deadline.left()?))?;
        self.tcp.read(buf).map_err(|e| self.deadline.explain(e))
    }
}

impl Write for TimedTcp {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tcp.set_write_timeout(Some(self.deadline.left()?))?;
        self.tcp.write(buf).map_err(|e| self.deadline.explain(e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.tcp.flush()
    }
}

/// A connection's bytes: plain TCP, or TLS over it (rustls under the same bounded socket, so
/// its handshake and record reads are bounded too).
#[derive(Debug)]
enum Timed {
    Plain(TimedTcp),
    Tls(Box<StreamOwned<ClientConnection, TimedTcp>>),
}

impl Timed {
    fn set_deadline(&mut self, deadline: Deadline) {
        match self {
            Timed::Plain(t) => t.deadline = deadline,
            Timed::Tls(s) => s.sock.deadline = deadline,
        }
    }
}

impl Read for Timed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Timed::Plain(t) => t.read(buf),
            Timed::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Timed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Timed::Plain(t) => t.write(buf),
            Timed::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Timed::Plain(t) => t.flush(),
            // Sends the records a write left in rustls's buffer.
            Timed::Tls(s) => s.flush(),
        }
    }
}

/// One connection.
#[derive(Debug)]
pub(crate) struct Conn {
    reader: BufReader<Timed>,
    /// Where it is connected (`host:port`), for messages.
    pub(crate) addr: String,
}

/// An I/O failure as a source error: timeouts are `TIMEOUT`, the rest `SOURCE_UNAVAILABLE`,
/// all transient. A TLS failure (a certificate not trusted, a client certificate refused) is
/// transient too: it may be one server's (the next host, or the next server of `mode=any`, is
/// tried) or a certificate being rotated; a caller waiting for ids fails with it at its timeout.
pub(crate) fn io_error(addr: &str, what: &str, e: &std::io::Error) -> Error {
    if e.get_ref().is_some_and(|inner| inner.is::<rustls::Error>()) {
        return Error::transient(
            ErrorCode::SourceUnavailable,
            format!("{addr}: {what}: TLS: {e}"),
        );
    }
    let code = match e.kind() {
        ErrorKind::TimedOut | ErrorKind::WouldBlock => ErrorCode::Timeout,
        _ => ErrorCode::SourceUnavailable,
    };
    // The network, a server restarting: may pass.
    Error::transient(code, format!("{addr}: {what}: {e}"))
}

/// A reply that breaks the protocol: the peer is not a server we can talk to.
fn protocol(addr: &str, what: &str) -> Error {
    Error::permanent(
        ErrorCode::SourceUnavailable,
        format!("{addr}: protocol error: {what}"),
    )
}

/// The TLS handshake with `host` on `tcp`, before its deadline. The files are read again for
/// each connection; one that cannot be read now (a rotation half done) is a transient failure.
fn handshake(
    tls: &TlsParams,
    host: &str,
    tcp: TimedTcp,
    addr: &str,
) -> Result<StreamOwned<ClientConnection, TimedTcp>> {
    let again = |e: Error| Error::transient(ErrorCode::SourceUnavailable, format!("{addr}: {e}"));
    let conn = ClientConnection::new(tls.config().map_err(again)?, tls.server_name(host)?)
        .map_err(|e| Error::permanent(ErrorCode::SourceUnavailable, format!("{addr}: TLS: {e}")))?;
    let mut stream = StreamOwned::new(conn, tcp);
    while stream.conn.is_handshaking() {
        if let Err(e) = stream.conn.complete_io(&mut stream.sock) {
            return Err(io_error(addr, "TLS handshake", &e));
        }
    }
    Ok(stream)
}

/// One element of a reply as read: a value, or the header of a non-empty array.
enum Item {
    Value(Reply),
    Array(usize),
}

/// What a reply may still use of its bounds.
struct Budget {
    bytes: usize,
    elements: usize,
}

impl Conn {
    /// Connects to `host:port`, trying each address it resolves to, before `deadline`.
    ///
    /// `others` more hosts wait to be tried after this one: each address gets an equal share
    /// of the time left, so a host that drops connection attempts cannot use up the whole
    /// deadline and keep the client from ever failing over.
    ///
    /// With `tls`, the TLS handshake is done before it returns, within the same deadline.
    pub(crate) fn connect(
        host: &str,
        port: u16,
        deadline: Deadline,
        others: usize,
        tls: Option<&TlsParams>,
    ) -> Result<Conn> {
        let addr = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let addrs: Vec<_> = (host, port)
            .to_socket_addrs()
            .map_err(|e| io_error(&addr, "resolve", &e))?
            .collect();
        let mut last = None;
        for (i, sa) in addrs.iter().enumerate() {
            let left = deadline
                .left()
                .map_err(|e| io_error(&addr, "connect", &e))?;
            let tries_left = (addrs.len() - i + others) as u32;
            let share = (left / tries_left).max(Duration::from_millis(1)).min(left);
            match TcpStream::connect_timeout(sa, share) {
                Ok(tcp) => {
                    tcp.set_nodelay(true)
                        .map_err(|e| io_error(&addr, "connect", &e))?;
                    let tcp = TimedTcp { tcp, deadline };
                    let wire = match tls {
                        None => Timed::Plain(tcp),
                        Some(tls) => Timed::Tls(Box::new(handshake(tls, host, tcp, &addr)?)),
                    };
                    return Ok(Conn {
                        reader: BufReader::new(wire),
                        addr,
                    });
                }
                // Only its share may be over: then the connect's own error says so.
                Err(e) if deadline.left().is_ok() => last = Some(e),
                Err(e) => last = Some(deadline.explain(e)),
            }
        }
        let e = last.unwrap_or_else(|| std::io::Error::other("no address"));
        Err(io_error(&addr, "connect", &e))
    }

    /// Sends one command and reads its reply before `deadline` (an error reply is
    /// `Ok(Reply::Error)`).
    pub(crate) fn call(&mut self, args: &[&[u8]], deadline: Deadline) -> Result<Reply> {
        let mut replies = self.pipeline(&[args], deadline)?;
        Ok(replies.pop().unwrap_or(Reply::Nil))
    }

    /// Sends `commands` in one write and reads their replies, in order, before `deadline`:
    /// one round trip for all of them (an error reply is `Ok(Reply::Error)`).
    pub(crate) fn pipeline(
        &mut self,
        commands: &[&[&[u8]]],
        deadline: Deadline,
    ) -> Result<Vec<Reply>> {
        self.reader.get_mut().set_deadline(deadline);
        let mut req = Vec::with_capacity(64 * commands.len());
        for args in commands {
            req.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
            for a in *args {
                req.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
                req.extend_from_slice(a);
                req.extend_from_slice(b"\r\n");
            }
        }
        let wire = self.reader.get_mut();
        wire.write_all(&req)
            .and_then(|()| wire.flush())
            .map_err(|e| io_error(&self.addr, "send", &e))?;
        let mut budget = Budget {
            bytes: MAX_REPLY_BYTES,
            elements: MAX_ELEMENTS,
        };
        commands.iter().map(|_| self.read(&mut budget)).collect()
    }

    fn line(&mut self, budget: &mut Budget) -> Result<String> {
        if budget.bytes == 0 {
            return Err(protocol(&self.addr, "a reply past the size bound"));
        }
        let mut line = Vec::new();
        let limit = MAX_LINE.min(budget.bytes) as u64;
        let n = (&mut self.reader)
            .take(limit)
            .read_until(b'\n', &mut line)
            .map_err(|e| io_error(&self.addr, "read", &e))?;
        if n == 0 {
            // The server went away (a restart, a failover): may pass.
            return Err(Error::transient(
                ErrorCode::SourceUnavailable,
                format!("{}: connection closed", self.addr),
            ));
        }
        budget.bytes -= n;
        if !line.ends_with(b"\n") && (n as u64) < limit {
            // The stream ended inside a line: the server went away mid-reply.
            return Err(Error::transient(
                ErrorCode::SourceUnavailable,
                format!("{}: connection closed inside a reply", self.addr),
            ));
        }
        if !line.ends_with(b"\r\n") {
            return Err(protocol(
                &self.addr,
                "a reply line without CRLF (or longer than the bounds)",
            ));
        }
        line.truncate(line.len() - 2);
        String::from_utf8(line).map_err(|_| protocol(&self.addr, "a reply line is not UTF-8"))
    }

    /// One reply within what is left of `budget`, without recursion: arrays under
    /// construction wait on a stack.
    fn read(&mut self, budget: &mut Budget) -> Result<Reply> {
        // Each open array: its elements so far and how many it has.
        let mut open: Vec<(Vec<Reply>, usize)> = Vec::new();
        loop {
            let mut reply = match self.item(budget)? {
                Item::Value(reply) => reply,
                Item::Array(n) => {
                    if open.len() >= MAX_DEPTH {
                        return Err(protocol(
                            &self.addr,
                            &format!("a reply nests more than {MAX_DEPTH} arrays"),
                        ));
                    }
                    open.push((Vec::with_capacity(n.min(64)), n));
                    continue;
                }
            };
            // Close every array this value completes.
            loop {
                let Some((items, len)) = open.last_mut() else {
                    return Ok(reply);
                };
                items.push(reply);
                if items.len() < *len {
                    break;
                }
                reply = Reply::Array(std::mem::take(items));
                open.pop();
            }
        }
    }

    fn item(&mut self, budget: &mut Budget) -> Result<Item> {
        let line = self.line(budget)?;
        let (kind, rest) = line.split_at(line.len().min(1));
        let int = |addr: &str| {
            rest.parse::<i64>()
                .map_err(|_| protocol(addr, "a bad integer"))
        };
        Ok(Item::Value(match kind {
            "+" => Reply::Simple(rest.to_owned()),
            "-" => Reply::Error(rest.to_owned()),
            ":" => Reply::Int(int(&self.addr)?),
            "_" => Reply::Nil,
            "$" | "*" => {
                let n = int(&self.addr)?;
                if n < 0 {
                    return Ok(Item::Value(Reply::Nil));
                }
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                if kind == "*" {
                    if n > budget.elements {
                        return Err(protocol(
                            &self.addr,
                            &format!("replies have more than {MAX_ELEMENTS} elements"),
                        ));
                    }
                    budget.elements -= n;
                    if n == 0 {
                        return Ok(Item::Value(Reply::Array(Vec::new())));
                    }
                    return Ok(Item::Array(n));
                }
                if n.saturating_add(2) > budget.bytes {
                    return Err(protocol(
                        &self.addr,
                        &format!("replies are longer than {MAX_REPLY_BYTES} bytes"),
                    ));
                }
                budget.bytes -= n + 2;
                let mut data = vec![0; n + 2];
                self.reader
                    .read_exact(&mut data)
                    .map_err(|e| io_error(&self.addr, "read", &e))?;
                if !data.ends_with(b"\r\n") {
                    return Err(protocol(&self.addr, "a bulk reply without CRLF"));
                }
                data.truncate(n);
                Reply::Bulk(data)
            }
            _ => return Err(protocol(&self.addr, "an unknown reply type")),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A connection to a one-shot server that answers any request with `reply`.
    fn ask(reply: Vec<u8>) -> Result<Reply> {
        ask_all(1, reply).map(|mut replies| replies.pop().unwrap())
    }

    /// A pipeline of `n` PINGs to a one-shot server that answers with `reply`.
    fn ask_all(n: usize, reply: Vec<u8>) -> Result<Vec<Reply>> {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = [0u8; 256];
            let _ = s.read(&mut buf);
            let _ = s.write_all(&reply);
            // Keep the socket open until the client is done, so EOF is not the error.
            let _ = s.read(&mut buf);
        });
        let deadline = Deadline::after(Duration::from_secs(10));
        let mut conn = Conn::connect("127.0.0.1", port, deadline, 0, None)?;
        let ping: &[&[u8]] = &[b"PING"];
        let result = conn.pipeline(&vec![ping; n], deadline);
        drop(conn);
        server.join().unwrap();
        result
    }

    #[test]
    fn reads_nested_replies() {
        let r = ask(b"*2\r\n:1\r\n*3\r\n$2\r\nab\r\n+OK\r\n*0\r\n".to_vec()).unwrap();
        assert_eq!(
            r,
            Reply::Array(vec![
                Reply::Int(1),
                Reply::Array(vec![
                    Reply::Bulk(b"ab".to_vec()),
                    Reply::Simple("OK".into()),
                    Reply::Array(vec![])
                ])
            ])
        );
        assert_eq!(ask(b"$-1\r\n".to_vec()).unwrap(), Reply::Nil);
        let deep = [b"*1\r\n".repeat(MAX_DEPTH), b":7\r\n".to_vec()].concat();
        assert!(matches!(ask(deep).unwrap(), Reply::Array(_)));
    }

    #[test]
    fn refuses_replies_past_the_bounds() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (
                [b"*1\r\n".repeat(10_000), b":1\r\n".to_vec()].concat(),
                "nests more than",
            ),
            (b"*1000000000\r\n".to_vec(), "more than 1024 elements"),
            (b"*1000\r\n*1000\r\n".to_vec(), "more than 1024 elements"),
            (b"$999999999999\r\n".to_vec(), "longer than"),
            (vec![b'+'; MAX_LINE + 10], "without CRLF"),
            (b"$3\r\nabcde".to_vec(), "without CRLF"),
            (b"%1\r\n".to_vec(), "unknown reply type"),
        ];
        for (reply, why) in cases {
            let e = ask(reply).unwrap_err();
            assert_eq!(e.code(), ErrorCode::SourceUnavailable, "{e}");
            assert!(e.to_string().contains("protocol error"), "{e}");
            assert!(e.to_string().contains(why), "{e} / {why}");
        }
    }

    #[test]
    fn bounds_a_pipelines_replies_together() {
        // Each reply is within the bound; four of them are not.
        let bulk = |len: usize| {
            [
                format!("${len}\r\n").into_bytes(),
                vec![b'x'; len],
                b"\r\n".to_vec(),
            ]
            .concat()
        };
        let e = ask_all(4, bulk(400 * 1024).repeat(4)).unwrap_err();
        assert!(e.to_string().contains("longer than"), "{e}");
        let replies = ask_all(4, bulk(200 * 1024).repeat(4)).unwrap();
        assert_eq!(replies.len(), 4);
        assert!(
            replies
                .iter()
                .all(|r| matches!(r, Reply::Bulk(b) if b.len() == 200 * 1024))
        );
        let array = |n: usize| [format!("*{n}\r\n").into_bytes(), b":1\r\n".repeat(n)].concat();
        let e = ask_all(4, array(300).repeat(4)).unwrap_err();
        assert!(e.to_string().contains("more than 1024 elements"), "{e}");
        assert_eq!(ask_all(4, array(250).repeat(4)).unwrap().len(), 4);
    }
}
