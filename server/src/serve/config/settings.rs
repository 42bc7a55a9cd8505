//! Every setting of `idforge serve`, declared once (see `declare.rs` for the form of a row):
//! the flag, environment variable, TOML key, default, bounds and help all come from here, and so
//! do the settings tables of docs/server.md and the packaged `idforge.toml`.

use super::declare::{Setting, check_bounds, settings};
use crate::serve::setting_error::SettingError;

/// The default client port (Redis's 6379 plus 1000, so both can run side by side).
pub const DEFAULT_PORT: u16 = 7379;

settings! {
    /// The address to listen on.
    ["Network"] bind: String = {"127.0.0.1"}, "ADDR", "IDFORGE_BIND", example "\"127.0.0.1\"";
    /// The client (Redis protocol) port; 0 picks a free one.
    ["Network"] port: u16 = {DEFAULT_PORT}, "PORT", "IDFORGE_PORT", example "7379";
    /// Write the port actually bound to this file once listening (useful with --port 0).
    ["Network"] port_file: std::path::PathBuf = [], "FILE", "IDFORGE_PORT_FILE";
    /// The address clients reach this server at, sent in `-MOVED` and `CLUSTER SLOTS` when
    /// servers share an etcd store.
    ["Network"] advertise: String = ["the bind address and port"], "HOST:PORT", "IDFORGE_ADVERTISE";
    /// Worker threads; 1 runs everything on one event-loop thread.
    ["Network"] threads: usize = ["the number of CPUs"], "N", "IDFORGE_THREADS";
    /// With `--threads 1`: how long the event loop keeps polling for requests after the last
    /// one before it sleeps, in microseconds (0: never; at most 1000000). Saves clients the cost
    /// of waking the server under load, for at most this much CPU per burst.
    ["Network"] busy_poll_us: u64 = {100u64}, "US", "IDFORGE_BUSY_POLL_US";
    /// Log filter (tracing's env-filter syntax, e.g. `info` or `idforge_server=debug`). The log
    /// goes to stderr, in colour only at a terminal without `NO_COLOR`.
    ["Network"] log: String = {"info"}, "FILTER", "IDFORGE_LOG";

    /// Where the embedded SQLite store keeps `idforge.db`, and the guard file is kept (also with
    /// --store).
    ["Store"] data_dir: std::path::PathBuf = ["./idforge-data"], "DIR", "IDFORGE_DATA_DIR",
        example "\"/var/lib/idforge\"";
    /// A store URL instead of the embedded one: sqlite://PATH, postgres://…, mysql://…,
    /// `etcd://[USER:PASSWORD@]HOST:PORT[,HOST:PORT…][/PREFIX]` (`etcds://` over TLS).
    ["Store"] store: String = [], "URL", "IDFORGE_STORE",
        sample "\"postgres://idforge:secret@db.internal/idforge\"";
    /// The guard file, which catches a store that went back (`none`: no guard).
    ["Store"] guard: String = ["idforge.guard in the data dir; none with --store and no --data-dir"],
        "FILE|none", "IDFORGE_GUARD";
    /// Create unknown tags on first use (true) or refuse them (false).
    ["Store"] auto_create: bool = {true}, "BOOL", "IDFORGE_AUTO_CREATE";
    /// The step of tags created without one.
    ["Store"] default_step: i64 = {1000i64}, "N", "IDFORGE_DEFAULT_STEP", min 1, max 2147483647;
    /// The largest dynamic step.
    ["Store"] max_step: i64 = {1i64 << 30}, "N", "IDFORGE_MAX_STEP", min 1;
    /// How long a request may wait for the store when its tag's cache is empty.
    ["Store"] alloc_timeout_ms: u64 = {5000u64}, "MS", "IDFORGE_ALLOC_TIMEOUT_MS";
    /// A loaded tag untouched for this many seconds leaves memory, giving its unused cached ids
    /// back to the store; the next request reloads it. 0: never.
    ["Store"] tag_idle_secs: u64 = {600u64}, "SECS", "IDFORGE_TAG_IDLE_SECS", max 31536000;
    /// How many tags one user without `admin` may create through `INCR`/`INCRBY` on this
    /// server (counted since it started); 0: no limit.
    ["Store"] max_tags_per_user: usize = {10_000usize}, "N", "IDFORGE_MAX_TAGS_PER_USER",
        limit "a non-admin user's `INCR` of a new tag: `-ERR tag quota reached…`";
    /// The most tags loaded in memory at once, over every user (each about 300 bytes); a tag
    /// not in memory is then refused until idle ones leave (--tag-idle-secs). 0: no limit.
    ["Store"] max_tags: usize = {1_000_000usize}, "N", "IDFORGE_MAX_TAGS",
        limit "`INCR`/`INCRBY`/`GET` (and the HTTP API) of a tag not in memory: `-ERR server limit reached: at most N tags in memory…` until idle tags leave";

    /// The layout of `IDF.SNOWFLAKE` ids: a preset or a spec.
    ["Snowflake"] snowflake_layout: String = {"twitter"}, "NAME|SPEC", "IDFORGE_SNOWFLAKE_LAYOUT";
    /// The node id in `IDF.SNOWFLAKE` ids.
    ["Snowflake"] node_id: u64 = ["0; with --stripe, the stripe's K"], "N", "IDFORGE_NODE_ID";
    /// How many `IDF.SNOWFLAKE` names one user without `admin` may start on this server
    /// (counted since it started); 0: no limit. Idle names leave memory after
    /// --tag-idle-secs, as tags do.
    ["Snowflake"] max_snowflake_names_per_user: usize = {1000usize}, "N",
        "IDFORGE_MAX_SNOWFLAKE_NAMES_PER_USER",
        limit "a non-admin user's `IDF.SNOWFLAKE` of a new name: `-ERR snowflake name quota reached…`";
    /// The most `IDF.SNOWFLAKE` names loaded in memory at once, over every user (each about
    /// 400 bytes), also on a server without users; a name not in memory is then refused until
    /// idle ones leave (--tag-idle-secs). 0: no limit.
    ["Snowflake"] max_snowflake_names: usize = {100_000usize}, "N", "IDFORGE_MAX_SNOWFLAKE_NAMES",
        limit "`IDF.SNOWFLAKE` (and Leaf's snowflake URL) of a name not in memory: `-ERR server limit reached: at most N snowflake names in memory…` until idle names leave";

    /// Hand out only the ids of stripe K of N, for every tag: N servers, each on its own store,
    /// serve disjoint ids without talking to each other (docs/server.md, "Active-active without
    /// etcd"). Kept in the store: a server refuses a store claimed by another stripe.
    ["Stripes"] stripe: String = [], "K/N", "IDFORGE_STRIPE";
    /// With --stripe: ids per stripe block, the same on every server of the stripes; one
    /// `INCRBY` may ask for at most this many.
    ["Stripes"] stripe_block: i64 = {crate::serve::allocator::stripe::DEFAULT_BLOCK}, "N",
        "IDFORGE_STRIPE_BLOCK", min 1, max 1099511627776;
    /// With --stripe: take over a store used without stripes (run once, when no server
    /// without --stripe uses it any more).
    ["Stripes"] stripe_takeover: bool = {false}, "BOOL", "IDFORGE_STRIPE_TAKEOVER", bare true;

    /// With a SQL store: elect a leader among the servers sharing it (a lease row; etcd stores
    /// always elect).
    ["High availability"] ha: bool = {false}, "BOOL", "IDFORGE_HA", bare true;
    /// With an etcd store (or --ha): the leader's lease, in whole seconds.
    ["High availability"] lease_ttl: u32 = {1u32}, "SECS", "IDFORGE_LEASE_TTL", min 1, max 3600;
    /// With an etcd store (or --ha): how often a standby looks for the leader.
    ["High availability"] ha_poll_ms: u64 = {50u64}, "MS", "IDFORGE_HA_POLL_MS", min 1, max 10000;
    /// With an etcd store (or --ha): a standby ends the lease of a leader whose port refuses
    /// connections (it is gone), instead of waiting for the lease to run out.
    ["High availability"] takeover_probe: bool = {true}, "BOOL", "IDFORGE_TAKEOVER_PROBE";

    /// The most worker-id leases (`IDF.WORKER ACQUIRE`) one service may hold at once; past
    /// it ACQUIRE is refused until leases end. 0: no limit.
    ["Worker-id leases"] max_leases_per_service: usize = {16_384usize}, "N",
        "IDFORGE_MAX_LEASES_PER_SERVICE",
        limit "`IDF.WORKER ACQUIRE` of that service: `-ERR worker lease limit reached: service '…' holds N leases` until one ends";
    /// The most worker-id leases this server holds at once, over every service; past it
    /// ACQUIRE is refused until leases end. 0: no limit.
    ["Worker-id leases"] max_leases: usize = {65_536usize}, "N", "IDFORGE_MAX_LEASES",
        limit "`IDF.WORKER ACQUIRE`: `-ERR worker lease limit reached: this server holds N leases` until one ends";
    /// How long a worker id stays reserved for the holder that named itself (`ACQUIRE …
    /// HOLDER name`) after its lease ends, in ms: only that holder gets it back meanwhile, and
    /// a reserved id counts as held towards the limits above. 0: no reservation (the holder
    /// still gets its id back while no one else took it).
    ["Worker-id leases"] worker_reserve_ms: u64 = {3_600_000u64}, "MS",
        "IDFORGE_WORKER_RESERVE_MS", max 2592000000,
        limit "ids of holders that left stay held this long after their lease ends (each counts towards --max-leases-per-service and --max-leases)";

    /// Require this password (user `default`, every right) before any command.
    ["Auth"] requirepass: String = [], "PASSWORD", "IDFORGE_REQUIREPASS", sample "\"change me\"";
    /// Serve clients from other hosts while nothing asks for a password (no `--requirepass`, no
    /// users; on the HTTP API no tokens file, on /metrics no token). Off (the default), as
    /// Redis's protected mode: such a port serves loopback clients only, and tells a client
    /// from another host how to open it (a password, users, tokens, or this); /healthz stays
    /// open to probes.
    ["Auth"] insecure_open: bool = {false}, "BOOL", "IDFORGE_INSECURE_OPEN", bare true,
        limit "while no password, user or token is set, clients from other hosts get `-DENIED` (HTTP 403) and are closed";
    /// When auth is required: close a connection that has not authenticated within this many
    /// milliseconds.
    ["Auth"] auth_timeout_ms: u64 = {10_000u64}, "MS", "IDFORGE_AUTH_TIMEOUT_MS", min 1,
        limit "when auth is required, a connection not authenticated by then is closed";
    /// The most argon2 password checks running at once (others wait without memory).
    ["Auth"] auth_concurrency: usize = {2usize}, "N", "IDFORGE_AUTH_CONCURRENCY", min 1, max 1024,
        limit "further AUTH checks wait their turn";
    /// Failed AUTHs a source address may make in a burst; the allowance refills at one per
    /// second, and an address without any is refused without a password check (0: no limit).
    ["Auth"] auth_fail_burst: u32 = {10u32}, "N", "IDFORGE_AUTH_FAIL_BURST",
        limit "AUTH from that address: `-ERR too many failed AUTH attempts…` until it refills (1/s)";
    /// A failed AUTH is answered after this many milliseconds (the connection waits).
    ["Auth"] auth_fail_delay_ms: u64 = {100u64}, "MS", "IDFORGE_AUTH_FAIL_DELAY_MS",
        limit "(the delay before every failed AUTH's reply)";

    /// The most client connections at once; past it a new one gets `-ERR max number of clients
    /// reached` and is closed.
    ["Limits"] maxclients: usize = {10_000usize}, "N", "IDFORGE_MAXCLIENTS", min 1,
        limit "a new connection gets `-ERR max number of clients reached` and is closed (keep `ulimit -n` above it)";
    /// Close a connection idle for this many seconds (0: never).
    ["Limits"] timeout: u64 = {0u64}, "SECS", "IDFORGE_TIMEOUT",
        limit "a connection idle that long is closed";
    /// Close a connection whose request has been half-sent for this many milliseconds.
    ["Limits"] request_timeout_ms: u64 = {10_000u64}, "MS", "IDFORGE_REQUEST_TIMEOUT_MS", min 1,
        limit "a request half-sent for that long is closed (slow loris); with TLS, so is a TLS record (and the handshake) left incomplete that long";
    /// The largest request (all its arguments), in bytes.
    ["Limits"] max_request_bytes: usize = {65_536usize}, "BYTES", "IDFORGE_MAX_REQUEST_BYTES",
        min 1024, max 1048576,
        limit "`-ERR Protocol error: request too big` (or `too big inline request`) and close, as soon as a request's declared or buffered size passes it";
    /// Stop running a connection's pipelined requests once this many bytes of replies wait,
    /// and send them first.
    ["Limits"] reply_buffer_bytes: usize = {65_536usize}, "BYTES", "IDFORGE_REPLY_BUFFER_BYTES",
        min 1024,
        limit "a pipeline stops running once this many bytes of replies wait, sends them, then goes on: pending replies stay under B plus one reply";
    /// Close a client that does not take its replies within this many milliseconds (on the
    /// client port and the HTTP port).
    ["Limits"] write_timeout_ms: u64 = {10_000u64}, "MS", "IDFORGE_WRITE_TIMEOUT_MS", min 1,
        limit "a client that does not take its replies for that long is closed (Redis's client-output-buffer-limit; the hard cap is B plus one reply, since the pipeline waits); on the HTTP port the socket is reset, so the kernel drops the unsent answer at once";

    /// Serve /metrics and /healthz over HTTP on this port (off when unset).
    ["Metrics"] metrics_port: u16 = [], "PORT", "IDFORGE_METRICS_PORT", sample "9379";
    /// Require `Authorization: Bearer TOKEN` (or basic auth with TOKEN as the password) on
    /// /metrics (unset: open).
    ["Metrics"] metrics_token: String = [], "TOKEN", "IDFORGE_METRICS_TOKEN",
        limit "`/metrics` answers 401";
    /// Per-tag series (`idforge_tag_cached_ids{tag=…}`) on /metrics.
    ["Metrics"] metrics_tags: bool = {false}, "BOOL", "IDFORGE_METRICS_TAGS", bare true,
        limit "(per-tag series on `/metrics`)";
    /// The most connections to the metrics port at once; a new one past it closes the oldest
    /// that has not sent its whole request yet (or, when all have, is closed).
    ["Metrics"] metrics_maxclients: usize = {256usize}, "N", "IDFORGE_METRICS_MAXCLIENTS", min 1,
        limit "a new metrics connection closes the oldest one still waiting for its request (or is closed itself when all are answering)";
    /// A metrics connection that has not sent its whole request (and, with TLS, finished the
    /// handshake) within this many milliseconds is closed.
    ["Metrics"] metrics_timeout_ms: u64 = {2000u64}, "MS", "IDFORGE_METRICS_TIMEOUT_MS", min 1,
        limit "a metrics connection without its whole request (and TLS handshake) by then is closed";

    /// Serve the HTTP API (Leaf's and tinyid's URLs) and the status page on this port (off when
    /// unset); same bind address, TLS and shutdown as the client port.
    ["HTTP"] http_port: u16 = [], "PORT", "IDFORGE_HTTP_PORT", sample "8080";
    /// A file of HTTP tokens, one `SHA256-HEX USER` line each (`#` comments): a request with
    /// the token whose SHA-256 is on a line acts as that user (its rights, as over RESP).
    ["HTTP"] http_tokens: std::path::PathBuf = [], "FILE", "IDFORGE_HTTP_TOKENS",
        sample "\"/etc/idforge/http-tokens\"";
    /// The user an HTTP request without a token acts as (unset: such a request is refused
    /// when auth is required or tokens are set).
    ["HTTP"] http_anonymous_user: String = [], "USER", "IDFORGE_HTTP_ANONYMOUS_USER";
    /// The most HTTP connections at once; a new one past it closes the oldest that is not in
    /// the middle of a request (or, when all are, is closed).
    ["HTTP"] http_maxclients: usize = {10_000usize}, "N", "IDFORGE_HTTP_MAXCLIENTS", min 1,
        limit "a new HTTP connection closes the oldest one idle between requests (or is closed itself when all are answering)";
    /// The largest HTTP request head (request line and headers), in bytes.
    ["HTTP"] http_max_header_bytes: usize = {16_384usize}, "BYTES", "IDFORGE_HTTP_MAX_HEADER_BYTES",
        min 8192, max 1048576,
        limit "the connection is closed (`431`) once a request head passes it; a head over 4 KB closes its connection after the answer (no idle connection keeps the larger buffer)";
    /// The largest HTTP request body (a form of parameters), in bytes.
    ["HTTP"] http_max_body_bytes: usize = {4096usize}, "BYTES", "IDFORGE_HTTP_MAX_BODY_BYTES",
        max 65536, limit "`413 Payload Too Large`";
    /// The longest query string (or form body) parsed, in bytes; at most 32 parameters.
    ["HTTP"] http_max_query_bytes: usize = {2048usize}, "BYTES", "IDFORGE_HTTP_MAX_QUERY_BYTES",
        min 64, max 65536, limit "`414 URI Too Long` (more than 32 parameters: `400`)";
    /// Requests per second one token (or the anonymous user) may make, in bursts of as many;
    /// 0: no limit. A server without tokens and auth has no limit per caller.
    ["HTTP"] http_rate_limit: u32 = {10_000u32}, "N", "IDFORGE_HTTP_RATE_LIMIT",
        limit "`429 Too Many Requests` until the token's allowance refills";
    /// The most ids one HTTP request takes (`batchSize` above it is cut to it, as tinyid's
    /// `batch.size.max`; also the largest `nextSegmentId` segment).
    ["HTTP"] http_max_batch: i64 = {100_000i64}, "N", "IDFORGE_HTTP_MAX_BATCH", min 1, max 1000000,
        limit "`batchSize` is cut to it";
    /// Status pages (`/status`) a second to viewers without the metrics token or an admin
    /// token, over every client; each kind of viewer's page is rendered at most once a second
    /// (0: no limit).
    ["HTTP"] http_status_rate: u32 = {20u32}, "N", "IDFORGE_HTTP_STATUS_RATE",
        limit "`429 Too Many Requests` until the next second";
    /// The most answer bytes the HTTP port holds that clients have not taken yet, over every
    /// connection (each connection has one answer at a time: at most --http-max-batch ids).
    ["HTTP"] http_max_answer_bytes: usize = {64usize << 20}, "BYTES",
        "IDFORGE_HTTP_MAX_ANSWER_BYTES", min 65536, max 4294967296,
        limit "a request whose answer would pass it gets `503` with `Retry-After: 1` (clients that do not read their answers are closed at --write-timeout-ms, giving theirs back)";

    /// Speak TLS on the client, metrics and HTTP ports with this certificate chain (PEM, leaf
    /// first); needs --tls-key. Reloaded on SIGHUP.
    ["TLS"] tls_cert: std::path::PathBuf = [], "FILE", "IDFORGE_TLS_CERT",
        sample "\"/etc/idforge/server.pem\"";
    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    ["TLS"] tls_key: std::path::PathBuf = [], "FILE", "IDFORGE_TLS_KEY",
        sample "\"/etc/idforge/server.key\"";
    /// The CA that signs client certificates (PEM), for mutual TLS.
    ["TLS"] tls_ca_cert: std::path::PathBuf = [], "FILE", "IDFORGE_TLS_CA_CERT",
        sample "\"/etc/idforge/clients-ca.pem\"";
    /// With --tls-ca-cert: `yes` (every client shows a certificate signed by it), `optional`
    /// (a client may) or `no`.
    ["TLS"] tls_auth_clients: String = ["yes with --tls-ca-cert, else no"], "yes|no|optional",
        "IDFORGE_TLS_AUTH_CLIENTS";
    /// The most bytes that TLS records still incomplete may hold, over every connection (a
    /// record is up to 18 KB; a client that sends part of one and stops holds that part until
    /// --request-timeout-ms).
    ["TLS"] tls_max_incomplete_bytes: usize = {64usize << 20}, "BYTES",
        "IDFORGE_TLS_MAX_INCOMPLETE_BYTES", min 65536,
        limit "a read that would pass it closes that connection (whole records are never held back: a client's record completes within a round trip)";
}
