//! Counters, and their Prometheus text exposition.
//!
//! Written out by hand rather than through a metrics crate: a handful of atomics, read at scrape
//! time together with the allocator's live per-tag cache levels (which a registry would need a
//! second copy of). The HTTP front serves them (and `/healthz`) on the metrics port
//! (`crate::serve::http::metrics_page`).

pub mod family;

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Why a request failed, for `idforge_errors_total{kind}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A malformed or oversized request (the connection is closed).
    Protocol,
    /// Unknown command, wrong arity, a bad number or name.
    Usage,
    /// Not authenticated, wrong password or missing permission.
    Auth,
    /// The store failed or did not answer in time.
    Store,
    /// A tag's ids would pass the 64-bit signed maximum.
    Overflow,
    /// The tag does not exist (and auto-create is off).
    NoTag,
    /// Sent elsewhere: `MOVED` to the leader, or `CLUSTERDOWN` while there is none.
    Moved,
    /// A client refused or closed for passing a limit: maxclients, a timeout, the reply buffer.
    Limit,
}

impl ErrorKind {
    const ALL: [ErrorKind; 8] = [
        ErrorKind::Protocol,
        ErrorKind::Usage,
        ErrorKind::Auth,
        ErrorKind::Store,
        ErrorKind::Overflow,
        ErrorKind::NoTag,
        ErrorKind::Moved,
        ErrorKind::Limit,
    ];

    fn name(self) -> &'static str {
        match self {
            ErrorKind::Protocol => "protocol",
            ErrorKind::Usage => "usage",
            ErrorKind::Auth => "auth",
            ErrorKind::Store => "store",
            ErrorKind::Overflow => "overflow",
            ErrorKind::NoTag => "no_tag",
            ErrorKind::Moved => "moved",
            ErrorKind::Limit => "limit",
        }
    }
}

/// Which API an HTTP request went to, for `idforge_http_requests_total{api}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpApi {
    /// Leaf's `/api/segment/get` and `/api/snowflake/get`.
    Leaf,
    /// tinyid's `/tinyid/id/…`.
    Tinyid,
    /// The status page and its charts.
    Status,
    /// Anything else (a 404, a refused method or size).
    Other,
}

impl HttpApi {
    const ALL: [HttpApi; 4] = [
        HttpApi::Leaf,
        HttpApi::Tinyid,
        HttpApi::Status,
        HttpApi::Other,
    ];

    fn name(self) -> &'static str {
        match self {
            HttpApi::Leaf => "leaf",
            HttpApi::Tinyid => "tinyid",
            HttpApi::Status => "status",
            HttpApi::Other => "other",
        }
    }
}

/// Upper bounds (seconds) of the persist latency histogram's buckets.
const BUCKETS: [f64; 11] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
];

/// The server's state at scrape time, read by the metrics port from the allocator: what the
/// alert rules of `deploy/prometheus/` watch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gauges {
    /// This server hands out ids: the leader, or a server not in an elected group.
    pub serving: bool,
    /// This server is one of a group electing a leader (an etcd store, or `--ha`).
    pub elected: bool,
    /// The store went back behind the guard: the server refuses to hand out ids.
    pub behind_guard: bool,
    /// Persisting high-water marks fails right now (requests for uncached ids wait or fail).
    pub persist_failing: bool,
    /// The largest id reserved by any loaded tag (0 with none): how near a tag is to the
    /// 64-bit signed end of its store.
    pub highest_id: i64,
    /// Worker-id leases held, over every service, and their bound (`--max-leases`).
    pub leases: (usize, usize),
    /// The most leases one service holds, and the bound per service
    /// (`--max-leases-per-service`).
    pub service_leases: (usize, usize),
    /// When the TLS certificate chain in use first expires (Unix seconds), with TLS on.
    pub tls_not_after: Option<i64>,
}

/// The server's counters.
#[derive(Debug, Default)]
pub struct Metrics {
    errors: [AtomicU64; ErrorKind::ALL.len()],
    ids: AtomicU64,
    persists: AtomicU64,
    persist_failures: AtomicU64,
    persist_buckets: [AtomicU64; BUCKETS.len()],
    persist_micros: AtomicU64,
    connections: AtomicU64,
    connections_total: AtomicU64,
    http_requests: [AtomicU64; HttpApi::ALL.len()],
}

impl Metrics {
    /// Counts an HTTP request.
    pub fn http_request(&self, api: HttpApi) {
        self.http_requests[api as usize].fetch_add(1, Relaxed);
    }

    /// Counts a failed request.
    pub fn error(&self, kind: ErrorKind) {
        self.errors[kind as usize].fetch_add(1, Relaxed);
    }

    /// Counts ids handed out.
    pub fn ids(&self, n: u64) {
        self.ids.fetch_add(n, Relaxed);
    }

    /// Records one committed persist transaction and how long it took.
    pub fn persisted(&self, took: Duration) {
        self.persists.fetch_add(1, Relaxed);
        self.persist_micros
            .fetch_add(took.as_micros() as u64, Relaxed);
        let secs = took.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|b| secs <= *b) {
            self.persist_buckets[i].fetch_add(1, Relaxed);
        }
    }

    /// Counts a failed persist transaction.
    pub fn persist_failed(&self) {
        self.persist_failures.fetch_add(1, Relaxed);
    }

    /// A connection opened.
    pub fn connected(&self) {
        self.connections.fetch_add(1, Relaxed);
        self.connections_total.fetch_add(1, Relaxed);
    }

    /// A connection closed.
    pub fn disconnected(&self) {
        self.connections.fetch_sub(1, Relaxed);
    }

    /// Open connections.
    pub fn connections(&self) -> u64 {
        self.connections.load(Relaxed)
    }

    /// Ids handed out since start.
    pub fn ids_total(&self) -> u64 {
        self.ids.load(Relaxed)
    }

    /// Persist transactions committed since start.
    pub fn persists_total(&self) -> u64 {
        self.persists.load(Relaxed)
    }

    /// The Prometheus text exposition, with `requests` = (command, requests) as the commands
    /// count them, and `cache` = (tag, ids cached in memory) per loaded tag: one series per tag
    /// when `per_tag` (`--metrics-tags`; 119k tags made a 5.9 MB page), else their count and sum.
    pub fn render<'a>(
        &self,
        requests: impl IntoIterator<Item = (&'a str, u64)>,
        cache: &[(String, i64)],
        per_tag: bool,
        gauges: &Gauges,
    ) -> String {
        let mut out = String::with_capacity(4096);
        render_gauges(&mut out, gauges);
        let name = "idforge_requests_total";
        header(&mut out, name, "counter", "Requests by command.");
        for (command, v) in requests {
            let _ = writeln!(out, "{name}{{command=\"{command}\"}} {v}");
        }
        let name = "idforge_http_requests_total";
        header(
            &mut out,
            name,
            "counter",
            "HTTP requests by API (--http-port).",
        );
        for api in HttpApi::ALL {
            let v = self.http_requests[api as usize].load(Relaxed);
            let _ = writeln!(out, "{name}{{api=\"{}\"}} {v}", api.name());
        }
        let name = "idforge_errors_total";
        header(&mut out, name, "counter", "Failed requests by kind.");
        for kind in ErrorKind::ALL {
            let v = self.errors[kind as usize].load(Relaxed);
            let _ = writeln!(out, "{name}{{kind=\"{}\"}} {v}", kind.name());
        }
        for (name, kind, help, v) in [
            (
                "idforge_ids_allocated_total",
                "counter",
                "Ids handed out (INCR, INCRBY ranges, IDF.SNOWFLAKE).",
                self.ids.load(Relaxed),
            ),
            (
                "idforge_persist_failures_total",
                "counter",
                "Persist transactions that failed (retried).",
                self.persist_failures.load(Relaxed),
            ),
            (
                "idforge_connections",
                "gauge",
                "Open client connections.",
                self.connections.load(Relaxed),
            ),
            (
                "idforge_connections_total",
                "counter",
                "Client connections accepted.",
                self.connections_total.load(Relaxed),
            ),
        ] {
            header(&mut out, name, kind, help);
            let _ = writeln!(out, "{name} {v}");
        }
        let name = "idforge_persist_seconds";
        let help = "Persist transactions (high-water marks of many tags at once).";
        header(&mut out, name, "histogram", help);
        let mut cumulative = 0;
        for (i, bound) in BUCKETS.iter().enumerate() {
            cumulative += self.persist_buckets[i].load(Relaxed);
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {cumulative}");
        }
        let count = self.persists.load(Relaxed);
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let sum = self.persist_micros.load(Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {count}");
        let name = "idforge_tags_loaded";
        header(&mut out, name, "gauge", "Tags with ids cached in memory.");
        let _ = writeln!(out, "{name} {}", cache.len());
        let name = "idforge_cached_ids";
        let help = "Ids reserved in the store and not yet handed out, all tags.";
        header(&mut out, name, "gauge", help);
        let total: i64 = cache.iter().map(|(_, c)| *c).fold(0, i64::saturating_add);
        let _ = writeln!(out, "{name} {total}");
        if per_tag {
            let name = "idforge_tag_cached_ids";
            let help = "Ids of a tag reserved in the store and not yet handed out.";
            header(&mut out, name, "gauge", help);
            for (tag, cached) in cache {
                // Tags are [A-Za-z0-9_.:-]: nothing to escape in a label value.
                let _ = writeln!(out, "{name}{{tag=\"{tag}\"}} {cached}");
            }
        }
        out
    }
}

/// The state gauges, each with its help text (booleans are 0 or 1).
fn render_gauges(out: &mut String, g: &Gauges) {
    let flag = |b: bool| u64::from(b) as i64;
    for (name, help, v) in [
        (
            "idforge_serving",
            "1 when this server hands out ids (the leader, or not in an elected group).",
            flag(g.serving),
        ),
        (
            "idforge_elected",
            "1 when this server is in a group that elects a leader (etcd store or --ha).",
            flag(g.elected),
        ),
        (
            "idforge_store_behind_guard",
            "1 when the store went back behind the guard file: no ids are handed out.",
            flag(g.behind_guard),
        ),
        (
            "idforge_persist_failing",
            "1 while persisting high-water marks fails.",
            flag(g.persist_failing),
        ),
        (
            "idforge_tag_highest_id",
            "The largest id any loaded tag has reserved (the end is 9223372036854775807).",
            g.highest_id,
        ),
        (
            "idforge_worker_leases",
            "Worker-id leases held, over every service.",
            g.leases.0 as i64,
        ),
        (
            "idforge_worker_leases_limit",
            "The most worker-id leases held at once (--max-leases; 0: no limit).",
            g.leases.1 as i64,
        ),
        (
            "idforge_worker_leases_service_max",
            "The most worker-id leases one service holds.",
            g.service_leases.0 as i64,
        ),
        (
            "idforge_worker_leases_service_limit",
            "The most leases one service may hold (--max-leases-per-service; 0: no limit).",
            g.service_leases.1 as i64,
        ),
    ] {
        header(out, name, "gauge", help);
        let _ = writeln!(out, "{name} {v}");
    }
    if let Some(t) = g.tls_not_after {
        let name = "idforge_tls_cert_not_after_seconds";
        let help = "When the TLS certificate chain in use first expires (Unix time).";
        header(out, name, "gauge", help);
        let _ = writeln!(out, "{name} {t}");
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_has_every_family() {
        let m = Metrics::default();
        m.http_request(HttpApi::Tinyid);
        m.error(ErrorKind::Usage);
        m.ids(7);
        m.persisted(Duration::from_millis(3));
        let cache = [("orders".into(), 42), ("users".into(), 8)];
        let requests = [("incr", 1), ("get", 0)];
        let gauges = Gauges {
            serving: true,
            highest_id: 9,
            leases: (3, 10),
            service_leases: (2, 5),
            tls_not_after: Some(1_930_348_800),
            ..Gauges::default()
        };
        let text = m.render(requests, &cache, true, &gauges);
        for want in [
            "idforge_requests_total{command=\"incr\"} 1",
            "idforge_http_requests_total{api=\"tinyid\"} 1",
            "idforge_http_requests_total{api=\"leaf\"} 0",
            "idforge_errors_total{kind=\"usage\"} 1",
            "idforge_ids_allocated_total 7",
            "idforge_persist_seconds_bucket{le=\"0.005\"} 1",
            "idforge_persist_seconds_bucket{le=\"0.0025\"} 0",
            "idforge_persist_seconds_count 1",
            "idforge_tag_cached_ids{tag=\"orders\"} 42",
            "idforge_tags_loaded 2",
            "idforge_cached_ids 50",
            "idforge_serving 1",
            "idforge_elected 0",
            "idforge_store_behind_guard 0",
            "idforge_persist_failing 0",
            "idforge_tag_highest_id 9",
            "idforge_worker_leases 3",
            "idforge_worker_leases_limit 10",
            "idforge_worker_leases_service_max 2",
            "idforge_worker_leases_service_limit 5",
            "idforge_tls_cert_not_after_seconds 1930348800",
        ] {
            assert!(text.contains(want), "{want} missing from\n{text}");
        }
        let text = m.render(requests, &cache, false, &gauges);
        assert!(
            !text.contains("orders"),
            "no tag names without --metrics-tags"
        );
        assert!(text.contains("idforge_cached_ids 50"));
        let plain = m.render(requests, &cache, false, &Gauges::default());
        assert!(!plain.contains("tls_cert"), "no expiry without TLS");
    }
}
