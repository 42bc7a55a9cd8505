//! What `Uuid7s` and `Ulids` share: building the generator and drawing a batch.

use idforge::{TimeOrdered, TimeOrderedId};

use crate::error::Result;
use crate::snowflake::{Policy, runtime_policy};

/// A generator on the system clock with an optional state file and policy.
pub(crate) fn build<T: TimeOrderedId>(
    state_file: Option<String>,
    policy: Option<Policy>,
    max_wait_ms: Option<i64>,
) -> Result<TimeOrdered<T>> {
    let policy = runtime_policy(policy, max_wait_ms)?;
    Ok(TimeOrdered::build(
        policy,
        state_file.map(Into::into),
        idforge::SystemClock::shared(),
    )?)
}

/// `n` fresh ids in increasing order.
pub(crate) fn next_many<T: TimeOrderedId + Copy>(
    generator: &TimeOrdered<T>,
    n: usize,
) -> Result<Vec<T>> {
    let mut ids = vec![T::stamp(0, 0, 0); n];
    generator.next_many(&mut ids)?;
    Ok(ids)
}
