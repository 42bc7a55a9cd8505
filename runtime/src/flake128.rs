//! The thread-safe, fork-aware flake-128 generator.

use std::time::Duration;

use idforge_core::Error as CoreError;
use idforge_core::flake128::{Flake128, Flake128Gen};

use crate::clock::{Clock, SystemClock};
use crate::entropy;
use crate::error::Result;
use crate::policy::{self, Policy};
use crate::reseed::ForkGuard;

/// Where a flake-128 generator's 48-bit worker id comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WorkerId {
    /// 48 random bits per process (the default); a forked child draws new ones.
    #[default]
    Random,
    /// The first non-zero MAC address of a network interface (Boundary's choice).
    Mac,
    /// A fixed value chosen by the caller.
    Fixed(u64),
}

impl WorkerId {
    fn resolve(self) -> Result<u64> {
        match self {
            WorkerId::Random => Ok(entropy::u64()? & Flake128::MAX_WORKER),
            WorkerId::Fixed(w) => Ok(w),
            WorkerId::Mac => mac_address().ok_or_else(|| {
                CoreError::InvalidArgument("no network interface with a MAC address").into()
            }),
        }
    }
}

/// Reads the first non-zero MAC address under /sys/class/net, in name order.
fn mac_address() -> Option<u64> {
    let mut names: Vec<_> = std::fs::read_dir("/sys/class/net")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    names.sort();
    names.iter().find_map(|dir| {
        let text = std::fs::read_to_string(dir.join("address")).ok()?;
        let hex: String = text.trim().split(':').collect();
        let mac = u64::from_str_radix(&hex, 16).ok()?;
        (hex.len() == 12 && mac != 0).then_some(mac)
    })
}

/// Flake-128 ids (64-bit ms | 48-bit worker | 16-bit sequence): `Send + Sync`.
///
/// In a forked child a random worker id is drawn again; a fixed or MAC worker id would repeat
/// the parent's ids, so such a generator fails with `FORKED` in the child.
#[derive(Debug)]
pub struct Flake128s<C: Clock = SystemClock> {
    generator: Flake128Gen,
    worker: WorkerId,
    clock: C,
    policy: Policy,
    fork: ForkGuard,
}

impl Flake128s {
    /// A generator with the given worker id source on the system clock, default policy.
    pub fn new(worker: WorkerId) -> Result<Flake128s> {
        Flake128s::with_clock(worker, Policy::default(), SystemClock::shared())
    }
}

impl<C: Clock> Flake128s<C> {
    /// A generator on another clock and policy.
    pub fn with_clock(worker: WorkerId, policy: Policy, clock: C) -> Result<Flake128s<C>> {
        let lead_ms = policy.max_lead().min(Duration::from_secs(3600)).as_millis() as u64;
        Ok(Flake128s {
            generator: Flake128Gen::new(worker.resolve()?, lead_ms)?,
            worker,
            clock,
            policy,
            fork: ForkGuard::new()?,
        })
    }

    /// The 48-bit worker id in use.
    pub fn worker(&self) -> u64 {
        self.generator.worker()
    }

    /// The next id.
    #[inline]
    pub fn next(&self) -> Result<Flake128> {
        self.fork.check(|| match self.worker {
            WorkerId::Random => Ok(self.generator.set_worker(WorkerId::Random.resolve()?)?),
            WorkerId::Mac | WorkerId::Fixed(_) => Err(CoreError::Forked.into()),
        })?;
        policy::run(&self.clock, self.policy.max_wait(), |now| {
            Ok(self.generator.next(now)?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::error::ErrorCode;
    use std::sync::Arc;

    #[test]
    fn ids_increase_and_carry_time_and_worker() {
        let clock = Arc::new(ManualClock::new(1_600_000_000_000));
        let g = Flake128s::with_clock(WorkerId::Fixed(0xABCDEF), Policy::default(), clock.clone())
            .unwrap();
        let a = g.next().unwrap();
        let b = g.next().unwrap();
        assert!(b > a);
        assert_eq!(a.time_ms(), 1_600_000_000_000);
        assert_eq!(a.worker(), 0xABCDEF);
        assert_eq!((a.seq(), b.seq()), (0, 1));
    }

    #[test]
    fn worker_sources() {
        let r1 = Flake128s::new(WorkerId::Random).unwrap().worker();
        let r2 = Flake128s::new(WorkerId::Random).unwrap().worker();
        assert_ne!(r1, r2, "48 random bits should differ");
        let err = Flake128s::new(WorkerId::Fixed(1 << 48)).unwrap_err();
        assert_eq!(err.code(), ErrorCode::NodeOutOfRange);
        if let Some(mac) = mac_address() {
            assert_eq!(Flake128s::new(WorkerId::Mac).unwrap().worker(), mac);
        }
    }
}
