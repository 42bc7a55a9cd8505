//! One client connection: read what has arrived, run every complete request in it, write all the
//! replies at once (so a pipeline costs one read and one write per batch).
//!
//! What a connection may hold is bounded (docs/server.md "Limits"): no read buffer until bytes
//! arrive (and none again after a second of idleness), a half-sent request of at most
//! `max-request-bytes` that must be complete within `request-timeout-ms` (as must each TLS
//! record, which rustls holds out of this loop's sight: see [`crate::serve::net::stream::Records`]), and at most
//! `reply-buffer-bytes` of replies (plus one reply) before the pipeline stops running to send
//! them; a client that does not take them within `write-timeout-ms` is closed.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use super::execute;
use super::request::Session;
use crate::serve::auth::{DEFAULT_USER, Perms};
use crate::serve::metrics::ErrorKind;
use crate::serve::net::stream::Stream;
use crate::serve::shared::Shared;
use idforge_resp::{Reply, parse_limited};

/// What one read asks the socket for.
const READ_CHUNK: usize = 16 * 1024;
/// A connection idle this long gives its buffers back.
const RELEASE_AFTER: Duration = Duration::from_secs(1);
/// The reply buffer kept between batches (a larger one is given back).
const KEEP_REPLY: usize = 64 * 1024;

/// What woke the connection up.
enum Event {
    Read(std::io::Result<usize>),
    Stop,
    Timer,
}

/// Why a connection is closed by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expired {
    Auth,
    Request,
    Idle,
}

/// Serves `stream` until the client leaves, sends a bad request, passes a limit, or `stop` turns
/// true (then the requests already read are answered first).
pub async fn serve(shared: Arc<Shared>, mut stream: Stream, mut stop: watch::Receiver<bool>) {
    let _ = stream.tcp().set_nodelay(true);
    let limits = &shared.limits;
    let metrics = shared.allocator.metrics();
    metrics.connected();
    let mut session = Session {
        id: shared.next_client.fetch_add(1, Ordering::Relaxed),
        name: None,
        perms: (!shared.auth.required()).then(|| Arc::new(Perms::all())),
        user: DEFAULT_USER.to_owned(),
        quit: false,
        peer: stream.peer_addr().ok().map(|a| a.ip()),
    };
    // Allocated when the first bytes arrive: an idle connection costs its socket and task only.
    let mut buf: Vec<u8> = Vec::new();
    let mut out = Reply::default();
    let mut ranges: Vec<Range<usize>> = Vec::new();
    let opened = Instant::now();
    let mut last_read = opened;
    // Set while the client must still authenticate.
    let mut auth_deadline = session
        .perms
        .is_none()
        .then(|| opened + limits.auth_timeout);
    // When the half-sent request now in `buf` began.
    let mut partial_since: Option<Instant> = None;
    // One timer for every deadline, re-armed only when it fires or a nearer deadline appears,
    // so a busy connection does not touch the timer wheel per request.
    let timer = tokio::time::sleep_until(opened);
    tokio::pin!(timer);
    let mut armed: Option<Instant> = None;
    'conn: loop {
        if *stop.borrow() {
            break;
        }
        let deadline = [
            auth_deadline.filter(|_| session.perms.is_none()),
            partial_since.map(|t| t + limits.request_timeout),
            limits
                .idle_timeout
                .filter(|_| buf.is_empty())
                .map(|t| last_read + t),
            (buf.is_empty() && (buf.capacity() > 0 || out.buf.capacity() > 0))
                .then(|| last_read + RELEASE_AFTER),
        ]
        .into_iter()
        .flatten()
        .min();
        if let Some(d) = deadline {
            if armed.is_none_or(|a| d < a || timer.is_elapsed()) {
                timer.as_mut().reset(d);
                armed = Some(d);
            }
        } else {
            armed = None;
        }
        // Biased, the socket first: when a request is already there, the stop signal's and the
        // timer's waiters are never registered (and unregistered) for it.
        let event = tokio::select! {
            biased;
            r = stream.read_some(&mut buf, READ_CHUNK) => Event::Read(r),
            _ = stop.changed() => Event::Stop,
            _ = &mut timer, if armed.is_some() => Event::Timer,
        };
        match event {
            Event::Read(Err(e)) if e.kind() == std::io::ErrorKind::TimedOut => {
                // A TLS record left incomplete past `request-timeout-ms` (see `Records`).
                tracing::debug!(client = session.id, "TLS record not completed in time");
                metrics.error(ErrorKind::Limit);
                break;
            }
            Event::Read(Ok(0) | Err(_)) | Event::Stop => break,
            Event::Read(Ok(_)) => last_read = Instant::now(),
            Event::Timer => {
                armed = None;
                let now = Instant::now();
                let auth_due = auth_deadline.is_some_and(|d| now >= d);
                if auth_due {
                    // Done with it either way (users may have been dropped meanwhile).
                    auth_deadline = None;
                }
                let expired = if auth_due && session.perms.is_none() && shared.auth.required() {
                    Some(Expired::Auth)
                } else if partial_since.is_some_and(|t| now >= t + limits.request_timeout) {
                    Some(Expired::Request)
                } else if buf.is_empty()
                    && limits.idle_timeout.is_some_and(|t| now >= last_read + t)
                {
                    Some(Expired::Idle)
                } else {
                    None
                };
                if let Some(why) = expired {
                    tracing::debug!(client = session.id, ?why, "closing the connection");
                    metrics.error(ErrorKind::Limit);
                    break;
                }
                if buf.is_empty() && now >= last_read + RELEASE_AFTER {
                    buf = Vec::new();
                    out.buf = Vec::new();
                }
                continue;
            }
        }
        let mut at = 0;
        let mut close = false;
        let mut args: Vec<&[u8]> = Vec::with_capacity(8);
        // Run the complete requests; when their replies pass the soft limit, send those first
        // (and wait for the client to take them) before running the rest.
        loop {
            let mut full = false;
            let mut served = 0;
            loop {
                match parse_limited(&buf[at..], &mut ranges, limits.max_request) {
                    Ok(None) => break,
                    Ok(Some(used)) => {
                        let req = &buf[at..at + used];
                        at += used;
                        if ranges.is_empty() {
                            continue;
                        }
                        args.clear();
                        args.extend(ranges.iter().map(|r| &req[r.clone()]));
                        execute(&shared, &mut session, &args, &mut out).await;
                        served += 1;
                        if session.quit {
                            close = true;
                            break;
                        }
                        if out.buf.len() >= limits.reply_buffer {
                            full = true;
                            break;
                        }
                    }
                    Err(e) => {
                        // The stream cannot be resynchronised: answer, then hang up.
                        metrics.error(ErrorKind::Protocol);
                        out.error(&format!("ERR {e}"));
                        close = true;
                        break;
                    }
                }
            }
            shared.busy_poll.active(served);
            if !out.buf.is_empty() {
                // The timeout's timer is only registered when the write has to wait.
                match tokio::time::timeout(limits.write_timeout, stream.write_all(&out.buf)).await {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) => break 'conn,
                    Err(_) => {
                        tracing::debug!(client = session.id, "replies not taken in time");
                        metrics.error(ErrorKind::Limit);
                        break 'conn;
                    }
                }
                out.buf.clear();
                // A large reply (IDF.SNOWFLAKE … COUNT) should not pin its buffer forever.
                out.buf.shrink_to(KEEP_REPLY);
            }
            if close || !full {
                break;
            }
            // A long pipeline gives way to the other connections between its batches (the
            // runtime's own budget only counts socket operations, and a batch runs hundreds of
            // requests per operation: 10 clients pipelining HELLO stalled another's INCR 0.9 s).
            tokio::task::yield_now().await;
        }
        if at > 0 {
            buf.drain(..at);
            partial_since = (!buf.is_empty()).then_some(last_read);
            if buf.capacity() > 4 * READ_CHUNK && buf.len() <= READ_CHUNK {
                buf.shrink_to(READ_CHUNK);
            }
        } else if !buf.is_empty() && partial_since.is_none() {
            partial_since = Some(last_read);
        }
        if close {
            break;
        }
    }
    // Bounded: with TLS the close_notify (and whatever rustls still holds) must be written, and
    // a client that stopped reading would otherwise keep this task and its slot forever.
    let _ = tokio::time::timeout(limits.write_timeout, stream.shutdown()).await;
    metrics.disconnected();
}
