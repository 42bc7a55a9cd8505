//! `Layout`: a snowflake bit layout, its presets, compose/decompose and the id bounds of a time.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use idforge::{Layout as CoreLayout, Order as CoreOrder, Parts};

use crate::error::{IdforgeError, Result};

/// The order of the node and sequence fields below the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Order {
    /// time | node | seq (Twitter, Discord, Instagram, Baidu).
    TimeNodeSeq,
    /// time | seq | node (Sonyflake).
    TimeSeqNode,
}

/// The fields of a snowflake id.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct SnowflakeParts {
    /// Ticks since the layout's epoch.
    pub tick: i64,
    /// The tick's start, Unix milliseconds.
    pub time_ms: i64,
    /// The tick's start.
    pub time: SystemTime,
    /// The node (worker) id.
    pub node: i64,
    /// The sequence within the tick.
    pub seq: i64,
}

impl From<Parts> for SnowflakeParts {
    fn from(p: Parts) -> Self {
        SnowflakeParts {
            tick: p.tick as i64,
            time_ms: p.time_ms as i64,
            time: SystemTime::UNIX_EPOCH + Duration::from_millis(p.time_ms),
            node: p.node as i64,
            seq: p.seq as i64,
        }
    }
}

/// The smallest and largest ids of one tick.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct IdBounds {
    /// The smallest id.
    pub min: i64,
    /// The largest id.
    pub max: i64,
}

/// A snowflake layout: epoch, tick, and the widths of the time, node and sequence fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, uniffi::Object)]
#[uniffi::export(Eq, Hash, Display)]
pub struct Layout {
    pub(crate) inner: CoreLayout,
}

/// A width as `u32`; a negative one is refused, not wrapped.
fn width(bits: i32) -> Result<u32> {
    u32::try_from(bits)
        .map_err(|_| IdforgeError::InvalidLayout("a field width cannot be negative".to_owned()))
}

#[uniffi::export]
impl Layout {
    /// A custom layout (`InvalidLayout` when the widths, tick or epoch do not make one).
    #[uniffi::constructor(default(unsigned = false))]
    pub fn new(
        epoch_ms: i64,
        tick_ms: i64,
        time_bits: i32,
        node_bits: i32,
        seq_bits: i32,
        order: Order,
        unsigned: bool,
    ) -> Result<Arc<Layout>> {
        let order = match order {
            Order::TimeNodeSeq => CoreOrder::TimeNodeSeq,
            Order::TimeSeqNode => CoreOrder::TimeSeqNode,
        };
        let inner = CoreLayout::new(
            epoch_ms as u64,
            tick_ms as u64,
            width(time_bits)?,
            width(node_bits)?,
            width(seq_bits)?,
            order,
            unsigned,
        )?;
        Ok(Arc::new(Layout { inner }))
    }

    /// A preset by name (`twitter`, `sonyflake`, ...; see `layoutPresetNames()`).
    #[uniffi::constructor]
    pub fn preset(name: String) -> Result<Arc<Layout>> {
        Ok(Arc::new(Layout {
            inner: CoreLayout::named(&name)?,
        }))
    }

    /// A preset name or a spec such as `epoch=1288834974657,tick=1,time=41,node=10,seq=12`
    /// (then optionally `,order=time_seq_node` and `,unsigned`): the text every binding and the
    /// `idforge` CLI accept (`InvalidLayout` otherwise).
    #[uniffi::constructor]
    pub fn parse(text: String) -> Result<Arc<Layout>> {
        Ok(Arc::new(Layout {
            inner: CoreLayout::parse(&text)?,
        }))
    }

    /// The canonical spec (every field), which `Layout.parse` reads back.
    pub fn spec(&self) -> String {
        self.inner.spec().to_string()
    }

    /// The preset's name, or `null` for a custom layout.
    pub fn preset_name(&self) -> Option<String> {
        self.inner.preset_name().map(str::to_owned)
    }

    /// The epoch, Unix milliseconds.
    pub fn epoch_ms(&self) -> i64 {
        self.inner.epoch_ms() as i64
    }
    /// The tick, in milliseconds.
    pub fn tick_ms(&self) -> i64 {
        self.inner.tick_ms() as i64
    }
    /// Bits of the time field.
    pub fn time_bits(&self) -> i32 {
        self.inner.time_bits() as i32
    }
    /// Bits of the node field.
    pub fn node_bits(&self) -> i32 {
        self.inner.node_bits() as i32
    }
    /// Bits of the sequence field.
    pub fn seq_bits(&self) -> i32 {
        self.inner.seq_bits() as i32
    }
    /// The field order.
    pub fn order(&self) -> Order {
        match self.inner.order() {
            CoreOrder::TimeNodeSeq => Order::TimeNodeSeq,
            CoreOrder::TimeSeqNode => Order::TimeSeqNode,
        }
    }
    /// Whether ids use all 64 bits (else the top bit is 0).
    pub fn unsigned(&self) -> bool {
        self.inner.is_unsigned()
    }
    /// The largest node id.
    pub fn max_node(&self) -> i64 {
        self.inner.max_node() as i64
    }

    /// The id of `tick`, `node` and `seq`.
    pub fn compose(&self, tick: i64, node: i64, seq: i64) -> Result<i64> {
        Ok(self.inner.compose(tick as u64, node as u64, seq as u64)? as i64)
    }

    /// The fields of `id`.
    pub fn decompose(&self, id: i64) -> Result<SnowflakeParts> {
        Ok(self.inner.decompose(id as u64)?.into())
    }

    /// The smallest and largest ids of the tick holding `time_ms` (for range queries).
    pub fn bounds_at(&self, time_ms: i64) -> Result<IdBounds> {
        bounds(&self.inner, time_ms)
    }

    /// `EpochInFuture` when the epoch is after `now_ms`.
    pub fn check_epoch(&self, now_ms: i64) -> Result<()> {
        Ok(self.inner.check_epoch(now_ms as u64)?)
    }
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let l = &self.inner;
        write!(
            f,
            "Layout(epochMs={}, tickMs={}, timeBits={}, nodeBits={}, seqBits={}, order={:?}, unsigned={})",
            l.epoch_ms(),
            l.tick_ms(),
            l.time_bits(),
            l.node_bits(),
            l.seq_bits(),
            self.order(),
            l.is_unsigned()
        )
    }
}

/// The bounds of the tick holding `time_ms` under `layout`.
pub(crate) fn bounds(layout: &CoreLayout, time_ms: i64) -> Result<IdBounds> {
    let (min, max) = layout.bounds_at(time_ms as u64)?;
    Ok(IdBounds {
        min: min as i64,
        max: max as i64,
    })
}

/// The names of the preset layouts, in order.
#[uniffi::export]
pub fn layout_preset_names() -> Vec<String> {
    CoreLayout::PRESETS
        .iter()
        .map(|(n, _)| (*n).to_owned())
        .collect()
}
