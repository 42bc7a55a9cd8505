//! Snowflake layouts (presets, text, or custom fields) and the stateless codecs: compose,
//! decompose, and the id bounds of a time.

use std::ffi::c_char;

use runtime::{CoreError, Layout, Order, Parts};

use crate::enums::idforge_order;
use crate::error::{FfiError, panic_boundary};
use crate::ptr;
use crate::status::idforge_status;

/// The error for layout text that is not UTF-8 (no preset or spec is).
const NOT_UTF8: CoreError = CoreError::InvalidLayout("the text is not UTF-8");

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

impl idforge_layout {
    pub(crate) fn to_layout(self) -> Result<Layout, FfiError> {
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

    pub(crate) fn of(layout: &Layout) -> idforge_layout {
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
    pub(crate) fn of(parts: Parts) -> idforge_parts {
        idforge_parts {
            tick: parts.tick,
            time_ms: parts.time_ms,
            node: parts.node,
            seq: parts.seq,
        }
    }
}

pub(crate) fn preset(preset: u32) -> Result<Layout, FfiError> {
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
    panic_boundary(|| {
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
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (name, out) = unsafe { (ptr::cstr(name, "name")?, ptr::out(out, "out")?) };
        let name = name.to_str().map_err(|_| NOT_UTF8)?;
        out.write(idforge_layout::of(&Layout::named(name)?));
        Ok(())
    })
}

/// Writes the layout of a preset name or a spec to `*out`: the text every binding and the
/// `idforge` CLI accept, such as `"twitter"` or
/// `"epoch=1288834974657,tick=1,time=41,node=10,seq=12"` (then optionally
/// `,order=time_seq_node` and `,unsigned`). Anything else is `IDFORGE_STATUS_INVALID_LAYOUT`,
/// with the reason in `idforge_last_error`.
///
/// # Safety
/// `text` is NULL or NUL-terminated; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn idforge_layout_parse(
    text: *const c_char,
    out: *mut idforge_layout,
) -> idforge_status {
    panic_boundary(|| {
        // SAFETY: the caller's guarantees.
        let (text, out) = unsafe { (ptr::cstr(text, "text")?, ptr::out(out, "out")?) };
        let text = text.to_str().map_err(|_| NOT_UTF8)?;
        out.write(idforge_layout::of(&Layout::parse(text)?));
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
    panic_boundary(|| {
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
    // SAFETY: the caller's guarantees.
    unsafe {
        ptr::answer(layout, out_id, ("layout", "out_id"), |layout| {
            Ok(layout.to_layout()?.compose(tick, node, seq)?)
        })
    }
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
    // SAFETY: the caller's guarantees.
    unsafe {
        ptr::answer(layout, out, ("layout", "out"), |layout| {
            Ok(idforge_parts::of(layout.to_layout()?.decompose(id)?))
        })
    }
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
    panic_boundary(|| {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enums::idforge_preset;

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
