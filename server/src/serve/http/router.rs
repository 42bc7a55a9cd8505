//! One request to its handler: the method, the bounded query string and form body, the token
//! (the `token` parameter or the `Authorization` header), then the path.

use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE};
use hyper::{Method, Request, StatusCode};

use super::query::{Params, decode};
use super::reply::{Reply, spring_error};
use super::{Http, leaf, status, tinyid};
use crate::serve::auth::credential::credential;
use crate::serve::metrics::{ErrorKind, HttpApi};
use crate::serve::shared::Shared;

/// Answers one request.
pub(crate) async fn handle(shared: &Shared, http: &Http, req: Request<Incoming>) -> Reply {
    let path = req.uri().path().to_owned();
    let api = match path.split('/').nth(1) {
        Some("api") => HttpApi::Leaf,
        Some("tinyid" | "id") => HttpApi::Tinyid,
        Some("status") => HttpApi::Status,
        _ => HttpApi::Other,
    };
    shared.allocator.metrics().http_request(api);
    let refuse = |status: StatusCode, exception: Option<&str>, message: &str| {
        let kind = if status == StatusCode::NOT_FOUND {
            ErrorKind::Usage
        } else {
            ErrorKind::Limit
        };
        shared.allocator.metrics().error(kind);
        spring_error(status, exception, message, &path)
    };
    let method = req.method().clone();
    if method != Method::GET && method != Method::POST && method != Method::HEAD {
        return refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            Some("org.springframework.web.HttpRequestMethodNotSupportedException"),
            &format!("Request method '{method}' not supported"),
        );
    }
    let max_query = http.settings.max_query;
    let mut params = Params::default();
    let query = req.uri().query().unwrap_or_default();
    if query.len() > max_query {
        return refuse(StatusCode::URI_TOO_LONG, None, "query string too long");
    }
    if params.add(query).is_err() {
        return refuse(StatusCode::BAD_REQUEST, None, "more than 32 parameters");
    }
    let header_token = (req.headers().get(AUTHORIZATION))
        .and_then(|v| v.to_str().ok())
        .and_then(credential);
    let form = (req.headers().get(CONTENT_TYPE))
        .and_then(|v| v.to_str().ok())
        .is_some_and(is_form);
    if method == Method::POST {
        let body = Limited::new(req.into_body(), http.settings.max_body).collect();
        let body = match tokio::time::timeout(shared.limits.request_timeout, body).await {
            Err(_) => return refuse(StatusCode::REQUEST_TIMEOUT, None, "body too slow"),
            Ok(Err(_)) => {
                return refuse(StatusCode::PAYLOAD_TOO_LARGE, None, "body too large");
            }
            Ok(Ok(body)) => body.to_bytes(),
        };
        if form {
            let text = String::from_utf8_lossy(&body);
            if text.len() > max_query {
                return refuse(StatusCode::PAYLOAD_TOO_LARGE, None, "form too long");
            }
            if params.add(&text).is_err() {
                return refuse(StatusCode::BAD_REQUEST, None, "more than 32 parameters");
            }
        }
    }
    let param_token = params.get("token").map(str::as_bytes);
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let hands_out_ids = match segments.as_slice() {
        ["api", "segment" | "snowflake", "get", key] => !key.is_empty(),
        ["tinyid", "id", op] | ["id", op] => tinyid::Op::parse(op).is_some(),
        _ => false,
    };
    if hands_out_ids && method == Method::HEAD {
        // A HEAD answers with a GET's headers, so it would hand out (and throw away) the ids
        // whose length it tells: a monitoring probe would burn a batch each time.
        let mut r = refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            Some("org.springframework.web.HttpRequestMethodNotSupportedException"),
            "Request method 'HEAD' not supported: it would hand out ids",
        );
        r.headers_mut().insert(
            hyper::header::ALLOW,
            hyper::header::HeaderValue::from_static("GET, POST"),
        );
        return r;
    }
    match segments.as_slice() {
        ["api", kind @ ("segment" | "snowflake"), "get", key] if !key.is_empty() => {
            let kind = if *kind == "segment" {
                leaf::Kind::Segment
            } else {
                leaf::Kind::Snowflake
            };
            let token = header_token.as_deref().or(param_token);
            leaf::get(shared, http, kind, &decode(key), token, &path).await
        }
        ["tinyid", "id", op] | ["id", op] if tinyid::Op::parse(op).is_some() => {
            let op = tinyid::Op::parse(op).unwrap_or(tinyid::Op::Id);
            let token = param_token.or(header_token.as_deref());
            tinyid::answer(shared, http, op, &params, token, &path).await
        }
        ["status"] | ["status", ""] => status::page(shared, http, header_token.as_deref()),
        ["status", "rate.svg"] => status::chart(shared, http, header_token.as_deref(), None),
        ["status", "tag", tag] => {
            status::tag_page(shared, http, header_token.as_deref(), &decode(tag)).await
        }
        ["status", "tag", tag, "rate.svg"] => {
            status::chart(shared, http, header_token.as_deref(), Some(&decode(tag)))
        }
        _ => refuse(StatusCode::NOT_FOUND, None, "No message available"),
    }
}

/// Whether a `Content-Type` is a form: the media type (before any `;` parameters) matched
/// exactly and without regard to case, as RFC 9110 says media types compare.
fn is_form(content_type: &str) -> bool {
    let media = content_type.split(';').next().unwrap_or_default().trim();
    media.eq_ignore_ascii_case("application/x-www-form-urlencoded")
}

#[cfg(test)]
mod tests {
    use super::is_form;

    #[test]
    fn form_media_types_match_exactly_in_any_case() {
        for yes in [
            "application/x-www-form-urlencoded",
            "Application/X-WWW-Form-URLEncoded",
            "application/x-www-form-urlencoded; charset=UTF-8",
            " application/x-www-form-urlencoded ;charset=utf-8",
        ] {
            assert!(is_form(yes), "{yes}");
        }
        for no in [
            "application/x-www-form-urlencodedXYZ",
            "application/json",
            "text/plain; x=application/x-www-form-urlencoded",
            "",
        ] {
            assert!(!is_form(no), "{no}");
        }
    }
}
