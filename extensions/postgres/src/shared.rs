//! The generators every backend of the cluster shares, in PostgreSQL's shared memory.
//!
//! The postmaster builds [`Shared`] once at startup (and again after a crash restart, which
//! resets shared memory): the ObjectId and flake-128 generators with fresh random process bytes
//! and worker, the UUIDv7 and ULID generators with fresh secret keys (their random bits come
//! from each backend, see [`crate::random`]), and the high-water time read from the state file. Snowflake generators are made
//! on first use of a layout, in one of [`SLOTS`] slots, and kept until the server stops. Backends
//! are processes forked from the postmaster, so the core's lock-free state works across them as
//! it does across threads: every id is one atomic read-modify-write on a shared word.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use idforge::{Clock, CoreError, ErrorCode, Layout, Order, SystemClock};
use idforge_core::flake128::Flake128Gen;
use idforge_core::objectid::ObjectIdGen;
use idforge_core::snowflake::SnowflakeGen;
use idforge_core::tick::SeqStart;
use idforge_core::ulid::UlidGen;
use idforge_core::uuid7::Uuid7Gen;

use crate::error::{PgError, Result};

/// How many snowflake layouts one cluster can use at once: a slot for each of the 6 presets,
/// and 10 for layouts of its own.
pub const SLOTS: usize = 16;

/// How far a generator may run ahead of the clock: a full tick borrows the next, a clock that
/// stepped back keeps counting from the last id, and after a restart the ids start after the
/// last run's, which may be ahead of the clock (by up to [`WINDOW_MS`] / 2 plus a little per quick
/// restart, see [`high_water`]). One second more than the window, so a quick restart never waits;
/// a clock further behind gets `CLOCK_BEHIND`, never an id below the last run's.
///
/// [`WINDOW_MS`]: crate::high_water::WINDOW_MS
/// [`high_water`]: crate::high_water
pub const MAX_LEAD_MS: u64 = crate::high_water::WINDOW_MS + 1_000;

/// The state file could not be read at startup, or is not an idforge state file: the calls that
/// rely on it (snowflake, flake-128) fail until it is fixed and the server restarted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadStateFile;

/// One snowflake layout's generator.
struct Slot {
    /// [`EMPTY`], [`CLAIMED`] (being built by one backend) or [`READY`].
    state: AtomicU32,
    /// Written once by the backend that claimed the slot, before it publishes [`READY`].
    generator: UnsafeCell<MaybeUninit<SnowflakeGen>>,
}

const EMPTY: u32 = 0;
const CLAIMED: u32 = 1;
const READY: u32 = 2;

/// Everything the backends share.
pub struct Shared {
    /// The clock of every backend: the wall clock read once by the postmaster, advanced by the
    /// system-wide monotonic clock, so backends agree on the time and a wall clock stepped
    /// while the server runs moves no id (as the runtime's `SystemClock` in one process).
    clock: SystemClock,
    /// The state file could not be read at startup.
    bad_state_file: bool,
    /// The operating system gave no random bytes at startup.
    no_entropy: bool,
    /// Every id of the last run, or of a server this one took over from, lies before this:
    /// generators made later resume after it.
    resume_ms: AtomicU64,
    /// Ids with a time before this are covered by the state file.
    persisted_ms: AtomicU64,
    /// Set while one backend writes the state file or the node file.
    writing: AtomicBool,
    /// Whether this server may make snowflake ids (see [`crate::owner`]).
    owner: AtomicU32,
    objectid: ObjectIdGen,
    flake: Flake128Gen,
    uuid7: Uuid7Gen,
    ulid: UlidGen,
    /// Where each tick's sequence of the snowflake generators starts (`idforge.random_start`).
    snowflake_start: SeqStart,
    slots: [Slot; SLOTS],
}

// SAFETY: every field that changes after startup is an atomic, except a slot's generator, which
// is written once by the one backend whose CAS claimed the slot and read only after an Acquire
// load sees READY (published with Release). Shared memory is mapped at the same address in every
// backend (they are forked from the postmaster), and the type holds no pointers.
unsafe impl pgrx::PGRXSharedMemory for Shared {}
// SAFETY: as above: concurrent access goes through atomics or the claim/publish protocol.
unsafe impl Sync for Shared {}

impl Shared {
    /// Built by the postmaster: the state file's mark `held` (or why it could not be read),
    /// whether snowflake sequences start at a random value each tick (`random_start`), and
    /// random bytes for the ObjectId process field, the flake-128 worker and the keys.
    pub fn new(held: std::result::Result<u64, BadStateFile>, random_start: bool) -> Shared {
        let mut seed = [0u8; 16];
        let mut keys = [0u8; 24];
        let no_entropy = getrandom::fill(&mut seed).is_err() || getrandom::fill(&mut keys).is_err();
        let key = |i: usize| {
            let mut word = [0u8; 8];
            word.copy_from_slice(&keys[i * 8..i * 8 + 8]);
            u64::from_le_bytes(word)
        };
        let held_ms = *held.as_ref().unwrap_or(&0);
        // Every id of the last run lies before this.
        let resume_ms = crate::high_water::resume_after(held_ms);
        let process = [seed[0], seed[1], seed[2], seed[3], seed[4]];
        let counter = u32::from_le_bytes([seed[5], seed[6], seed[7], 0]);
        let worker = u64::from_le_bytes([
            seed[8], seed[9], seed[10], seed[11], seed[12], seed[13], 0, 0,
        ]);
        let flake = match Flake128Gen::new(worker, MAX_LEAD_MS) {
            Ok(flake) => flake,
            // A 48-bit worker is always in range.
            Err(_) => unreachable!("a 48-bit worker fits flake-128"),
        };
        flake.resume_after_ms(resume_ms);
        // The 45-bit time and 18-bit counter always fit the core's state.
        let (Ok(uuid7), Ok(ulid)) = (
            Uuid7Gen::new(MAX_LEAD_MS, key(0)),
            UlidGen::new(MAX_LEAD_MS, key(1)),
        ) else {
            unreachable!("the time-ordered generators' fields fit")
        };
        uuid7.resume_after_ms(resume_ms);
        ulid.resume_after_ms(resume_ms);
        Shared {
            clock: SystemClock::new(),
            bad_state_file: held.is_err(),
            no_entropy,
            resume_ms: AtomicU64::new(resume_ms),
            persisted_ms: AtomicU64::new(held_ms),
            writing: AtomicBool::new(false),
            owner: AtomicU32::new(crate::owner::UNCHECKED),
            objectid: ObjectIdGen::new(process, counter, 1),
            flake,
            uuid7,
            ulid,
            snowflake_start: if random_start {
                SeqStart::Keyed(key(2))
            } else {
                SeqStart::Zero
            },
            slots: std::array::from_fn(|_| Slot {
                state: AtomicU32::new(EMPTY),
                generator: UnsafeCell::new(MaybeUninit::uninit()),
            }),
        }
    }

    /// Fails with what went wrong at startup that the caller depends on: random bytes always,
    /// the state file when `state_file` (the time-based generators that persist a mark).
    pub fn check(&self, state_file: bool) -> Result<()> {
        if self.no_entropy {
            return Err(PgError::new(
                ErrorCode::Io,
                "the operating system gave no random bytes at startup",
            ));
        }
        if state_file && self.bad_state_file {
            return Err(PgError::new(
                ErrorCode::Io,
                format!(
                    "state file {}: not readable or not an idforge state file at startup (fix or \
                     remove it and restart; removing it gives up the guard against a clock \
                     stepped back while the server was down)",
                    crate::high_water::PATH
                ),
            ));
        }
        Ok(())
    }

    /// Makes every id from now on lie after `floor_ms` (Unix ms), in every generator that
    /// relies on the node id: the ones made and the ones to come.
    pub fn raise_floor(&self, floor_ms: u64) {
        self.resume_ms.fetch_max(floor_ms, Ordering::SeqCst);
        for slot in &self.slots {
            if slot.state.load(Ordering::SeqCst) == READY {
                // SAFETY: READY was seen, so the generator was written and published.
                unsafe { (*slot.generator.get()).assume_init_ref() }.resume_after_ms(floor_ms);
            }
        }
    }

    /// The cluster's clock.
    pub fn clock(&self) -> &SystemClock {
        &self.clock
    }

    /// The ObjectId generator.
    pub fn objectid(&self) -> &ObjectIdGen {
        &self.objectid
    }

    /// The flake-128 generator.
    pub fn flake(&self) -> &Flake128Gen {
        &self.flake
    }

    /// The UUIDv7 generator.
    pub fn uuid7(&self) -> &Uuid7Gen {
        &self.uuid7
    }

    /// The ULID generator.
    pub fn ulid(&self) -> &UlidGen {
        &self.ulid
    }

    /// The time before which ids are covered by the state file.
    pub fn persisted_ms(&self) -> &AtomicU64 {
        &self.persisted_ms
    }

    /// Whether this server may make snowflake ids ([`crate::owner`]).
    pub fn owner(&self) -> &AtomicU32 {
        &self.owner
    }

    /// The flag of the backend writing the state file.
    pub fn writing(&self) -> &AtomicBool {
        &self.writing
    }

    /// The shared generator of `layout` for `node`, made on first use.
    ///
    /// Each preset has a slot of its own (so other layouts cannot crowd it out); other layouts
    /// take the rest in order. Slots are never freed, and a backend waits for a claimed slot to
    /// be ready before it looks further; so two backends asking for one layout always end up in
    /// the same slot, and a layout never has two generators. Layouts are matched on what they
    /// encode (`unsigned` only widens what validates), so two texts of one encoding share one.
    pub fn snowflake(&self, layout: Layout, node: u64) -> Result<&SnowflakeGen> {
        let key = encoding(&layout);
        let presets = Layout::PRESETS.len();
        if let Some(i) = Layout::PRESETS.iter().position(|(_, p)| encoding(p) == key) {
            let generator = self.slot(i, layout, node)?;
            return Self::matching(generator, node);
        }
        for i in presets..SLOTS {
            let generator = self.slot(i, layout, node)?;
            if encoding(generator.layout()) == key {
                return Self::matching(generator, node);
            }
        }
        Err(PgError {
            state: Some(pgrx::pg_sys::errcodes::PgSqlErrorCode::ERRCODE_INSUFFICIENT_RESOURCES),
            ..PgError::new(
                ErrorCode::InvalidArgument,
                format!(
                    "every slot for layouts other than the presets is in use ({} until the \
                     server restarts)",
                    SLOTS - presets
                ),
            )
        })
    }

    /// The generator in slot `i`, made for `layout` if the slot is empty.
    fn slot(&self, i: usize, layout: Layout, node: u64) -> Result<&SnowflakeGen> {
        let slot = &self.slots[i];
        let mut state = slot.state.load(Ordering::Acquire);
        if state == EMPTY {
            // Checked and built before the claim, so a bad layout or node takes no slot.
            layout.check_epoch(self.clock.now_ms())?;
            if layout.tick_ms() > MAX_LEAD_MS {
                return Err(PgError::new(
                    ErrorCode::InvalidLayout,
                    format!("the extension serves ticks of at most {MAX_LEAD_MS} ms"),
                ));
            }
            // The lead in whole ticks, rounded down: an id is never more than MAX_LEAD_MS
            // ahead of the clock, whatever the tick.
            let lead_ms = MAX_LEAD_MS / layout.tick_ms() * layout.tick_ms();
            let generator =
                SnowflakeGen::new(layout, node, lead_ms)?.with_start(self.snowflake_start);
            generator.resume_after_ms(self.resume_ms.load(Ordering::SeqCst));
            match slot
                .state
                .compare_exchange(EMPTY, CLAIMED, Ordering::Acquire, Ordering::Acquire)
            {
                Ok(_) => {
                    // SAFETY: our CAS moved the slot out of EMPTY, so no other backend writes
                    // it, and none reads it before READY is published below.
                    let generator = unsafe { (*slot.generator.get()).write(generator) };
                    slot.state.store(READY, Ordering::SeqCst);
                    // A floor raised meanwhile skipped this slot (not READY yet): apply it.
                    generator.resume_after_ms(self.resume_ms.load(Ordering::SeqCst));
                    state = READY;
                }
                Err(now) => state = now,
            }
        }
        // Nothing between a claim and READY can fail or be interrupted (a killed backend
        // restarts the whole cluster), so this wait is short.
        while state == CLAIMED {
            std::hint::spin_loop();
            std::thread::yield_now();
            state = slot.state.load(Ordering::Acquire);
        }
        // SAFETY: READY was published (Release) after the generator was written, and this
        // Acquire load saw it; the generator is never written again.
        Ok(unsafe { (*slot.generator.get()).assume_init_ref() })
    }

    /// `generator` if it was made for `node` (the setting needs a restart to change, so this
    /// only fails if that rule is ever loosened).
    fn matching(generator: &SnowflakeGen, node: u64) -> Result<&SnowflakeGen> {
        if generator.node() != node {
            return Err(CoreError::InvalidArgument(
                "idforge.node_id changed since this layout's generator was made (restart the server)",
            )
            .into());
        }
        Ok(generator)
    }
}

/// What a layout encodes: two layouts with the same encoding make the same ids.
fn encoding(l: &Layout) -> (u64, u64, u32, u32, u32, Order) {
    (
        l.epoch_ms(),
        l.tick_ms(),
        l.time_bits(),
        l.node_bits(),
        l.seq_bits(),
        l.order(),
    )
}
