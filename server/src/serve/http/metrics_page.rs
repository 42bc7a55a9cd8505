//! The metrics port's pages: `GET /metrics` (Prometheus text) and `GET /healthz`. With
//! `--metrics-token`, /metrics wants `Authorization: Bearer TOKEN` (or basic auth with TOKEN as
//! the password); /healthz stays open for probes. The port's bounds are in [`super::Site`].

use std::time::Duration;

use hyper::header::AUTHORIZATION;
use hyper::{Method, Request, StatusCode};

use super::reply::{Reply, finish, with};
use crate::serve::allocator::Allocator;
use crate::serve::auth::credential::{constant_time_eq, credential};
use crate::serve::metrics::Gauges;
use crate::serve::net::tls::Tls;
use crate::serve::shared::Shared;

/// The longest a metrics connection lasts, answer included.
pub(crate) const CONNECTION_TIMEOUT: Duration = Duration::from_secs(5);

/// The largest request head read (hyper's smallest read buffer).
pub(crate) const MAX_HEAD: usize = 8192;

/// Prometheus's text exposition format.
const PROMETHEUS: &str = "text/plain; version=0.0.4; charset=utf-8";
const TEXT: &str = "text/plain";

/// Answers one request of the metrics port.
pub(crate) async fn handle<B>(shared: &Shared, req: Request<B>) -> Reply {
    if req.method() != Method::GET {
        return with(StatusCode::METHOD_NOT_ALLOWED, TEXT, "GET only\n");
    }
    match req.uri().path() {
        "/metrics" => {
            let token = shared.limits.metrics_token.as_deref();
            if token.is_some_and(|t| !authorized(&req, t)) {
                return finish(with(StatusCode::UNAUTHORIZED, TEXT, "unauthorized\n"));
            }
            let engine = &shared.allocator;
            let body = engine.metrics().render(
                shared.requests.each(),
                &engine.cache_levels(),
                shared.limits.metrics_tags,
                &gauges(engine, shared.tls.as_ref()),
            );
            with(StatusCode::OK, PROMETHEUS, body)
        }
        "/healthz" => match shared.allocator.store().ping().await {
            Ok(()) if shared.allocator.failing().is_none() => with(StatusCode::OK, TEXT, "ok\n"),
            Ok(()) => with(StatusCode::SERVICE_UNAVAILABLE, TEXT, "persist failing\n"),
            Err(e) => with(
                StatusCode::SERVICE_UNAVAILABLE,
                TEXT,
                format!("store: {e}\n"),
            ),
        },
        _ => with(StatusCode::NOT_FOUND, TEXT, "not found\n"),
    }
}

/// The allocator's state, as the metrics' gauges.
fn gauges(a: &Allocator, tls: Option<&Tls>) -> Gauges {
    let leadership = a.leadership();
    let policy = a.policy();
    Gauges {
        serving: leadership.serving(),
        elected: leadership.is_elected(),
        behind_guard: a.refusing().is_some(),
        persist_failing: a.failing().is_some(),
        highest_id: a.highest_reserved(),
        leases: (a.leases_held(), policy.max_leases),
        service_leases: (a.leases_service_max(), policy.max_leases_per_service),
        tls_not_after: tls.and_then(Tls::not_after),
    }
}

/// Whether the request carries the token (bearer, or basic with it as the password).
fn authorized<B>(req: &Request<B>, token: &str) -> bool {
    req.headers().get_all(AUTHORIZATION).iter().any(|value| {
        (value.to_str().ok())
            .and_then(credential)
            .is_some_and(|c| constant_time_eq(&c, token.as_bytes()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_and_basic_tokens() {
        let with_auth = |value: &str| {
            Request::builder()
                .uri("/metrics")
                .header(AUTHORIZATION, value)
                .body(())
                .unwrap()
        };
        assert!(authorized(&with_auth("Bearer s3cret"), "s3cret"));
        assert!(authorized(&with_auth(" bearer s3cret "), "s3cret"));
        // "prom:s3cret"
        assert!(authorized(&with_auth("Basic cHJvbTpzM2NyZXQ="), "s3cret"));
        assert!(!authorized(&with_auth("Bearer s3cre"), "s3cret"));
        assert!(!authorized(&with_auth("Basic cHJvbTpub3Bl"), "s3cret"));
        let other = Request::builder()
            .header("X-Token", "s3cret")
            .body(())
            .unwrap();
        assert!(!authorized(&other, "s3cret"));
        assert!(!authorized(&Request::new(()), "s3cret"));
    }
}
