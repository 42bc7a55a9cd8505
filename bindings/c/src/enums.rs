//! The C API's enums: the integer values its calls take and give (`kind`, `form`, `preset`,
//! `order`, `policy`, `flags`). Declared here in one place so that cbindgen emits them together;
//! the numbers never change, new values get new numbers. `idforge_status` has its own generated
//! module (`status_codes.rs`).

/// The kind of id `idforge_describe_id` reads (`kind`).
#[repr(u32)]
pub enum idforge_id_kind {
    /// Detect it: 24 hex is an ObjectId; 32 hex or a UUID a UUIDv7 when its bits say so, else a
    /// flake-128, as are 22 base62 characters that are not all digits; 26 Crockford base32 a
    /// ULID; digits a snowflake.
    Any = 0,
    /// A snowflake in decimal (read a short text form with `idforge_id_from_text` first).
    Snowflake = 1,
    /// A MongoDB ObjectId in hex.
    Objectid = 2,
    /// A flake-128 in base62, hex or UUID form.
    Flake128 = 3,
    /// A UUIDv7 (hyphenated, 32 hex, braces or urn:uuid:).
    Uuid7 = 4,
    /// A ULID (26 Crockford base32 characters).
    Ulid = 5,
}

/// Where a flake-128 generator's 48-bit worker id comes from.
#[repr(u32)]
pub enum idforge_worker_kind {
    /// 48 random bits, drawn again in a forked child (the default).
    Random = 0,
    /// The first non-zero MAC address (Boundary's choice); a forked child gets `FORKED`.
    Mac = 1,
    /// The `worker` argument; a forked child gets `FORKED`.
    Fixed = 2,
}

/// A text form of a 64-bit id (the `form` argument of `idforge_id_to_text` and
/// `idforge_id_from_text`).
#[repr(u32)]
pub enum idforge_text_form {
    /// Digits, no sign, no leading zero: a JSON-safe string (JavaScript numbers hold 53 bits).
    /// Its text order is not id order.
    Decimal = 0,
    /// 13 characters of Crockford base32 (`0-9A-Z` without `I L O U`), upper case out, either
    /// case in. Text order is id order.
    Base32 = 1,
    /// 11 characters of `0-9A-Za-z`. Byte order (`strcmp`, not a case-blind collation) is id
    /// order.
    Base62 = 2,
}

/// The layout presets, for `idforge_layout_preset`.
#[repr(u32)]
pub enum idforge_preset {
    /// Twitter: 41-bit ms since 2010-11-04T01:42:54.657Z, 10-bit node, 12-bit sequence.
    Twitter = 0,
    /// Discord: 42-bit ms since 2015-01-01, 10-bit node, 12-bit sequence; unsigned.
    Discord = 1,
    /// Instagram: 41-bit ms since 2011-08-24, 13-bit shard, 10-bit sequence; unsigned.
    Instagram = 2,
    /// Sonyflake: 39-bit 10 ms ticks since 2014-09-01, 8-bit sequence, 16-bit node (last).
    Sonyflake = 3,
    /// Baidu uid-generator: 28-bit seconds since 2016-05-20, 22-bit node, 13-bit sequence.
    /// Its time field ran out on 2024-11-20: decode only, a generator fails.
    Baidu = 4,
    /// 53-bit ids that fit a JavaScript number: 41-bit ms since 2020, 4-bit node, 8-bit seq.
    JsSafe = 5,
}

/// Which field follows the time field (`idforge_layout.order`).
#[repr(u32)]
pub enum idforge_order {
    /// `time | node | seq` (Twitter, Discord, Instagram, Baidu).
    TimeNodeSeq = 0,
    /// `time | seq | node` (Sonyflake).
    TimeSeqNode = 1,
}

/// What a generator does when it is ahead of the clock (`idforge_policy.kind`).
#[repr(u32)]
pub enum idforge_policy_kind {
    /// Borrow with a 1 s lead (the default; `millis` is ignored).
    Default = 0,
    /// Run up to `millis` ahead of the clock when a tick's sequence is used up; past it, wait
    /// at most `millis`, else fail with `IDFORGE_STATUS_CLOCK_BEHIND`. With 50 ms or more (and
    /// by default), `idforge_snowflake_next` reads the coarse clock: its ids' time may trail
    /// the clock by a kernel tick (1-10 ms), never lead it.
    Borrow = 1,
    /// Never run ahead: wait for the next tick, at most `millis`, else `CLOCK_BEHIND`.
    Wait = 2,
    /// Never run ahead; wait only up to 5 ms, else `CLOCK_BEHIND` (`millis` is ignored).
    Error = 3,
}

/// Bits of the `flags` of `idforge_snowflake_new_with_flags` (0: none).
#[repr(u32)]
pub enum idforge_snowflake_flag {
    /// Start each tick's sequence at a random value below half its range instead of 0, so that
    /// `id % n` spreads evenly over n shards even at a few ids per tick (by default most ids
    /// end in sequence 0). A tick then holds at least half its sequence range (2,048 ids per ms
    /// in the Twitter layout) before borrowing the next; ids still strictly increase.
    RandomStart = 1,
}
