//! Monotonic clock reads, in whole nanoseconds or milliseconds since an arbitrary start that
//! stays fixed for the process.

/// The precise monotonic clock in nanoseconds: `CLOCK_MONOTONIC` through the vDSO on Unix.
#[cfg(unix)]
#[inline]
pub(crate) fn mono_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The precise monotonic clock in nanoseconds: `QueryPerformanceCounter` (what `Instant` reads
/// on Windows), counted from the first read in the process.
#[cfg(not(unix))]
#[inline]
pub(crate) fn mono_ns() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    // u64 nanoseconds last 584 years of one process.
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// The precise monotonic clock in whole milliseconds.
#[cfg(unix)]
#[inline]
pub(crate) fn mono_ms() -> u64 {
    // One vDSO read and integer math on whole ms (no u64 ns multiply-then-divide).
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// The precise monotonic clock in whole milliseconds.
#[cfg(not(unix))]
#[inline]
pub(crate) fn mono_ms() -> u64 {
    mono_ns() / 1_000_000
}

/// The coarse monotonic clock in whole milliseconds, on the same start as [`mono_ms`] and never
/// ahead of it. Linux: `CLOCK_MONOTONIC_COARSE`, the monotonic clock as of the kernel's last
/// timer tick, a plain memory read in the vDSO (3-5 ns against ~23 for the precise read).
#[cfg(any(target_os = "linux", target_os = "android"))]
#[inline]
pub(crate) fn coarse_ms() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::MonotonicCoarse);
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// The coarse monotonic clock in whole milliseconds: where the system has none (macOS, Windows),
/// the precise one, which is exact and only slower.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
#[inline]
pub(crate) fn coarse_ms() -> u64 {
    mono_ms()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clocks_move_forward_together_and_coarse_is_never_ahead() {
        let mut last = (coarse_ms(), mono_ms(), mono_ns());
        for _ in 0..10_000 {
            // Coarse first: read after it, the precise clock is at least as far.
            let now = (coarse_ms(), mono_ms(), mono_ns());
            assert!(
                now.0 <= now.1,
                "coarse {} ahead of precise {}",
                now.0,
                now.1
            );
            assert!(now.0 >= last.0 && now.1 >= last.1 && now.2 >= last.2);
            last = now;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (ms, ns) = (mono_ms(), mono_ns());
        assert!(
            ms >= last.1 + 20,
            "20 ms of sleep moved the clock {} ms",
            ms - last.1
        );
        // Read after it, the ns clock is at least as far (one clock on Unix, one base elsewhere).
        assert!(ns / 1_000_000 >= ms);
    }
}
