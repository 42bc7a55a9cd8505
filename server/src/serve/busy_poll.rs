//! Busy polling: after a request, the event loop keeps asking the kernel for ready sockets (an
//! `epoll_wait` with a zero timeout) for a short window instead of going to sleep in it.
//!
//! Under load a fast server empties its sockets and sleeps between bursts; every request that
//! arrives then has to wake it, and the wake-up (an inter-processor interrupt and a context
//! switch) costs the *client* in its `send` and the server in its scheduler: with redis-benchmark
//! at `-c 50 -P 16` idforge switched context ~20,000 times per 1.6 M requests where Redis, busier
//! per request, switched ~1,000 times. A task that yields in a loop keeps tokio polling the
//! driver without blocking; it runs only for `window` after the last request, so an idle server
//! uses no CPU (the kernel's `SO_BUSY_POLL` does the same for NIC queues, not for loopback).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// Shared by the connections (which report activity) and the polling task.
#[derive(Debug, Default)]
pub struct BusyPoll {
    /// How long to keep polling after the last request (zero: never).
    window: Duration,
    /// Bumped by every batch of requests.
    activity: AtomicU64,
    /// Whether the polling task is running (then activity needs no wake-up).
    spinning: AtomicBool,
    /// Starts the polling task.
    wake: Notify,
}

impl BusyPoll {
    /// Busy polling for `window` after each request (zero turns it off).
    pub fn new(window: Duration) -> BusyPoll {
        BusyPoll {
            window,
            ..BusyPoll::default()
        }
    }

    /// A connection served requests: keep (or start) polling.
    #[inline]
    pub fn active(&self) {
        if self.window.is_zero() {
            return;
        }
        self.activity.fetch_add(1, Ordering::Relaxed);
        if !self.spinning.load(Ordering::Relaxed) {
            self.wake.notify_one();
        }
    }

    /// The polling task: sleeps until a request comes, then yields until `window` passed with
    /// none. Returns at once when busy polling is off.
    pub async fn run(&self) {
        if self.window.is_zero() {
            return;
        }
        loop {
            self.wake.notified().await;
            self.spinning.store(true, Ordering::Relaxed);
            let mut seen = self.activity.load(Ordering::Relaxed);
            let mut quiet_since = Instant::now();
            loop {
                // A yielded task makes tokio poll the driver with a zero timeout before it runs
                // again: the busy poll itself.
                tokio::task::yield_now().await;
                let now = self.activity.load(Ordering::Relaxed);
                if now != seen {
                    seen = now;
                    quiet_since = Instant::now();
                } else if quiet_since.elapsed() >= self.window {
                    break;
                }
            }
            // A request landing between the last look and this store finds the task still
            // marked as spinning and does not wake it: the next request will (polling is only
            // about latency, never about correctness).
            self.spinning.store(false, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn polls_after_activity_then_sleeps() {
        let poll = std::sync::Arc::new(BusyPoll::new(Duration::from_millis(20)));
        let task = tokio::spawn({
            let poll = poll.clone();
            async move { poll.run().await }
        });
        tokio::task::yield_now().await;
        assert!(!poll.spinning.load(Ordering::Relaxed));
        poll.active();
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
        assert!(poll.spinning.load(Ordering::Relaxed));
        // With no more requests it stops within its window (and some slack for a slow machine).
        let deadline = Instant::now() + Duration::from_secs(5);
        while poll.spinning.load(Ordering::Relaxed) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(!poll.spinning.load(Ordering::Relaxed));
        task.abort();
    }

    #[tokio::test(flavor = "current_thread")]
    async fn off_returns_at_once() {
        let poll = BusyPoll::new(Duration::ZERO);
        poll.active();
        poll.run().await;
        assert_eq!(poll.activity.load(Ordering::Relaxed), 0);
    }
}
