//! `idforge serve` settings: flags, `IDFORGE_*` environment variables and a TOML file, in that
//! order of precedence, then the defaults. Each setting is declared once, in `settings.rs`; this
//! module turns them into the [`Config`] the server runs with, checking what depends on more
//! than one of them.
//!
//! - `declare.rs`: the `settings!` macro and the [`Setting`] row.
//! - `settings.rs`: the rows.
//! - [`reference`](mod@reference): the documentation made from the rows (docs/server.md, `idforge.toml`).

mod declare;
pub mod reference;
mod settings;

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::allocator::AllocPolicy;
use super::auth::AuthLimits;
use super::leadership::ElectionConfig;
use crate::serve::allocator::stripe::Stripe;
use crate::serve::net::tls::{ClientAuth, TlsFiles};
use crate::text::layout::parse_layout;

pub use super::setting_error::SettingError;
pub use declare::Setting;
pub use settings::{DEFAULT_PORT, SETTINGS, ServeArgs};

/// The help text of the setting FIELD (its doc and default), for clap.
pub(crate) fn help(field: &str) -> String {
    SETTINGS
        .iter()
        .find(|s| s.field == field)
        .map_or_else(String::new, Setting::help)
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
    /// The guard file (see `allocator::guard`).
    pub guard: Option<PathBuf>,
    /// The `default` user's password.
    pub requirepass: Option<String>,
    /// The metrics port.
    pub metrics_port: Option<u16>,
    /// The HTTP API's port.
    pub http_port: Option<u16>,
    /// The HTTP API's tokens and bounds.
    pub http: HttpSettings,
    /// Allocation policy.
    pub policy: AllocPolicy,
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
    /// Serve other hosts while nothing asks for a password (`--insecure-open`); off: protected.
    pub insecure_open: bool,
}

impl Limits {
    /// The bounds on password checks, as `auth` takes them.
    pub fn auth(&self) -> AuthLimits {
        AuthLimits {
            concurrency: self.auth_concurrency,
            fail_burst: self.auth_fail_burst,
        }
    }
}

/// The HTTP API's tokens and bounds (docs/http.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpSettings {
    /// The tokens file (`SHA256-HEX USER` lines).
    pub tokens: Option<PathBuf>,
    /// The user a request without a token acts as.
    pub anonymous_user: Option<String>,
    /// The most connections at once.
    pub maxclients: usize,
    /// The largest request head.
    pub max_header: usize,
    /// The largest request body.
    pub max_body: usize,
    /// The longest query string or form.
    pub max_query: usize,
    /// Requests per second per token (0: no limit).
    pub rate_limit: u32,
    /// The most ids one request takes.
    pub max_batch: i64,
    /// The most answer bytes the port holds that clients have not taken yet.
    pub max_answer_bytes: usize,
    /// Status pages a second to viewers without a token (0: no limit).
    pub status_rate: u32,
}

/// The defaults of the settings table.
impl Default for HttpSettings {
    fn default() -> HttpSettings {
        ServeArgs::default()
            .http()
            .expect("the declared defaults are within their bounds")
    }
}

/// The defaults of the settings table.
impl Default for Limits {
    fn default() -> Limits {
        ServeArgs::default()
            .limits()
            .expect("the declared defaults are within their bounds")
    }
}

/// Milliseconds as a duration.
fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

impl ServeArgs {
    /// The limits on what clients can make the server hold.
    fn limits(&self) -> Result<Limits, SettingError> {
        Ok(Limits {
            maxclients: self.maxclients()?,
            idle_timeout: Some(self.timeout()?)
                .filter(|s| *s > 0)
                .map(Duration::from_secs),
            auth_timeout: ms(self.auth_timeout_ms()?),
            request_timeout: ms(self.request_timeout_ms()?),
            max_request: self.max_request_bytes()?,
            reply_buffer: self.reply_buffer_bytes()?,
            write_timeout: ms(self.write_timeout_ms()?),
            auth_concurrency: self.auth_concurrency()?,
            auth_fail_burst: self.auth_fail_burst()?,
            auth_fail_delay: ms(self.auth_fail_delay_ms()?),
            metrics_token: self.metrics_token.clone().filter(|t| !t.is_empty()),
            metrics_tags: self.metrics_tags()?,
            metrics_maxclients: self.metrics_maxclients()?,
            metrics_timeout: ms(self.metrics_timeout_ms()?),
            insecure_open: self.insecure_open()?,
        })
    }

    /// The HTTP API's tokens and bounds.
    fn http(&self) -> Result<HttpSettings, SettingError> {
        Ok(HttpSettings {
            tokens: self.http_tokens.clone(),
            anonymous_user: self.http_anonymous_user.clone().filter(|u| !u.is_empty()),
            maxclients: self.http_maxclients()?,
            max_header: self.http_max_header_bytes()?,
            max_body: self.http_max_body_bytes()?,
            max_query: self.http_max_query_bytes()?,
            rate_limit: self.http_rate_limit()?,
            max_batch: self.http_max_batch()?,
            max_answer_bytes: self.http_max_answer_bytes()?,
            status_rate: self.http_status_rate()?,
        })
    }

    /// The allocator's policy.
    fn policy(&self) -> Result<AllocPolicy, SettingError> {
        let tag_idle = self.tag_idle_secs()?;
        Ok(AllocPolicy {
            auto_create: self.auto_create()?,
            default_step: self.default_step()?,
            max_step: self.max_step()?,
            step_interval: AllocPolicy::STEP_INTERVAL,
            alloc_timeout: ms(self.alloc_timeout_ms()?),
            clock_window_ms: AllocPolicy::CLOCK_WINDOW_MS,
            max_tags_per_user: self.max_tags_per_user()?,
            max_snowflake_names_per_user: self.max_snowflake_names_per_user()?,
            max_tags: self.max_tags()?,
            max_snowflake_names: self.max_snowflake_names()?,
            tag_idle: (tag_idle > 0).then(|| Duration::from_secs(tag_idle)),
            max_leases_per_service: self.max_leases_per_service()?,
            max_leases: self.max_leases()?,
            worker_reserve_ms: i64::try_from(self.worker_reserve_ms()?).unwrap_or(i64::MAX),
        })
    }

    /// The leader election's settings.
    fn election(&self) -> Result<ElectionConfig, SettingError> {
        Ok(ElectionConfig {
            lease_ttl: i64::from(self.lease_ttl()?),
            poll: ms(self.ha_poll_ms()?),
            probe: self.takeover_probe()?,
        })
    }
}

/// The defaults of the settings table, for code that makes an allocator without a command line.
impl Default for AllocPolicy {
    fn default() -> AllocPolicy {
        ServeArgs::default()
            .policy()
            .expect("the declared defaults are within their bounds")
    }
}

/// The defaults of the settings table.
impl Default for ElectionConfig {
    fn default() -> ElectionConfig {
        ServeArgs::default()
            .election()
            .expect("the declared defaults are within their bounds")
    }
}

impl ServeArgs {
    /// The TLS files, checked for completeness (their contents are read when serving starts).
    fn tls(&self) -> Result<Option<TlsFiles>, SettingError> {
        let (cert, key) = match (&self.tls_cert, &self.tls_key) {
            (None, None) => {
                if self.tls_ca_cert.is_some() || self.tls_auth_clients.is_some() {
                    return Err(SettingError::Together(
                        "tls-ca-cert and tls-auth-clients need tls-cert and tls-key",
                    ));
                }
                return Ok(None);
            }
            (Some(c), Some(k)) => (c.clone(), k.clone()),
            _ => return Err(SettingError::Together("tls-cert and tls-key go together")),
        };
        let clients = match &self.tls_auth_clients {
            Some(text) => ClientAuth::parse(text)?,
            None if self.tls_ca_cert.is_some() => ClientAuth::Yes,
            None => ClientAuth::No,
        };
        if clients != ClientAuth::No && self.tls_ca_cert.is_none() {
            return Err(SettingError::Together(
                "tls-auth-clients yes or optional needs tls-ca-cert",
            ));
        }
        Ok(Some(TlsFiles {
            cert,
            key,
            ca: self.tls_ca_cert.clone(),
            clients,
            max_incomplete: self.tls_max_incomplete_bytes()?,
        }))
    }

    /// The settings the server runs with: flags and environment over the file over the
    /// defaults, each within its bounds, and those that depend on each other checked together.
    pub fn resolve(self) -> Result<Config, SettingError> {
        let file = match &self.config {
            Some(path) => read_file(path)?,
            None => ServeArgs::default(),
        };
        let a = self.or(file);
        let layout = parse_layout(&a.snowflake_layout()?).map_err(|e| SettingError::Invalid {
            name: "snowflake-layout",
            reason: e.message().to_owned(),
        })?;
        let stripe = match &a.stripe {
            Some(text) => Stripe::parse(text, a.stripe_block()?)?,
            None if a.stripe_block.is_some() || a.stripe_takeover == Some(true) => {
                return Err(SettingError::Together(
                    "stripe-block and stripe-takeover need --stripe",
                ));
            }
            None => Stripe::NONE,
        };
        // Striped servers are independent: by default each gets its own snowflake node.
        let node_id = a.node_id.unwrap_or(stripe.index as u64);
        layout
            .check_node(node_id)
            .map_err(|e| SettingError::Invalid {
                name: "node-id",
                reason: e.to_string(),
            })?;
        if a.threads == Some(0) {
            return Err(SettingError::Below {
                name: "threads".into(),
                value: "0".into(),
                min: "1".into(),
            });
        }
        let advertise = match &a.advertise {
            Some(text) => {
                let (host, port) = text
                    .rsplit_once(':')
                    .and_then(|(h, p)| Some((h, p.parse::<u16>().ok()?)))
                    .filter(|(h, p)| !h.is_empty() && *p != 0)
                    .ok_or_else(|| SettingError::Invalid {
                        name: "advertise",
                        reason: format!("{text:?} is not HOST:PORT"),
                    })?;
                Some((host.trim_matches(['[', ']']).to_owned(), port))
            }
            None => None,
        };
        let (store, data_dir) = match a.store.clone() {
            Some(url) => (url, a.data_dir.clone()),
            None => {
                let dir = a
                    .data_dir
                    .clone()
                    .unwrap_or_else(|| PathBuf::from("idforge-data"));
                (sqlite_url(&dir.join("idforge.db"))?, Some(dir))
            }
        };
        let guard = match a.guard.as_deref() {
            Some("none") => None,
            Some("") => {
                return Err(SettingError::Invalid {
                    name: "guard",
                    reason: "is empty: give a file, or none".into(),
                });
            }
            Some(path) => Some(PathBuf::from(path)),
            None => data_dir.as_ref().map(|d| d.join("idforge.guard")),
        };
        Ok(Config {
            bind: a.bind()?,
            port: a.port()?,
            port_file: a.port_file.clone(),
            store,
            data_dir,
            guard,
            requirepass: a.requirepass.clone().filter(|p| !p.is_empty()),
            metrics_port: a.metrics_port,
            http_port: a.http_port,
            http: a.http()?,
            policy: a.policy()?,
            layout,
            node_id,
            stripe,
            stripe_takeover: a.stripe_takeover()?,
            threads: a.threads,
            busy_poll: Duration::from_micros(a.busy_poll_us()?.min(1_000_000)),
            log: a.log()?,
            advertise,
            election: a.election()?,
            ha: a.ha()?,
            limits: a.limits()?,
            tls: a.tls()?,
        })
    }
}

fn read_file(path: &Path) -> Result<ServeArgs, SettingError> {
    let text = std::fs::read_to_string(path).map_err(|source| SettingError::Read {
        path: path.to_owned(),
        source,
    })?;
    toml::from_str(&text).map_err(|e| SettingError::Parse {
        path: path.to_owned(),
        source: Box::new(e),
    })
}

/// The sqlx URL of an SQLite file, created when missing ([`idforge::source::sqlite_url`]: one
/// spelling per platform). A path that is not UTF-8 is refused (sqlx decodes the URL's path as
/// UTF-8), never altered.
pub fn sqlite_url(path: &Path) -> Result<String, SettingError> {
    let text = path.to_str().ok_or_else(|| SettingError::Invalid {
        name: "data-dir",
        reason: format!("{} is not UTF-8", path.display()),
    })?;
    Ok(format!(
        "{}?mode=rwc",
        idforge::source::sqlite_url(text, cfg!(windows))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_path_that_is_not_utf8_is_refused() {
        use std::os::unix::ffi::OsStrExt;
        let path = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/\xff/idforge.db"));
        let err = sqlite_url(path).unwrap_err().to_string();
        assert!(err.contains("not UTF-8"), "{err}");
    }

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
        assert_eq!(
            (c.stripe.block, c.node_id),
            (crate::serve::allocator::stripe::DEFAULT_BLOCK, 7)
        );
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
            assert!(e.to_string().contains(why), "{e}");
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
        let e = with_file.resolve().unwrap_err();
        assert!(
            matches!(e, SettingError::Parse { .. }) && e.to_string().contains("prot"),
            "{e}"
        );
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
