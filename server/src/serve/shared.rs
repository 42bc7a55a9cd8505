//! What every connection and task of a server shares: the allocator, the users, the limits.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use super::allocator::Allocator;
use super::auth::Auth;
use super::config::Limits;
use super::metrics::family::Family;
use crate::serve::net::busy_poll::BusyPoll;
use crate::serve::net::tls::Tls;

/// What every connection shares.
#[derive(Debug)]
pub struct Shared {
    /// The allocator.
    pub allocator: Arc<Allocator>,
    /// Users.
    pub auth: Auth,
    /// The client port bound.
    pub port: u16,
    /// The next `CLIENT ID`.
    pub next_client: AtomicU64,
    /// Keeps the event loop polling for a while after each request.
    pub busy_poll: BusyPoll,
    /// What one client may hold (docs/server.md "Limits").
    pub limits: Limits,
    /// TLS on the client and metrics ports (`None`: plain TCP).
    pub tls: Option<Tls>,
    /// Requests by command (`/metrics`, `INFO stats`): made by `commands::request_counters`.
    pub requests: Family,
}

impl Shared {
    /// The `IDF.SNOWFLAKE` layout (the default of `IDF.DECODE`).
    pub fn snowflake_layout(&self) -> idforge::Layout {
        self.allocator.snowflake
    }
}
