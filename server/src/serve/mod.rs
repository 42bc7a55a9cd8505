//! `idforge serve`: the segment server. Any Redis client can `INCR tag` and `INCRBY tag n`
//! against it; ids are strictly increasing per tag and never handed out twice, even across a
//! `kill -9` (see `allocator` for how).
//!
//! The rooms, each a folder with its own module doc:
//!
//! - [`config`]: the settings, declared once (flags, environment, TOML, docs).
//! - `net`: bytes: the socket or TLS stream, polling, the HTTP ports' connection slots (the
//!   Redis protocol's codec is the `idforge-resp` crate).
//! - `commands`: the RESP session, the command table, the dispatcher and the handlers.
//! - `allocator`: the allocator: tags, snowflake clocks, worker-id leases, stripes and the
//!   persister.
//! - The durable stores (SQLite, PostgreSQL, MySQL, etcd) and the guard are the
//!   `idforge-store` crate, below every room here.
//! - `ha`: leader election among servers sharing a store.
//! - `auth`: users, passwords and permissions.
//! - `metrics`: counters, `/metrics` and `/healthz`.
//! - `http`: the HTTP API (Leaf's and tinyid's URLs) and the status page.
//! - `shared`: what every connection shares; `lock`: the one way a mutex is taken.

pub(crate) mod allocator;
pub(crate) mod auth;
pub(crate) mod commands;
pub mod config;
pub(crate) mod ha;
pub(crate) mod http;
pub(crate) mod leadership;
pub(crate) mod lock;
pub(crate) mod metrics;
pub(crate) mod net;
pub(crate) mod setting_error;
pub(crate) mod shared;
mod signals;
mod start_error;

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;

pub use allocator::Allocator;
pub use commands::cluster::key_slot;
pub use config::{Config, ServeArgs};
pub use shared::Shared;
pub use start_error::StartError;

use auth::Auth;
use idforge_store::Store;

/// Runs `idforge serve` until SIGTERM or SIGINT; returns the exit status.
pub fn run(args: ServeArgs, err: &mut dyn Write) -> u8 {
    let config = match args.resolve() {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(err, "idforge: error: {e}");
            return 2;
        }
    };
    let filter = tracing_subscriber::EnvFilter::try_new(&config.log)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Colours only for a person at a terminal: not in a file, a pipe or journald, nor with
    // NO_COLOR set (no-color.org).
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .try_init();
    // One thread: the current-thread scheduler, as Redis's event loop (no cross-thread wake-ups
    // per request); more: the work-stealing one.
    let mut builder = match config.threads {
        Some(1) => tokio::runtime::Builder::new_current_thread(),
        Some(n) => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(n);
            b
        }
        None => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(err, "idforge: error: cannot start the runtime: {e}");
            return 1;
        }
    };
    match runtime.block_on(serve(config)) {
        Ok(()) => 0,
        Err(e) => {
            tracing::error!("{e}");
            let _ = writeln!(err, "idforge: error: {e}");
            1
        }
    }
}

/// Serves until SIGTERM or SIGINT, then stops accepting, answers what was already read, gives
/// back unused cached ids and returns.
pub async fn serve(config: Config) -> Result<(), StartError> {
    if let Some(dir) = &config.data_dir {
        std::fs::create_dir_all(dir).map_err(|source| StartError::DataDir {
            path: dir.clone(),
            source,
        })?;
    }
    let store = Store::open(&config.store)
        .await
        .map_err(StartError::Store)?;
    allocator::stripe::check_store(&store, config.stripe, config.stripe_takeover).await?;
    let guard = match &config.guard {
        Some(path) => {
            let alone = store.etcd().is_none() && !config.ha;
            Some(Arc::new(
                idforge_store::guard::Guard::attach(&store, path, alone).await?,
            ))
        }
        None => {
            tracing::warn!(
                "no guard file (give --data-dir or --guard): a store that goes back (a restored \
                 backup, a replaced database) cannot be detected"
            );
            None
        }
    };
    let tls = config
        .tls
        .clone()
        .map(net::tls::Tls::load)
        .transpose()
        .map_err(StartError::Tls)?;
    let auth = Auth::load(&store, config.requirepass.clone(), config.limits.auth())
        .await
        .map_err(StartError::Users)?;
    let listener = TcpListener::bind((config.bind.as_str(), config.port))
        .await
        .map_err(|source| StartError::Listen {
            addr: format!("{}:{}", config.bind, config.port),
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| StartError::Listen {
        addr: format!("{}:{}", config.bind, config.port),
        source,
    })?;
    let kind = store.kind();
    let (host, port) = config
        .advertise
        .clone()
        .unwrap_or_else(|| (config.bind.clone(), addr.port()));
    let me = ha::Peer::new(&host, port);
    let etcd = store.etcd().cloned();
    let sql_ha = store.sql().filter(|_| config.ha).cloned();
    let leadership = Arc::new(if etcd.is_some() || sql_ha.is_some() {
        ha::Leadership::elected(me)
    } else {
        ha::Leadership::alone(me)
    });
    let engine = Arc::new(
        Allocator::new(
            store,
            config.policy.clone(),
            config.layout,
            config.node_id,
            leadership,
        )
        .with_guard(guard)
        .with_stripe(config.stripe),
    );
    let shared = Arc::new(Shared {
        allocator: engine.clone(),
        auth,
        port: addr.port(),
        next_client: AtomicU64::new(1),
        // Only on the one-thread event loop: on the work-stealing scheduler the polling task
        // holds a worker that the connections and the client need (measured: -c 50 -P 16 fell
        // from 1.1-1.4 M to 0.9 M requests/s on 2 cores).
        busy_poll: net::busy_poll::BusyPoll::new(if config.threads == Some(1) {
            config.busy_poll
        } else {
            Duration::ZERO
        }),
        limits: config.limits.clone(),
        tls,
        requests: commands::request_counters(),
    });
    let poller = tokio::spawn({
        let shared = shared.clone();
        async move { shared.busy_poll.run().await }
    });
    // The metrics port answers until the very end (it is aborted last): its stop never turns.
    let (_metrics_stop, metrics_stop_rx) = watch::channel(false);
    let metrics_task = match config.metrics_port {
        Some(port) => {
            let l = listen_extra(&config.bind, port, "metrics").await?;
            let site = http::Site::Metrics;
            Some(tokio::spawn(http::serve(
                l,
                shared.clone(),
                site,
                metrics_stop_rx,
            )))
        }
        None => None,
    };
    let (stop_tx, stop_rx) = watch::channel(false);
    let http_task = match config.http_port {
        Some(port) => {
            let state =
                http::Http::new(config.http.clone()).map_err(|e| StartError::HttpTokens {
                    path: config.http.tokens.clone().unwrap_or_default(),
                    reason: e.to_string(),
                })?;
            let l = listen_extra(&config.bind, port, "HTTP").await?;
            let site = http::Site::Api(Arc::new(state));
            Some(tokio::spawn(http::serve(
                l,
                shared.clone(),
                site,
                stop_rx.clone(),
            )))
        }
        None => None,
    };
    let stop_persister = Arc::new(Notify::new());
    let persister = tokio::spawn(engine.clone().persister(stop_persister.clone()));
    let (stop_election_tx, stop_election) = watch::channel(false);
    let election = match (etcd, sql_ha) {
        (Some(etcd), _) => Some(tokio::spawn(ha::etcd::run(
            shared.clone(),
            etcd,
            config.election.clone(),
            stop_election,
        ))),
        (None, Some(sql)) => Some(tokio::spawn(ha::sql::run(
            shared.clone(),
            sql,
            config.election.clone(),
            stop_election,
        ))),
        (None, None) => None,
    };
    if let Some(path) = &config.port_file {
        std::fs::write(path, format!("{}\n", addr.port())).map_err(|source| {
            StartError::PortFile {
                path: path.clone(),
                source,
            }
        })?;
    }
    tracing::info!(%addr, store = kind.name(), "idforge listening");

    let mut conns = JoinSet::new();
    let mut signals = signals::Signals::new()?;
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    if conns.len() >= config.limits.maxclients {
                        // As Redis: say why, then close. The reply fits any fresh socket's
                        // send buffer, so this never waits (a TLS client just sees the close).
                        if shared.tls.is_none() {
                            let _ = stream.try_write(b"-ERR max number of clients reached\r\n");
                        }
                        shared.allocator.metrics().error(metrics::ErrorKind::Limit);
                        continue;
                    }
                    conns.spawn(accept(shared.clone(), stream, stop_rx.clone()));
                }
                Err(e) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            asked = signals.next() => match asked {
                signals::Asked::Reload => {
                    match shared.tls.as_ref().map(net::tls::Tls::reload) {
                        None => tracing::info!("SIGHUP: nothing to reload (no TLS)"),
                        Some(Ok(())) => tracing::info!("SIGHUP: TLS certificate and key reloaded"),
                        Some(Err(e)) => {
                            tracing::warn!(error = %e, "SIGHUP: TLS reload failed; keeping the settings in use");
                        }
                    }
                }
                signals::Asked::Stop(signal) => {
                    tracing::info!(signal, "shutting down");
                    break;
                }
            }
        }
    }
    drop(listener);
    poller.abort();
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(Duration::from_secs(10), async {
        while conns.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!("connections did not finish in 10 s; closing them");
        conns.abort_all();
    }
    if let Some(task) = http_task {
        let _ = task.await;
    }
    stop_persister.notify_one();
    let _ = persister.await;
    engine.release().await;
    // Resign last, so the leader keeps its lease while it answers what it had read.
    let _ = stop_election_tx.send(true);
    if let Some(task) = election {
        let _ = task.await;
    }
    if let Some(task) = metrics_task {
        task.abort();
    }
    engine.store().close().await;
    tracing::info!("stopped");
    Ok(())
}

/// Listens on the `what` port (metrics, HTTP) at `bind`, and logs where.
async fn listen_extra(bind: &str, port: u16, what: &str) -> Result<TcpListener, StartError> {
    let failed = |source| StartError::Listen {
        addr: format!("{what} port {port}"),
        source,
    };
    let l = TcpListener::bind((bind, port)).await.map_err(failed)?;
    let at = l.local_addr().map_err(failed)?;
    tracing::info!(addr = %at, "{what} listening");
    Ok(l)
}

/// Serves one accepted connection: the TLS handshake first when TLS is on (it must end within
/// `request-timeout-ms`, so a client that stalls it holds its slot no longer than a half-sent
/// request would).
async fn accept(shared: Arc<Shared>, tcp: tokio::net::TcpStream, stop: watch::Receiver<bool>) {
    let stream = match &shared.tls {
        None => net::stream::Stream::Plain(tcp),
        Some(tls) => {
            // Under rustls, a TLS record (of the handshake or later) that stays incomplete for
            // `request-timeout-ms` fails the read, as a half-sent request would.
            let records = tls.records(tcp, shared.limits.request_timeout);
            let handshake = tls.acceptor().accept(records);
            match tokio::time::timeout(shared.limits.request_timeout, handshake).await {
                Ok(Ok(s)) => net::stream::Stream::Tls(Box::new(s)),
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "TLS handshake failed");
                    shared
                        .allocator
                        .metrics()
                        .error(metrics::ErrorKind::Protocol);
                    return;
                }
                Err(_) => {
                    tracing::debug!("TLS handshake timed out");
                    shared.allocator.metrics().error(metrics::ErrorKind::Limit);
                    return;
                }
            }
        }
    };
    commands::session::serve(shared, stream, stop).await;
}
