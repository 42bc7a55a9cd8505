//! The shared clock's millisecond in memory JavaScript reads (an external `ArrayBuffer` over a
//! static), kept by a thread while snowflake runs are being served. The package's `next()`
//! serves an id of a run only within the millisecond the run was made in; asking `Date.now()`
//! for each id cost 40 of its 100 ns in a loop that keeps its ids, and this is one load.
//!
//! Cells (u32): `[0]` the low 32 bits of the shared clock's ms, `[1]` 1 while the thread keeps
//! `[0]` current, else 0 (then JavaScript asks `Date.now()`). The thread stops after
//! [`IDLE_MS`] without a run filled, and the next run filled starts it again.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering, fence};

use idforge::{Clock, SystemClock};
use napi::bindgen_prelude::Unknown;
use napi::{Env, sys};
use napi_derive::napi;

/// The cells JavaScript reads. Static, so the buffer over them never dangles, in any
/// environment (worker threads included) and after the thread stops.
static CELLS: [AtomicU32; 2] = [AtomicU32::new(0), AtomicU32::new(0)];
/// Whether the thread runs (or is being started).
static RUNNING: AtomicBool = AtomicBool::new(false);
/// Set by each run filled; the thread clears it each millisecond.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// How long the thread keeps going without a run filled.
const IDLE_MS: u32 = 100;

/// Internal (the package's `next` uses it): a view of the millisecond cells, or `undefined`
/// where the runtime refuses buffers over native memory (Electron): then `Date.now()` is used.
#[napi(ts_return_type = "ArrayBuffer | undefined")]
pub fn millis_cells(env: &Env) -> Option<Unknown<'_>> {
    let mut value = std::ptr::null_mut();
    // SAFETY: `CELLS` lives for the whole process and is never freed (no finalizer), so the
    // buffer stays valid as long as any environment holds it. JavaScript only reads it, with
    // plain aligned 32-bit loads, which cannot tear; the thread writes it with atomic stores.
    let status = unsafe {
        sys::napi_create_external_arraybuffer(
            env.raw(),
            CELLS.as_ptr() as *mut std::ffi::c_void,
            std::mem::size_of_val(&CELLS),
            None,
            std::ptr::null_mut(),
            &mut value,
        )
    };
    if status != sys::Status::napi_ok {
        return None;
    }
    // SAFETY: `value` was just created in this environment.
    Some(unsafe { Unknown::from_raw_unchecked(env.raw(), value) })
}

/// A run was filled: keep the thread going, or start it.
#[inline]
pub(crate) fn touch() {
    ACTIVE.store(true, Ordering::Relaxed);
    // Paired with the fence in `keep` as it stops: either this sees the thread stopped and
    // starts one, or the stopping thread sees this run and goes on.
    fence(Ordering::SeqCst);
    if !RUNNING.load(Ordering::Relaxed) {
        start();
    }
}

#[cold]
fn start() {
    if RUNNING.swap(true, Ordering::AcqRel) {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("idforge-millis".into())
        .stack_size(64 * 1024)
        .spawn(keep);
    if spawned.is_err() {
        // No thread: JavaScript goes on asking `Date.now()`; the next run tries again.
        RUNNING.store(false, Ordering::Release);
    }
}

/// The thread: stores each millisecond just after it starts, until runs stop being filled.
fn keep() {
    let clock = SystemClock::shared();
    loop {
        serve(clock);
        CELLS[1].store(0, Ordering::Release);
        RUNNING.store(false, Ordering::Relaxed);
        // A run filled while this thread was deciding to stop saw it running and started none:
        // without this look it would be served from `Date.now()` and, were no other run filled,
        // the cells would stay stale-marked until one is (CI saw one wait 5 s for the thread).
        fence(Ordering::SeqCst);
        if !ACTIVE.load(Ordering::Relaxed) || RUNNING.swap(true, Ordering::AcqRel) {
            return;
        }
    }
}

/// Keeps the cells current until [`IDLE_MS`] pass without a run filled.
fn serve(clock: SystemClock) {
    let mut idle = 0;
    loop {
        // Truncation: JavaScript compares the low 32 bits for equality only.
        CELLS[0].store(clock.now_ms() as u32, Ordering::Relaxed);
        CELLS[1].store(1, Ordering::Release);
        if ACTIVE.swap(false, Ordering::Relaxed) {
            idle = 0;
        } else {
            idle += 1;
            if idle >= IDLE_MS {
                break;
            }
        }
        std::thread::sleep(clock.until_next_ms());
    }
}
