//! The metrics port: `GET /metrics` (Prometheus text) and `GET /healthz`.
//!
//! A few lines of HTTP/1.1 on the server's own runtime instead of an HTTP framework: two fixed
//! read-only pages, one request per connection, so the server does not carry a web stack.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::Shared;

/// Serves the metrics port until the task is dropped.
pub async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(Duration::from_secs(5), answer(stream, &shared)).await;
        });
    }
}

async fn answer(mut stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
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
        (b"GET", b"/metrics") => {
            let engine = &shared.engine;
            let body = engine.metrics().render(&engine.cache_levels());
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
