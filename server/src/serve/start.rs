//! [`serve`](super::serve)'s start as named steps, in the order they run, and its stop: the
//! store and its guard, TLS and users, the RESP port, the shared state, the background tasks
//! (busy polling, the metrics and HTTP ports, the persister, the election) and the port file.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use idforge_store::guard::Guard;
use idforge_store::{EtcdStore, SqlStore, Store};
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};
use tokio::task::{JoinHandle, JoinSet};

use super::allocator::Allocator;
use super::auth::Auth;
use super::config::Config;
use super::shared::Shared;
use super::start_error::StartError;
use super::{commands, ha, http, net};

/// Step 1: the data dir, the store (on its stripe) and the guard beside it.
pub(super) async fn open_store(config: &Config) -> Result<(Store, Option<Arc<Guard>>), StartError> {
    if let Some(dir) = &config.data_dir {
        std::fs::create_dir_all(dir).map_err(|source| StartError::DataDir {
            path: dir.clone(),
            source,
        })?;
    }
    let store = Store::open(&config.store)
        .await
        .map_err(StartError::Store)?;
    super::allocator::stripe::check_store(&store, config.stripe, config.stripe_takeover).await?;
    let guard = match &config.guard {
        Some(path) => {
            let alone = store.etcd().is_none() && !config.ha;
            Some(Arc::new(Guard::attach(&store, path, alone).await?))
        }
        None => {
            tracing::warn!(
                "no guard file (give --data-dir or --guard): a store that goes back (a restored \
                 backup, a replaced database) cannot be detected"
            );
            None
        }
    };
    Ok((store, guard))
}

/// Step 2: the TLS certificate and key, and the users from the store.
pub(super) async fn load_tls_and_users(
    config: &Config,
    store: &Store,
) -> Result<(Option<net::tls::Tls>, Auth), StartError> {
    let tls = config
        .tls
        .clone()
        .map(net::tls::Tls::load)
        .transpose()
        .map_err(StartError::Tls)?;
    let auth = Auth::load(store, config.requirepass.clone(), config.limits.auth())
        .await
        .map_err(StartError::Users)?;
    Ok((tls, auth))
}

/// Step 3: the RESP port, and the address it got.
pub(super) async fn bind(config: &Config) -> Result<(TcpListener, SocketAddr), StartError> {
    let failed = |source| StartError::Listen {
        addr: format!("{}:{}", config.bind, config.port),
        source,
    };
    let listener = TcpListener::bind((config.bind.as_str(), config.port))
        .await
        .map_err(failed)?;
    let addr = listener.local_addr().map_err(failed)?;
    Ok((listener, addr))
}

/// The store an election runs on, if any.
pub(super) enum Election {
    /// etcd: always elected.
    Etcd(EtcdStore),
    /// A SQL store with `--ha`.
    Sql(SqlStore),
    /// One server alone.
    None,
}

/// Step 4: the allocator (led alone or elected) and what every connection shares.
pub(super) fn assemble(
    config: &Config,
    store: Store,
    guard: Option<Arc<Guard>>,
    tls: Option<net::tls::Tls>,
    auth: Auth,
    addr: SocketAddr,
) -> (Arc<Shared>, Election) {
    let (host, port) = config
        .advertise
        .clone()
        .unwrap_or_else(|| (config.bind.clone(), addr.port()));
    let me = ha::Peer::new(&host, port);
    let election = match (store.etcd(), store.sql().filter(|_| config.ha)) {
        (Some(etcd), _) => Election::Etcd(etcd.clone()),
        (None, Some(sql)) => Election::Sql(sql.clone()),
        (None, None) => Election::None,
    };
    let leadership = Arc::new(match election {
        Election::None => ha::Leadership::alone(me),
        _ => ha::Leadership::elected(me),
    });
    let allocator = Allocator::new(
        store,
        config.policy.clone(),
        config.layout,
        config.node_id,
        leadership,
    )
    .with_guard(guard)
    .with_stripe(config.stripe);
    let shared = Arc::new(Shared {
        allocator: Arc::new(allocator),
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
    (shared, election)
}

/// What runs beside the RESP port, and how each is stopped.
pub(super) struct Background {
    poller: JoinHandle<()>,
    /// The metrics port answers until the very end (it is aborted last): its stop never turns.
    _metrics_stop: watch::Sender<bool>,
    metrics: Option<JoinHandle<()>>,
    http: Option<JoinHandle<()>>,
    /// Turned at shutdown: the RESP connections and the HTTP port finish what they read.
    stop: watch::Sender<bool>,
    stop_persister: Arc<Notify>,
    persister: JoinHandle<()>,
    stop_election: watch::Sender<bool>,
    election: Option<JoinHandle<()>>,
}

/// Step 5: busy polling, the metrics and HTTP ports, the persister and the election.
pub(super) async fn start_background(
    config: &Config,
    shared: &Arc<Shared>,
    election: Election,
) -> Result<Background, StartError> {
    let poller = tokio::spawn({
        let shared = shared.clone();
        async move { shared.busy_poll.run().await }
    });
    let (metrics_stop, metrics_stop_rx) = watch::channel(false);
    let metrics = match config.metrics_port {
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
    let (stop, stop_rx) = watch::channel(false);
    let http = match config.http_port {
        Some(port) => {
            let state =
                http::Http::new(config.http.clone()).map_err(|e| StartError::HttpTokens {
                    path: config.http.tokens.clone().unwrap_or_default(),
                    reason: e.to_string(),
                })?;
            let l = listen_extra(&config.bind, port, "HTTP").await?;
            let site = http::Site::Api(Arc::new(state));
            Some(tokio::spawn(http::serve(l, shared.clone(), site, stop_rx)))
        }
        None => None,
    };
    let stop_persister = Arc::new(Notify::new());
    let persister = tokio::spawn(shared.allocator.clone().persister(stop_persister.clone()));
    let (stop_election, stop_election_rx) = watch::channel(false);
    let election = match election {
        Election::Etcd(etcd) => Some(tokio::spawn(ha::etcd::run(
            shared.clone(),
            etcd,
            config.election.clone(),
            stop_election_rx,
        ))),
        Election::Sql(sql) => Some(tokio::spawn(ha::sql::run(
            shared.clone(),
            sql,
            config.election.clone(),
            stop_election_rx,
        ))),
        Election::None => None,
    };
    Ok(Background {
        poller,
        _metrics_stop: metrics_stop,
        metrics,
        http,
        stop,
        stop_persister,
        persister,
        stop_election,
        election,
    })
}

/// Step 6: the port file, for whoever started the server on port 0.
pub(super) fn write_port_file(config: &Config, addr: SocketAddr) -> Result<(), StartError> {
    if let Some(path) = &config.port_file {
        std::fs::write(path, format!("{}\n", addr.port())).map_err(|source| {
            StartError::PortFile {
                path: path.clone(),
                source,
            }
        })?;
    }
    Ok(())
}

impl Background {
    /// The receiver the RESP connections watch for the stop.
    pub(super) fn stop_signal(&self) -> watch::Receiver<bool> {
        self.stop.subscribe()
    }

    /// The stop, once the RESP port is closed: the connections answer what they read (10 s at
    /// most), the persister writes a last time, unused cached ids go back, and the leader
    /// resigns last, so it keeps its lease while it answers.
    pub(super) async fn stop(self, shared: &Shared, mut conns: JoinSet<()>) {
        self.poller.abort();
        let _ = self.stop.send(true);
        let drained = tokio::time::timeout(Duration::from_secs(10), async {
            while conns.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!("connections did not finish in 10 s; closing them");
            conns.abort_all();
        }
        if let Some(task) = self.http {
            let _ = task.await;
        }
        self.stop_persister.notify_one();
        let _ = self.persister.await;
        shared.allocator.release().await;
        let _ = self.stop_election.send(true);
        if let Some(task) = self.election {
            let _ = task.await;
        }
        if let Some(task) = self.metrics {
            task.abort();
        }
        shared.allocator.store().close().await;
    }
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
