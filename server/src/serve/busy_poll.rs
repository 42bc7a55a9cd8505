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
//!
//! Polling pays only while requests come back faster than a sleep and a wake-up cost: spinning
//! 30 µs for each request of a lone client (`-c 1`) cost 1.4× Redis's CPU per request, for half
//! its latency. So the task measures how long its empty polling rounds took for each batch it
//! caught and, when a group of 16 batches cost more than 4 µs each (`BREAK_EVEN`), stops
//! polling for 100 ms (`REST`); then it tries again. A lone client is served like Redis (sleep, wake per request); a
//! pipelining crowd keeps the loop polling.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// A poll that waits longer than this, on average, for the next batch costs more CPU than the
/// sleep and wake-up it saves (an `epoll_wait` that blocks, two context switches, the wake-up's
/// interrupt: a few µs on the machines measured).
const BREAK_EVEN: Duration = Duration::from_micros(4);
/// How many waits the mean is taken over.
const SAMPLES: u32 = 16;
/// How long polling stays off after it did not pay; then one more try (the CPU a failed try
/// costs, at most one polling window, is under 0.1% of this).
const REST: Duration = Duration::from_millis(100);

/// Shared by the connections (which report activity) and the polling task.
#[derive(Debug, Default)]
pub struct BusyPoll {
    /// How long to keep polling after the last request (zero: never).
    window: Duration,
    /// Bumped by every batch of requests.
    activity: AtomicU64,
    /// Whether the polling task is running (then activity needs no wake-up).
    spinning: AtomicBool,
    /// How many times polling was stopped for not paying (for tests and the log).
    rests: AtomicU64,
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
    /// none, or until polling stops paying (then it rests). Returns at once when busy polling
    /// is off.
    pub async fn run(&self) {
        if self.window.is_zero() {
            return;
        }
        let mut resting_until: Option<Instant> = None;
        let mut waits = Waits::default();
        loop {
            self.wake.notified().await;
            if let Some(until) = resting_until {
                if Instant::now() < until {
                    continue;
                }
                resting_until = None;
                waits = Waits::default();
            }
            self.spinning.store(true, Ordering::Relaxed);
            let mut seen = self.activity.load(Ordering::Relaxed);
            let mut quiet_since = Instant::now();
            let paid = loop {
                // A yielded task makes tokio poll the driver with a zero timeout before it runs
                // again: the busy poll itself. The connections it wakes run before it returns.
                let round = Instant::now();
                tokio::task::yield_now().await;
                let now = self.activity.load(Ordering::Relaxed);
                if now != seen {
                    seen = now;
                    quiet_since = Instant::now();
                    if let Some(pays) = waits.caught() {
                        if !pays {
                            break false;
                        }
                    }
                } else {
                    // A round that found nothing: CPU spent only on polling.
                    waits.idle += round.elapsed();
                    if quiet_since.elapsed() >= self.window {
                        // The window ran out: sleep; polling keeps going only if its idle
                        // time so far is still within the budget of a full group.
                        break waits.idle < BREAK_EVEN * SAMPLES;
                    }
                }
            };
            if !paid {
                self.rests.fetch_add(1, Ordering::Relaxed);
                resting_until = Some(Instant::now() + REST);
            }
            // A request landing between the last look and this store finds the task still
            // marked as spinning and does not wake it: the next request will (polling is only
            // about latency, never about correctness).
            self.spinning.store(false, Ordering::Relaxed);
        }
    }
}

/// The polling of the current group of [`SAMPLES`] batches caught while polling.
#[derive(Debug, Default)]
struct Waits {
    /// Time spent in polling rounds that found no request.
    idle: Duration,
    /// Batches the polling caught.
    count: u32,
}

impl Waits {
    /// Counts a batch caught by polling. At the end of a group, says whether polling paid
    /// (spent less than [`BREAK_EVEN`] of idle rounds per batch) and starts the next group.
    fn caught(&mut self) -> Option<bool> {
        self.count += 1;
        if self.count < SAMPLES {
            return None;
        }
        let pays = self.idle < BREAK_EVEN * SAMPLES;
        *self = Waits::default();
        Some(pays)
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

    #[test]
    fn a_group_pays_while_idle_rounds_stay_under_the_break_even() {
        let mut waits = Waits::default();
        for _ in 1..SAMPLES {
            assert_eq!(waits.caught(), None);
        }
        waits.idle = BREAK_EVEN * SAMPLES - Duration::from_nanos(1);
        assert_eq!(waits.caught(), Some(true));
        // The next group starts from nothing.
        assert_eq!((waits.count, waits.idle), (0, Duration::ZERO));
        waits.idle = BREAK_EVEN * SAMPLES;
        for _ in 1..SAMPLES {
            assert_eq!(waits.caught(), None);
        }
        assert_eq!(waits.caught(), Some(false));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn rests_when_requests_come_too_slowly_to_pay() {
        // A lone client: a batch each 2 ms, a polling window wide enough to catch each one, so
        // every batch costs ~2 ms of polling, far past the break-even.
        let poll = std::sync::Arc::new(BusyPoll::new(Duration::from_secs(1)));
        let task = tokio::spawn({
            let poll = poll.clone();
            async move { poll.run().await }
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        while poll.rests.load(Ordering::Relaxed) == 0 && Instant::now() < deadline {
            poll.active();
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        assert!(
            poll.rests.load(Ordering::Relaxed) > 0,
            "never stopped polling"
        );
        // Resting, it does not spin even while batches keep coming.
        for _ in 0..5 {
            poll.active();
            tokio::task::yield_now().await;
            tokio::task::yield_now().await;
            assert!(!poll.spinning.load(Ordering::Relaxed));
        }
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
