//! The server's one HTTP front, for two ports ([`Site`]): the HTTP API (`--http-port`: Leaf's
//! and tinyid's URLs, so their clients switch without a change, and the status page) and the
//! metrics port (`--metrics-port`: [`metrics_page`]). docs/http.md is the API user's side; the
//! peers' bodies are recorded in server/tests/http/fixtures.json.
//!
//! The metrics port: one request per connection, at most `metrics-maxclients` connections (a
//! new one past it closes the oldest that has sent no request yet, so an idle flood only evicts
//! itself), the TLS handshake and the request head (at most 8 KiB) within `metrics-timeout-ms`,
//! the whole connection within 5 s.
//!
//! The API port: hyper's HTTP/1.1 (keep-alive) on the server's runtime, with the client port's TLS settings
//! and its graceful shutdown, and bounds of its own (docs/server.md "Limits"): at most
//! `http-maxclients` connections (a new one past it closes the oldest idle between requests),
//! the request head within `request-timeout-ms` (timed from the connection's start or its last
//! answer: a keep-alive connection idle that long is closed) and `http-max-header-bytes`, a form
//! body within both and `http-max-body-bytes`, the query string within `http-max-query-bytes`
//! and 32 parameters, `http-rate-limit` requests a second per token, `http-max-batch` ids per
//! request, an answer taken within `write-timeout-ms`. A connection closed for a timeout is
//! reset, so the kernel keeps no unsent answer ([`socket`]); a request head over
//! [`LARGE_HEAD`] bytes closes its connection after the answer, so an idle connection never
//! keeps the larger buffer it needed.
//!
//! - [`router`]: an API request to its handler; [`query`]: parameters; [`reply`]: response
//!   bodies; [`metrics_page`]: the metrics port's `/metrics` and `/healthz`.
//! - [`leaf`], [`tinyid`]: the peers' URLs.
//! - [`tokens`]: who a request acts as; [`limiter`]: the rate limit per token.
//! - [`status`]: the status page; [`chart`]: its SVG rate chart; [`rates`]: the ids per second
//!   the chart draws.

pub(crate) mod chart;
pub(crate) mod leaf;
pub(crate) mod limiter;
pub(crate) mod metrics_page;
pub(crate) mod query;
pub(crate) mod rates;
pub(crate) mod reply;
pub(crate) mod router;
pub(crate) mod socket;
pub(crate) mod status;
pub(crate) mod tinyid;
pub(crate) mod tokens;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::{Request, StatusCode};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::serve::allocator::tags::AllocError;
use crate::serve::auth::Auth;
use crate::serve::config::HttpSettings;
use crate::serve::metrics::ErrorKind;
use crate::serve::net::slots::{Slot, Slots};
use crate::serve::shared::Shared;
use limiter::RateLimit;
use reply::Reply;
use tokens::{Caller, Refused, Tokens};

/// How long connections may take to finish their requests at shutdown.
const DRAIN: Duration = Duration::from_secs(10);

/// The HTTP side's own state.
#[derive(Debug)]
pub(crate) struct Http {
    /// The settings.
    pub settings: HttpSettings,
    tokens: Tokens,
    limit: RateLimit,
    /// Status pages to viewers without a token, over every client.
    status_limit: RateLimit,
    /// Rendered status pages, kept for a second.
    status_pages: status::PageCache,
    /// Answer bytes not yet taken by clients, over the port.
    answers: Arc<socket::AnswerBudget>,
    /// Ids per second, for the status page.
    pub rates: rates::Rates,
}

/// What a port of this front serves.
#[derive(Debug, Clone)]
pub(crate) enum Site {
    /// The HTTP API and the status page (`--http-port`).
    Api(Arc<Http>),
    /// `/metrics` and `/healthz` (`--metrics-port`).
    Metrics,
}

/// One port's bounds (docs/server.md "Limits").
#[derive(Debug)]
struct Bounds {
    maxclients: usize,
    /// The TLS handshake, and each request head, within this.
    head_timeout: Duration,
    max_header: usize,
    /// More than one request per connection.
    keep_alive: bool,
    /// The longest a connection lasts, if bounded.
    lifetime: Option<Duration>,
    /// The answer bytes the port may hold that clients have not taken.
    answers: Arc<socket::AnswerBudget>,
}

impl Site {
    fn bounds(&self, shared: &Shared) -> Bounds {
        match self {
            Site::Api(http) => Bounds {
                maxclients: http.settings.maxclients,
                head_timeout: shared.limits.request_timeout,
                max_header: http.settings.max_header,
                keep_alive: true,
                lifetime: None,
                answers: http.answers.clone(),
            },
            // Its pages are bounded by the connections (the per-tag page by --metrics-tags).
            Site::Metrics => Bounds {
                maxclients: shared.limits.metrics_maxclients,
                head_timeout: shared.limits.metrics_timeout,
                max_header: metrics_page::MAX_HEAD,
                keep_alive: false,
                lifetime: Some(metrics_page::CONNECTION_TIMEOUT),
                answers: Arc::new(socket::AnswerBudget::new(usize::MAX)),
            },
        }
    }

    /// Answers one request.
    async fn answer(&self, shared: &Shared, req: Request<Incoming>) -> Reply {
        match self {
            Site::Api(http) => router::handle(shared, http, req).await,
            Site::Metrics => metrics_page::handle(shared, req).await,
        }
    }

    /// Whether it serves only this host (protected mode): nothing asks for a password (no
    /// users, no tokens file or metrics token) and `--insecure-open` was not given.
    fn protected(&self, shared: &Shared) -> bool {
        !shared.limits.insecure_open
            && match self {
                Site::Api(http) => !http.tokens.configured() && !shared.auth.required(),
                Site::Metrics => shared.limits.metrics_token.is_none(),
            }
    }
}

/// A connection's site, and whether its client is on another host.
#[derive(Clone)]
struct Peer {
    site: Site,
    remote: bool,
}

/// What a client from another host gets from a port in protected mode.
const PROTECTED: &str = "idforge is in protected mode: no password or token is set, so only \
    clients on this host are served. Set one (users, --http-tokens, --metrics-token), or, on a \
    network you trust, start with --insecure-open (IDFORGE_INSECURE_OPEN=1)\n";

impl Peer {
    /// Answers one request, or refuses it (403) in protected mode; /healthz stays open to the
    /// probes of an orchestrator, which come from another host.
    async fn answer(&self, shared: &Shared, req: Request<Incoming>) -> Reply {
        if self.remote && req.uri().path() != "/healthz" && self.site.protected(shared) {
            shared.allocator.metrics().error(ErrorKind::Auth);
            return reply::with(StatusCode::FORBIDDEN, "text/plain", PROTECTED);
        }
        self.site.answer(shared, req).await
    }
}

/// Why a request got no caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Denied {
    /// No token or a wrong one.
    Refused(Refused),
    /// Past the token's rate limit.
    Limited,
}

impl Denied {
    /// The HTTP status.
    pub(crate) fn status(self) -> StatusCode {
        match self {
            Denied::Refused(_) => StatusCode::UNAUTHORIZED,
            Denied::Limited => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    /// What the body says.
    pub(crate) fn message(self) -> &'static str {
        match self {
            Denied::Refused(Refused::NoToken) => {
                "a token is required (token parameter or Authorization: Bearer)"
            }
            Denied::Refused(Refused::BadToken) => "unknown token",
            Denied::Limited => "rate limit reached for this token (--http-rate-limit)",
        }
    }

    /// How `/metrics` counts it.
    pub(crate) fn kind(self) -> ErrorKind {
        match self {
            Denied::Refused(_) => ErrorKind::Auth,
            Denied::Limited => ErrorKind::Limit,
        }
    }
}

impl Http {
    /// The HTTP side of `settings`, its tokens file read.
    pub(crate) fn new(settings: HttpSettings) -> Result<Http, tokens::TokensError> {
        let tokens = Tokens::load(settings.tokens.as_deref(), settings.anonymous_user.clone())?;
        Ok(Http {
            limit: RateLimit::new(settings.rate_limit),
            status_limit: RateLimit::new(settings.status_rate),
            status_pages: status::PageCache::default(),
            answers: Arc::new(socket::AnswerBudget::new(settings.max_answer_bytes)),
            settings,
            tokens,
            rates: rates::Rates::default(),
        })
    }

    /// Who a request with `token` acts as, within its rate limit.
    pub(crate) fn caller(&self, auth: &Auth, token: Option<&[u8]>) -> Result<Caller, Denied> {
        let caller = self.tokens.caller(auth, token).map_err(Denied::Refused)?;
        if caller.limited && !self.limit.allow(caller.key) {
            return Err(Denied::Limited);
        }
        Ok(caller)
    }
}

/// How `/metrics` counts a failed allocation.
pub(crate) fn error_kind(e: &AllocError) -> ErrorKind {
    e.kind()
}

/// A standby's answer: where the leader is (its client port), if known.
pub(crate) fn not_leader(shared: &Shared) -> String {
    match shared.allocator.leadership().leader() {
        Some(leader) => format!(
            "not the leader: this server is a standby; the leader is {} (client port)",
            leader.addr()
        ),
        None => "not the leader: no server leads at the moment".into(),
    }
}

/// Serves `site` on `listener` until `stop` turns true, then lets open connections finish
/// their requests (at most [`DRAIN`]).
pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    site: Site,
    mut stop: watch::Receiver<bool>,
) {
    let bounds = Arc::new(site.bounds(&shared));
    let slots = Slots::new(bounds.maxclients);
    let sampler = match &site {
        Site::Api(http) => Some(tokio::spawn(rates::sample(shared.clone(), http.clone()))),
        Site::Metrics => None,
    };
    loop {
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => (stream, !peer.ip().to_canonical().is_loopback()),
                Err(e) => {
                    tracing::warn!(error = %e, port = site_name(&site), "HTTP accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stopped(&mut stop) => break,
        };
        let admitted = slots.admit(|slot| {
            let (shared, site, bounds) = (shared.clone(), site.clone(), bounds.clone());
            let conn = connection(
                shared,
                site,
                bounds.clone(),
                (stream, remote),
                slot,
                stop.clone(),
            );
            tokio::spawn(async move {
                match bounds.lifetime {
                    Some(lifetime) => drop(tokio::time::timeout(lifetime, conn).await),
                    None => conn.await,
                }
            })
            .abort_handle()
        });
        // A refused connection, and each one closed to make room, count as a limit hit.
        for _ in 0..admitted.unwrap_or(1) {
            shared.allocator.metrics().error(ErrorKind::Limit);
        }
    }
    drop(listener);
    if let Some(sampler) = sampler {
        sampler.abort();
    }
    let deadline = tokio::time::Instant::now() + DRAIN;
    while slots.len() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    slots.abort_all();
}

/// The port's name in logs.
fn site_name(site: &Site) -> &'static str {
    match site {
        Site::Api(_) => "http",
        Site::Metrics => "metrics",
    }
}

/// Whether a connection ended for a timeout: hyper's own (the request head's) or one of the
/// stream's (`TimedOut`: an answer not taken, a TLS record left incomplete).
fn is_timeout(e: &hyper::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
        {
            return true;
        }
        source = s.source();
    }
    e.is_timeout()
}

/// Returns once `stop` is true (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    while !*stop.borrow_and_update() {
        if stop.changed().await.is_err() {
            return;
        }
    }
}

/// One connection: the TLS handshake when TLS is on (within the port's head timeout), then
/// HTTP/1.1 requests until the client leaves or the server stops.
async fn connection(
    shared: Arc<Shared>,
    site: Site,
    bounds: Arc<Bounds>,
    (tcp, remote): (tokio::net::TcpStream, bool),
    slot: Slot,
    mut stop: watch::Receiver<bool>,
) {
    let _ = tcp.set_nodelay(true);
    let timeout = bounds.head_timeout;
    let site = Peer { site, remote };
    match shared.tls.as_ref() {
        None => requests(shared, site, bounds, tcp, slot, stop).await,
        Some(tls) => {
            let handshake = tls.acceptor().accept(tls.records(tcp, timeout));
            // A shutdown does not wait for a handshake (no request was made yet).
            let handshake = tokio::select! {
                done = tokio::time::timeout(timeout, handshake) => done,
                _ = stopped(&mut stop) => return,
            };
            match handshake {
                Ok(Ok(stream)) => requests(shared, site, bounds, stream, slot, stop).await,
                Ok(Err(_)) => shared.allocator.metrics().error(ErrorKind::Protocol),
                Err(_) => shared.allocator.metrics().error(ErrorKind::Limit),
            }
        }
    }
}

/// A request head above this many bytes closes its connection after the answer: the read
/// buffer grew to hold it, and an idle keep-alive connection must not keep that buffer.
pub(crate) const LARGE_HEAD: usize = 4096;

/// Answers up to this many bytes are not counted in `--http-max-answer-bytes` (one id, an
/// error): each connection has at most one, and `--http-maxclients` bounds those.
const ANSWER_UNCOUNTED: usize = 4096;
/// What an answer's head costs besides its body, near enough.
const ANSWER_HEAD: usize = 256;

/// The request head's size in bytes, near enough (the request line and the headers).
fn head_size<B>(req: &hyper::Request<B>) -> usize {
    let line = req.method().as_str().len() + req.uri().path().len() + 16;
    let query = req.uri().query().map_or(0, str::len);
    let headers: usize = req
        .headers()
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 4)
        .sum();
    line + query + headers
}

/// Serves HTTP/1.1 requests on `stream`; at `stop`, finishes the one in progress and closes.
/// A connection closed for a timeout (the request's, or an answer not taken within
/// `write-timeout-ms`) is reset (see [`socket`]).
async fn requests<S>(
    shared: Arc<Shared>,
    site: Peer,
    bounds: Arc<Bounds>,
    stream: S,
    slot: Slot,
    mut stop: watch::Receiver<bool>,
) where
    S: socket::OnTcp + AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let slot = Arc::new(slot);
    let (max_header, timeout) = (bounds.max_header, bounds.head_timeout);
    let reset = socket::ResetOnDrop::default();
    let owed = socket::Owed::new(bounds.answers.clone());
    let stream = socket::Guarded::new(
        stream,
        shared.limits.write_timeout,
        reset.clone(),
        owed.clone(),
    );
    let service = hyper::service::service_fn(move |req| {
        let (shared, site, slot, owed) = (shared.clone(), site.clone(), slot.clone(), owed.clone());
        async move {
            slot.set_waiting(false);
            let large = head_size(&req) > LARGE_HEAD;
            let mut reply = site.answer(&shared, req).await;
            let size = hyper::body::Body::size_hint(reply.body())
                .exact()
                .unwrap_or(0) as usize;
            // Small answers are not counted: only answers that can add up (a batch) are.
            if size > ANSWER_UNCOUNTED && !owed.answer(size + ANSWER_HEAD) {
                shared.allocator.metrics().error(ErrorKind::Limit);
                reply = reply::busy();
            }
            if large {
                reply.headers_mut().insert(
                    hyper::header::CONNECTION,
                    hyper::header::HeaderValue::from_static("close"),
                );
            }
            slot.set_waiting(true);
            Ok::<_, Infallible>(reply)
        }
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(timeout)
        .keep_alive(bounds.keep_alive)
        .max_buf_size(max_header)
        .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
    tokio::pin!(conn);
    tokio::select! {
        done = conn.as_mut() => {
            if done.as_ref().is_err_and(is_timeout) {
                reset.arm();
            }
            return;
        }
        _ = stopped(&mut stop) => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout(DRAIN, conn).await;
}
