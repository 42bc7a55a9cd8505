//! The metrics port: `GET /metrics` (Prometheus text) and `GET /healthz`.
//!
//! A few lines of HTTP/1.1 on the server's own runtime instead of an HTTP framework: two fixed
//! read-only pages, one request per connection, so the server does not carry a web stack.
//!
//! Bounded: at most [`MAX_CONNECTIONS`] at once (others wait in the listen backlog), a request of
//! at most 8 KiB, 5 s per connection; an accept error (out of file descriptors) backs off instead
//! of spinning. With `--metrics-token`, /metrics wants `Authorization: Bearer TOKEN` (or basic
//! auth with TOKEN as the password); /healthz stays open for probes. With TLS on (`--tls-cert`),
//! this port speaks HTTPS with the same certificate and client-certificate rule as the client
//! port; the handshake counts within the 5 s.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::shared::Shared;

/// Metrics connections served at once.
pub const MAX_CONNECTIONS: usize = 16;

/// Serves the metrics port until the task is dropped.
pub async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = slots.clone().acquire_owned().await else {
            return;
        };
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "metrics accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            let _permit = permit;
            // The handshake counts within the connection's 5 s.
            let _ = tokio::time::timeout(Duration::from_secs(5), async {
                match &shared.tls {
                    None => answer(stream, &shared).await,
                    Some(tls) => answer(tls.acceptor().accept(stream).await?, &shared).await,
                }
            })
            .await;
        });
    }
}

/// Whether the request's headers carry the token (bearer, or basic with it as the password).
fn authorized(head: &[u8], token: &str) -> bool {
    let text = String::from_utf8_lossy(head);
    text.lines().skip(1).any(|line| {
        let Some((name, value)) = line.split_once(':') else {
            return false;
        };
        if !name.trim().eq_ignore_ascii_case("authorization") {
            return false;
        }
        let value = value.trim();
        let Some((scheme, cred)) = value.split_once(' ') else {
            return false;
        };
        let cred = cred.trim();
        if scheme.eq_ignore_ascii_case("bearer") {
            return constant_time_eq(cred.as_bytes(), token.as_bytes());
        }
        if scheme.eq_ignore_ascii_case("basic") {
            let Some(decoded) = base64_decode(cred) else {
                return false;
            };
            let password = match decoded.iter().position(|b| *b == b':') {
                Some(i) => &decoded[i + 1..],
                None => return false,
            };
            return constant_time_eq(password, token.as_bytes());
        }
        false
    })
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Standard base64 (with or without padding); a dozen lines rather than a crate for one header.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|c| *c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

async fn answer<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    shared: &Shared,
) -> std::io::Result<()> {
    let mut req = Vec::with_capacity(1024);
    // Only the request line matters; headers are read up to 8 KiB and ignored.
    while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < 8192 {
        if stream.read_buf(&mut req).await? == 0 {
            break;
        }
    }
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
            let engine = &shared.engine;
            let body = engine
                .metrics()
                .render(&engine.cache_levels(), shared.limits.metrics_tags);
            ("200 OK", "text/plain; version=0.0.4; charset=utf-8", body)
        }
        (b"GET", b"/healthz") => match shared.engine.store().ping().await {
            Ok(()) if shared.engine.failing().is_none() => ("200 OK", "text/plain", "ok\n".into()),
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
        assert_eq!(base64_decode("aGk=").unwrap(), b"hi");
        assert!(base64_decode("a*").is_none());
    }
}
