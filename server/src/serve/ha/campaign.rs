//! The one election loop: turns as leader or standby, a hand-over when asked, a resignation at
//! the end. etcd's lease and a SQL store's lease row implement its moves.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::serve::shared::Shared;

/// One election's moves (etcd's in [`super::etcd`], a SQL store's in [`super::sql`]); [`campaign`] is the one
/// loop over them.
pub(super) trait Campaign {
    /// Whether this server leads now.
    fn leading(&self) -> bool;
    /// One turn as the leader (renew the lease); how long until the next turn.
    async fn lead(&mut self) -> Duration;
    /// One turn as a standby (watch the leader, campaign); how long until the next turn.
    async fn stand_by(&mut self) -> Duration;
    /// The server's shared state.
    fn shared(&self) -> &Shared;
    /// Drops the store's fence (the leader term its writes carry).
    fn unfence(&self);
    /// Ends what this server holds of the election (the lease), if anything.
    async fn end_lease(&mut self);
    /// Gives up the lead, saying `why`: stops serving, forgets the allocator's cache and the
    /// leader, and ends the lease.
    async fn step_down(&mut self, why: &str) {
        let leadership = self.shared().allocator.leadership();
        leadership.stop_serving();
        self.unfence();
        self.shared().allocator.reset().await;
        self.shared().allocator.leadership().set_leader(None);
        self.end_lease().await;
        if matches!(why, "handing over" | "shutting down") {
            tracing::info!(why, "stepped down");
        } else {
            tracing::warn!(why, "stepped down");
        }
    }
    /// Runs no campaign for `pause` (after handing over, so another server wins).
    fn keep_quiet(&mut self, pause: Duration);
    /// At shutdown: a leader resigns; a standby lets go of what it holds.
    async fn resign(&mut self);
}

/// Runs an election until `stop` turns true: turns as leader or standby, a hand-over when asked
/// (`FAILOVER`), and a resignation at the end.
pub(super) async fn campaign(
    mut e: impl Campaign,
    shared: Arc<Shared>,
    poll: Duration,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        let leading = e.leading();
        let pause = if leading {
            e.lead().await
        } else {
            e.stand_by().await
        };
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = shared.allocator.leadership().failover.notified(), if leading => {
                shared.allocator.leadership().stop_serving();
                shared.allocator.release().await;
                e.keep_quiet(poll * 4);
                e.step_down("handing over").await;
                shared.allocator.leadership().failover_done.notify_waiters();
            }
            _ = stop.changed() => break,
        }
        if *stop.borrow() {
            break;
        }
    }
    e.resign().await;
}
