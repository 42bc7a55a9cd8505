//! `idforge serve` settings: flags, `IDFORGE_*` environment variables and a TOML file, in that
//! order of precedence, then the defaults.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use serde::Deserialize;

use super::engine::Policy;
use super::ha::ElectionConfig;
use super::stripe::{DEFAULT_BLOCK, Stripe};
use super::tls::{ClientAuth, TlsFiles};
use crate::text::layout::parse_layout;

/// The default client port (Redis's 6379 plus 1000, so both can run side by side).
pub const DEFAULT_PORT: u16 = 7379;

/// The settings of `idforge serve`. Each can also be given in the `--config` TOML file under
/// the same name with dashes (`data-dir = "/var/lib/idforge"`).
#[derive(Debug, Clone, Default, Args, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct ServeArgs {
    /// A TOML file with any of these settings (flags and environment variables win over it).
    #[arg(long, env = "IDFORGE_CONFIG", value_name = "FILE")]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// The address to listen on [default: 127.0.0.1].
    #[arg(long, env = "IDFORGE_BIND", value_name = "ADDR")]
    pub bind: Option<String>,
    /// The client (Redis protocol) port; 0 picks a free one [default: 7379].
    #[arg(long, env = "IDFORGE_PORT", value_name = "PORT")]
    pub port: Option<u16>,
    /// Write the port actually bound to this file once listening (useful with --port 0).
    #[arg(long, env = "IDFORGE_PORT_FILE", value_name = "FILE")]
    pub port_file: Option<PathBuf>,
    /// Where the embedded SQLite store keeps `idforge.db`, and the guard file is kept (also with
    /// --store) [default: ./idforge-data].
    #[arg(long, env = "IDFORGE_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// A store URL instead of the embedded one: sqlite://PATH, postgres://…, mysql://…,
    /// `etcd://HOST:PORT[,HOST:PORT…][/PREFIX]` (`etcds://` over TLS).
    #[arg(long, env = "IDFORGE_STORE", value_name = "URL")]
    pub store: Option<String>,
    /// The guard file, which catches a store that went back (`none`: no guard) [default:
    /// idforge.guard in the data dir; none with --store and no --data-dir].
    #[arg(long, env = "IDFORGE_GUARD", value_name = "FILE|none")]
    pub guard: Option<String>,
    /// Require this password (user `default`, every right) before any command.
    #[arg(long, env = "IDFORGE_REQUIREPASS", value_name = "PASSWORD")]
    pub requirepass: Option<String>,
    /// Serve /metrics and /healthz over HTTP on this port (off when unset).
    #[arg(long, env = "IDFORGE_METRICS_PORT", value_name = "PORT")]
    pub metrics_port: Option<u16>,
    /// Create unknown tags on first use (true) or refuse them (false) [default: true].
    #[arg(long, env = "IDFORGE_AUTO_CREATE", value_name = "BOOL")]
    pub auto_create: Option<bool>,
    /// The step of tags created without one [default: 1000].
    #[arg(long, env = "IDFORGE_DEFAULT_STEP", value_name = "N")]
    pub default_step: Option<i64>,
    /// The largest dynamic step [default: 1073741824].
    #[arg(long, env = "IDFORGE_MAX_STEP", value_name = "N")]
    pub max_step: Option<i64>,
    /// How long a request may wait for the store when its tag's cache is empty [default: 5000].
    #[arg(long, env = "IDFORGE_ALLOC_TIMEOUT_MS", value_name = "MS")]
    pub alloc_timeout_ms: Option<u64>,
    /// The layout of `IDF.SNOWFLAKE` ids: a preset or a spec [default: twitter].
    #[arg(long, env = "IDFORGE_SNOWFLAKE_LAYOUT", value_name = "NAME|SPEC")]
    pub snowflake_layout: Option<String>,
    /// The node id in `IDF.SNOWFLAKE` ids [default: 0; with --stripe, the stripe's K].
    #[arg(long, env = "IDFORGE_NODE_ID", value_name = "N")]
    pub node_id: Option<u64>,
    /// Hand out only the ids of stripe K of N, for every tag: N servers, each on its own store,
    /// serve disjoint ids without talking to each other (docs/server.md, "Active-active without
    /// etcd"). Kept in the store: a server refuses a store claimed by another stripe
    /// [default: none].
    #[arg(long, env = "IDFORGE_STRIPE", value_name = "K/N")]
    pub stripe: Option<String>,
    /// With --stripe: ids per stripe block, the same on every server of the stripes; one
    /// `INCRBY` may ask for at most this many [default: 10000000].
    #[arg(long, env = "IDFORGE_STRIPE_BLOCK", value_name = "N")]
    pub stripe_block: Option<i64>,
    /// With --stripe: take over a store used without stripes (run once, when no server
    /// without --stripe uses it any more) [default: false].
    #[arg(long, env = "IDFORGE_STRIPE_TAKEOVER", value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub stripe_takeover: Option<bool>,
    /// Worker threads; 1 runs everything on one event-loop thread [default: the number of CPUs].
    #[arg(long, env = "IDFORGE_THREADS", value_name = "N")]
    pub threads: Option<usize>,
    /// With `--threads 1`: how long the event loop keeps polling for requests after the last
    /// one before it sleeps, in microseconds (0: never). Saves clients the cost of waking the
    /// server under load, for at most this much CPU per burst [default: 100].
    #[arg(long, env = "IDFORGE_BUSY_POLL_US", value_name = "US")]
    pub busy_poll_us: Option<u64>,
    /// Log filter (tracing's env-filter syntax, e.g. `info` or `idforge_server=debug`)
    /// [default: info]. The log goes to stderr, in colour only at a terminal without `NO_COLOR`.
    #[arg(long, env = "IDFORGE_LOG", value_name = "FILTER")]
    pub log: Option<String>,
    /// The address clients reach this server at, sent in `-MOVED` and `CLUSTER SLOTS` when
    /// servers share an etcd store [default: the bind address and port].
    #[arg(long, env = "IDFORGE_ADVERTISE", value_name = "HOST:PORT")]
    pub advertise: Option<String>,
    /// With a SQL store: elect a leader among the servers sharing it (a lease row; etcd stores
    /// always elect) [default: false].
    #[arg(long, env = "IDFORGE_HA", value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub ha: Option<bool>,
    /// With an etcd store (or --ha): the leader's lease, in whole seconds [default: 1].
    #[arg(long, env = "IDFORGE_LEASE_TTL", value_name = "SECS")]
    pub lease_ttl: Option<u32>,
    /// With an etcd store (or --ha): how often a standby looks for the leader [default: 50].
    #[arg(long, env = "IDFORGE_HA_POLL_MS", value_name = "MS")]
    pub ha_poll_ms: Option<u64>,
    /// With an etcd store (or --ha): a standby ends the lease of a leader whose port refuses
    /// connections (it is gone), instead of waiting for the lease to run out [default: true].
    #[arg(long, env = "IDFORGE_TAKEOVER_PROBE", value_name = "BOOL")]
    pub takeover_probe: Option<bool>,
    /// How many tags one user without `admin` may create through `INCR`/`INCRBY` on this
    /// server (counted since it started); 0: no limit [default: 10000].
    #[arg(long, env = "IDFORGE_MAX_TAGS_PER_USER", value_name = "N")]
    pub max_tags_per_user: Option<usize>,
    /// How many `IDF.SNOWFLAKE` names one user without `admin` may start on this server
    /// (counted since it started); 0: no limit [default: 1000]. Idle names leave memory after
    /// --tag-idle-secs, as tags do.
    #[arg(long, env = "IDFORGE_MAX_SNOWFLAKE_NAMES_PER_USER", value_name = "N")]
    pub max_snowflake_names_per_user: Option<usize>,
    /// A loaded tag untouched for this many seconds leaves memory, giving its unused cached ids
    /// back to the store; the next request reloads it. 0: never [default: 600].
    #[arg(long, env = "IDFORGE_TAG_IDLE_SECS", value_name = "SECS")]
    pub tag_idle_secs: Option<u64>,
    /// The most worker-id leases (`IDF.WORKER ACQUIRE`) one service may hold at once; past
    /// it ACQUIRE is refused until leases end. 0: no limit [default: 16384].
    #[arg(long, env = "IDFORGE_MAX_LEASES_PER_SERVICE", value_name = "N")]
    pub max_leases_per_service: Option<usize>,
    /// The most worker-id leases this server holds at once, over every service; past it
    /// ACQUIRE is refused until leases end. 0: no limit [default: 65536].
    #[arg(long, env = "IDFORGE_MAX_LEASES", value_name = "N")]
    pub max_leases: Option<usize>,
    // --- Limits on what clients may hold (see docs/server.md "Limits"). ---
    /// The most client connections at once; past it a new one gets `-ERR max number of clients
    /// reached` and is closed [default: 10000].
    #[arg(long, env = "IDFORGE_MAXCLIENTS", value_name = "N")]
    pub maxclients: Option<usize>,
    /// Close a connection idle for this many seconds (0: never) [default: 0].
    #[arg(long, env = "IDFORGE_TIMEOUT", value_name = "SECS")]
    pub timeout: Option<u64>,
    /// When auth is required: close a connection that has not authenticated within this many
    /// milliseconds [default: 10000].
    #[arg(long, env = "IDFORGE_AUTH_TIMEOUT_MS", value_name = "MS")]
    pub auth_timeout_ms: Option<u64>,
    /// Close a connection whose request has been half-sent for this many milliseconds
    /// [default: 10000].
    #[arg(long, env = "IDFORGE_REQUEST_TIMEOUT_MS", value_name = "MS")]
    pub request_timeout_ms: Option<u64>,
    /// The largest request (all its arguments), in bytes, 1024 to 1048576 [default: 65536].
    #[arg(long, env = "IDFORGE_MAX_REQUEST_BYTES", value_name = "BYTES")]
    pub max_request_bytes: Option<usize>,
    /// Stop running a connection's pipelined requests once this many bytes of replies wait,
    /// and send them first [default: 65536].
    #[arg(long, env = "IDFORGE_REPLY_BUFFER_BYTES", value_name = "BYTES")]
    pub reply_buffer_bytes: Option<usize>,
    /// Close a client that does not take its replies within this many milliseconds
    /// [default: 10000].
    #[arg(long, env = "IDFORGE_WRITE_TIMEOUT_MS", value_name = "MS")]
    pub write_timeout_ms: Option<u64>,
    /// The most argon2 password checks running at once (others wait without memory)
    /// [default: 2].
    #[arg(long, env = "IDFORGE_AUTH_CONCURRENCY", value_name = "N")]
    pub auth_concurrency: Option<usize>,
    /// Failed AUTHs a source address may make in a burst; the allowance refills at one per
    /// second, and an address without any is refused without a password check (0: no limit)
    /// [default: 10].
    #[arg(long, env = "IDFORGE_AUTH_FAIL_BURST", value_name = "N")]
    pub auth_fail_burst: Option<u32>,
    /// A failed AUTH is answered after this many milliseconds (the connection waits)
    /// [default: 100].
    #[arg(long, env = "IDFORGE_AUTH_FAIL_DELAY_MS", value_name = "MS")]
    pub auth_fail_delay_ms: Option<u64>,
    /// Require `Authorization: Bearer TOKEN` (or basic auth with TOKEN as the password) on
    /// /metrics (unset: open).
    #[arg(long, env = "IDFORGE_METRICS_TOKEN", value_name = "TOKEN")]
    pub metrics_token: Option<String>,
    /// Per-tag series (`idforge_tag_cached_ids{tag=…}`) on /metrics [default: false].
    #[arg(long, env = "IDFORGE_METRICS_TAGS", value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub metrics_tags: Option<bool>,
    /// The most connections to the metrics port at once; a new one past it closes the oldest
    /// that has not sent its whole request yet (or, when all have, is closed) [default: 256].
    #[arg(long, env = "IDFORGE_METRICS_MAXCLIENTS", value_name = "N")]
    pub metrics_maxclients: Option<usize>,
    /// A metrics connection that has not sent its whole request (and, with TLS, finished the
    /// handshake) within this many milliseconds is closed [default: 2000].
    #[arg(long, env = "IDFORGE_METRICS_TIMEOUT_MS", value_name = "MS")]
    pub metrics_timeout_ms: Option<u64>,
    // --- End of limits. ---
    /// Speak TLS on the client and metrics ports with this certificate chain (PEM, leaf
    /// first); needs --tls-key. Reloaded on SIGHUP.
    #[arg(long, env = "IDFORGE_TLS_CERT", value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, env = "IDFORGE_TLS_KEY", value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// The CA that signs client certificates (PEM), for mutual TLS.
    #[arg(long, env = "IDFORGE_TLS_CA_CERT", value_name = "FILE")]
    pub tls_ca_cert: Option<PathBuf>,
    /// With --tls-ca-cert: `yes` (every client shows a certificate signed by it), `optional`
    /// (a client may) or `no` [default: yes with --tls-ca-cert, else no].
    #[arg(long, env = "IDFORGE_TLS_AUTH_CLIENTS", value_name = "yes|no|optional")]
    pub tls_auth_clients: Option<String>,
}

/// The resolved settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Listen address.
    pub bind: String,
    /// Client port (0: any).
    pub port: u16,
    /// Where to write the bound port.
    pub port_file: Option<PathBuf>,
    /// The store URL.
    pub store: String,
    /// The data directory to create (the embedded store's, or the guard's).
    pub data_dir: Option<PathBuf>,
    /// The guard file (see [`super::guard`]).
    pub guard: Option<PathBuf>,
    /// The `default` user's password.
    pub requirepass: Option<String>,
    /// The metrics port.
    pub metrics_port: Option<u16>,
    /// Allocation policy.
    pub policy: Policy,
    /// `IDF.SNOWFLAKE` layout.
    pub layout: idforge::Layout,
    /// `IDF.SNOWFLAKE` node id.
    pub node_id: u64,
    /// The ids this server hands out (`--stripe`).
    pub stripe: Stripe,
    /// Take over a store used without stripes.
    pub stripe_takeover: bool,
    /// Worker threads.
    pub threads: Option<usize>,
    /// How long to busy-poll after a request.
    pub busy_poll: Duration,
    /// Log filter.
    pub log: String,
    /// `host:port` for redirects (`None`: the bound address).
    pub advertise: Option<(String, u16)>,
    /// The election, with an etcd store or `--ha`.
    pub election: ElectionConfig,
    /// Elect a leader on a SQL store.
    pub ha: bool,
    /// What one client may hold.
    pub limits: Limits,
    /// TLS on the client and metrics ports (`None`: plain TCP).
    pub tls: Option<TlsFiles>,
}

/// Bounds on what clients may make the server hold (docs/server.md "Limits").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// The most connections at once.
    pub maxclients: usize,
    /// Idle connections are closed after this (`None`: never).
    pub idle_timeout: Option<Duration>,
    /// Unauthenticated connections are closed after this (when auth is required).
    pub auth_timeout: Duration,
    /// A half-sent request must be complete within this.
    pub request_timeout: Duration,
    /// The largest request, in bytes.
    pub max_request: usize,
    /// Pending replies past which a pipeline stops running until they are sent.
    pub reply_buffer: usize,
    /// How long a client may take to accept its replies.
    pub write_timeout: Duration,
    /// Concurrent argon2 checks.
    pub auth_concurrency: usize,
    /// Failed AUTHs per source address in a burst (refilled at 1/s; 0: no limit).
    pub auth_fail_burst: u32,
    /// The delay before a failed AUTH is answered.
    pub auth_fail_delay: Duration,
    /// The /metrics bearer token.
    pub metrics_token: Option<String>,
    /// Per-tag series on /metrics.
    pub metrics_tags: bool,
    /// The most metrics connections at once.
    pub metrics_maxclients: usize,
    /// A metrics connection's request (and TLS handshake) must arrive within this.
    pub metrics_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            maxclients: 10_000,
            idle_timeout: None,
            auth_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(10),
            max_request: 64 * 1024,
            reply_buffer: 64 * 1024,
            write_timeout: Duration::from_secs(10),
            auth_concurrency: 2,
            auth_fail_burst: 10,
            auth_fail_delay: Duration::from_millis(100),
            metrics_token: None,
            metrics_tags: false,
            metrics_maxclients: 256,
            metrics_timeout: Duration::from_secs(2),
        }
    }
}

impl ServeArgs {
    /// The limits, checked.
    fn limits(&self) -> Result<Limits, String> {
        let d = Limits::default();
        let ms = |v: Option<u64>, default: Duration, name: &str| match v {
            None => Ok(default),
            Some(0) => Err(format!("{name} must be at least 1")),
            Some(ms) => Ok(Duration::from_millis(ms)),
        };
        let maxclients = self.maxclients.unwrap_or(d.maxclients);
        if maxclients == 0 {
            return Err("maxclients must be at least 1".into());
        }
        let max_request = self.max_request_bytes.unwrap_or(d.max_request);
        if !(1024..=super::resp::MAX_REQUEST).contains(&max_request) {
            return Err(format!(
                "max-request-bytes {max_request} is out of range (1024 to 1048576)"
            ));
        }
        let reply_buffer = self.reply_buffer_bytes.unwrap_or(d.reply_buffer);
        if reply_buffer < 1024 {
            return Err(format!("reply-buffer-bytes {reply_buffer} is below 1024"));
        }
        let auth_concurrency = self.auth_concurrency.unwrap_or(d.auth_concurrency);
        if !(1..=1024).contains(&auth_concurrency) {
            return Err(format!(
                "auth-concurrency {auth_concurrency} is out of range (1 to 1024)"
            ));
        }
        let metrics_maxclients = self.metrics_maxclients.unwrap_or(d.metrics_maxclients);
        if metrics_maxclients == 0 {
            return Err("metrics-maxclients must be at least 1".into());
        }
        Ok(Limits {
            maxclients,
            idle_timeout: self.timeout.filter(|s| *s > 0).map(Duration::from_secs),
            auth_timeout: ms(self.auth_timeout_ms, d.auth_timeout, "auth-timeout-ms")?,
            request_timeout: ms(
                self.request_timeout_ms,
                d.request_timeout,
                "request-timeout-ms",
            )?,
            max_request,
            reply_buffer,
            write_timeout: ms(self.write_timeout_ms, d.write_timeout, "write-timeout-ms")?,
            auth_concurrency,
            auth_fail_burst: self.auth_fail_burst.unwrap_or(d.auth_fail_burst),
            auth_fail_delay: self
                .auth_fail_delay_ms
                .map_or(d.auth_fail_delay, Duration::from_millis),
            metrics_token: self.metrics_token.clone().filter(|t| !t.is_empty()),
            metrics_tags: self.metrics_tags.unwrap_or(d.metrics_tags),
            metrics_maxclients,
            metrics_timeout: ms(
                self.metrics_timeout_ms,
                d.metrics_timeout,
                "metrics-timeout-ms",
            )?,
        })
    }
}

impl ServeArgs {
    /// The TLS files, checked for completeness (their contents are read when serving starts).
    fn tls(&self) -> Result<Option<TlsFiles>, String> {
        let (cert, key) = match (&self.tls_cert, &self.tls_key) {
            (None, None) => {
                if self.tls_ca_cert.is_some() || self.tls_auth_clients.is_some() {
                    return Err("tls-ca-cert and tls-auth-clients need tls-cert and tls-key".into());
                }
                return Ok(None);
            }
            (Some(c), Some(k)) => (c.clone(), k.clone()),
            _ => return Err("tls-cert and tls-key go together".into()),
        };
        let clients = match &self.tls_auth_clients {
            Some(text) => ClientAuth::parse(text)?,
            None if self.tls_ca_cert.is_some() => ClientAuth::Yes,
            None => ClientAuth::No,
        };
        if clients != ClientAuth::No && self.tls_ca_cert.is_none() {
            return Err("tls-auth-clients yes or optional needs tls-ca-cert".into());
        }
        Ok(Some(TlsFiles {
            cert,
            key,
            ca: self.tls_ca_cert.clone(),
            clients,
        }))
    }

    /// Fills the unset settings from `other`.
    fn or(self, other: ServeArgs) -> ServeArgs {
        ServeArgs {
            config: self.config.or(other.config),
            bind: self.bind.or(other.bind),
            port: self.port.or(other.port),
            port_file: self.port_file.or(other.port_file),
            data_dir: self.data_dir.or(other.data_dir),
            store: self.store.or(other.store),
            guard: self.guard.or(other.guard),
            requirepass: self.requirepass.or(other.requirepass),
            metrics_port: self.metrics_port.or(other.metrics_port),
            auto_create: self.auto_create.or(other.auto_create),
            default_step: self.default_step.or(other.default_step),
            max_step: self.max_step.or(other.max_step),
            alloc_timeout_ms: self.alloc_timeout_ms.or(other.alloc_timeout_ms),
            snowflake_layout: self.snowflake_layout.or(other.snowflake_layout),
            node_id: self.node_id.or(other.node_id),
            stripe: self.stripe.or(other.stripe),
            stripe_block: self.stripe_block.or(other.stripe_block),
            stripe_takeover: self.stripe_takeover.or(other.stripe_takeover),
            threads: self.threads.or(other.threads),
            busy_poll_us: self.busy_poll_us.or(other.busy_poll_us),
            log: self.log.or(other.log),
            advertise: self.advertise.or(other.advertise),
            ha: self.ha.or(other.ha),
            lease_ttl: self.lease_ttl.or(other.lease_ttl),
            ha_poll_ms: self.ha_poll_ms.or(other.ha_poll_ms),
            takeover_probe: self.takeover_probe.or(other.takeover_probe),
            max_tags_per_user: self.max_tags_per_user.or(other.max_tags_per_user),
            max_snowflake_names_per_user: self
                .max_snowflake_names_per_user
                .or(other.max_snowflake_names_per_user),
            tag_idle_secs: self.tag_idle_secs.or(other.tag_idle_secs),
            max_leases_per_service: self.max_leases_per_service.or(other.max_leases_per_service),
            max_leases: self.max_leases.or(other.max_leases),
            maxclients: self.maxclients.or(other.maxclients),
            timeout: self.timeout.or(other.timeout),
            auth_timeout_ms: self.auth_timeout_ms.or(other.auth_timeout_ms),
            request_timeout_ms: self.request_timeout_ms.or(other.request_timeout_ms),
            max_request_bytes: self.max_request_bytes.or(other.max_request_bytes),
            reply_buffer_bytes: self.reply_buffer_bytes.or(other.reply_buffer_bytes),
            write_timeout_ms: self.write_timeout_ms.or(other.write_timeout_ms),
            auth_concurrency: self.auth_concurrency.or(other.auth_concurrency),
            auth_fail_burst: self.auth_fail_burst.or(other.auth_fail_burst),
            auth_fail_delay_ms: self.auth_fail_delay_ms.or(other.auth_fail_delay_ms),
            metrics_token: self.metrics_token.or(other.metrics_token),
            metrics_tags: self.metrics_tags.or(other.metrics_tags),
            metrics_maxclients: self.metrics_maxclients.or(other.metrics_maxclients),
            metrics_timeout_ms: self.metrics_timeout_ms.or(other.metrics_timeout_ms),
            tls_cert: self.tls_cert.or(other.tls_cert),
            tls_key: self.tls_key.or(other.tls_key),
            tls_ca_cert: self.tls_ca_cert.or(other.tls_ca_cert),
            tls_auth_clients: self.tls_auth_clients.or(other.tls_auth_clients),
        }
    }

    /// Reads the config file (if any), applies the defaults and checks every value.
    pub fn resolve(self) -> Result<Config, String> {
        let file = match &self.config {
            Some(path) => read_file(path)?,
            None => ServeArgs::default(),
        };
        let a = self.or(file);
        let limits = a.limits()?;
        let tls = a.tls()?;
        let defaults = Policy::default();
        let default_step = a.default_step.unwrap_or(defaults.default_step);
        if !(1..=i64::from(i32::MAX)).contains(&default_step) {
            return Err(format!(
                "default-step {default_step} is out of range (1 to 2^31-1)"
            ));
        }
        let max_step = a.max_step.unwrap_or(defaults.max_step);
        if max_step < 1 {
            return Err(format!("max-step {max_step} must be positive"));
        }
        let layout = match &a.snowflake_layout {
            Some(spec) => parse_layout(spec).map_err(|e| e.message().to_owned())?,
            None => idforge::Layout::TWITTER,
        };
        let stripe = match &a.stripe {
            Some(text) => Stripe::parse(text, a.stripe_block.unwrap_or(DEFAULT_BLOCK))?,
            None if a.stripe_block.is_some() || a.stripe_takeover == Some(true) => {
                return Err("stripe-block and stripe-takeover need --stripe".into());
            }
            None => Stripe::NONE,
        };
        // Striped servers are independent: by default each gets its own snowflake node.
        let node_id = a.node_id.unwrap_or(stripe.index as u64);
        layout
            .check_node(node_id)
            .map_err(|e| format!("node-id: {e}"))?;
        if a.threads == Some(0) {
            return Err("threads must be at least 1".into());
        }
        let advertise = match &a.advertise {
            Some(text) => {
                let (host, port) = text
                    .rsplit_once(':')
                    .and_then(|(h, p)| Some((h, p.parse::<u16>().ok()?)))
                    .filter(|(h, p)| !h.is_empty() && *p != 0)
                    .ok_or_else(|| format!("advertise {text:?} is not HOST:PORT"))?;
                Some((host.trim_matches(['[', ']']).to_owned(), port))
            }
            None => None,
        };
        let election_defaults = ElectionConfig::default();
        let lease_ttl = a.lease_ttl.map_or(election_defaults.lease_ttl, i64::from);
        if !(1..=3600).contains(&lease_ttl) {
            return Err(format!(
                "lease-ttl {lease_ttl} is out of range (1 to 3600 s)"
            ));
        }
        let poll = a
            .ha_poll_ms
            .map_or(election_defaults.poll, Duration::from_millis);
        if poll.is_zero() || poll > Duration::from_secs(10) {
            return Err("ha-poll-ms must be between 1 and 10000".into());
        }
        let tag_idle = match a.tag_idle_secs {
            Some(0) => None,
            Some(secs) if secs > 86_400 * 365 => {
                return Err(format!("tag-idle-secs {secs} is over a year"));
            }
            Some(secs) => Some(Duration::from_secs(secs)),
            None => defaults.tag_idle,
        };
        let max_tags_per_user = a.max_tags_per_user.unwrap_or(defaults.max_tags_per_user);
        let (store, data_dir) = match a.store {
            Some(url) => (url, a.data_dir),
            None => {
                let dir = a.data_dir.unwrap_or_else(|| PathBuf::from("idforge-data"));
                (sqlite_url(&dir.join("idforge.db")), Some(dir))
            }
        };
        let guard = match a.guard.as_deref() {
            Some("none") => None,
            Some("") => return Err("guard: give a file, or none".into()),
            Some(path) => Some(PathBuf::from(path)),
            None => data_dir.as_ref().map(|d| d.join("idforge.guard")),
        };
        Ok(Config {
            bind: a.bind.unwrap_or_else(|| "127.0.0.1".into()),
            port: a.port.unwrap_or(DEFAULT_PORT),
            port_file: a.port_file,
            store,
            data_dir,
            guard,
            requirepass: a.requirepass.filter(|p| !p.is_empty()),
            metrics_port: a.metrics_port,
            policy: Policy {
                auto_create: a.auto_create.unwrap_or(defaults.auto_create),
                default_step,
                max_step,
                alloc_timeout: a
                    .alloc_timeout_ms
                    .map_or(defaults.alloc_timeout, Duration::from_millis),
                max_tags_per_user,
                max_snowflake_names_per_user: a
                    .max_snowflake_names_per_user
                    .unwrap_or(defaults.max_snowflake_names_per_user),
                tag_idle,
                max_leases_per_service: a
                    .max_leases_per_service
                    .unwrap_or(defaults.max_leases_per_service),
                max_leases: a.max_leases.unwrap_or(defaults.max_leases),
                ..defaults
            },
            layout,
            node_id,
            stripe,
            stripe_takeover: a.stripe_takeover.unwrap_or(false),
            threads: a.threads,
            busy_poll: Duration::from_micros(a.busy_poll_us.unwrap_or(100).min(1_000_000)),
            log: a.log.unwrap_or_else(|| "info".into()),
            advertise,
            election: ElectionConfig {
                lease_ttl,
                poll,
                probe: a.takeover_probe.unwrap_or(election_defaults.probe),
            },
            ha: a.ha.unwrap_or(false),
            limits,
            tls,
        })
    }
}

fn read_file(path: &Path) -> Result<ServeArgs, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read config {}: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("config {}: {e}", path.display()))
}

/// The sqlx URL of an SQLite file, created when missing.
pub fn sqlite_url(path: &Path) -> String {
    format!("sqlite://{}?mode=rwc", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stripes_come_from_flags_or_the_file_and_bad_ones_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("idforge.toml");
        std::fs::write(&file, "stripe = \"2/3\"\nstripe-block = 500\n").unwrap();
        let c = ServeArgs {
            config: Some(file),
            ..ServeArgs::default()
        }
        .resolve()
        .unwrap();
        assert_eq!(c.stripe, Stripe::parse("2/3", 500).unwrap());
        assert_eq!(
            c.node_id, 2,
            "each stripe its own snowflake node by default"
        );
        let c = ServeArgs::default().resolve().unwrap();
        assert_eq!((c.stripe, c.node_id), (Stripe::NONE, 0));
        let c = ServeArgs {
            stripe: Some("1/2".into()),
            node_id: Some(7),
            ..ServeArgs::default()
        }
        .resolve()
        .unwrap();
        assert_eq!((c.stripe.block, c.node_id), (DEFAULT_BLOCK, 7));
        for (stripe, block, why) in [
            (Some("2/2"), None, "not K/N"),
            (Some("x"), None, "not K/N"),
            (Some("0/2"), Some(0), "out of range"),
            (None, Some(10), "need --stripe"),
        ] {
            let e = ServeArgs {
                stripe: stripe.map(str::to_owned),
                stripe_block: block,
                ..ServeArgs::default()
            }
            .resolve()
            .unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn flags_win_over_the_file_and_defaults_fill_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("idforge.toml");
        std::fs::write(
            &file,
            "port = 9000\nbind = \"0.0.0.0\"\ndefault-step = 50\n",
        )
        .unwrap();
        let args = ServeArgs {
            config: Some(file.clone()),
            port: Some(9001),
            ..ServeArgs::default()
        };
        let c = args.resolve().unwrap();
        assert_eq!((c.port, c.bind.as_str()), (9001, "0.0.0.0"));
        assert_eq!(c.policy.default_step, 50);
        assert!(c.store.starts_with("sqlite://idforge-data/idforge.db"));
        assert_eq!(c.layout, idforge::Layout::TWITTER);
        assert_eq!(c.policy.max_tags_per_user, 10_000);
        assert_eq!(c.policy.max_snowflake_names_per_user, 1000);
        assert_eq!(c.policy.tag_idle, Some(Duration::from_secs(600)));
        let never = ServeArgs {
            tag_idle_secs: Some(0),
            max_tags_per_user: Some(0),
            ..ServeArgs::default()
        };
        let c = never.resolve().unwrap();
        assert_eq!((c.policy.tag_idle, c.policy.max_tags_per_user), (None, 0));
        assert_eq!(c.limits, Limits::default());
        let file = dir.path().join("limits.toml");
        std::fs::write(&file, "maxclients = 5\ntimeout = 30\nmetrics-tags = true\n").unwrap();
        let c = ServeArgs {
            config: Some(file),
            ..ServeArgs::default()
        }
        .resolve()
        .unwrap();
        assert_eq!(c.limits.maxclients, 5);
        assert_eq!(c.limits.idle_timeout, Some(Duration::from_secs(30)));
        assert!(c.limits.metrics_tags);
    }

    #[test]
    fn bad_settings_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("bad.toml");
        std::fs::write(&file, "prot = 9000\n").unwrap();
        let with_file = ServeArgs {
            config: Some(file),
            ..ServeArgs::default()
        };
        assert!(with_file.resolve().unwrap_err().contains("prot"));
        for bad in [
            ServeArgs {
                default_step: Some(0),
                ..ServeArgs::default()
            },
            ServeArgs {
                snowflake_layout: Some("nope".into()),
                ..ServeArgs::default()
            },
            ServeArgs {
                node_id: Some(1 << 20),
                ..ServeArgs::default()
            },
            ServeArgs {
                advertise: Some("nohost".into()),
                ..ServeArgs::default()
            },
            ServeArgs {
                lease_ttl: Some(0),
                ..ServeArgs::default()
            },
            ServeArgs {
                ha_poll_ms: Some(0),
                ..ServeArgs::default()
            },
            ServeArgs {
                tag_idle_secs: Some(u64::MAX),
                ..ServeArgs::default()
            },
            ServeArgs {
                maxclients: Some(0),
                ..ServeArgs::default()
            },
            ServeArgs {
                max_request_bytes: Some(10),
                ..ServeArgs::default()
            },
            ServeArgs {
                write_timeout_ms: Some(0),
                ..ServeArgs::default()
            },
            ServeArgs {
                auth_concurrency: Some(0),
                ..ServeArgs::default()
            },
            ServeArgs {
                metrics_maxclients: Some(0),
                ..ServeArgs::default()
            },
            ServeArgs {
                metrics_timeout_ms: Some(0),
                ..ServeArgs::default()
            },
        ] {
            assert!(bad.resolve().is_err());
        }
    }

    #[test]
    fn tls_settings_come_from_the_file_and_incomplete_ones_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("idforge.toml");
        std::fs::write(
            &file,
            "tls-cert = \"/c.pem\"\ntls-key = \"/k.pem\"\ntls-ca-cert = \"/ca.pem\"\n",
        )
        .unwrap();
        let c = ServeArgs {
            config: Some(file),
            ..ServeArgs::default()
        }
        .resolve()
        .unwrap();
        let tls = c.tls.unwrap();
        assert_eq!(tls.cert, PathBuf::from("/c.pem"));
        assert_eq!(tls.ca, Some(PathBuf::from("/ca.pem")));
        assert_eq!(
            tls.clients,
            ClientAuth::Yes,
            "a CA asks for client certificates"
        );
        let optional = ServeArgs {
            tls_cert: Some("/c.pem".into()),
            tls_key: Some("/k.pem".into()),
            tls_ca_cert: Some("/ca.pem".into()),
            tls_auth_clients: Some("optional".into()),
            ..ServeArgs::default()
        };
        assert_eq!(
            optional.resolve().unwrap().tls.unwrap().clients,
            ClientAuth::Optional
        );
        assert!(ServeArgs::default().resolve().unwrap().tls.is_none());
        for bad in [
            ServeArgs {
                tls_key: Some("/k.pem".into()),
                ..ServeArgs::default()
            },
            ServeArgs {
                tls_ca_cert: Some("/ca.pem".into()),
                ..ServeArgs::default()
            },
        ] {
            assert!(bad.resolve().is_err());
        }
    }
}
