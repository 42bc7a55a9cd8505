//! idforge inside PostgreSQL: `CREATE EXTENSION idforge`.
//!
//! - `idforge_snowflake(layout)`: every backend of the cluster draws from one generator per
//!   layout, whose lock-free state lives in shared memory; the node id is the `idforge.node_id`
//!   setting; a state file in the data directory keeps ids above the last run's after a restart;
//!   `idforge.random_start` starts each tick's sequence at a random value (even `id % n`).
//! - `idforge_uuid7()` (`uuid`) and `idforge_ulid()` (`text`): shared generators too, strictly
//!   increasing across every backend and across restarts; `idforge_uuid7_parse`,
//!   `idforge_uuid7_time`, `idforge_uuid_to_ulid`, `idforge_ulid_to_uuid`.
//! - `idforge_objectid()`, `idforge_objectid_bytes()`, `idforge_flake128()`: shared generators
//!   too.
//! - `idforge_decode`, `idforge_compose`, `idforge_bounds`: layout-aware decoding, and the id
//!   range of a time for queries on an id column.
//! - `idforge_id_to_text`, `idforge_id_from_text`: the short text forms of 64-bit ids;
//!   `idforge_describe(text)`: any id's fields as jsonb (the runtime's rules, as `idforge
//!   decode`).
//!
//! Shared memory needs `shared_preload_libraries = 'idforge'`. The SQL definitions are in
//! `sql/idforge--0.1.0.sql`, written by hand (pgrx's generator needs cargo-pgrx).

use std::sync::atomic::{AtomicBool, Ordering};

use idforge::{Clock, ErrorCode, Layout, SystemClock};
use idforge_core::tick::Next;
use pgrx::prelude::*;
use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting, PgAtomic, pg_shmem_init};

mod describe;
mod error;
mod high_water;
mod id_text;
mod ids;
mod owner;
mod random;
mod shared;
mod time_ordered;

use error::{PgError, Result};
use shared::Shared;

pgrx::pg_module_magic!();

/// The generators in shared memory, built by the postmaster.
static SHARED: PgAtomic<Shared> =
    // SAFETY: the shared memory name is this extension's own; no other uses it.
    unsafe { PgAtomic::new(c"idforge shared generators") };

/// Set in the postmaster when the library was loaded by `shared_preload_libraries` (and so in
/// every backend it forks): only then does [`SHARED`] exist.
static PRELOADED: AtomicBool = AtomicBool::new(false);

/// `idforge.node_id`: the node field of this cluster's snowflake ids.
static NODE_ID: GucSetting<i32> = GucSetting::<i32>::new(0);

/// `idforge.random_start`: each tick's snowflake sequence starts at a random value, not 0.
static RANDOM_START: GucSetting<bool> = GucSetting::<bool>::new(false);

/// Called when the library is loaded.
#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    // SAFETY: a flag PostgreSQL sets while it loads shared_preload_libraries; read-only here.
    if !unsafe { pg_sys::process_shared_preload_libraries_in_progress } {
        // Loaded by a backend on first use: no shared memory, and a server-start setting can
        // no longer be defined; the calls say what to do.
        return;
    }
    GucRegistry::define_int_guc(
        c"idforge.node_id",
        c"The node id of this server's snowflake ids.",
        c"Unique per server (or per primary) among those writing ids of one layout into the same \
          tables; must fit the layout's node field (10 bits for twitter).",
        &NODE_ID,
        0,
        i32::MAX,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"idforge.random_start",
        c"Start each tick's snowflake sequence at a random value instead of 0.",
        c"So that id % n spreads evenly at low rates (sharding by id). Each tick still holds at \
          least half its sequence range (a quarter on average is skipped) before the generator \
          borrows the next tick.",
        &RANDOM_START,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    // Evaluated by the postmaster once the settings are read.
    pg_shmem_init!(SHARED = Shared::new(high_water::read_at_startup(), RANDOM_START.get()));
    PRELOADED.store(true, Ordering::Relaxed);
}

/// The shared generators, or why they cannot be used (`state_file`: the caller needs the
/// state file, see [`Shared::check`]).
pub(crate) fn shared(state_file: bool) -> Result<&'static Shared> {
    if !PRELOADED.load(Ordering::Relaxed) {
        return Err(PgError::setup(
            "idforge must be loaded at server start: add it to shared_preload_libraries in \
             postgresql.conf and restart",
        ));
    }
    let shared = SHARED.get();
    shared.check(state_file)?;
    Ok(shared)
}

/// The longest layout text taken: a full spec is under 100 bytes; a longer text is refused
/// before it is parsed (or kept by a backend as its last layout).
const MAX_LAYOUT_TEXT: usize = 256;

/// The layout named or written out in `text` (`twitter`, `epoch=…,tick=…,…`).
pub(crate) fn layout(text: &str) -> Result<Layout> {
    if text.len() > MAX_LAYOUT_TEXT {
        return Err(PgError::new(
            ErrorCode::InvalidLayout,
            format!("a layout text is at most {MAX_LAYOUT_TEXT} bytes"),
        ));
    }
    Ok(Layout::parse(text)?)
}

/// How long a call may wait for the clock (a tick's sequence used up past the lead) before it
/// fails with `CLOCK_BEHIND`.
const MAX_WAIT_MS: u64 = 1_000;

/// Runs `attempt` with the current time until it gives an id, sleeping (cancellably) while the
/// generator is ahead of the clock, for at most [`MAX_WAIT_MS`].
pub(crate) fn with_clock<T>(
    clock: &SystemClock,
    mut attempt: impl FnMut(u64) -> Result<Next<T>>,
) -> Result<T> {
    let start = clock.now_ms();
    loop {
        let now = clock.now_ms();
        match attempt(now)? {
            Next::Id(id) => return Ok(id),
            Next::Pending { until_ms } => {
                if until_ms.saturating_sub(start) > MAX_WAIT_MS {
                    return Err(PgError::new(
                        ErrorCode::ClockBehind,
                        format!(
                            "the clock ({now} ms) is behind the ids already issued (up to \
                             {until_ms} ms): waiting would take over {MAX_WAIT_MS} ms"
                        ),
                    ));
                }
                let ms = until_ms.saturating_sub(now).clamp(1, 10);
                std::thread::sleep(std::time::Duration::from_millis(ms));
                pgrx::check_for_interrupts!();
            }
        }
    }
}

/// The node id set for this server.
pub(crate) fn node_id() -> u64 {
    NODE_ID.get().max(0) as u64
}
