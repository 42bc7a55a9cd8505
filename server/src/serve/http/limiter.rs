//! The rate limit per token (`--http-rate-limit`): a token bucket of as many requests as the
//! rate, refilled continuously. Only callers that passed the token check have a bucket, so the
//! table holds at most one per token in the file plus one for requests without a token: a flood
//! of wrong tokens costs it nothing.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use super::tokens::TokenHash;
use crate::serve::lock::lock;

/// The buckets, by token hash (`None`: requests without a token).
#[derive(Debug)]
pub(crate) struct RateLimit {
    per_second: u32,
    buckets: Mutex<HashMap<Option<TokenHash>, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    left: f64,
    at: Instant,
}

impl RateLimit {
    /// `per_second` requests a second per key (0: no limit).
    pub(crate) fn new(per_second: u32) -> RateLimit {
        RateLimit {
            per_second,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one request from `key`'s allowance: `false` when it has none left.
    pub(crate) fn allow(&self, key: Option<TokenHash>) -> bool {
        self.allow_at(key, Instant::now())
    }

    fn allow_at(&self, key: Option<TokenHash>, now: Instant) -> bool {
        if self.per_second == 0 {
            return true;
        }
        let rate = f64::from(self.per_second);
        let mut buckets = lock(&self.buckets);
        let b = buckets.entry(key).or_insert(Bucket {
            left: rate,
            at: now,
        });
        let refill = now.saturating_duration_since(b.at).as_secs_f64() * rate;
        b.left = (b.left + refill).min(rate);
        b.at = now;
        if b.left < 1.0 {
            return false;
        }
        b.left -= 1.0;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_burst_of_the_rate_then_a_refill() {
        let limit = RateLimit::new(3);
        let t0 = Instant::now();
        let key = Some([1u8; 32]);
        for _ in 0..3 {
            assert!(limit.allow_at(key, t0));
        }
        assert!(!limit.allow_at(key, t0));
        assert!(limit.allow_at(None, t0), "each key its own bucket");
        assert!(limit.allow_at(key, t0 + Duration::from_millis(340)));
        assert!(!limit.allow_at(key, t0 + Duration::from_millis(340)));
        assert!(RateLimit::new(0).allow_at(key, t0), "0: no limit");
    }
}
