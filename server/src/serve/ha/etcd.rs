//! Leader election on an etcd lease.
//!
//! Every server holds a lease (TTL `lease_ttl`, renewed every quarter of it). The leader is the
//! one whose put-if-absent of the `leader` key, attached to its lease, succeeded; the key's
//! create revision is the fence every persist compares ([`EtcdStore::persist`]). The leader
//! serves until its last renewal's send time plus the TTL, so it stops before etcd can expire
//! the lease and let another server win. Standbys read the key every `poll` and campaign as
//! soon as it is gone.
//!
//! Faster takeover (`probe`): a standby that finds the leader's client port refusing
//! connections twice in a row (the process is gone: a kill, a crash) revokes the leader's lease
//! at once instead of waiting for it to expire. This only ever ends a lease early; safety does
//! not depend on it (the fence does), and a paused or unreachable leader, which does not refuse
//! connections, is left to its lease.

use std::sync::Arc;
use std::time::{Duration, Instant};

use etcd_client::{Compare, CompareOp, LeaseKeepAliveStream, LeaseKeeper, PutOptions, Txn, TxnOp};
use tokio::sync::watch;

type Result<T> = std::result::Result<T, etcd_client::Error>;

use super::ElectionConfig;
use super::Peer;
use super::campaign::Campaign;
use crate::serve::shared::Shared;
use idforge_store::EtcdStore;

/// One granted lease and its keep-alive stream.
struct Lease {
    id: i64,
    keeper: Option<(LeaseKeeper, LeaseKeepAliveStream)>,
    /// A deadline no later than the lease's end at etcd.
    valid_until: Instant,
    renewed: Instant,
}

/// The part of a TTL not trusted: leaves room for clock-rate differences and scheduling.
fn usable(ttl: i64) -> Duration {
    Duration::from_secs(ttl.max(1) as u64).mul_f64(0.9)
}

impl Lease {
    async fn grant(store: &EtcdStore, ttl: i64, per_try: Duration) -> Result<Lease> {
        let sent = Instant::now();
        let granted = store
            .call_within(
                per_try,
                |mut c| async move { c.lease_grant(ttl, None).await },
            )
            .await?;
        Ok(Lease {
            id: granted.id(),
            keeper: None,
            valid_until: sent + usable(granted.ttl()),
            renewed: sent,
        })
    }

    /// One keep-alive round trip: `Ok(false)` when etcd says the lease is gone.
    async fn renew(&mut self, store: &EtcdStore, wait: Duration) -> Result<bool> {
        let sent = Instant::now();
        if self.keeper.is_none() {
            let id = self.id;
            let keeper = store
                .call_within(wait, |mut c| async move { c.lease_keep_alive(id).await })
                .await;
            self.keeper = match keeper {
                Ok(keeper) => Some(keeper),
                // Opening the stream renews once, and says so when etcd has no such lease.
                Err(etcd_client::Error::LeaseKeepAliveError(m)) if m.contains("not found") => {
                    return Ok(false);
                }
                Err(e) => return Err(e),
            };
        }
        let Some((keeper, stream)) = self.keeper.as_mut() else {
            return Ok(false);
        };
        let answer = async {
            keeper.keep_alive().await?;
            stream.message().await
        };
        let reply = match tokio::time::timeout(wait, answer).await {
            Ok(Ok(Some(reply))) => reply,
            Ok(Ok(None)) | Ok(Err(_)) | Err(_) => {
                // The stream broke (a member died) or stalled (a member cut off): a new one
                // next time, on another member.
                self.keeper = None;
                store.skip_current();
                return Err(etcd_client::Error::LeaseKeepAliveError(
                    "keep-alive got no answer".into(),
                ));
            }
        };
        if reply.ttl() <= 0 {
            return Ok(false);
        }
        self.renewed = sent;
        self.valid_until = sent + usable(reply.ttl());
        Ok(true)
    }
}

/// Runs the election until `stop` turns true; then a leader resigns (revokes its lease).
pub async fn run(
    shared: Arc<Shared>,
    store: EtcdStore,
    config: ElectionConfig,
    stop: watch::Receiver<bool>,
) {
    let e = Election {
        leader_key: store.key("leader"),
        member_key: store.key(&format!("member/{}", shared.allocator.leadership().me().id)),
        store,
        shared,
        config,
        lease: None,
        refused: 0,
        quiet_until: Instant::now(),
        paused_at: None,
        polls: 0,
    };
    let shared = e.shared.clone();
    let poll = e.config.poll;
    super::campaign::campaign(e, shared, poll, stop).await;
}

impl Campaign for Election {
    fn leading(&self) -> bool {
        self.shared.allocator.leadership().serving()
    }
    /// One round as the leader: renew the lease; returns the pause before the next round.
    async fn lead(&mut self) -> Duration {
        let every = self.renew_every();
        let Some(lease) = self.lease.as_mut() else {
            self.step_down("no lease").await;
            return Duration::ZERO;
        };
        if lease.renewed.elapsed() < every {
            return every.saturating_sub(lease.renewed.elapsed());
        }
        match lease.renew(&self.store, every).await {
            Ok(true) => {
                let until = lease.valid_until;
                self.shared.allocator.leadership().serve_until(until);
                self.refresh_members().await;
                every
            }
            Ok(false) => {
                self.step_down("the lease expired").await;
                Duration::ZERO
            }
            Err(err) => {
                if Instant::now() >= lease.valid_until {
                    tracing::warn!(error = %err, "lease renewal failing past the lease");
                    self.pause("the lease could not be renewed").await;
                    return Duration::ZERO;
                }
                tracing::debug!(error = %err, "lease renewal failed; retrying");
                Duration::from_millis(50)
            }
        }
    }
    /// One round as a standby: keep a lease, look at the leader key, campaign when it is free.
    async fn stand_by(&mut self) -> Duration {
        let poll = self.config.poll;
        if let Err(err) = self.keep_lease().await {
            tracing::debug!(error = %err, "no lease yet");
            return poll;
        }
        self.polls += 1;
        // Users change on the leader; a standby refreshes its copy now and then.
        if self.polls % 40 == 1 {
            self.shared.auth.reload(self.shared.allocator.store()).await;
        }
        if self.polls % 10 == 1 {
            self.refresh_members().await;
        }
        let key = self.leader_key.as_str();
        let read = self
            .store
            .call_within(
                self.renew_every(),
                |mut c| async move { c.get(key, None).await },
            )
            .await;
        let current = match read {
            Ok(resp) => resp.kvs().first().map(|kv| {
                let peer = kv.value_str().ok().and_then(Peer::decode);
                (peer, kv.lease(), kv.create_revision())
            }),
            Err(err) => {
                tracing::debug!(error = %err, "cannot read the leader key");
                return poll;
            }
        };
        match current {
            Some((Some(peer), lease, revision))
                if peer.id == self.shared.allocator.leadership().me().id
                    && self.lease.as_ref().is_some_and(|l| l.id == lease) =>
            {
                // Our own campaign landed though its answer was lost (a member died under it),
                // or our lease outlived a pause: the key and its fence are still ours.
                self.lead_with(revision).await;
                Duration::ZERO
            }
            Some((peer, lease, revision)) => {
                self.shared.allocator.leadership().set_term(revision);
                if self.config.probe {
                    if let Some(p) = &peer {
                        self.probe(p, lease).await;
                    }
                }
                self.shared.allocator.leadership().set_leader(peer);
                poll
            }
            None => {
                self.shared.allocator.leadership().set_leader(None);
                self.refused = 0;
                if Instant::now() < self.quiet_until {
                    return poll;
                }
                match self.campaign().await {
                    Ok(true) => Duration::ZERO,
                    Ok(false) => poll,
                    Err(err) => {
                        tracing::debug!(error = %err, "campaign failed");
                        poll
                    }
                }
            }
        }
    }
    fn shared(&self) -> &Shared {
        &self.shared
    }
    fn unfence(&self) {
        self.store.set_fence(0);
    }
    /// Ends our lease (so the leader key goes with it).
    async fn end_lease(&mut self) {
        if let Some(lease) = self.lease.take() {
            self.revoke(lease.id).await;
        }
    }
    fn keep_quiet(&mut self, pause: Duration) {
        self.quiet_until = Instant::now() + pause;
    }
    async fn resign(&mut self) {
        if self.shared.allocator.leadership().serving() {
            self.step_down("shutting down").await;
        } else if let Some(lease) = self.lease.take() {
            self.revoke(lease.id).await;
        }
    }
}

struct Election {
    member_key: String,
    store: EtcdStore,
    leader_key: String,
    shared: Arc<Shared>,
    config: ElectionConfig,
    lease: Option<Lease>,
    /// Consecutive refused probes of the current leader's port.
    refused: u32,
    /// No campaign before this (right after handing over, so another server wins).
    quiet_until: Instant,
    /// When this server stopped serving but kept its lease (`pause`).
    paused_at: Option<Instant>,
    polls: u64,
}

impl Election {
    fn renew_every(&self) -> Duration {
        Duration::from_secs(self.config.lease_ttl.max(1) as u64) / 4
    }

    /// Grants a lease when there is none (or etcd says it ended) and renews it on schedule. A
    /// lease past its deadline here is renewed too: only etcd can tell whether it still holds
    /// it (after `pause`), and a renewal it grants makes the lease valid again.
    async fn keep_lease(&mut self) -> Result<()> {
        let every = self.renew_every();
        // A lease kept through a pause is given up after one more TTL: on a link slow enough
        // that our renewals reach etcd but their answers come too late, it would otherwise stay
        // alive at etcd, holding the leader key, with nobody serving.
        let ttl = Duration::from_secs(self.config.lease_ttl.max(1) as u64);
        if self.paused_at.is_some_and(|t| t.elapsed() > ttl) {
            self.paused_at = None;
            if let Some(lease) = self.lease.take() {
                self.revoke(lease.id).await;
            }
        }
        if let Some(lease) = self.lease.as_mut() {
            let expired = Instant::now() >= lease.valid_until;
            if (expired || lease.renewed.elapsed() >= every)
                && !lease.renew(&self.store, every).await?
            {
                self.lease = None;
            }
        }
        if self.lease.is_none() {
            // `paused_at` was about the lease kept through a pause, which is gone.
            self.paused_at = None;
            let lease =
                Lease::grant(&self.store, self.config.lease_ttl, self.renew_every()).await?;
            // Our member key lives on the lease: it goes when we do.
            let (key, me, id) = (
                &self.member_key,
                self.shared.allocator.leadership().me().encode(),
                lease.id,
            );
            let me = &me;
            self.store
                .call_within(self.renew_every(), |mut c| async move {
                    c.put(
                        key.as_str(),
                        me.as_str(),
                        Some(PutOptions::new().with_lease(id)),
                    )
                    .await
                })
                .await?;
            self.lease = Some(lease);
        }
        Ok(())
    }

    /// Reads the members (every server with a live lease), for `CLUSTER SLOTS` and the like.
    async fn refresh_members(&mut self) {
        // Bounded: it runs between renewals, and a silent member must not hold them up.
        let read = tokio::time::timeout(self.renew_every(), self.store.under("member/")).await;
        if let Ok(Ok((_, kvs))) = read {
            let members = kvs
                .iter()
                .filter_map(|kv| kv.value_str().ok().and_then(Peer::decode))
                .collect();
            self.shared.allocator.leadership().set_members(members);
        }
    }

    /// Put-if-absent of the leader key on our lease; on success, serve.
    async fn campaign(&mut self) -> Result<bool> {
        let Some(lease) = &self.lease else {
            return Ok(false);
        };
        // A server whose store went back never leads again until repaired and restarted.
        if self.shared.allocator.refusing().is_some() {
            return Ok(false);
        }
        let me = self.shared.allocator.leadership().me().encode();
        let txn = Txn::new()
            .when([Compare::create_revision(
                self.leader_key.as_str(),
                CompareOp::Equal,
                0,
            )])
            .and_then([TxnOp::put(
                self.leader_key.as_str(),
                me,
                Some(PutOptions::new().with_lease(lease.id)),
            )]);
        let txn = &txn;
        // Bounded per member: a try that landed but whose answer was lost fails its compare on
        // the next member, and the next poll finds our own key (see `stand_by`).
        let resp = self
            .store
            .call_within(self.renew_every(), |mut c| async move {
                c.txn(txn.clone()).await
            })
            .await?;
        if !resp.succeeded() {
            return Ok(false);
        }
        // The transaction's revision is the key's create revision: the fence.
        self.lead_with(resp.header().map_or(0, |h| h.revision()))
            .await;
        Ok(true)
    }

    /// Serves as the leader whose key has create revision `fence`.
    async fn lead_with(&mut self, fence: i64) {
        let Some(until) = self.lease.as_ref().map(|l| l.valid_until) else {
            return;
        };
        self.paused_at = None;
        self.store.set_fence(fence);
        self.shared.allocator.leadership().set_term(fence);
        // Whatever was cached in an earlier term is stale: start from the store.
        self.shared.allocator.reset().await;
        if self.shared.allocator.verify_store().await.is_err() {
            self.step_down("the store is behind this server's guard")
                .await;
            return;
        }
        self.shared.auth.reload(self.shared.allocator.store()).await;
        self.shared.allocator.leadership().serve_until(until);
        self.refused = 0;
        tracing::info!(fence, "elected leader");
    }

    /// Checks whether the leader's port refuses connections; revokes its lease when it did
    /// twice in a row.
    async fn probe(&mut self, leader: &Peer, lease: i64) {
        if leader.id == self.shared.allocator.leadership().me().id || lease == 0 {
            return;
        }
        let connect = tokio::net::TcpStream::connect((leader.host.as_str(), leader.port));
        let refused = matches!(
            tokio::time::timeout(Duration::from_millis(200), connect).await,
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused
        );
        self.refused = if refused { self.refused + 1 } else { 0 };
        if self.refused >= 2 {
            tracing::warn!(leader = %leader.addr(), "leader's port refuses connections; revoking its lease");
            self.revoke(lease).await;
            self.refused = 0;
        }
    }

    /// Stops serving, gives back the unused cached ids and resigns, so a standby takes over
    /// within one poll (`IDF.FAILOVER`).
    /// Ends a lease (its keys go with it), best effort: a lease not revoked expires anyway.
    async fn revoke(&self, id: i64) {
        let revoke = self
            .store
            .call(|mut c| async move { c.lease_revoke(id).await });
        match tokio::time::timeout(Duration::from_millis(500), revoke).await {
            Ok(Ok(_)) => {}
            Ok(Err(err)) => tracing::debug!(error = %err, "revoke failed"),
            Err(_) => tracing::debug!("revoke timed out"),
        }
    }

    /// Stops serving and forgets the cache, but keeps the lease, when it could not be renewed
    /// in time (etcd electing a leader of its own, a member cut off). Once etcd answers again,
    /// `keep_lease` renews it if etcd still holds it; the leader key is then still ours, with
    /// the same fence, and `stand_by` leads again at once instead of waiting for the lease to
    /// run out at etcd and another server to win. Safe: no other server can hold the key while
    /// the lease it is attached to lives.
    async fn pause(&mut self, why: &str) {
        let leadership = self.shared.allocator.leadership();
        leadership.stop_serving();
        self.store.set_fence(0);
        self.shared.allocator.reset().await;
        leadership.set_leader(None);
        self.paused_at = Some(Instant::now());
        tracing::warn!(
            why,
            "stopped serving; the lease is kept in case etcd still holds it"
        );
    }
}
