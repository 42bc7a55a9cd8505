//! A client connection's byte stream: plain TCP, or TLS over it.
//!
//! Under TLS the connection sees requests only once whole records have been decrypted, so a
//! client that sends part of a record and stops would hold rustls's buffer (up to a 16 KiB record
//! and more) with no half-sent request in sight of the connection's timeouts. [`Records`] sits
//! under rustls, follows the record framing of the bytes it reads and fails the read once a record
//! has been incomplete for `request-timeout-ms`.

use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};
use tokio_rustls::server::TlsStream;

/// A client's stream.
#[derive(Debug)]
pub enum Stream {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS, after its handshake (boxed: rustls's state is large).
    Tls(Box<TlsStream<Records>>),
}

/// The length of a TLS record header: type, version (2), length (2).
const RECORD_HEADER: usize = 5;

/// Where a stream of TLS records stands: the framing is a 5-byte header (type, version, length)
/// and that many bytes of body, whatever the protocol version or the session's keys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Framing {
    /// The current record's header bytes seen so far (a header may arrive in pieces).
    header: [u8; RECORD_HEADER],
    header_len: usize,
    /// Bytes of the current record's body still to come.
    body_left: usize,
}

impl Framing {
    /// Follows the framing over `bytes`; returns whether a record began in them.
    fn feed(&mut self, mut bytes: &[u8]) -> bool {
        let mut began = false;
        while !bytes.is_empty() {
            if self.body_left > 0 {
                let n = self.body_left.min(bytes.len());
                self.body_left -= n;
                bytes = &bytes[n..];
                continue;
            }
            if self.header_len == 0 {
                began = true;
            }
            let n = (RECORD_HEADER - self.header_len).min(bytes.len());
            self.header[self.header_len..self.header_len + n].copy_from_slice(&bytes[..n]);
            self.header_len += n;
            bytes = &bytes[n..];
            if self.header_len == RECORD_HEADER {
                self.header_len = 0;
                self.body_left = usize::from(u16::from_be_bytes([self.header[3], self.header[4]]));
            }
        }
        began
    }

    /// Whether the bytes so far end exactly where a record ends.
    fn between_records(&self) -> bool {
        self.header_len == 0 && self.body_left == 0
    }

    /// The bytes of the incomplete record seen so far (0 between records): what rustls holds
    /// until the record is whole.
    fn partial(&self) -> usize {
        if self.body_left > 0 {
            let len = usize::from(u16::from_be_bytes([self.header[3], self.header[4]]));
            RECORD_HEADER + len - self.body_left
        } else {
            self.header_len
        }
    }
}

/// The bytes that incomplete TLS records hold, over every connection
/// (`--tls-max-incomplete-bytes`): a client that sends most of a large record and stops holds
/// that much of rustls's buffer until `request-timeout-ms`; a read that would pass the budget
/// fails, closing its connection, so connections parked mid-record cannot add up past it.
#[derive(Debug)]
pub struct RecordBudget {
    max: usize,
    used: std::sync::atomic::AtomicUsize,
}

impl RecordBudget {
    /// A budget of `max` bytes.
    pub fn new(max: usize) -> RecordBudget {
        RecordBudget {
            max,
            used: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Moves a connection's count from `from` to `to` bytes; `false` (nothing moved) when a
    /// rise would pass the budget.
    fn hold(&self, from: usize, to: usize) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        if to <= from {
            self.used.fetch_sub(from - to, Relaxed);
            return true;
        }
        self.used
            .fetch_update(Relaxed, Relaxed, |used| {
                used.checked_add(to - from).filter(|&u| u <= self.max)
            })
            .is_ok()
    }

    /// Bytes held now.
    pub fn used(&self) -> usize {
        self.used.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// The TCP stream under a TLS session: passes bytes through, follows where each TLS record
/// ends, and fails a read (`TimedOut`) once a record has been incomplete for `limit`, so a
/// client cannot park part of a record (and the buffer holding it) forever.
#[derive(Debug)]
pub struct Records {
    tcp: TcpStream,
    limit: Duration,
    framing: Framing,
    /// The budget of every connection's incomplete records, and this one's part of it.
    budget: std::sync::Arc<RecordBudget>,
    held: usize,
    /// When the incomplete record now arriving began (`None`: between records).
    since: Option<Instant>,
    /// Armed only while a record is incomplete and the socket has nothing more.
    timer: Option<Pin<Box<Sleep>>>,
}

impl Records {
    /// Wraps an accepted socket; a record must be complete within `limit` of its first byte,
    /// and the incomplete records of every connection fit `budget`.
    pub fn new(tcp: TcpStream, limit: Duration, budget: std::sync::Arc<RecordBudget>) -> Records {
        Records {
            tcp,
            limit,
            framing: Framing::default(),
            budget,
            held: 0,
            since: None,
            timer: None,
        }
    }

    /// The socket.
    pub fn tcp(&self) -> &TcpStream {
        &self.tcp
    }

    /// When the record now incomplete must be complete (`None`: no record is incomplete).
    pub fn deadline(&self) -> Option<Instant> {
        self.since.map(|t| t + self.limit)
    }

    /// Follows the framing over bytes just read; fails when the incomplete record they leave
    /// would pass the budget.
    fn track(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let began = self.framing.feed(bytes);
        let partial = self.framing.partial();
        if !self.budget.hold(self.held, partial) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                "incomplete TLS records hold tls-max-incomplete-bytes",
            ));
        }
        self.held = partial;
        if self.framing.between_records() {
            self.since = None;
        } else if began || self.since.is_none() {
            // The incomplete record began in this read.
            self.since = Some(Instant::now());
        }
        Ok(())
    }

    fn timed_out() -> std::io::Error {
        std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "a TLS record was not complete within request-timeout-ms",
        )
    }
}

impl Drop for Records {
    fn drop(&mut self) {
        self.budget.hold(self.held, 0);
    }
}

impl AsyncRead for Records {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.tcp).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let filled = buf.filled();
                if filled.len() > before {
                    this.track(&filled[before..])?;
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                let Some(deadline) = this.deadline() else {
                    return Poll::Pending;
                };
                let timer = this
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                if timer.deadline() != deadline {
                    timer.as_mut().reset(deadline);
                }
                match timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(Records::timed_out())),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

impl AsyncWrite for Records {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(cx)
    }
}

impl Stream {
    /// The client's address.
    pub fn peer_addr(&self) -> std::io::Result<SocketAddr> {
        self.tcp().peer_addr()
    }

    /// The TCP socket under it.
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => s.get_ref().0.tcp(),
        }
    }

    /// Waits for bytes and appends what has arrived to `buf`, growing it to `chunk` free bytes
    /// only once bytes are there, so an idle connection holds no buffer; 0 at the end of the
    /// stream. Cancel-safe: nothing is read when the future is dropped.
    pub async fn read_some(&mut self, buf: &mut Vec<u8>, chunk: usize) -> std::io::Result<usize> {
        match self {
            #[cfg(unix)]
            Stream::Plain(s) => loop {
                let s: &TcpStream = s;
                s.readable().await?;
                reserve(buf, chunk);
                let room = buf.capacity() - buf.len();
                let mut got = 0;
                let read = s.try_io(tokio::io::Interest::READABLE, || {
                    let spare = rustix::buffer::spare_capacity(buf);
                    let (n, _) = rustix::net::recv(s, spare, rustix::net::RecvFlags::empty())?;
                    got = n;
                    // A read that left room found the socket empty: say "would block", so
                    // tokio clears the readiness (unless a newer event came meanwhile) and the
                    // next read waits for the next event instead of making a system call that
                    // returns EAGAIN, one per request with a client waiting for each answer
                    // (tokio's own `poll_read` does the same; `try_read` does not).
                    if 0 < n && n < room {
                        Err(std::io::ErrorKind::WouldBlock.into())
                    } else {
                        Ok(n)
                    }
                });
                match read {
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && got > 0 => {
                        return Ok(got);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                    r => return r,
                }
            },
            // Elsewhere (Windows) through tokio's `try_read` into zeroed spare room: no way to
            // read into uninitialised bytes without `unsafe`, and no readiness trick.
            #[cfg(not(unix))]
            Stream::Plain(s) => loop {
                s.readable().await?;
                reserve(buf, chunk);
                let start = buf.len();
                buf.resize(buf.capacity(), 0);
                let read = s.try_read(&mut buf[start..]);
                buf.truncate(start + read.as_ref().map_or(0, |n| *n));
                match read {
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                    r => return r,
                }
            },
            Stream::Tls(s) => {
                if buf.capacity() == buf.len() {
                    // No room: wait for the socket unless rustls already holds a record (it
                    // may have come with the handshake) or cannot make sense of what it has.
                    let (records, conn) = s.get_mut();
                    let ready = conn.process_new_packets().map_or(true, |io| {
                        io.plaintext_bytes_to_read() > 0 || io.peer_has_closed()
                    });
                    if !ready {
                        // Part of a record may already be in: its deadline holds here too.
                        match records.deadline() {
                            None => records.tcp.readable().await?,
                            Some(deadline) => {
                                tokio::time::timeout_at(deadline, records.tcp.readable())
                                    .await
                                    .map_err(|_| Records::timed_out())??;
                            }
                        }
                    }
                }
                reserve(buf, chunk);
                s.read_buf(buf).await
            }
        }
    }

    /// Writes all of `bytes` (and, with TLS, the records they make).
    pub async fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.write_all(bytes).await,
            Stream::Tls(s) => {
                s.write_all(bytes).await?;
                s.flush().await
            }
        }
    }

    /// Closes the sending side (with TLS, after a close_notify).
    pub async fn shutdown(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.shutdown().await,
            Stream::Tls(s) => s.shutdown().await,
        }
    }
}

fn reserve(buf: &mut Vec<u8>, chunk: usize) {
    if buf.capacity() - buf.len() < chunk / 4 {
        buf.reserve(chunk);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_follows_records_split_anywhere() {
        // Two records: 3 bytes of body, then 300 (0x012c).
        let mut stream = vec![23, 3, 3, 0, 3, 1, 2, 3, 23, 3, 3, 1, 44];
        stream.extend(std::iter::repeat_n(7u8, 300));
        // Whole: ends between records; a record began in it.
        let mut f = Framing::default();
        assert!(f.feed(&stream));
        assert!(f.between_records());
        // Byte by byte: between records exactly after byte 8 and at the end.
        let mut f = Framing::default();
        for (i, b) in stream.iter().enumerate() {
            let began = f.feed(std::slice::from_ref(b));
            assert_eq!(began, i == 0 || i == 8, "byte {i}");
            assert_eq!(
                f.between_records(),
                i == 7 || i == stream.len() - 1,
                "byte {i}"
            );
        }
        // A cut inside the second header, then inside its body.
        let mut f = Framing::default();
        assert!(f.feed(&stream[..10]));
        assert!(!f.between_records());
        assert!(!f.feed(&stream[10..100]), "the same record goes on");
        assert!(!f.between_records());
        assert!(!f.feed(&stream[100..]));
        assert!(f.between_records());
        // An empty record (length 0) is whole once its header is.
        let mut f = Framing::default();
        assert!(f.feed(&[21, 3, 3, 0, 0]));
        assert!(f.between_records());
    }

    #[test]
    fn the_partial_record_is_what_has_arrived_of_it() {
        let mut stream = vec![23, 3, 3, 0, 3, 1, 2, 3, 23, 3, 3, 1, 44];
        stream.extend(std::iter::repeat_n(7u8, 300));
        let mut f = Framing::default();
        let partials: Vec<usize> = stream
            .iter()
            .map(|b| {
                f.feed(std::slice::from_ref(b));
                f.partial()
            })
            .collect();
        // The first record: 1..=7 bytes, then whole (0); the second: header and body.
        assert_eq!(&partials[..9], &[1, 2, 3, 4, 5, 6, 7, 0, 1]);
        assert_eq!(partials[12], 5);
        assert_eq!(partials[13], 6);
        assert_eq!(partials[stream.len() - 2], 304);
        assert_eq!(partials[stream.len() - 1], 0);
    }

    #[test]
    fn the_record_budget_refuses_a_rise_past_it_and_takes_back_falls() {
        let budget = RecordBudget::new(100);
        assert!(budget.hold(0, 60));
        assert!(!budget.hold(0, 50), "60 + 50 > 100");
        assert_eq!(budget.used(), 60);
        assert!(budget.hold(60, 90));
        assert!(budget.hold(0, 10));
        assert!(!budget.hold(10, 11));
        assert!(budget.hold(90, 0), "a whole record gives its bytes back");
        assert_eq!(budget.used(), 10);
    }
}
