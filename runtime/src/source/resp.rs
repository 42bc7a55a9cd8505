//! A small blocking RESP2 client: one request, one reply, with timeouts.
//!
//! Written by hand rather than with the `redis` crate: the sources need four commands on a
//! blocking socket they own (so a forked child can drop it), and every binding would otherwise
//! compile a full async-capable client.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use crate::error::{Error, ErrorCode, Result};

/// Longest bulk reply accepted (the sources only read short ones).
const MAX_BULK: usize = 1 << 20;

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

/// One connection.
#[derive(Debug)]
pub(crate) struct Conn {
    reader: BufReader<TcpStream>,
    /// Where it is connected (`host:port`), for messages.
    pub(crate) addr: String,
}

/// An I/O failure as a source error: timeouts are `TIMEOUT`, the rest `SOURCE_UNAVAILABLE`.
pub(crate) fn io_error(addr: &str, what: &str, e: &std::io::Error) -> Error {
    let code = match e.kind() {
        ErrorKind::TimedOut | ErrorKind::WouldBlock => ErrorCode::Timeout,
        _ => ErrorCode::SourceUnavailable,
    };
    Error::Source {
        code,
        message: format!("{addr}: {what}: {e}"),
    }
}

fn protocol(addr: &str, what: &str) -> Error {
    Error::Source {
        code: ErrorCode::SourceUnavailable,
        message: format!("{addr}: protocol error: {what}"),
    }
}

impl Conn {
    /// Connects to `host:port`, trying each address it resolves to, within `timeout` each.
    pub(crate) fn connect(host: &str, port: u16, timeout: Duration) -> Result<Conn> {
        let addr = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let addrs = (host, port)
            .to_socket_addrs()
            .map_err(|e| io_error(&addr, "resolve", &e))?;
        let mut last = None;
        for sa in addrs {
            match TcpStream::connect_timeout(&sa, timeout) {
                Ok(stream) => {
                    let setup = stream
                        .set_read_timeout(Some(timeout))
                        .and_then(|()| stream.set_write_timeout(Some(timeout)))
                        .and_then(|()| stream.set_nodelay(true));
                    setup.map_err(|e| io_error(&addr, "connect", &e))?;
                    return Ok(Conn {
                        reader: BufReader::new(stream),
                        addr,
                    });
                }
                Err(e) => last = Some(e),
            }
        }
        let e = last.unwrap_or_else(|| std::io::Error::other("no address"));
        Err(io_error(&addr, "connect", &e))
    }

    /// Sends one command and reads its reply (an error reply is `Ok(Reply::Error)`).
    pub(crate) fn call(&mut self, args: &[&[u8]]) -> Result<Reply> {
        let mut req = Vec::with_capacity(64);
        req.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
        for a in args {
            req.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            req.extend_from_slice(a);
            req.extend_from_slice(b"\r\n");
        }
        self.reader
            .get_mut()
            .write_all(&req)
            .map_err(|e| io_error(&self.addr, "send", &e))?;
        self.read()
    }

    fn line(&mut self) -> Result<String> {
        let mut line = Vec::new();
        let n = (&mut self.reader)
            .take(64 * 1024)
            .read_until(b'\n', &mut line)
            .map_err(|e| io_error(&self.addr, "read", &e))?;
        if n == 0 {
            return Err(protocol(&self.addr, "connection closed"));
        }
        if !line.ends_with(b"\r\n") {
            return Err(protocol(&self.addr, "a reply line without CRLF"));
        }
        line.truncate(line.len() - 2);
        String::from_utf8(line).map_err(|_| protocol(&self.addr, "a reply line is not UTF-8"))
    }

    fn read(&mut self) -> Result<Reply> {
        let line = self.line()?;
        let (kind, rest) = line.split_at(line.len().min(1));
        let int = |addr: &str| {
            rest.parse::<i64>()
                .map_err(|_| protocol(addr, "a bad integer"))
        };
        Ok(match kind {
            "+" => Reply::Simple(rest.to_owned()),
            "-" => Reply::Error(rest.to_owned()),
            ":" => Reply::Int(int(&self.addr)?),
            "_" => Reply::Nil,
            "$" | "*" => {
                let n = int(&self.addr)?;
                if n < 0 {
                    return Ok(Reply::Nil);
                }
                let n = n as usize;
                if n > MAX_BULK {
                    return Err(protocol(&self.addr, "a reply is too long"));
                }
                if kind == "*" {
                    let mut items = Vec::with_capacity(n.min(64));
                    for _ in 0..n {
                        items.push(self.read()?);
                    }
                    Reply::Array(items)
                } else {
                    let mut data = vec![0; n + 2];
                    self.reader
                        .read_exact(&mut data)
                        .map_err(|e| io_error(&self.addr, "read", &e))?;
                    data.truncate(n);
                    Reply::Bulk(data)
                }
            }
            _ => return Err(protocol(&self.addr, "an unknown reply type")),
        })
    }
}
