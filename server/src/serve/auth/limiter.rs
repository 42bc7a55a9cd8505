//! The failed-attempt allowance of each source address (a token bucket), and when it last
//! passed or failed an AUTH (which lane of the gate its checks wait in).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::gate::{Lane, SUSPECT_FOR, TRUSTED_FOR};
use crate::serve::lock::lock;

/// A token bucket per source address: `burst` attempts, refilled at one per second; and when
/// it last failed.
#[derive(Debug)]
pub(super) struct FailLimiter {
    burst: u32,
    buckets: Mutex<HashMap<IpAddr, Source>>,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Source {
    tokens: f64,
    at: Instant,
    failed: Option<Instant>,
    passed: Option<Instant>,
}

impl Source {
    /// The lane of a check from this address now.
    pub(super) fn lane(&self, now: Instant) -> Lane {
        let lately = |t: Option<Instant>, within: Duration| {
            t.filter(|t| now.saturating_duration_since(*t) < within)
        };
        match (
            lately(self.passed, TRUSTED_FOR),
            lately(self.failed, SUSPECT_FOR),
        ) {
            (Some(p), Some(f)) if f > p => Lane::Later,
            (Some(p), _) if self.failed.is_none_or(|f| f <= p) => Lane::First,
            (None, Some(_)) => Lane::Later,
            _ => Lane::Unknown,
        }
    }
}

/// Addresses tracked at most; past it, the ones whose bucket has refilled are forgotten.
pub(super) const MAX_TRACKED: usize = 65_536;

impl FailLimiter {
    /// `burst` failed attempts per address (0: no limit), refilled at one per second.
    pub(super) fn new(burst: u32) -> FailLimiter {
        FailLimiter {
            burst,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// `ip`'s entry, made room for.
    pub(super) fn source<'a>(
        &self,
        buckets: &'a mut HashMap<IpAddr, Source>,
        ip: IpAddr,
        now: Instant,
    ) -> &'a mut Source {
        let burst = f64::from(self.burst);
        if buckets.len() >= MAX_TRACKED && !buckets.contains_key(&ip) {
            buckets.retain(|_, s| {
                s.tokens + now.saturating_duration_since(s.at).as_secs_f64() < burst
                    || s.lane(now) != Lane::Unknown
            });
            if buckets.len() >= MAX_TRACKED {
                // An address spray: forget them all rather than grow (docs/server.md "Limits"), but
                // those with a client logged in (a spray cannot make those).
                buckets.retain(|_, s| s.lane(now) == Lane::First);
                if buckets.len() >= MAX_TRACKED {
                    buckets.clear();
                }
            }
        }
        buckets.entry(ip).or_insert(Source {
            tokens: burst,
            at: now,
            failed: None,
            passed: None,
        })
    }

    /// Takes a token for an attempt from `ip`; `false` when it has none.
    pub(super) fn take(&self, ip: IpAddr, now: Instant) -> bool {
        if self.burst == 0 {
            return true;
        }
        let burst = f64::from(self.burst);
        let mut buckets = lock(&self.buckets);
        let s = self.source(&mut buckets, ip, now);
        s.tokens = (s.tokens + now.saturating_duration_since(s.at).as_secs_f64()).min(burst);
        s.at = now;
        if s.tokens < 1.0 {
            return false;
        }
        s.tokens -= 1.0;
        true
    }

    /// Notes an attempt from `ip` that succeeded, giving back its token.
    pub(super) fn passed(&self, ip: IpAddr, now: Instant) {
        let burst = f64::from(self.burst);
        let mut buckets = lock(&self.buckets);
        let s = self.source(&mut buckets, ip, now);
        s.tokens = (s.tokens + 1.0).min(burst);
        s.passed = Some(now);
    }

    /// Notes a failed attempt from `ip`.
    pub(super) fn failed(&self, ip: IpAddr, now: Instant) {
        let mut buckets = lock(&self.buckets);
        self.source(&mut buckets, ip, now).failed = Some(now);
    }

    /// The lane of a check from `ip` now.
    pub(super) fn lane(&self, ip: IpAddr, now: Instant) -> Lane {
        lock(&self.buckets)
            .get(&ip)
            .map_or(Lane::Unknown, |s| s.lane(now))
    }
}

/// The bucket key: the address, or its /64 for IPv6 (one host holds a whole /64).
pub(super) fn source_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_go_first_with_a_client_logged_in_and_last_while_they_fail() {
        let limiter = FailLimiter::new(0);
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        assert_eq!(limiter.lane(a, t0), Lane::Unknown);
        limiter.failed(a, t0);
        assert_eq!(limiter.lane(a, at(1)), Lane::Later);
        assert_eq!(limiter.lane(a, t0 + SUSPECT_FOR), Lane::Unknown, "forgiven");
        limiter.passed(a, at(2));
        assert_eq!(
            limiter.lane(a, at(3)),
            Lane::First,
            "a success after the failure"
        );
        assert_eq!(
            limiter.lane(a, t0 + TRUSTED_FOR + at(2).duration_since(t0)),
            Lane::Unknown
        );
        limiter.failed(a, at(4));
        assert_eq!(
            limiter.lane(a, at(5)),
            Lane::Later,
            "a failure after the success"
        );
        assert_eq!(
            limiter.lane("10.0.0.2".parse().unwrap(), at(5)),
            Lane::Unknown
        );
    }

    #[test]
    fn failed_attempts_are_limited_per_address() {
        let limiter = FailLimiter::new(3);
        let t0 = Instant::now();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        assert!((0..3).all(|_| limiter.take(a, t0)));
        assert!(!limiter.take(a, t0), "the burst is used");
        assert!(limiter.take(b, t0), "another address has its own");
        limiter.passed(a, t0);
        assert!(limiter.take(a, t0), "a success gives its token back");
        assert!(!limiter.take(a, t0));
        assert!(limiter.take(a, t0 + std::time::Duration::from_millis(1100)));
        let off = FailLimiter {
            burst: 0,
            buckets: Mutex::new(HashMap::new()),
        };
        assert!((0..100).all(|_| off.take(a, t0)));
        let v6: IpAddr = "2001:db8::1".parse().unwrap();
        let v6b: IpAddr = "2001:db8::ffff:1".parse().unwrap();
        assert_eq!(source_key(v6), source_key(v6b));
    }
}
