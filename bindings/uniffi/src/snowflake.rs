//! `Snowflake`: the thread-safe 64-bit generator.

use std::sync::Arc;
use std::time::Duration;

use idforge::{Policy as RtPolicy, Snowflake as RtSnowflake, SnowflakeBuilder};

use crate::error::{IdforgeError, Result};
use crate::layout::{IdBounds, Layout, SnowflakeParts, bounds};

/// What `next()` does when a tick's sequence is used up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Policy {
    /// Run ahead of the clock by at most `maxWaitMs`, then wait for it (the default).
    Borrow,
    /// Wait for the clock, at most `maxWaitMs`, else `ClockBehind`.
    Wait,
    /// Wait only for short gaps (5 ms) and fail with `ClockBehind` otherwise.
    Error,
}

/// A count as `usize`: negative or past the runtime's batch cap (2^27) is refused.
pub(crate) fn count(n: i32) -> Result<usize> {
    let n = u64::try_from(n).unwrap_or(u64::MAX);
    Ok(idforge::batch_len(n)?)
}

/// A snowflake generator: 64-bit ids, increasing, never repeated by this generator, safe to
/// share between threads.
#[derive(uniffi::Object)]
pub struct Snowflake {
    inner: RtSnowflake,
    layout: Arc<Layout>,
}

/// The runtime policy of `policy` (default `Borrow`) and its duration in ms (default: the
/// policy's own).
pub(crate) fn runtime_policy(policy: Option<Policy>, max_wait_ms: Option<i64>) -> Result<RtPolicy> {
    let duration = match max_wait_ms {
        None => None,
        Some(ms) => {
            Some(Duration::from_millis(u64::try_from(ms).map_err(|_| {
                IdforgeError::argument("maxWaitMs cannot be negative")
            })?))
        }
    };
    // The enum's order is the runtime's names' (checked by a test).
    let name = RtPolicy::NAMES[policy.unwrap_or(Policy::Borrow) as usize];
    Ok(RtPolicy::named(name, duration)?)
}

/// The builder of a layout, node, policy and sequence start.
fn builder(
    layout: &Layout,
    node_id: i64,
    policy: Option<Policy>,
    max_wait_ms: Option<i64>,
    random_start: bool,
) -> Result<SnowflakeBuilder> {
    Ok(RtSnowflake::builder(layout.inner)
        .node(node_id as u64)
        .policy(runtime_policy(policy, max_wait_ms)?)
        .random_start(random_start))
}

#[uniffi::export]
impl Snowflake {
    /// A generator for `layout` and `node_id` (`policy` defaults to `Borrow`); `state_file` persists the high-water time so a
    /// restart with the clock set back cannot repeat ids. With `random_start`, each tick's
    /// sequence starts at a random value below half its range instead of 0, so `id % n` spreads
    /// evenly over n shards even at a few ids per tick; a tick then holds at least half its
    /// sequence range (2,048 ids per ms in the Twitter layout) before borrowing the next.
    #[uniffi::constructor(default(
        node_id = 0,
        policy = None,
        max_wait_ms = None,
        state_file = None,
        random_start = false
    ))]
    pub fn new(
        layout: Arc<Layout>,
        node_id: i64,
        policy: Option<Policy>,
        max_wait_ms: Option<i64>,
        state_file: Option<String>,
        random_start: bool,
    ) -> Result<Arc<Snowflake>> {
        let mut builder = builder(&layout, node_id, policy, max_wait_ms, random_start)?;
        if let Some(path) = state_file {
            builder = builder.state_file(path);
        }
        Ok(Arc::new(Snowflake {
            inner: builder.build()?,
            layout,
        }))
    }

    /// A generator whose node id is leased from the idforge server at `url`
    /// (`idforge://[user:pass@]host:port[,…]`): the lowest id of `service` that no live process
    /// holds, renewed in the background every third of `ttl_ms` and released when the generator
    /// is destroyed (`close()`). If the lease is lost, every call throws
    /// `IdforgeException.LeaseLost`. Blocks for one round trip to the server. `random_start`
    /// as in the constructor.
    #[uniffi::constructor(default(
        policy = None,
        max_wait_ms = None,
        ttl_ms = 10000,
        random_start = false
    ))]
    pub fn leased(
        layout: Arc<Layout>,
        url: String,
        service: String,
        policy: Option<Policy>,
        max_wait_ms: Option<i64>,
        ttl_ms: i64,
        random_start: bool,
    ) -> Result<Arc<Snowflake>> {
        let ttl = u64::try_from(ttl_ms)
            .map_err(|_| IdforgeError::argument("ttlMs cannot be negative"))?;
        let builder = builder(&layout, 0, policy, max_wait_ms, random_start)?
            .lease(url, service)
            .lease_ttl(Duration::from_millis(ttl));
        Ok(Arc::new(Snowflake {
            inner: builder.build()?,
            layout,
        }))
    }

    /// A generator of the preset layout `name` (`twitter`, ...).
    #[uniffi::constructor(default(node_id = 0))]
    pub fn preset(name: String, node_id: i64) -> Result<Arc<Snowflake>> {
        Snowflake::new(Layout::preset(name)?, node_id, None, None, None, false)
    }

    /// The next id; may wait for the clock as the policy says.
    pub fn next(&self) -> Result<i64> {
        Ok(self.inner.next()? as i64)
    }

    /// `n` fresh ids in increasing order.
    pub fn next_many(&self, n: i32) -> Result<Vec<i64>> {
        let mut ids = vec![0u64; count(n)?];
        self.inner.next_many(&mut ids)?;
        Ok(ids.into_iter().map(|id| id as i64).collect())
    }

    /// The fields of `id`.
    pub fn decode(&self, id: i64) -> Result<SnowflakeParts> {
        Ok(self.inner.decode(id as u64)?.into())
    }

    /// The id for `time_ms`, this generator's node and `seq`: for range queries and tests, not
    /// for issuing ids.
    #[uniffi::method(default(seq = 0))]
    pub fn compose(&self, time_ms: i64, seq: i64) -> Result<i64> {
        let l = &self.layout.inner;
        let tick = l.tick_of(time_ms as u64)?;
        Ok(l.compose(tick, self.inner.node(), seq as u64)? as i64)
    }

    /// The smallest and largest ids of the tick holding `time_ms`.
    pub fn bounds_at(&self, time_ms: i64) -> Result<IdBounds> {
        bounds(&self.layout.inner, time_ms)
    }

    /// The layout.
    pub fn layout(&self) -> Arc<Layout> {
        self.layout.clone()
    }

    /// The node id.
    pub fn node_id(&self) -> i64 {
        self.inner.node() as i64
    }

    /// Whether each tick's sequence starts at a random value (`random_start`).
    pub fn random_start(&self) -> bool {
        self.inner.random_start()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_enum_follows_the_runtime_names() {
        for (policy, name) in [
            (Policy::Borrow, "borrow"),
            (Policy::Wait, "wait"),
            (Policy::Error, "error"),
        ] {
            assert_eq!(RtPolicy::NAMES[policy as usize], name);
        }
    }
}
