//! The shared clock's seconds, kept in one atomic by a thread that wakes once a second, so an
//! ObjectId costs an atomic load instead of a clock read (the read was most of its cost: 4-5 ns
//! of ~7 in Rust, more through the C ABI).
//!
//! The value is the one [`SystemClock::coarse_secs`] reads, so ObjectIds keep their monotonic
//! seconds. It may trail the clock by the thread's wake-up latency (microseconds, a few ms
//! under load): for that long after a second starts, an ObjectId can still carry the second
//! before. It never runs ahead and never goes back. A forked child has no such thread: its
//! calls read the clock until the child's own thread has stored a value.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::clock::SystemClock;
use crate::fork;

/// The shared clock's last second seen by the thread.
static SECS: AtomicU64 = AtomicU64::new(0);
/// The fork generation whose thread keeps [`SECS`] current; `u64::MAX` while none does.
static KEPT_IN: AtomicU64 = AtomicU64::new(u64::MAX);
/// The fork generation a thread was last started in (or failed to start in): one try each.
static STARTED_IN: AtomicU64 = AtomicU64::new(u64::MAX);

/// The shared clock's seconds: one load when the thread runs in this process, else a clock
/// read (and the thread is started).
#[inline]
pub(crate) fn now(clock: &SystemClock) -> u64 {
    if KEPT_IN.load(Ordering::Acquire) == fork::current() {
        return SECS.load(Ordering::Relaxed);
    }
    start(clock)
}

/// Starts the thread, once per fork generation, and reads the clock meanwhile.
#[cold]
#[inline(never)]
fn start(clock: &SystemClock) -> u64 {
    let generation = fork::current();
    let tried = STARTED_IN.load(Ordering::Relaxed);
    if tried != generation
        && STARTED_IN
            .compare_exchange(tried, generation, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    {
        let clock = *clock;
        // Without the thread (a thread limit, a sandbox) calls keep reading the clock.
        let _ = std::thread::Builder::new()
            .name("idforge-seconds".into())
            .stack_size(64 * 1024)
            .spawn(move || keep(clock, generation));
    }
    clock.coarse_secs()
}

/// The thread: stores the second, then sleeps until just after the next one starts.
fn keep(clock: SystemClock, generation: u64) {
    loop {
        let ms = clock.coarse_ms();
        SECS.fetch_max(ms / 1000, Ordering::Relaxed);
        // Release: a caller that sees this generation also sees the second stored above.
        KEPT_IN.store(generation, Ordering::Release);
        // The coarse clock trails the sleep's clock by up to a tick (1-4 ms): a wake-up that
        // still reads the old second stores it again and sleeps the rest.
        std::thread::sleep(Duration::from_millis((1000 - ms % 1000).max(1)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn never_ahead_of_the_clock_and_follows_it_across_a_second() {
        let clock = SystemClock::shared();
        let first = clock.coarse_secs();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let before = clock.coarse_secs();
            let seen = now(&clock);
            let after = clock.coarse_secs();
            assert!(seen <= after, "{seen} is ahead of the clock ({after})");
            assert!(seen >= first, "{seen} went back before {first}");
            // Lags only by a wake-up: never by a whole second once the thread runs.
            if KEPT_IN.load(Ordering::Acquire) == fork::current() && seen > first {
                assert!(seen + 1 >= before, "{seen} trails the clock ({before})");
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the seconds never moved past {first}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_clock_of_its_own_reads_the_coarse_clock() {
        let clock = SystemClock::new();
        let before = clock.coarse_secs();
        let secs = crate::Clock::now_secs(&clock);
        assert!(before <= secs && secs <= clock.coarse_secs());
    }
}
