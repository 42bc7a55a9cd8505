//! What a clock-driven generator does when it is ahead of the clock (a burst used up a tick's
//! sequence, or the clock is behind the last id after a restart).

use std::time::{Duration, Instant};

use idforge_core::Error as CoreError;
use idforge_core::tick::Next;

use crate::clock::Clock;
use crate::error::Result;

/// How far ahead of the clock a generator may run, and how long a caller may wait for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Borrow up to `max_lead` of future time when a tick's sequence is used up (March,
    /// yitter); past it, wait at most `max_lead` for the clock to catch up, else fail with
    /// `CLOCK_BEHIND`. The default, with a 1 s lead.
    Borrow {
        /// How far ids may run ahead of the clock.
        max_lead: Duration,
    },
    /// Never run ahead: wait for the next tick, at most `budget`, else fail with
    /// `CLOCK_BEHIND` (Twitter, Sonyflake).
    Wait {
        /// The longest a call may wait.
        budget: Duration,
    },
    /// Never run ahead; wait only for short gaps (up to 5 ms, like Leaf) and fail with
    /// `CLOCK_BEHIND` otherwise.
    Error,
}

/// The lead of the default policy, and the default duration of a named one ([`Policy::named`]).
pub const DEFAULT_LEAD: Duration = Duration::from_secs(1);

impl Default for Policy {
    fn default() -> Self {
        Policy::Borrow {
            max_lead: DEFAULT_LEAD,
        }
    }
}

impl Policy {
    /// The policy names every binding accepts, in the order of the C `idforge_policy_kind`
    /// values 1, 2 and 3.
    pub const NAMES: [&'static str; 3] = ["borrow", "wait", "error"];

    /// The policy called `name` (`borrow`, `wait` or `error`), with `duration` as the lead or
    /// wait budget ([`DEFAULT_LEAD`] when `None`; `error` has none).
    pub fn named(name: &str, duration: Option<Duration>) -> Result<Policy> {
        let d = duration.unwrap_or(DEFAULT_LEAD);
        match name {
            "borrow" => Ok(Policy::Borrow { max_lead: d }),
            "wait" => Ok(Policy::Wait { budget: d }),
            "error" => Ok(Policy::Error),
            _ => {
                Err(CoreError::InvalidArgument("policy must be 'borrow', 'wait' or 'error'").into())
            }
        }
    }

    /// The name [`Policy::named`] reads.
    pub fn name(&self) -> &'static str {
        match self {
            Policy::Borrow { .. } => "borrow",
            Policy::Wait { .. } => "wait",
            Policy::Error => "error",
        }
    }

    /// How far ahead of the clock the core state may run.
    pub fn max_lead(&self) -> Duration {
        match self {
            Policy::Borrow { max_lead } => *max_lead,
            Policy::Wait { .. } | Policy::Error => Duration::ZERO,
        }
    }

    /// The longest a call may wait for the clock.
    pub fn max_wait(&self) -> Duration {
        match self {
            Policy::Borrow { max_lead } => *max_lead,
            Policy::Wait { budget } => *budget,
            Policy::Error => Duration::from_millis(5),
        }
    }
}

/// Calls `attempt` with the clock's time until it yields an id, waiting on `Pending` at most
/// `budget` (a policy's [`max_wait`](Policy::max_wait), or zero for callers that must never
/// block). A wait that cannot succeed in the budget fails at once (no pointless sleep).
pub(crate) fn run<T, C: Clock>(
    clock: &C,
    budget: Duration,
    mut attempt: impl FnMut(u64) -> Result<Next<T>>,
) -> Result<T> {
    let mut now = clock.now_ms();
    let mut deadline: Option<Instant> = None;
    loop {
        match attempt(now)? {
            Next::Id(id) => return Ok(id),
            Next::Pending { until_ms } => {
                let behind = until_ms.saturating_sub(now);
                if u128::from(behind) > budget.as_millis() {
                    return Err(CoreError::ClockBehind { behind_ms: behind }.into());
                }
                let deadline = *deadline.get_or_insert_with(|| Instant::now() + budget);
                if Instant::now() >= deadline {
                    let waited = budget.as_millis() as u64;
                    return Err(CoreError::Timeout { waited_ms: waited }.into());
                }
                clock.sleep_until_ms(until_ms, deadline);
                now = clock.now_ms();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn names_read_back() {
        for name in Policy::NAMES {
            assert_eq!(Policy::named(name, None).unwrap().name(), name);
        }
        assert_eq!(Policy::named("borrow", None).unwrap(), Policy::default());
        let d = Duration::from_millis(7);
        assert_eq!(
            Policy::named("wait", Some(d)).unwrap(),
            Policy::Wait { budget: d }
        );
        assert_eq!(Policy::named("error", Some(d)).unwrap(), Policy::Error);
        let err = Policy::named("Borrow", None).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
        assert_eq!(
            err.to_string(),
            "invalid argument: policy must be 'borrow', 'wait' or 'error'"
        );
    }
}
