//! The status page: `GET /status` (the server, its tags, its leases, its limits),
//! `/status/tag/{tag}` (one tag) and their rate charts (`rate.svg`), plain HTML with the SVG
//! inline, no JavaScript.
//!
//! Who may look: with `--metrics-token`, a request carrying it (bearer, or basic auth with it
//! as the password; a browser asks for the latter) or an HTTP token of an admin user; without,
//! anyone (as `/metrics`). Tag and service names appear only where `/metrics` would show them
//! (`--metrics-tags`), or to an admin token.

use std::fmt::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hyper::StatusCode;
use hyper::body::Bytes;
use hyper::header::{HeaderValue, WWW_AUTHENTICATE};

use super::reply::{HTML, Reply, SVG, finish, with};
use super::{Http, chart};
use crate::serve::auth::credential::constant_time_eq;
use crate::serve::lock::lock;
use crate::serve::metrics::ErrorKind;
use crate::serve::shared::Shared;
use crate::text::html::escape;

/// The most tag rows the page lists (a server may hold many thousands of tags).
const MAX_ROWS: usize = 1000;

/// Who is looking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Viewer {
    /// May see tag and service names.
    names: bool,
    /// Holds the metrics token or an admin token: may see paths and addresses (the guard
    /// file, this server's, the leader's and the standbys' addresses, store errors).
    details: bool,
}

/// The viewer of a request with `token` (`None`: send [`unauthorized`]).
fn viewer(shared: &Shared, http: &Http, token: Option<&[u8]>) -> Option<Viewer> {
    let admin = token
        .and_then(|t| http.tokens.caller(&shared.auth, Some(t)).ok())
        .is_some_and(|c| c.perms.is_admin() && c.key.is_some());
    let metrics_token = shared.limits.metrics_token.as_deref();
    let by_metrics_token =
        metrics_token.is_some_and(|m| token.is_some_and(|t| constant_time_eq(t, m.as_bytes())));
    if metrics_token.is_some() && !admin && !by_metrics_token {
        return None;
    }
    Some(Viewer {
        names: admin || shared.limits.metrics_tags,
        details: admin || by_metrics_token,
    })
}

/// `401`, asking a browser for basic auth (the token as the password).
fn unauthorized() -> Reply {
    let body = page_html(
        "unauthorized",
        "<p>This page needs the metrics token or an admin token.</p>",
    );
    let mut r = with(StatusCode::UNAUTHORIZED, HTML, body);
    r.headers_mut().insert(
        WWW_AUTHENTICATE,
        HeaderValue::from_static("Basic realm=\"idforge status\""),
    );
    r
}

/// A tag's name as a path segment.
fn path_segment(tag: &str) -> String {
    let mut out = String::new();
    for b in tag.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.:".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

fn page_html(title: &str, body: &str) -> String {
    let title = escape(title);
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
         <style>body{{font-family:sans-serif;margin:1.5em}}table{{border-collapse:collapse;\
         margin-bottom:1.5em}}td,th{{border:1px solid #ccc;padding:.25em .6em;text-align:left}}\
         th{{background:#eee}}td.n{{text-align:right}}</style></head><body>{body}</body></html>"
    )
}

/// Rows of `(name, value)` as a two-column table (values already HTML).
fn table(id: &str, rows: &[(&str, String)]) -> String {
    let mut out = format!("<table id=\"{id}\">");
    for (k, v) in rows {
        let _ = write!(out, "<tr><th>{}</th><td>{v}</td></tr>", escape(k));
    }
    out.push_str("</table>");
    out
}

fn ago(d: Option<Duration>) -> String {
    d.map_or_else(
        || "not since loaded".into(),
        |d| format!("{:.1} s ago", d.as_secs_f64()),
    )
}

/// This server's role, as the page and the test read it.
fn role(shared: &Shared) -> &'static str {
    let leadership = shared.allocator.leadership();
    match (leadership.is_elected(), leadership.serving()) {
        (false, _) => "leader (alone)",
        (true, true) => "leader",
        (true, false) => "standby",
    }
}

/// `GET /status`: a page rendered at most once a second per kind of viewer, and at most
/// `--http-status-rate` pages a second to viewers without a token (`429` past it).
pub(crate) fn page(shared: &Shared, http: &Http, token: Option<&[u8]>) -> Reply {
    let Some(viewer) = viewer(shared, http, token) else {
        return unauthorized();
    };
    if !viewer.details && !http.status_limit.allow(None) {
        shared.allocator.metrics().error(ErrorKind::Limit);
        return finish(with(
            StatusCode::TOO_MANY_REQUESTS,
            HTML,
            page_html(
                "busy",
                "<p>Too many status requests; try again in a second.</p>",
            ),
        ));
    }
    let body = http
        .status_pages
        .get(viewer, || render(shared, http, viewer));
    with(StatusCode::OK, HTML, body)
}

/// Status pages kept for [`PAGE_TTL`], one per kind of viewer: the page's cost does not grow
/// with how often it is asked for.
#[derive(Debug, Default)]
pub(crate) struct PageCache {
    pages: Mutex<Vec<(Viewer, Instant, Bytes)>>,
}

/// How long a rendered status page is served again.
const PAGE_TTL: Duration = Duration::from_secs(1);

impl PageCache {
    /// `viewer`'s page: the kept one while fresh, else `render`'s (kept).
    fn get(&self, viewer: Viewer, render: impl FnOnce() -> String) -> Bytes {
        let now = Instant::now();
        let fresh = |at: Instant| now.saturating_duration_since(at) < PAGE_TTL;
        if let Some((_, _, page)) = lock(&self.pages)
            .iter()
            .find(|(v, at, _)| *v == viewer && fresh(*at))
        {
            return page.clone();
        }
        // Rendered outside the lock; two viewers racing both render, once each.
        let page = Bytes::from(render());
        let mut pages = lock(&self.pages);
        pages.retain(|(v, _, _)| *v != viewer);
        pages.push((viewer, now, page.clone()));
        page
    }
}

/// The status page of `viewer`. Its cost does not grow with the tag count: the count is the
/// table's length, and the first rows by name are picked in one pass without copying the
/// others (only for a viewer who may see names).
fn render(shared: &Shared, http: &Http, viewer: Viewer) -> String {
    let a = &shared.allocator;
    let leadership = a.leadership();
    let stripe = a.stripe();
    let standbys: Vec<String> = leadership.standbys().iter().map(|p| p.addr()).collect();
    // Paths, addresses and error texts (which may name either) only to a viewer with a token.
    let detail = |shown: String, hidden: &str| {
        if viewer.details {
            shown
        } else {
            hidden.to_owned()
        }
    };
    const HIDDEN: &str = "(shown with the metrics token or an admin token)";
    let mut body = String::from("<h1>idforge status</h1>");
    body.push_str(&table(
        "server",
        &[
            ("role", format!("<span id=\"role\">{}</span>", role(shared))),
            (
                "this server",
                detail(escape(&leadership.me().addr()), HIDDEN),
            ),
            (
                "leader",
                leadership
                    .leader()
                    .map_or("none".into(), |l| detail(escape(&l.addr()), HIDDEN)),
            ),
            (
                "term",
                leadership
                    .term()
                    .map_or("—".into(), |t| format!("<span id=\"term\">{t}</span>")),
            ),
            (
                "standbys",
                detail(escape(&standbys.join(", ")), &standbys.len().to_string()),
            ),
            ("version", env!("CARGO_PKG_VERSION").into()),
            ("uptime", format!("{} s", a.started().elapsed().as_secs())),
            ("store", a.store().kind().name().into()),
            (
                "guard",
                a.guard.as_ref().map_or("none".into(), |g| {
                    detail(escape(&g.path().display().to_string()), "on")
                }),
            ),
            (
                "guard state",
                match a.refusing() {
                    Some(why) => format!(
                        "store behind the guard{}",
                        detail(format!(": {}", escape(&why)), "")
                    ),
                    None => "ok".into(),
                },
            ),
            (
                "persist",
                a.failing().map_or("ok".into(), |why| {
                    format!("failing{}", detail(format!(": {}", escape(&why)), ""))
                }),
            ),
            (
                "stripe",
                format!("{}/{} (block {})", stripe.index, stripe.count, stripe.block),
            ),
            (
                "connections (client port)",
                a.metrics().connections().to_string(),
            ),
            ("ids handed out", a.metrics().ids_total().to_string()),
        ],
    ));
    body.push_str("<h2>Ids per second (last minute)</h2>");
    body.push_str(&chart::svg(
        "ids per second, every tag",
        &http.rates.per_second(None),
    ));
    let loaded = a.loaded_tags();
    let _ = write!(body, "<h2>Tags</h2><p id=\"tag-count\">{loaded} loaded</p>");
    if viewer.names {
        let tags = a.first_tag_views(MAX_ROWS);
        body.push_str(
            "<table id=\"tags\"><tr><th>tag</th><th>step (stored / dynamic)</th><th>last id</th>\
             <th>cached range</th><th>ids in the last minute</th><th>last persist</th></tr>",
        );
        for t in tags.iter().take(MAX_ROWS) {
            let _ = write!(
                body,
                "<tr class=\"tag\"><td><a href=\"/status/tag/{href}\">{name}</a></td>\
                 <td class=\"n\">{} / {}</td><td class=\"n\">{}</td><td class=\"n\">{} – {}</td>\
                 <td class=\"n\">{}</td><td>{}</td></tr>",
                t.step.0,
                t.step.1,
                t.last,
                t.last + 1,
                t.cached_to - 1,
                http.rates.last_minute(Some(&t.tag)),
                ago(t.persisted_ago),
                href = path_segment(&t.tag),
                name = escape(&t.tag),
            );
        }
        body.push_str("</table>");
        if loaded > MAX_ROWS {
            let _ = write!(
                body,
                "<p>The first {MAX_ROWS} by name; /status/tag/NAME shows any tag.</p>"
            );
        }
        body.push_str("<h2>Worker leases</h2><table id=\"leases\"><tr><th>service</th><th>leases held</th></tr>");
        for (service, held) in a.leases_by_service().into_iter().take(MAX_ROWS) {
            let _ = write!(
                body,
                "<tr><td>{}</td><td class=\"n\">{held}</td></tr>",
                escape(&service)
            );
        }
        body.push_str("</table>");
    } else {
        body.push_str(
            "<p>Tag and service names are shown with --metrics-tags, or to an admin token.</p>",
        );
    }
    let _ = write!(body, "<p>Worker leases held: {}</p>", a.leases_held());
    body.push_str("<h2>Limits</h2>");
    body.push_str(&limits(shared, http));
    page_html("idforge status", &body)
}

/// The limits in force.
fn limits(shared: &Shared, http: &Http) -> String {
    let l = &shared.limits;
    let h = &http.settings;
    let p = shared.allocator.policy();
    table(
        "limits",
        &[
            ("maxclients", l.maxclients.to_string()),
            (
                "timeout",
                l.idle_timeout
                    .map_or("never".into(), |t| format!("{} s", t.as_secs())),
            ),
            (
                "request-timeout-ms",
                l.request_timeout.as_millis().to_string(),
            ),
            ("max-request-bytes", l.max_request.to_string()),
            ("reply-buffer-bytes", l.reply_buffer.to_string()),
            ("write-timeout-ms", l.write_timeout.as_millis().to_string()),
            ("auth-concurrency", l.auth_concurrency.to_string()),
            ("auth-fail-burst", l.auth_fail_burst.to_string()),
            ("max-tags-per-user", p.max_tags_per_user.to_string()),
            (
                "max-leases-per-service",
                p.max_leases_per_service.to_string(),
            ),
            ("max-leases", p.max_leases.to_string()),
            ("worker-reserve-ms", p.worker_reserve_ms.to_string()),
            ("metrics-maxclients", l.metrics_maxclients.to_string()),
            ("http-maxclients", h.maxclients.to_string()),
            ("http-max-header-bytes", h.max_header.to_string()),
            ("http-max-body-bytes", h.max_body.to_string()),
            ("http-max-query-bytes", h.max_query.to_string()),
            (
                "http-rate-limit",
                format!("{} per second per token", h.rate_limit),
            ),
            ("http-max-batch", h.max_batch.to_string()),
            ("http-max-answer-bytes", h.max_answer_bytes.to_string()),
            ("http-status-rate", h.status_rate.to_string()),
            ("max-tags", p.max_tags.to_string()),
            ("max-snowflake-names", p.max_snowflake_names.to_string()),
        ],
    )
}

/// `GET /status/tag/{tag}`.
pub(crate) async fn tag_page(
    shared: &Shared,
    http: &Http,
    token: Option<&[u8]>,
    tag: &str,
) -> Reply {
    let Some(viewer) = viewer(shared, http, token) else {
        return unauthorized();
    };
    let not_found = || {
        with(
            StatusCode::NOT_FOUND,
            HTML,
            page_html("not found", "<p>No such tag.</p>"),
        )
    };
    if !viewer.names || idforge::source::validate_tag(tag).is_err() {
        return not_found();
    }
    let info = match shared.allocator.info(tag).await {
        Ok(Some(info)) => info,
        Ok(None) => return not_found(),
        Err(e) => {
            let body = format!("<p>store: {}</p>", escape(&e.to_string()));
            return with(
                StatusCode::SERVICE_UNAVAILABLE,
                HTML,
                page_html("store unavailable", &body),
            );
        }
    };
    let view = shared.allocator.tag_view(tag);
    let name = escape(tag);
    let mut body =
        format!("<p><a href=\"/status\">status</a></p><h1>tag <span id=\"tag\">{name}</span></h1>");
    body.push_str(&table(
        "tag-detail",
        &[
            ("last id", info.last.to_string()),
            ("persisted max_id", info.max_id.to_string()),
            ("cached ids", info.cached.to_string()),
            ("step (stored)", info.step.to_string()),
            ("step (dynamic)", info.dynamic_step.to_string()),
            (
                "description",
                escape(info.description.as_deref().unwrap_or("")),
            ),
            (
                "loaded",
                if view.is_some() {
                    "yes"
                } else {
                    "no (idle or not used since start)"
                }
                .into(),
            ),
            ("last persist", ago(view.and_then(|v| v.persisted_ago))),
            (
                "ids in the last minute",
                http.rates.last_minute(Some(tag)).to_string(),
            ),
        ],
    ));
    body.push_str(&chart::svg(
        &format!("ids per second, {tag}"),
        &http.rates.per_second(Some(tag)),
    ));
    with(
        StatusCode::OK,
        HTML,
        page_html(&format!("idforge tag {tag}"), &body),
    )
}

/// `GET /status/rate.svg` and `/status/tag/{tag}/rate.svg`.
pub(crate) fn chart(
    shared: &Shared,
    http: &Http,
    token: Option<&[u8]>,
    tag: Option<&str>,
) -> Reply {
    let Some(viewer) = viewer(shared, http, token) else {
        return unauthorized();
    };
    match tag {
        Some(_) if !viewer.names => with(StatusCode::NOT_FOUND, SVG, ""),
        Some(t) => with(
            StatusCode::OK,
            SVG,
            chart::svg(
                &format!("ids per second, {t}"),
                &http.rates.per_second(Some(t)),
            ),
        ),
        None => with(
            StatusCode::OK,
            SVG,
            chart::svg("ids per second, every tag", &http.rates.per_second(None)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped_for_html_and_paths() {
        assert_eq!(
            escape("<a href='x'>&\""),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;"
        );
        assert_eq!(path_segment("orders:eu-1.x_y"), "orders:eu-1.x_y");
        assert_eq!(path_segment("a b/é"), "a%20b%2F%C3%A9");
    }
}
