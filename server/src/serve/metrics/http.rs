//! The metrics port: `GET /metrics` (Prometheus text) and `GET /healthz`.
//!
//! A few lines of HTTP/1.1 on the server's own runtime instead of an HTTP framework: two fixed
//! read-only pages, one request per connection, so the server does not carry a web stack.
//!
//! Bounded, and kept answering while idle connections flood the port (docs/server.md "Limits"):
//! connections are served concurrently, at most `metrics-maxclients` at once; one arriving past
//! that closes the oldest connection still waiting for its request (a probe sends its request as
//! soon as it connects, so an idle flood only ever evicts itself), or is closed itself when every
//! connection is busy answering. A connection must finish its TLS handshake and send its request
//! (at most 8 KiB) within `metrics-timeout-ms`, and is done within [`CONNECTION_TIMEOUT`]. An
//! accept error (out of file descriptors) backs off instead of spinning. With `--metrics-token`,
//! /metrics wants `Authorization: Bearer TOKEN` (or basic auth with TOKEN as the password);
//! /healthz stays open for probes. With TLS on (`--tls-cert`), this port speaks HTTPS with the
//! same certificate and client-certificate rule as the client port.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;

use super::ErrorKind;
use crate::serve::auth::credential::{constant_time_eq, credential};
use crate::serve::net::slots::{Slot, Slots};
use crate::serve::shared::Shared;

/// The longest a metrics connection lasts, answer included.
pub const CONNECTION_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest request read (only its first line matters).
const MAX_REQUEST: usize = 8192;

/// Serves the metrics port until the task is dropped.
pub async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    let slots = Slots::new(shared.limits.metrics_maxclients);
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "metrics accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let admitted = slots.admit(|slot| {
            let shared = shared.clone();
            tokio::spawn(async move {
                let _ = tokio::time::timeout(CONNECTION_TIMEOUT, async {
                    let deadline = tokio::time::Instant::now() + shared.limits.metrics_timeout;
                    match &shared.tls {
                        None => answer(stream, &shared, deadline, &slot).await,
                        Some(tls) => {
                            let handshake = tls.acceptor().accept(stream);
                            let stream = tokio::time::timeout_at(deadline, handshake)
                                .await
                                .map_err(|_| std::io::ErrorKind::TimedOut)??;
                            answer(stream, &shared, deadline, &slot).await
                        }
                    }
                })
                .await;
            })
            .abort_handle()
        });
        // A refused connection, and each one closed to make room, count as a limit hit.
        for _ in 0..admitted.unwrap_or(1) {
            shared.allocator.metrics().error(ErrorKind::Limit);
        }
    }
}

/// Whether the request's headers carry the token (bearer, or basic with it as the password).
fn authorized(head: &[u8], token: &str) -> bool {
    let text = String::from_utf8_lossy(head);
    text.lines().skip(1).any(|line| {
        let Some((name, value)) = line.split_once(':') else {
            return false;
        };
        name.trim().eq_ignore_ascii_case("authorization")
            && credential(value).is_some_and(|c| constant_time_eq(&c, token.as_bytes()))
    })
}

/// Reads the request (by `deadline`), then answers it.
async fn answer<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    shared: &Shared,
    deadline: tokio::time::Instant,
    slot: &Slot,
) -> std::io::Result<()> {
    let mut req = Vec::with_capacity(1024);
    // Only the request line matters; headers are read up to 8 KiB and ignored.
    let read = async {
        while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < MAX_REQUEST {
            if stream.read_buf(&mut req).await? == 0 {
                break;
            }
        }
        Ok::<(), std::io::Error>(())
    };
    match tokio::time::timeout_at(deadline, read).await {
        Ok(read) => read?,
        Err(_) => {
            shared.allocator.metrics().error(ErrorKind::Limit);
            return Err(std::io::ErrorKind::TimedOut.into());
        }
    }
    // From here on the connection is answering: a newcomer does not evict it.
    slot.set_waiting(false);
    let line = req.split(|b| *b == b'\n').next().unwrap_or_default();
    let mut words = line.split(|b| *b == b' ');
    let (method, path) = (
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default(),
    );
    let path = path.split(|b| *b == b'?').next().unwrap_or_default();
    let (status, kind, body) = match (method, path) {
        (b"GET", b"/metrics")
            if shared
                .limits
                .metrics_token
                .as_deref()
                .is_some_and(|t| !authorized(&req, t)) =>
        {
            (
                "401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"idforge\"",
                "text/plain",
                "unauthorized\n".into(),
            )
        }
        (b"GET", b"/metrics") => {
            let engine = &shared.allocator;
            let body = engine
                .metrics()
                .render(&engine.cache_levels(), shared.limits.metrics_tags);
            ("200 OK", "text/plain; version=0.0.4; charset=utf-8", body)
        }
        (b"GET", b"/healthz") => match shared.allocator.store().ping().await {
            Ok(()) if shared.allocator.failing().is_none() => {
                ("200 OK", "text/plain", "ok\n".into())
            }
            Ok(()) => (
                "503 Service Unavailable",
                "text/plain",
                "persist failing\n".into(),
            ),
            Err(e) => (
                "503 Service Unavailable",
                "text/plain",
                format!("store: {e}\n"),
            ),
        },
        (b"GET", _) => ("404 Not Found", "text/plain", "not found\n".into()),
        _ => ("405 Method Not Allowed", "text/plain", "GET only\n".into()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_and_basic_tokens() {
        let head = |auth: &str| format!("GET /metrics HTTP/1.1\r\nHost: x\r\n{auth}\r\n\r\n");
        assert!(authorized(
            head("Authorization: Bearer s3cret").as_bytes(),
            "s3cret"
        ));
        assert!(authorized(
            head("authorization:  bearer s3cret ").as_bytes(),
            "s3cret"
        ));
        // "prom:s3cret"
        assert!(authorized(
            head("Authorization: Basic cHJvbTpzM2NyZXQ=").as_bytes(),
            "s3cret"
        ));
        assert!(!authorized(
            head("Authorization: Bearer s3cre").as_bytes(),
            "s3cret"
        ));
        assert!(!authorized(
            head("Authorization: Basic cHJvbTpub3Bl").as_bytes(),
            "s3cret"
        ));
        assert!(!authorized(head("X-Token: s3cret").as_bytes(), "s3cret"));
        assert!(!authorized(b"GET /metrics HTTP/1.1\r\n\r\n", "s3cret"));
    }
}
