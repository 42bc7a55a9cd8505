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

/// What a client from another host gets from a port in protected mode (RESP).
pub const PROTECTED: &str = "-DENIED idforge is in protected mode: no password is set, so only \
    clients on this host are served. Set one (--requirepass, or users with IDF.USER from a local \
    client), or, on a network you trust, start with --insecure-open (IDFORGE_INSECURE_OPEN=1)\r\n";

impl Shared {
    /// Whether the client port refuses `peer` (protected mode): it is on another host, no
    /// password or user is set, and `--insecure-open` was not given.
    pub fn refuses(&self, peer: std::net::IpAddr) -> bool {
        !self.limits.insecure_open && !peer.to_canonical().is_loopback() && !self.auth.required()
    }

    /// The `IDF.SNOWFLAKE` layout (the default of `IDF.DECODE`).
    pub fn snowflake_layout(&self) -> idforge::Layout {
        self.allocator.snowflake
    }
}
