//! Snowflake ids: layouts (presets or custom), the stateless codecs, and the generator handle.

use std::ffi::{OsStr, c_char};
use std::os::unix::ffi::OsStrExt;
use std::time::Duration;

use idforge_core::snowflake::{Layout, Order, Parts};
use runtime::{CoreError, Policy, Snowflake, SnowflakeBuilder};

use crate::error::{FfiError, guard};
use crate::ptr;
use crate::status::idforge_status;

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

/// A snowflake layout. Fill it with `idforge_layout_preset` / `idforge_layout_named`, or by
/// hand; every call that takes one validates it (`IDFORGE_STATUS_INVALID_LAYOUT`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct idforge_layout {
    /// The epoch, in Unix milliseconds.
    pub epoch_ms: u64,
    /// Milliseconds per tick (1 for most layouts, 10 for Sonyflake, 1000 for Baidu).
    pub tick_ms: u64,
    /// Width of the time field.
    pub time_bits: u32,
    /// Width of the node field.
    pub node_bits: u32,
    /// Width of the sequence field.
    pub seq_bits: u32,
    /// An `idforge_order` value.
    pub order: u32,
    /// Whether ids may use bit 63 (then they do not fit an `int64_t`).
    pub is_unsigned: bool,
}

/// The fields of a snowflake id.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct idforge_parts {
    /// Ticks since the layout's epoch.
    pub tick: u64,
    /// The start of that tick, in Unix milliseconds.
    pub time_ms: u64,
    /// The node (worker, machine, shard) id.
    pub node: u64,
    /// The sequence within the tick.
    pub seq: u64,
}

/// What a generator does when it is ahead of the clock (`idforge_policy.kind`).
#[repr(u32)]
pub enum idforge_policy_kind {
    /// Borrow with a 1 s lead (the default; `millis` is ignored).
    Default = 0,
    /// Run up to `millis` ahead of the clock when a tick's sequence is used up; past it, wait
    /// at most `millis`, else fail with `IDFORGE_STATUS_CLOCK_BEHIND`.
    Borrow = 1,
    /// Never run ahead: wait for the next tick, at most `millis`, else `CLOCK_BEHIND`.
    Wait = 2,
    /// Never run ahead; wait only up to 5 ms, else `CLOCK_BEHIND` (`millis` is ignored).
    Error = 3,
}

/// A clock policy: an `idforge_policy_kind` and its duration. All zero is the default.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct idforge_policy {
    /// An `idforge_policy_kind` value.
    pub kind: u32,
    /// The lead (`BORROW`) or wait budget (`WAIT`), in milliseconds.
    pub millis: u64,
}

/// Everything `idforge_snowflake_new` needs.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct idforge_snowflake_config {
    /// The layout.
    pub layout: idforge_layout,
    /// This generator's node id; must fit `layout.node_bits`.
    pub node: u64,
    /// The clock policy (zero: the default).
    pub policy: idforge_policy,
    /// NULL, or the path of a state file that keeps the high-water time across restarts, so a
    /// restart with the clock set back never repeats an id.
    pub state_file: *const c_char,
}

/// A snowflake generator. Thread-safe: share one handle between threads (every call but
/// `idforge_snowflake_free` may run concurrently). In a forked child its calls fail with
/// `IDFORGE_STATUS_FORKED` (a fixed node id would repeat the parent's ids); create a new one.
pub struct idforge_snowflake {
    inner: Snowflake,
}

impl idforge_layout {
    fn to_layout(self) -> Result<Layout, FfiError> {
        let order = match self.order {
            0 => Order::TimeNodeSeq,
            1 => Order::TimeSeqNode,
            _ => return Err(CoreError::InvalidLayout("order must be an idforge_order").into()),
        };
        Ok(Layout::new(
            self.epoch_ms,
            self.tick_ms,
            self.time_bits,
            self.node_bits,
            self.seq_bits,
            order,
            self.is_unsigned,
        )?)
    }

    fn of(layout: &Layout) -> idforge_layout {
        idforge_layout {
            epoch_ms: layout.epoch_ms(),
            tick_ms: layout.tick_ms(),
            time_bits: layout.time_bits(),
            node_bits: layout.node_bits(),
            seq_bits: layout.seq_bits(),
            order: match layout.order() {
                Order::TimeNodeSeq => idforge_order::TimeNodeSeq as u32,
                Order::TimeSeqNode => idforge_order::TimeSeqNode as u32,
            },
            is_unsigned: layout.is_unsigned(),
        }
    }
}

impl idforge_parts {
    fn of(parts: Parts) -> idforge_parts {
        idforge_parts {
            tick: parts.tick,
            time_ms: parts.time_ms,
            node: parts.node,
            seq: parts.seq,
        }
    }
}

impl idforge_policy {
    fn to_policy(self) -> Result<Policy, FfiError> {
        let millis = Duration::from_millis(self.millis);
        match self.kind {
            0 => Ok(Policy::default()),
            1 => Ok(Policy::Borrow { max_lead: millis }),
            2 => Ok(Policy::Wait { budget: millis }),
            3 => Ok(Policy::Error),
            _ => {
                Err(CoreError::InvalidArgument("policy.kind must be an idforge_policy_kind").into())
            }
        }
    }
}

fn preset(preset: u32) -> Result<Layout, FfiError> {
    // The order of Layout::PRESETS is the numbering of idforge_preset (checked by a test).
    match Layout::PRESETS.get(preset as usize) {
        Some((_, layout)) => Ok(*layout),
        None => Err(CoreError::InvalidArgument("unknown idforge_preset").into()),
    }
}

/// Writes the layout of a preset (an `idforge_preset`) to `*out`.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_layout_preset(
    preset_id: u32,
    out: *mut idforge_layout,
) -> idforge_status {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let out = unsafe { ptr::out(out, "out") }?;
        out.write(idforge_layout::of(&preset(preset_id)?));
        Ok(())
    })
}

/// Writes the layout of a preset named in text (`"twitter"`, `"discord"`, `"instagram"`,
/// `"sonyflake"`, `"baidu"`, `"js_safe"`; case and `-`/`_` are ignored) to `*out`.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_layout_named(
    name: *const c_char,
    out: *mut idforge_layout,
) -> idforge_status {
    guard(|| {
        // SAFETY: the caller's guarantees.
        let (name, out) = unsafe { (ptr::cstr(name, "name")?, ptr::out(out, "out")?) };
        let layout = name
            .to_str()
            .ok()
            .and_then(Layout::preset_named)
            .ok_or(CoreError::InvalidLayout("no preset has this name"))?;
        out.write(idforge_layout::of(&layout));
        Ok(())
    })
}

/// Checks a layout: `IDFORGE_STATUS_OK` or `IDFORGE_STATUS_INVALID_LAYOUT` with the rule broken
/// in `idforge_last_error`.
///
/// # Safety
/// `layout` is NULL or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_layout_validate(layout: *const idforge_layout) -> idforge_status {
    guard(|| {
        // SAFETY: the caller's guarantee.
        unsafe { ptr::get(layout, "layout") }?.to_layout()?;
        Ok(())
    })
}

/// Builds the id of `(tick, node, seq)` in `layout` into `*out_id`.
///
/// # Safety
/// `layout` is NULL or readable; `out_id` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_compose(
    layout: *const idforge_layout,
    tick: u64,
    node: u64,
    seq: u64,
    out_id: *mut u64,
) -> idforge_status {
    guard(|| {
        // SAFETY: the caller's guarantees.
        let (layout, out) = unsafe { (ptr::get(layout, "layout")?, ptr::out(out_id, "out_id")?) };
        out.write(layout.to_layout()?.compose(tick, node, seq)?);
        Ok(())
    })
}

/// Splits `id` of `layout` into its fields.
///
/// # Safety
/// `layout` is NULL or readable; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_decompose(
    layout: *const idforge_layout,
    id: u64,
    out: *mut idforge_parts,
) -> idforge_status {
    guard(|| {
        // SAFETY: the caller's guarantees.
        let (layout, out) = unsafe { (ptr::get(layout, "layout")?, ptr::out(out, "out")?) };
        out.write(idforge_parts::of(layout.to_layout()?.decompose(id)?));
        Ok(())
    })
}

/// The smallest and largest ids of the tick holding `time_ms` (Unix ms), for range queries
/// such as `WHERE id BETWEEN min AND max`.
///
/// # Safety
/// `layout` is NULL or readable; `out_min` and `out_max` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_bounds_at(
    layout: *const idforge_layout,
    time_ms: u64,
    out_min: *mut u64,
    out_max: *mut u64,
) -> idforge_status {
    guard(|| {
        // SAFETY: the caller's guarantees.
        let (layout, min, max) = unsafe {
            (
                ptr::get(layout, "layout")?,
                ptr::out(out_min, "out_min")?,
                ptr::out(out_max, "out_max")?,
            )
        };
        let (lo, hi) = layout.to_layout()?.bounds_at(time_ms)?;
        min.write(lo);
        max.write(hi);
        Ok(())
    })
}

/// Creates a generator from `config`; free it with `idforge_snowflake_free`.
///
/// Fails with `INVALID_LAYOUT`, `NODE_OUT_OF_RANGE`, `EPOCH_IN_FUTURE`, `INVALID_ARGUMENT` (bad
/// policy kind) or `IO` (state file).
///
/// # Safety
/// `config` is NULL or readable, its `state_file` NULL or NUL-terminated; `out` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_new(
    config: *const idforge_snowflake_config,
    out: *mut *mut idforge_snowflake,
) -> idforge_status {
    guard(|| {
        // SAFETY: the caller's guarantees.
        let (config, out) = unsafe { (ptr::get(config, "config")?, ptr::out(out, "out")?) };
        // SAFETY: the caller's guarantees on `config`.
        let inner = unsafe { builder(config) }?.build()?;
        out.write(ptr::into_handle(idforge_snowflake { inner }));
        Ok(())
    })
}

/// The builder of `config` (its node, policy and state file).
///
/// # Safety
/// `config.state_file` is NULL or NUL-terminated.
unsafe fn builder(config: &idforge_snowflake_config) -> Result<SnowflakeBuilder, FfiError> {
    let mut builder = Snowflake::builder(config.layout.to_layout()?)
        .node(config.node)
        .policy(config.policy.to_policy()?);
    if !config.state_file.is_null() {
        // SAFETY: non-NULL, and the caller guarantees it is NUL-terminated.
        let path = unsafe { ptr::cstr(config.state_file, "config.state_file") }?;
        builder = builder.state_file(OsStr::from_bytes(path.to_bytes()));
    }
    Ok(builder)
}

/// Creates a generator whose node id is leased from an idforge server (`IDF.WORKER`): the
/// lowest id of `service` that no live process holds, renewed in the background every third of
/// `ttl_ms` (0: 10 000) and released by `idforge_snowflake_free`. `config.node` is ignored;
/// `idforge_snowflake_node` tells the id leased. If the lease is lost or cannot be renewed in
/// time, every call fails with `IDFORGE_STATUS_LEASE_LOST`: create a new generator.
///
/// `url` is `idforge://[user:pass@]host:port[,host:port…]`. Fails like `idforge_snowflake_new`,
/// and with `INVALID_URL`, `SOURCE_UNAVAILABLE` (no server answered), `OVERFLOW` (every id of
/// the service is held) or `INVALID_ARGUMENT` (a bad service name or TTL).
///
/// # Safety
/// `config` is NULL or readable, its `state_file` NULL or NUL-terminated; `url` and `service`
/// are NULL or NUL-terminated; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_new_leased(
    config: *const idforge_snowflake_config,
    url: *const c_char,
    service: *const c_char,
    ttl_ms: u32,
    out: *mut *mut idforge_snowflake,
) -> idforge_status {
    guard(|| {
        // SAFETY: the caller's guarantees.
        let (config, url, service, out) = unsafe {
            (
                ptr::get(config, "config")?,
                ptr::cstr(url, "url")?,
                ptr::cstr(service, "service")?,
                ptr::out(out, "out")?,
            )
        };
        let text = |s: &std::ffi::CStr, what: &'static str| {
            s.to_str()
                .map(str::to_owned)
                .map_err(|_| FfiError::from(CoreError::InvalidArgument(what)))
        };
        let ttl = match ttl_ms {
            0 => runtime::DEFAULT_LEASE_TTL,
            ms => Duration::from_millis(u64::from(ms)),
        };
        // SAFETY: the caller's guarantees on `config`.
        let inner = unsafe { builder(config) }?
            .lease(
                text(url, "url is not UTF-8")?,
                text(service, "service is not UTF-8")?,
            )
            .lease_ttl(ttl)
            .build()?;
        out.write(ptr::into_handle(idforge_snowflake { inner }));
        Ok(())
    })
}

/// Writes the generator's node id to `out_node` (for a leased generator, the id leased).
///
/// # Safety
/// `handle` is NULL or a live generator; `out_node` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_node(
    handle: *const idforge_snowflake,
    out_node: *mut u64,
) -> idforge_status {
    guard(|| {
        // SAFETY: the caller's guarantees.
        let (h, out) = unsafe { (ptr::get(handle, "handle")?, ptr::out(out_node, "out_node")?) };
        out.write(h.inner.node());
        Ok(())
    })
}

/// Creates a generator for a preset (an `idforge_preset`) and node id, with the default policy.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_new_preset(
    preset_id: u32,
    node: u64,
    out: *mut *mut idforge_snowflake,
) -> idforge_status {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let out = unsafe { ptr::out(out, "out") }?;
        let inner = Snowflake::new(preset(preset_id)?, node)?;
        out.write(ptr::into_handle(idforge_snowflake { inner }));
        Ok(())
    })
}

/// Frees a generator; NULL is ignored. No other call may use the handle during or after this.
///
/// # Safety
/// `handle` is NULL or came from `idforge_snowflake_new*` and is not freed twice.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_free(handle: *mut idforge_snowflake) {
    // Dropping a Snowflake cannot panic (plain data and an optional file handle).
    // SAFETY: the caller's guarantee.
    unsafe { ptr::free_handle(handle) }
}

/// The next id, into `*out_id`. Thread-safe.
///
/// # Safety
/// `handle` is NULL or a live generator; `out_id` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_next(
    handle: *const idforge_snowflake,
    out_id: *mut u64,
) -> idforge_status {
    guard(|| {
        // SAFETY: the caller's guarantees.
        let (h, out) = unsafe { (ptr::get(handle, "handle")?, ptr::out(out_id, "out_id")?) };
        out.write(h.inner.next()?);
        Ok(())
    })
}

/// Fills `out[0..len]` with fresh ids in increasing order (one clock read per run of ids that
/// share a tick). Thread-safe. On failure the contents of `out` are unspecified: some may have
/// been written, and those ids are never issued again.
///
/// # Safety
/// `handle` is NULL or a live generator; `out` is NULL or points to `len` writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_next_many(
    handle: *const idforge_snowflake,
    out: *mut u64,
    len: usize,
) -> idforge_status {
    guard(|| {
        // SAFETY: the caller's guarantees.
        let (h, out) = unsafe {
            (
                ptr::get(handle, "handle")?,
                ptr::out_slice(out, len, "out")?,
            )
        };
        h.inner.next_many(out)?;
        Ok(())
    })
}

/// Splits an id of this generator's layout into its fields.
///
/// # Safety
/// `handle` is NULL or a live generator; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_decode(
    handle: *const idforge_snowflake,
    id: u64,
    out: *mut idforge_parts,
) -> idforge_status {
    guard(|| {
        // SAFETY: the caller's guarantees.
        let (h, out) = unsafe { (ptr::get(handle, "handle")?, ptr::out(out, "out")?) };
        out.write(idforge_parts::of(h.inner.decode(id)?));
        Ok(())
    })
}

/// The generator's layout, into `*out`.
///
/// # Safety
/// `handle` is NULL or a live generator; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_snowflake_layout(
    handle: *const idforge_snowflake,
    out: *mut idforge_layout,
) -> idforge_status {
    guard(|| {
        // SAFETY: the caller's guarantees.
        let (h, out) = unsafe { (ptr::get(handle, "handle")?, ptr::out(out, "out")?) };
        out.write(idforge_layout::of(h.inner.layout()));
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preset_numbers_follow_layout_presets() {
        let named = [
            (idforge_preset::Twitter as u32, "twitter"),
            (idforge_preset::Discord as u32, "discord"),
            (idforge_preset::Instagram as u32, "instagram"),
            (idforge_preset::Sonyflake as u32, "sonyflake"),
            (idforge_preset::Baidu as u32, "baidu"),
            (idforge_preset::JsSafe as u32, "js_safe"),
        ];
        assert_eq!(named.len(), Layout::PRESETS.len());
        for (value, name) in named {
            assert_eq!(Layout::PRESETS[value as usize].0, name);
        }
    }

    #[test]
    fn layouts_round_trip_through_the_c_struct() {
        for (_, layout) in Layout::PRESETS {
            assert_eq!(idforge_layout::of(&layout).to_layout().unwrap(), layout);
        }
        let mut bad = idforge_layout::of(&Layout::TWITTER);
        bad.order = 2;
        assert!(bad.to_layout().is_err());
    }
}
