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
    async fn lead_turn(&mut self) -> Duration;
    /// One turn as a standby (watch the leader, campaign); how long until the next turn.
    async fn standby_turn(&mut self) -> Duration;
    /// Gives up the lead on purpose, saying `why`.
    async fn give_up(&mut self, why: &str);
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
            e.lead_turn().await
        } else {
            e.standby_turn().await
        };
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = shared.allocator.leadership().failover.notified(), if leading => {
                shared.allocator.leadership().stop_serving();
                shared.allocator.release().await;
                e.keep_quiet(poll * 4);
                e.give_up("handing over").await;
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
