//! Building responses: plain text and JSON as Spring MVC sends them (the content types Leaf and
//! tinyid answer with), and Spring Boot 1.5's error body, which both peers send for an
//! exception or an unknown URL.

use std::time::{SystemTime, UNIX_EPOCH};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{CONTENT_TYPE, HeaderValue, RETRY_AFTER, WWW_AUTHENTICATE};
use hyper::{Response, StatusCode};

/// A whole response.
pub(crate) type Reply = Response<Full<Bytes>>;

/// Spring's `text/plain` for a `String` returned by a controller.
pub(crate) const TEXT: &str = "text/plain;charset=UTF-8";
/// Spring's JSON.
pub(crate) const JSON: &str = "application/json;charset=UTF-8";
/// The status page.
pub(crate) const HTML: &str = "text/html;charset=utf-8";
/// The rate chart.
pub(crate) const SVG: &str = "image/svg+xml";

/// A response of `status` with `body` of type `kind`.
pub(crate) fn with(status: StatusCode, kind: &'static str, body: impl Into<Bytes>) -> Reply {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(kind));
    r
}

/// `200` with `body` as text.
pub(crate) fn text(body: impl Into<Bytes>) -> Reply {
    with(StatusCode::OK, TEXT, body)
}

/// `200` with a JSON body.
pub(crate) fn json(body: impl Into<Bytes>) -> Reply {
    with(StatusCode::OK, JSON, body)
}

/// Spring Boot 1.5's error body (`DefaultErrorAttributes`): timestamp (Unix ms), status,
/// error (the reason phrase), exception (the class, when one was thrown), message, path.
pub(crate) fn spring_error(
    status: StatusCode,
    exception: Option<&str>,
    message: &str,
    path: &str,
) -> Reply {
    let timestamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    // In Spring's order (serde_json's map would sort the keys).
    let quote = |text: &str| serde_json::Value::from(text).to_string();
    let exception = exception.map_or(String::new(), |e| format!(",\"exception\":{}", quote(e)));
    let body = format!(
        "{{\"timestamp\":{timestamp},\"status\":{},\"error\":{}{exception},\"message\":{},\"path\":{}}}",
        status.as_u16(),
        quote(status.canonical_reason().unwrap_or("Error")),
        quote(message),
        quote(path),
    );
    finish(with(status, JSON, body))
}

/// Adds what a status asks for: `Retry-After` to 503 and 429, `WWW-Authenticate` to 401.
pub(crate) fn finish(mut r: Reply) -> Reply {
    let status = r.status();
    let headers = r.headers_mut();
    if status == StatusCode::SERVICE_UNAVAILABLE || status == StatusCode::TOO_MANY_REQUESTS {
        headers.insert(RETRY_AFTER, HeaderValue::from_static("1"));
    }
    if status == StatusCode::UNAUTHORIZED {
        headers.insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"idforge\""),
        );
    }
    r
}

/// `503` with `Retry-After: 1`: the port holds as many answers not yet taken by their clients
/// as `--http-max-answer-bytes` allows.
pub(crate) fn busy() -> Reply {
    finish(with(
        StatusCode::SERVICE_UNAVAILABLE,
        TEXT,
        "too many answers waiting for their clients (--http-max-answer-bytes); retry",
    ))
}
