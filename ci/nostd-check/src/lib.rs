//! Links `idforge-core` into a `#![no_std]` static library that has its own panic handler and no
//! global allocator, so the build fails if the core depends on `std` or `alloc`.
#![no_std]

use core::panic::PanicInfo;
use idforge_core::tick::{Tick, TickState};

#[panic_handler]
fn panic(_info: &PanicInfo<'_>) -> ! {
    loop {
        core::hint::spin_loop();
    }
}

/// Takes one (tick, sequence) pair from a fresh snowflake-shaped state (41 tick bits, 12 sequence
/// bits) at `now_tick` and returns it packed as `tick << 12 | seq`, or `u64::MAX` when none was
/// handed out.
// SAFETY: the symbol name is unique to this crate, so exporting it unmangled clashes with nothing.
#[unsafe(no_mangle)]
pub extern "C" fn idforge_nostd_check(now_tick: u64) -> u64 {
    match TickState::new(41, 12, 0) {
        Ok(state) => match state.next(now_tick) {
            Tick::Ready { tick, seq } => (tick << 12) | seq,
            _ => u64::MAX,
        },
        Err(_) => u64::MAX,
    }
}
