//! Who serves: one server alone (SQL stores), or the elected leader of several (etcd store).
//!
//! The elections move this server's [`Leadership`] (`crate::serve::leadership`): each lease
//! renewal ([`etcd`], [`sql`]) moves its deadline ahead, never past the lease's end at the store,
//! so a server paused (SIGSTOP, a long GC-like stall, a VM freeze) past its lease serves nothing
//! when it resumes, even before it learns that it lost. Standbys answer data commands with
//! `-MOVED` to the leader they know.
//!
//! The elections ([`etcd`], [`sql`], one loop in `campaign`) take the server's `Shared` state:
//! before leading they check the store against its guard.

mod campaign;
pub mod etcd;
pub mod sql;

pub use crate::serve::leadership::{ElectionConfig, Leadership, Peer};
