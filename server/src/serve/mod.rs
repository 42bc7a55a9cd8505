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
mod start;
mod start_error;

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

pub use allocator::Allocator;
pub use commands::cluster::key_slot;
pub use config::{Config, ServeArgs};
pub use shared::Shared;
pub use start_error::StartError;

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
/// back unused cached ids and returns. Its start steps are in `start.rs`, in this order.
pub async fn serve(config: Config) -> Result<(), StartError> {
    let (store, guard) = start::open_store(&config).await?;
    let (tls, auth) = start::load_tls_and_users(&config, &store).await?;
    let (listener, addr) = start::bind(&config).await?;
    let kind = store.kind();
    let (shared, election) = start::assemble(&config, store, guard, tls, auth, addr);
    let background = start::start_background(&config, &shared, election).await?;
    start::write_port_file(&config, addr)?;
    tracing::info!(%addr, store = kind.name(), "idforge listening");
    if !addr.ip().to_canonical().is_loopback()
        && !config.limits.insecure_open
        && !shared.auth.required()
    {
        tracing::warn!(
            %addr,
            "protected mode: no password is set, so only clients on this host are served \
             (others get -DENIED); set --requirepass or users, or --insecure-open on a network \
             you trust"
        );
    }
    let conns = accept_until_stopped(&config, &shared, &listener, background.stop_signal()).await?;
    drop(listener);
    background.stop(&shared, conns).await;
    tracing::info!("stopped");
    Ok(())
}

/// Accepts RESP connections (at most `maxclients`) until SIGTERM or SIGINT, reloading TLS on
/// SIGHUP; returns the connections still open.
async fn accept_until_stopped(
    config: &Config,
    shared: &Arc<Shared>,
    listener: &TcpListener,
    stop: watch::Receiver<bool>,
) -> Result<JoinSet<()>, StartError> {
    let mut conns = JoinSet::new();
    let mut signals = signals::Signals::new()?;
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    if shared.refuses(peer.ip()) {
                        // As Redis's protected mode: say why and how to open it, then close
                        // (over TLS the client just sees the close).
                        if shared.tls.is_none() {
                            let _ = stream.try_write(crate::serve::shared::PROTECTED.as_bytes());
                        }
                        shared.allocator.metrics().error(metrics::ErrorKind::Auth);
                        continue;
                    }
                    if conns.len() >= config.limits.maxclients {
                        // As Redis: say why, then close. The reply fits any fresh socket's
                        // send buffer, so this never waits (a TLS client just sees the close).
                        if shared.tls.is_none() {
                            let _ = stream.try_write(b"-ERR max number of clients reached\r\n");
                        }
                        shared.allocator.metrics().error(metrics::ErrorKind::Limit);
                        continue;
                    }
                    conns.spawn(accept(shared.clone(), stream, stop.clone()));
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
                    return Ok(conns);
                }
            }
        }
    }
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
