//! One client connection: read what has arrived, run every complete request in it, write all the
//! replies at once (so a pipeline costs one read and one write per batch).

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::Shared;
use super::auth::{DEFAULT_USER, Perms};
use super::commands::{Session, execute};
use super::metrics::ErrorKind;
use super::resp::{Reply, parse};

/// Serves `stream` until the client leaves, sends a bad request, or `stop` turns true (then the
/// requests already read are answered first).
pub async fn serve(shared: Arc<Shared>, mut stream: TcpStream, mut stop: watch::Receiver<bool>) {
    let _ = stream.set_nodelay(true);
    let metrics = shared.engine.metrics();
    metrics.connected();
    let mut session = Session {
        id: shared.next_client.fetch_add(1, Ordering::Relaxed),
        name: None,
        perms: (!shared.auth.required()).then(|| Arc::new(Perms::all())),
        user: DEFAULT_USER.to_owned(),
        quit: false,
    };
    let mut buf: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut out = Reply::default();
    let mut ranges: Vec<Range<usize>> = Vec::new();
    'conn: loop {
        if *stop.borrow() {
            break;
        }
        buf.reserve(16 * 1024);
        // Biased, the read first: when a request is already there, the stop signal's waiter
        // is never registered (and unregistered) for it.
        let read = tokio::select! {
            biased;
            r = stream.read_buf(&mut buf) => r,
            _ = stop.changed() => break,
        };
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let mut at = 0;
        let mut close = false;
        let mut args: Vec<&[u8]> = Vec::with_capacity(8);
        loop {
            match parse(&buf[at..], &mut ranges) {
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
                    if session.quit {
                        close = true;
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
        buf.drain(..at);
        shared.busy_poll.active();
        if !out.buf.is_empty() {
            if stream.write_all(&out.buf).await.is_err() {
                break 'conn;
            }
            out.buf.clear();
            // A large reply (IDF.SNOWFLAKE … COUNT) should not pin its buffer forever.
            out.buf.shrink_to(64 * 1024);
        }
        if close {
            break;
        }
    }
    let _ = stream.shutdown().await;
    metrics.disconnected();
}
