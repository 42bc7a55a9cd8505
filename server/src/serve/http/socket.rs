//! The stream under one HTTP connection: a write timeout (`--write-timeout-ms`, as on the
//! client port), and a reset instead of a FIN when the connection is closed for a timeout.
//!
//! A client that asks for a large answer and never reads it leaves the answer in the kernel's
//! send buffer. Closed normally, the socket becomes an orphan that keeps those bytes for
//! minutes (the kernel retries sending them); closed with `SO_LINGER` 0 (nginx's
//! `reset_timedout_connection`) the kernel drops them at once. Only timeouts reset: a client
//! that closes, or an answer that ends the connection (`431`, `Connection: close`), still ends
//! with a FIN, so the client reads every byte it was sent.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Sleep;

use crate::serve::net::stream::Records;

/// A stream over one TCP socket.
pub(crate) trait OnTcp: AsyncRead + AsyncWrite + Unpin {
    /// The socket.
    fn tcp(&self) -> &TcpStream;
}

impl OnTcp for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }
}

impl OnTcp for tokio_rustls::server::TlsStream<Records> {
    fn tcp(&self) -> &TcpStream {
        self.get_ref().0.tcp()
    }
}

/// Shared between a connection and its stream: set when the connection ends for a timeout, so
/// the stream resets the socket when it is dropped.
#[derive(Debug, Clone, Default)]
pub(crate) struct ResetOnDrop(Arc<AtomicBool>);

impl ResetOnDrop {
    /// Asks for a reset when the stream is dropped.
    pub(crate) fn arm(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    fn armed(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The answer bytes a port holds that clients have not taken (`--http-max-answer-bytes`): an
/// answer is counted from when it is made until its bytes are handed to the kernel.
#[derive(Debug)]
pub(crate) struct AnswerBudget {
    max: usize,
    used: AtomicUsize,
}

impl AnswerBudget {
    /// A budget of `max` bytes.
    pub(crate) fn new(max: usize) -> AnswerBudget {
        AnswerBudget {
            max,
            used: AtomicUsize::new(0),
        }
    }

    /// Counts `bytes` more, unless that would pass the budget.
    fn take(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(bytes).filter(|&u| u <= self.max)
            })
            .is_ok()
    }

    fn give_back(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Bytes counted now.
    #[cfg(test)]
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

/// One connection's share of its port's [`AnswerBudget`]: what its answers hold that the
/// kernel has not taken yet.
#[derive(Debug, Clone)]
pub(crate) struct Owed {
    budget: Arc<AnswerBudget>,
    bytes: Arc<AtomicUsize>,
}

impl Owed {
    /// A connection's share of `budget`, empty.
    pub(crate) fn new(budget: Arc<AnswerBudget>) -> Owed {
        Owed {
            budget,
            bytes: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Counts an answer of `bytes` (its head included, near enough); `false` when the port's
    /// budget has no room for it.
    pub(crate) fn answer(&self, bytes: usize) -> bool {
        if !self.budget.take(bytes) {
            return false;
        }
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        true
    }

    /// `n` bytes handed to the kernel: that much of the answers is no longer held.
    fn sent(&self, n: usize) {
        // Most answers are small and not counted: nothing to pay, no write to shared atomics.
        if self.bytes.load(Ordering::Relaxed) == 0 {
            return;
        }
        let paid = self
            .bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |owed| {
                Some(owed.saturating_sub(n))
            })
            .map_or(0, |owed| owed.min(n));
        self.budget.give_back(paid);
    }

    /// The connection ended: its answers are freed.
    fn settle(&self) {
        let owed = self.bytes.swap(0, Ordering::Relaxed);
        self.budget.give_back(owed);
    }
}

/// `S` with a write timeout, a reset on a timeout's close, and its answers' bytes counted.
pub(crate) struct Guarded<S: OnTcp> {
    inner: S,
    write_timeout: Duration,
    /// Armed at the first write that could not proceed; cleared by any progress.
    stalled: Option<Pin<Box<Sleep>>>,
    reset: ResetOnDrop,
    owed: Owed,
}

impl<S: OnTcp> Guarded<S> {
    /// Wraps `inner`: a write (or flush) that makes no progress for `write_timeout` fails
    /// with `TimedOut` and arms `reset`; bytes written pay off `owed`.
    pub(crate) fn new(inner: S, write_timeout: Duration, reset: ResetOnDrop, owed: Owed) -> Self {
        Guarded {
            inner,
            write_timeout,
            stalled: None,
            reset,
            owed,
        }
    }

    /// Counts the bytes a write sent against what is owed, then [`watch`](Self::watch)es it.
    fn wrote(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<std::io::Result<usize>>,
    ) -> Poll<std::io::Result<usize>> {
        if let Poll::Ready(Ok(n)) = polled {
            self.owed.sent(n);
        }
        self.watch(cx, polled)
    }

    /// Follows a write's outcome: progress clears the timer; no progress runs it, and once
    /// it has run out the write fails.
    fn watch<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        if polled.is_ready() {
            self.stalled = None;
            return polled;
        }
        let timeout = self.write_timeout;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        if timer.as_mut().poll(cx).is_ready() {
            self.reset.arm();
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the client did not take its answer within write-timeout-ms",
            )));
        }
        Poll::Pending
    }
}

impl<S: OnTcp> Drop for Guarded<S> {
    fn drop(&mut self) {
        self.owed.settle();
        if self.reset.armed() {
            // Never blocks: a zero linger drops the unsent bytes and sends a reset.
            let _ = self.inner.tcp().set_zero_linger();
        }
    }
}

impl<S: OnTcp> AsyncRead for Guarded<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: OnTcp> AsyncWrite for Guarded<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.wrote(cx, polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.wrote(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_flush(cx);
        this.watch(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.watch(cx, polled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[test]
    fn the_budget_refuses_past_its_bytes_and_frees_what_is_sent() {
        let budget = Arc::new(AnswerBudget::new(1000));
        let (a, b) = (Owed::new(budget.clone()), Owed::new(budget.clone()));
        assert!(a.answer(600));
        assert!(!b.answer(500), "past the port's budget");
        assert!(b.answer(400));
        a.sent(250);
        assert_eq!(budget.used(), 750);
        a.sent(10_000);
        assert_eq!(budget.used(), 400, "never more than was owed");
        b.settle();
        assert_eq!(budget.used(), 0);
    }

    #[tokio::test]
    async fn a_client_that_does_not_read_is_timed_out_and_reset() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let reset = ResetOnDrop::default();
        let budget = Arc::new(AnswerBudget::new(1 << 30));
        let owed = Owed::new(budget.clone());
        assert!(owed.answer(100 << 20));
        let mut guarded = Guarded::new(server, Duration::from_millis(200), reset.clone(), owed);
        // Far more than both kernels' buffers hold: the writes stall, then time out.
        let chunk = vec![b'x'; 1 << 20];
        let err = loop {
            if let Err(e) = guarded.write_all(&chunk).await {
                break e;
            }
        };
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
        assert!(reset.armed());
        let held = budget.used();
        assert!(
            held > 0 && held < 100 << 20,
            "what the kernel took is paid: {held}"
        );
        drop(guarded);
        assert_eq!(budget.used(), 0, "a connection's end frees its answers");
        // The reset reaches the client: its read fails (or ends) without waiting for the
        // unsent megabytes.
        let mut client = client;
        let mut buf = vec![0u8; 1 << 16];
        let got = loop {
            match tokio::io::AsyncReadExt::read(&mut client, &mut buf).await {
                Ok(0) => break Ok(()),
                Ok(_) => continue,
                Err(e) => break Err(e.kind()),
            }
        };
        assert_eq!(got, Err(std::io::ErrorKind::ConnectionReset));
    }
}
