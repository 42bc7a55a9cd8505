//! A client connection's byte stream: plain TCP, or TLS over it.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

/// A client's stream.
#[derive(Debug)]
pub enum Stream {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS, after its handshake (boxed: rustls's state is large).
    Tls(Box<TlsStream<TcpStream>>),
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
            Stream::Tls(s) => s.get_ref().0,
        }
    }

    /// Waits for bytes and appends what has arrived to `buf`, growing it to `chunk` free bytes
    /// only once bytes are there, so an idle connection holds no buffer; 0 at the end of the
    /// stream. Cancel-safe: nothing is read when the future is dropped.
    pub async fn read_some(&mut self, buf: &mut Vec<u8>, chunk: usize) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => loop {
                let s: &TcpStream = s;
                s.readable().await?;
                reserve(buf, chunk);
                let room = buf.capacity() - buf.len();
                let mut got = 0;
                let read = s.try_io(Interest::READABLE, || {
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
            Stream::Tls(s) => {
                if buf.capacity() == buf.len() {
                    // No room: wait for the socket unless rustls already holds a record (it
                    // may have come with the handshake) or cannot make sense of what it has.
                    let (tcp, conn) = s.get_mut();
                    let ready = conn.process_new_packets().map_or(true, |io| {
                        io.plaintext_bytes_to_read() > 0 || io.peer_has_closed()
                    });
                    if !ready {
                        tcp.readable().await?;
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
