//! Clocks: the real one (wall time anchored once, advanced by the monotonic clock) and a manual
//! one for tests and shared vectors.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::platform;

/// A source of Unix time for the generators.
pub trait Clock: Send + Sync + 'static {
    /// Milliseconds since the Unix epoch. Must never go backwards within a process.
    fn now_ms(&self) -> u64;

    /// Milliseconds that may trail [`now_ms`](Self::now_ms) by a few ms but are never ahead of
    /// it and never go back: a cheaper read for hot paths whose ids may carry a slightly older
    /// time. The default is [`now_ms`](Self::now_ms) itself.
    fn recent_ms(&self) -> u64 {
        self.now_ms()
    }

    /// Seconds since the Unix epoch; may be a cheaper, coarser read (ObjectIds need seconds).
    fn now_secs(&self) -> u64 {
        self.now_ms() / 1000
    }

    /// Blocks until [`now_ms`](Self::now_ms) reaches `until_ms`, or until `deadline` passes,
    /// whichever comes first.
    fn sleep_until_ms(&self, until_ms: u64, deadline: Instant) {
        let now = self.now_ms();
        if until_ms > now {
            let left = deadline.saturating_duration_since(Instant::now());
            std::thread::sleep(Duration::from_millis(until_ms - now).min(left));
        }
    }
}

/// Real time that a wall-clock step cannot move backwards.
///
/// Reads the wall clock once (the anchor), then adds the monotonic time elapsed since. A wall
/// clock stepped back while the process runs does not affect ids; one stepped back while it was
/// down is covered by the persisted high-water mark (see [`StateFile`](crate::StateFile)).
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    anchor_ms: u64,
    /// The monotonic clock at the anchor, in ms. The coarse monotonic clock counts from the
    /// same anchor: it is the monotonic clock as of the kernel's last timer tick, so on one
    /// anchor the coarse reading is never ahead of the precise one.
    mono_anchor_ms: u64,
    /// The process-wide clock: its seconds come from [`seconds`](crate::seconds), a value a
    /// thread refreshes once a second, instead of a clock read per call.
    ticked: bool,
}

impl SystemClock {
    /// A clock anchored now.
    pub fn new() -> SystemClock {
        let mono_anchor_ms = platform::mono_ms();
        let anchor_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        SystemClock {
            anchor_ms,
            mono_anchor_ms,
            ticked: false,
        }
    }

    /// The process-wide clock, anchored on first use, so every generator agrees on the time.
    pub fn shared() -> SystemClock {
        static SHARED: OnceLock<SystemClock> = OnceLock::new();
        *SHARED.get_or_init(|| SystemClock {
            ticked: true,
            ..SystemClock::new()
        })
    }

    /// How long until [`now_ms`](Clock::now_ms) next moves: it moves with the monotonic
    /// clock's whole milliseconds.
    pub fn until_next_ms(&self) -> Duration {
        Duration::from_nanos(1_000_000 - platform::mono_ns() % 1_000_000)
    }

    /// Whole seconds read from the coarse monotonic clock: a plain memory read in the vDSO (no
    /// TSC read), a few ns; its 1-4 ms resolution is far below the 1 s an ObjectId records.
    pub(crate) fn coarse_secs(&self) -> u64 {
        self.coarse_ms() / 1000
    }

    /// Milliseconds from the coarse monotonic clock, on this clock's anchor: [`recent_ms`].
    ///
    /// [`recent_ms`]: Clock::recent_ms
    #[inline]
    pub(crate) fn coarse_ms(&self) -> u64 {
        let coarse = platform::coarse_ms();
        self.anchor_ms + coarse.saturating_sub(self.mono_anchor_ms)
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::shared()
    }
}

impl Clock for SystemClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        // One vDSO read and integer math on whole ms: `Instant`'s `Duration` arithmetic
        // (normalising nanoseconds, checked subtraction) cost ~4 ns more per id.
        let mono = platform::mono_ms();
        self.anchor_ms + mono.saturating_sub(self.mono_anchor_ms)
    }

    /// The coarse monotonic clock: a plain read of the vDSO's data, 3-5 ns against ~23 for
    /// [`now_ms`](Clock::now_ms) (which reads the TSC, ordered); it trails by up to one timer
    /// tick of the kernel (1-10 ms: 4 ms at the common HZ=250).
    #[inline]
    fn recent_ms(&self) -> u64 {
        self.coarse_ms()
    }

    #[inline]
    fn now_secs(&self) -> u64 {
        if self.ticked {
            crate::seconds::now(self)
        } else {
            self.coarse_secs()
        }
    }

    /// Wakes at the start of `until_ms`, not a whole ms after a truncated reading: sleeps to
    /// 100 µs before the tick's first nanosecond, then yields until it comes. (Sleeping
    /// `until_ms - now_ms()` ms overslept by up to a tick, which cost a saturated `Wait`
    /// generator a sixth of the layout's rate.)
    fn sleep_until_ms(&self, until_ms: u64, deadline: Instant) {
        // The monotonic time, in ns, at which `now_ms` first reads `until_ms`.
        let tick_ns = (until_ms.saturating_sub(self.anchor_ms) + self.mono_anchor_ms)
            .saturating_mul(1_000_000);
        while self.now_ms() < until_ms {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            let now_ns = platform::mono_ns();
            let left = tick_ns.saturating_sub(now_ns);
            if left > SPIN_NS {
                let nap = Duration::from_nanos(left - SPIN_NS);
                std::thread::sleep(nap.min(deadline - now));
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// How close to a tick a sleeping [`SystemClock`] stops sleeping and yields instead: more than
/// a sleep's usual lateness on Linux (the 50 µs timer slack plus a wake-up).
const SPIN_NS: u64 = 100_000;

/// A clock that moves only when told to: for tests and the shared vectors.
#[derive(Debug, Default)]
pub struct ManualClock {
    ms: AtomicU64,
}

impl ManualClock {
    /// A clock showing `ms` (Unix milliseconds).
    pub fn new(ms: u64) -> ManualClock {
        ManualClock {
            ms: AtomicU64::new(ms),
        }
    }

    /// Sets the time, forwards or backwards (to simulate clock steps).
    pub fn set(&self, ms: u64) {
        self.ms.store(ms, Ordering::SeqCst);
    }

    /// Moves the time forward by `ms`.
    pub fn advance(&self, ms: u64) {
        self.ms.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.ms.load(Ordering::SeqCst)
    }

    /// Nobody advances a manual clock while we sleep: wait real time (1 ms steps) so a test can
    /// move it from another thread, and give up at the deadline.
    fn sleep_until_ms(&self, until_ms: u64, deadline: Instant) {
        while self.now_ms() < until_ms && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl<C: Clock> Clock for std::sync::Arc<C> {
    fn now_ms(&self) -> u64 {
        (**self).now_ms()
    }
    fn recent_ms(&self) -> u64 {
        (**self).recent_ms()
    }
    fn now_secs(&self) -> u64 {
        (**self).now_secs()
    }
    fn sleep_until_ms(&self, until_ms: u64, deadline: Instant) {
        (**self).sleep_until_ms(until_ms, deadline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_clock_tracks_the_wall_clock_and_never_goes_back() {
        let c = SystemClock::new();
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let a = c.now_ms();
        assert!(a.abs_diff(wall) < 1000, "{a} vs {wall}");
        let mut last = a;
        for _ in 0..10_000 {
            let now = c.now_ms();
            assert!(now >= last);
            last = now;
        }
        assert!(c.now_secs().abs_diff(wall / 1000) <= 1);
    }

    #[test]
    fn system_clock_sleeps_into_the_tick_and_not_past_the_deadline() {
        let c = SystemClock::shared();
        for _ in 0..50 {
            let until = c.now_ms() + 1;
            c.sleep_until_ms(until, Instant::now() + Duration::from_secs(5));
            assert!(c.now_ms() >= until, "woke before the tick");
        }
        let far = c.now_ms() + 60_000;
        c.sleep_until_ms(far, Instant::now() + Duration::from_millis(20));
        assert!(c.now_ms() < far, "slept past the deadline");
    }

    #[test]
    fn recent_ms_trails_now_ms_by_a_timer_tick_and_never_leads_it() {
        let c = SystemClock::new();
        let (mut last, mut most_behind) = (0, 0);
        let start = Instant::now();
        // Long enough to span several kernel ticks (at most 10 ms each).
        while start.elapsed() < Duration::from_millis(100) {
            let before = c.now_ms();
            let recent = c.recent_ms();
            let after = c.now_ms();
            assert!(recent <= after, "recent {recent} ahead of now {after}");
            assert!(recent >= last, "recent went back: {last} then {recent}");
            most_behind = most_behind.max(before.saturating_sub(recent));
            last = recent;
        }
        // A tick is 1-10 ms; a loaded VM may deliver several late: the bound only catches a
        // reading on the wrong anchor, which would be off by the clocks' offset (seconds).
        assert!(
            most_behind <= 1000,
            "recent trailed now by {most_behind} ms"
        );
        assert_eq!(ManualClock::new(7).recent_ms(), 7);
    }

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::new(5);
        c.advance(10);
        assert_eq!(c.now_ms(), 15);
        c.set(3);
        assert_eq!(c.now_ms(), 3);
        let t = Instant::now();
        c.sleep_until_ms(100, t + Duration::from_millis(20));
        assert!(t.elapsed() >= Duration::from_millis(20));
    }
}
