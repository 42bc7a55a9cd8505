//! Leader election on a SQL store (`--ha`), for teams without etcd: the lease is the row of
//! [`SqlStore::campaign`], timed by the database's clock and renewed every quarter of the TTL.
//! The leader serves until the send time of its last successful renewal plus 90% of the TTL
//! (on its monotonic clock), so it stops before the database can let another server take the
//! row. Standbys read the row every `poll` and campaign when its lease ran out; with `probe` on,
//! a standby ends the term of a leader whose port refuses connections, as on etcd.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::ElectionConfig;
use super::Peer;
use super::campaign::Campaign;
use crate::serve::shared::Shared;
use idforge_store::SqlStore;

struct Election {
    shared: Arc<Shared>,
    store: SqlStore,
    config: ElectionConfig,
    /// Our term's token while we lead.
    token: Option<i64>,
    renewed: Instant,
    refused: u32,
    quiet_until: Instant,
    polls: u64,
}

/// Runs the election until `stop` turns true; then a leader resigns.
pub async fn run(
    shared: Arc<Shared>,
    store: SqlStore,
    config: ElectionConfig,
    stop: watch::Receiver<bool>,
) {
    store.set_fence(None);
    let poll = config.poll;
    let e = Election {
        shared: shared.clone(),
        store,
        config,
        token: None,
        renewed: Instant::now(),
        refused: 0,
        quiet_until: Instant::now(),
        polls: 0,
    };
    super::campaign::campaign(e, shared, poll, stop).await;
}

impl Campaign for Election {
    fn leading(&self) -> bool {
        self.token.is_some()
    }
    async fn lead(&mut self) -> Duration {
        let every = Duration::from_millis(self.ttl_ms() as u64) / 4;
        if self.renewed.elapsed() < every {
            return every - self.renewed.elapsed();
        }
        let Some(token) = self.token else {
            return Duration::ZERO;
        };
        let sent = Instant::now();
        match self.store.renew(&self.me().id, token, self.ttl_ms()).await {
            Ok(true) => {
                self.renewed = sent;
                self.shared
                    .allocator
                    .leadership()
                    .serve_until(sent + self.usable());
                self.refresh_members().await;
                every
            }
            Ok(false) => {
                self.step_down("the lease ran out").await;
                Duration::ZERO
            }
            Err(err) => {
                if sent >= self.renewed + self.usable() {
                    tracing::warn!(error = %err, "lease renewal failing past the lease");
                    self.step_down("the lease could not be renewed").await;
                    return Duration::ZERO;
                }
                Duration::from_millis(50)
            }
        }
    }
    async fn stand_by(&mut self) -> Duration {
        let poll = self.config.poll;
        self.polls += 1;
        if self.polls % 40 == 1 {
            self.shared.auth.reload(self.shared.allocator.store()).await;
        }
        if self.polls % 10 == 1 {
            self.refresh_members().await;
        }
        let row = match self.store.leader().await {
            Ok(row) => row,
            Err(err) => {
                tracing::debug!(error = %err, "cannot read the leader row");
                return poll;
            }
        };
        let shared = self.shared.clone();
        let leadership = shared.allocator.leadership();
        if row.live {
            let peer = Peer::decode(&format!("{} {}", row.holder, row.addr));
            if self.config.probe {
                let me = self.me().id.clone();
                if let Some(p) = peer.as_ref().filter(|p| p.id != me) {
                    self.probe(p, row.token).await;
                }
            }
            leadership.set_term(row.token);
            leadership.set_leader(peer);
            return poll;
        }
        leadership.set_leader(None);
        self.refused = 0;
        // A server whose store went back never leads again until repaired and restarted.
        if Instant::now() < self.quiet_until || self.shared.allocator.refusing().is_some() {
            return poll;
        }
        let sent = Instant::now();
        let me = self.me().clone();
        match self.store.campaign(&me.id, &me.addr(), self.ttl_ms()).await {
            Ok(Some(token)) => {
                self.token = Some(token);
                self.renewed = sent;
                self.store.set_fence(Some((me.id.clone(), token)));
                leadership.set_term(token);
                self.shared.allocator.reset().await;
                if self.shared.allocator.verify_store().await.is_err() {
                    self.step_down("the store is behind this server's guard")
                        .await;
                    return poll;
                }
                self.shared.auth.reload(self.shared.allocator.store()).await;
                leadership.serve_until(sent + self.usable());
                tracing::info!(token, "elected leader");
                Duration::ZERO
            }
            Ok(None) => poll,
            Err(err) => {
                tracing::debug!(error = %err, "campaign failed");
                poll
            }
        }
    }
    fn shared(&self) -> &Shared {
        &self.shared
    }
    fn unfence(&self) {
        self.store.set_fence(None);
    }
    /// Ends our term, waiting at most 500 ms for the store.
    async fn end_lease(&mut self) {
        if let Some(token) = self.token.take() {
            let end = self.store.end_term(token);
            let _ = tokio::time::timeout(Duration::from_millis(500), end).await;
        }
    }
    fn keep_quiet(&mut self, pause: Duration) {
        self.quiet_until = Instant::now() + pause;
    }
    async fn resign(&mut self) {
        if self.token.is_some() {
            self.step_down("shutting down").await;
        }
    }
}

impl Election {
    fn ttl_ms(&self) -> i64 {
        self.config.lease_ttl.max(1) * 1000
    }

    fn usable(&self) -> Duration {
        Duration::from_millis(self.ttl_ms() as u64).mul_f64(0.9)
    }

    fn me(&self) -> &Peer {
        self.shared.allocator.leadership().me()
    }

    async fn refresh_members(&mut self) {
        let me = self.me().clone();
        let ttl = self.ttl_ms() * 3;
        if let Ok(rows) = self.store.members(&me.id, &me.addr(), ttl).await {
            let members = rows
                .into_iter()
                .filter_map(|(id, addr)| Peer::decode(&format!("{id} {addr}")))
                .collect();
            self.shared.allocator.leadership().set_members(members);
        }
    }

    async fn probe(&mut self, leader: &Peer, token: i64) {
        let connect = tokio::net::TcpStream::connect((leader.host.as_str(), leader.port));
        let refused = matches!(
            tokio::time::timeout(Duration::from_millis(200), connect).await,
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused
        );
        self.refused = if refused { self.refused + 1 } else { 0 };
        if self.refused >= 2 {
            tracing::warn!(leader = %leader.addr(), "leader's port refuses connections; ending its term");
            if let Err(err) = self.store.end_term(token).await {
                tracing::debug!(error = %err, "could not end the term");
            }
            self.refused = 0;
        }
    }
}
