//! Busy polling: after a request, the event loop keeps asking the kernel for ready sockets (an
//! `epoll_wait` with a zero timeout) for a short window instead of going to sleep in it.
//!
//! Under load a fast server empties its sockets and sleeps between bursts; every request that
//! arrives then has to wake it, and the wake-up (an inter-processor interrupt and a context
//! switch) costs the *client* in its `send` and the server in its scheduler: with redis-benchmark
//! at `-c 50 -P 16` idforge switched context ~20,000 times per 1.6 M requests where Redis, busier
//! per request, switched ~1,000 times. A task that yields in a loop keeps tokio polling the
//! driver without blocking; it runs for at most `window` after the last request (less when the
//! balance below runs out), so an idle server uses no CPU (the kernel's `SO_BUSY_POLL` does the same for NIC queues, not for loopback).
//!
//! Polling pays only while the loop is close to saturation. It trades the server's CPU for the
//! client's: at `-c 50 -P 16` (pinned, one core each) the client is the bottleneck, and each of
//! the ~14,000 sleeps per 1.6 M requests made a client `send` wake the server; polling took
//! throughput from 0.93× to 1.01× Redis's. Where the loop has time to spare it only burns CPU:
//! spinning for each request of a lone client (`-c 1`) cost 1.4× Redis's CPU per request, and
//! at `-c 50 -P 1` 1.3×, for 5-10% more throughput. What tells them apart is the idle polling
//! per *request* served (measured while polling): 0.13 µs for the pipelining crowd, 0.9 µs for
//! one pipelining client, 2.9 µs for 50 plain ones, 13 µs for one. So each request caught while
//! polling earns it `BUDGET` (0.3 µs) of idle rounds; a balance, capped at `CAP` so that the bursts
//! of a saturated client (gaps of a few hundred µs between its rounds) are absorbed, pays for
//! them. When it runs out, polling stops for 100 ms (`REST`) and then tries again with
//! `START`. A round is charged at most `ROUND_MAX`: an empty poll costs 1-2 µs, and a longer
//! round ran other work (an accept, a TLS handshake) or lost the CPU, which polling did not
//! cost. (Counting per batch or per wake-up could not separate the crowd, 2.0 µs of idle
//! per batch caught, from 50 plain clients, 2.9 µs.)

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// Idle polling each request served pays for (see the module doc for the measurements).
const BUDGET: Duration = Duration::from_nanos(300);
/// The most idle polling saved up (a saturated client's bursts leave gaps of a few hundred µs).
const CAP: Duration = Duration::from_millis(1);
/// What a fresh try starts with: one default polling window.
const START: Duration = Duration::from_micros(100);
/// The most one round that finds nothing is charged (see the module doc).
const ROUND_MAX: Duration = Duration::from_micros(20);
/// How long polling stays off after it did not pay; then one more try (the CPU a failed try
/// costs, about `START` plus a round, is 0.1% of this).
const REST: Duration = Duration::from_millis(100);

/// Shared by the connections (which report activity) and the polling task.
#[derive(Debug, Default)]
pub struct BusyPoll {
    /// How long to keep polling after the last request (zero: never).
    window: Duration,
    /// Requests served so far (by every connection).
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

    /// A connection served `requests` requests (one batch): keep (or start) polling. A batch of
    /// none (a partial request) wakes nothing: it could only spend a try's balance.
    #[inline]
    pub fn active(&self, requests: u64) {
        if self.window.is_zero() || requests == 0 {
            return;
        }
        self.activity.fetch_add(requests, Ordering::Relaxed);
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
        let mut balance = Balance::default();
        loop {
            self.wake.notified().await;
            if let Some(until) = resting_until {
                if Instant::now() < until {
                    continue;
                }
                resting_until = None;
                balance = Balance::default();
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
                let end = Instant::now();
                if now != seen {
                    balance.served(now.wrapping_sub(seen));
                    seen = now;
                    quiet_since = end;
                } else {
                    // A round that found nothing: CPU spent only on polling.
                    if !balance.idle((end - round).min(ROUND_MAX)) {
                        break false;
                    }
                    if end - quiet_since >= self.window {
                        // The window ran out: sleep until the next request.
                        break true;
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

/// The idle polling still paid for: [`BUDGET`] per request served, less the rounds that found
/// nothing, at most [`CAP`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Balance(Duration);

impl Default for Balance {
    fn default() -> Balance {
        Balance(START)
    }
}

impl Balance {
    /// Polling caught `requests` more requests.
    fn served(&mut self, requests: u64) {
        let earned = BUDGET.saturating_mul(u32::try_from(requests).unwrap_or(u32::MAX));
        self.0 = self.0.saturating_add(earned).min(CAP);
    }

    /// A round found nothing in `spent`; whether polling still pays (the balance lasted).
    fn idle(&mut self, spent: Duration) -> bool {
        match self.0.checked_sub(spent) {
            Some(left) => {
                self.0 = left;
                true
            }
            None => {
                self.0 = Duration::ZERO;
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A poller with `window`, running on the test's runtime.
    fn start(window: Duration) -> (std::sync::Arc<BusyPoll>, tokio::task::JoinHandle<()>) {
        let poll = std::sync::Arc::new(BusyPoll::new(window));
        let task = tokio::spawn({
            let poll = poll.clone();
            async move { poll.run().await }
        });
        (poll, task)
    }

    #[tokio::test(flavor = "current_thread")]
    async fn polls_after_activity_then_sleeps() {
        let (poll, task) = start(Duration::from_millis(20));
        tokio::task::yield_now().await;
        assert!(!poll.spinning.load(Ordering::Relaxed));
        poll.active(1);
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
        assert!(poll.spinning.load(Ordering::Relaxed));
        // With no more requests it stops once its balance (100 µs) runs out, well within the
        // window (and some slack for a slow machine).
        let deadline = Instant::now() + Duration::from_secs(5);
        while poll.spinning.load(Ordering::Relaxed) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(!poll.spinning.load(Ordering::Relaxed));
        task.abort();
    }

    /// Runs `batches` batches of `requests` each, `idle` of empty polling before each, with a
    /// `gap` of empty polling before every 1000th; returns the batch at which polling stopped.
    fn stops_at(requests: u64, idle: Duration, gap: Duration, batches: u32) -> Option<u32> {
        let mut balance = Balance::default();
        (1..=batches).find(|&i| {
            let spent = if i % 1000 == 0 { gap } else { idle };
            let stop = !balance.idle(spent);
            balance.served(requests);
            stop
        })
    }

    #[test]
    fn a_pipelining_crowd_keeps_polling_through_its_bursts() {
        // -c 50 -P 16: 2 µs of idle rounds per batch of 16 (measured), and a gap of 300 µs per
        // 1000 batches (measured: about one gap over the 100 µs window per 1500 batches).
        let us = Duration::from_micros;
        assert_eq!(stops_at(16, us(2), us(300), 100_000), None);
    }

    #[test]
    fn clients_that_leave_the_loop_idle_stop_it_polling() {
        let us = Duration::from_micros;
        // One plain client (13 µs per request), one pipelining client (14 µs per 16), 50 plain
        // clients (2.9 µs per request): each runs out within a few hundred batches.
        for (requests, idle) in [(1, us(13)), (16, us(14)), (1, Duration::from_nanos(2900))] {
            let stopped = stops_at(requests, idle, idle, 1_000);
            assert!(stopped.is_some(), "{requests} per {idle:?}");
            // And polling cost no more than its start and the budget of what it served.
            let batches = u64::from(stopped.unwrap());
            assert!(idle * batches as u32 <= START + BUDGET * (batches * requests) as u32 + idle);
        }
    }

    #[test]
    fn the_balance_is_capped_and_never_overflows() {
        let mut balance = Balance::default();
        balance.served(u64::MAX);
        assert_eq!(balance, Balance(CAP));
        assert!(balance.idle(CAP));
        assert!(!balance.idle(Duration::from_nanos(1)));
        assert_eq!(balance, Balance(Duration::ZERO));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_window_shorter_than_the_balance_ends_without_a_rest() {
        let (poll, task) = start(Duration::from_micros(20));
        poll.active(1);
        tokio::task::yield_now().await;
        let deadline = Instant::now() + Duration::from_secs(5);
        while poll.spinning.load(Ordering::Relaxed) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert!(!poll.spinning.load(Ordering::Relaxed));
        // The window ran out, not the balance: no rounds over 20 µs + one round were charged.
        assert_eq!(poll.rests.load(Ordering::Relaxed), 0);
        task.abort();
    }

    #[tokio::test(flavor = "current_thread")]
    async fn keeps_polling_while_requests_pay_for_the_empty_rounds() {
        // The real loop: a batch of 1000 requests, then a round that finds nothing, 20,000
        // times. The batches pay for the empty rounds (at most `ROUND_MAX` each), so polling
        // never rests; with no budget per request those rounds would use up `START` (bursts:
        // the tests of `Balance` above, which need no clock).
        let (poll, task) = start(Duration::from_millis(100));
        poll.active(1000);
        tokio::task::yield_now().await;
        for _ in 0..20_000 {
            poll.active(1000);
            tokio::task::yield_now().await;
            assert!(poll.spinning.load(Ordering::Relaxed));
            tokio::task::yield_now().await;
        }
        assert_eq!(poll.rests.load(Ordering::Relaxed), 0);
        task.abort();
    }

    #[tokio::test(flavor = "current_thread")]
    async fn rests_when_requests_come_too_slowly_to_pay() {
        // A lone client: a batch each 2 ms and a window of 1 s, so each gap costs ~2 ms of empty
        // rounds, far past what one request pays for (the first gap ends the try).
        let (poll, task) = start(Duration::from_secs(1));
        let deadline = Instant::now() + Duration::from_secs(20);
        while poll.rests.load(Ordering::Relaxed) == 0 && Instant::now() < deadline {
            poll.active(1);
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        assert!(
            poll.rests.load(Ordering::Relaxed) > 0,
            "never stopped polling"
        );
        // Resting, it does not spin even while batches keep coming (checked only while the rest
        // surely lasts: a thread stalled past it would start a new try).
        let rested = Instant::now();
        for _ in 0..5 {
            if rested.elapsed() >= REST / 2 {
                break;
            }
            poll.active(1);
            tokio::task::yield_now().await;
            tokio::task::yield_now().await;
            assert!(!poll.spinning.load(Ordering::Relaxed));
        }
        task.abort();
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_batch_of_no_requests_starts_nothing() {
        let (poll, task) = start(Duration::from_millis(20));
        tokio::task::yield_now().await;
        poll.active(0);
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
        assert!(!poll.spinning.load(Ordering::Relaxed));
        poll.active(1);
        tokio::task::yield_now().await;
        assert!(poll.spinning.load(Ordering::Relaxed));
        task.abort();
    }

    #[tokio::test(flavor = "current_thread")]
    async fn off_returns_at_once() {
        let poll = BusyPoll::new(Duration::ZERO);
        poll.active(1);
        poll.run().await;
        assert_eq!(poll.activity.load(Ordering::Relaxed), 0);
    }
}
