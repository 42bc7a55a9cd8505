//! `Layout`: a validated snowflake layout with the stateless codecs (compose, decompose,
//! bounds).

use chrono::{DateTime, Utc};
use idforge::{Layout as CoreLayout, Order, Parts};
use napi::bindgen_prelude::{BigInt, Either, Either3, Either4};
use napi_derive::napi;

use crate::args::{uint, uint64};
use crate::error::{OrThrow, Result};

/// The fields of a layout, as plain data (what `Layout.toJSON()` returns and what a
/// `Snowflake` accepts in place of a preset name).
#[napi(object)]
pub struct LayoutSpec {
    /// The epoch, in Unix milliseconds (a `number`, or a `bigint` or decimal string past 2^53).
    pub epoch_ms: Either3<BigInt, f64, String>,
    /// The tick unit in milliseconds (1 for most layouts, 10 for Sonyflake, 1000 for Baidu).
    pub tick_ms: Either3<BigInt, f64, String>,
    /// Bits of the time field.
    pub time_bits: u32,
    /// Bits of the node (worker) field.
    pub node_bits: u32,
    /// Bits of the sequence field.
    pub seq_bits: u32,
    /// `"time_node_seq"` (default) or `"time_seq_node"`.
    #[napi(ts_type = "'time_node_seq' | 'time_seq_node'")]
    pub order: Option<String>,
    /// Whether the id may use all 64 bits (default false: the sign bit stays 0).
    pub unsigned: Option<bool>,
}

/// The fields of a snowflake id.
#[napi(object, object_from_js = false)]
pub struct SnowflakeParts {
    /// The tick (time since the epoch in tick units).
    pub tick: u64,
    /// The time, in Unix milliseconds.
    pub time_ms: f64,
    /// The time as a `Date`.
    pub time: DateTime<Utc>,
    /// The node (worker) id.
    pub node: f64,
    /// The sequence number within the tick.
    pub seq: f64,
}

impl SnowflakeParts {
    pub(crate) fn of(p: Parts) -> SnowflakeParts {
        SnowflakeParts {
            tick: p.tick,
            time_ms: p.time_ms as f64,
            time: DateTime::from_timestamp_millis(p.time_ms as i64).unwrap_or_default(),
            node: p.node as f64,
            seq: p.seq as f64,
        }
    }
}

/// The smallest and largest ids of one tick.
#[napi(object, object_from_js = false)]
pub struct IdBounds {
    /// The smallest id of the tick.
    pub min: u64,
    /// The largest id of the tick.
    pub max: u64,
}

/// A snowflake layout: the widths of the time, node and sequence fields, the epoch and the tick
/// unit. Presets: `twitter`, `discord`, `instagram`, `sonyflake`, `baidu`, `js_safe`.
#[napi]
#[derive(Clone, Copy)]
pub struct Layout {
    pub(crate) inner: CoreLayout,
}

/// A layout from a preset name or a spec text, or from its fields (a `Layout` has the same).
pub(crate) fn layout_of(value: Either<String, LayoutSpec>) -> Result<CoreLayout> {
    match value {
        Either::A(text) => CoreLayout::parse(&text).or_throw(),
        Either::B(spec) => from_spec(&spec),
    }
}

fn from_spec(spec: &LayoutSpec) -> Result<CoreLayout> {
    let order = match spec.order.as_deref() {
        None => Order::TimeNodeSeq,
        Some(name) => name.parse::<Order>().or_throw()?,
    };
    let epoch_ms = uint64(spec.epoch_ms.clone())?;
    let tick_ms = uint64(spec.tick_ms.clone())?;
    CoreLayout::new(
        epoch_ms,
        tick_ms,
        spec.time_bits,
        spec.node_bits,
        spec.seq_bits,
        order,
        spec.unsigned.unwrap_or(false),
    )
    .or_throw()
}

pub(crate) fn spec_of(l: &CoreLayout) -> LayoutSpec {
    LayoutSpec {
        epoch_ms: crate::args::to_js_uint(l.epoch_ms()),
        tick_ms: crate::args::to_js_uint(l.tick_ms()),
        time_bits: l.time_bits(),
        node_bits: l.node_bits(),
        seq_bits: l.seq_bits(),
        order: Some(l.order().name().to_owned()),
        unsigned: Some(l.is_unsigned()),
    }
}

/// A time as JavaScript passes it: Unix milliseconds (`number`, `bigint` or decimal string) or
/// a `Date` (spelled out in the `#[napi]` signatures, where the macro cannot see through an
/// alias).
pub type TimeArg = Either4<BigInt, f64, String, DateTime<Utc>>;

pub(crate) fn time_ms(value: TimeArg) -> Result<u64> {
    match value {
        Either4::A(big) => uint64(Either3::A(big)),
        Either4::B(ms) => uint(ms, "a time must be non-negative Unix milliseconds"),
        Either4::C(text) => uint64(Either3::C(text)),
        Either4::D(date) => u64::try_from(date.timestamp_millis())
            .map_err(|_| crate::error::invalid_argument("a time must not be before 1970")),
    }
}

pub(crate) fn compose(l: &CoreLayout, time: TimeArg, node: u64, seq: Option<f64>) -> Result<u64> {
    let tick = l.tick_of(time_ms(time)?).or_throw()?;
    let seq = uint(
        seq.unwrap_or(0.0),
        "seq must be a non-negative safe integer",
    )?;
    l.compose(tick, node, seq).or_throw()
}

pub(crate) fn bounds_at(l: &CoreLayout, time: TimeArg) -> Result<IdBounds> {
    let (min, max) = l.bounds_at(time_ms(time)?).or_throw()?;
    Ok(IdBounds { min, max })
}

#[napi]
impl Layout {
    /// A layout from its fields; throws `IDFORGE_INVALID_LAYOUT` if they do not make one.
    #[napi(constructor)]
    pub fn new(spec: LayoutSpec) -> Result<Layout> {
        Ok(Layout {
            inner: from_spec(&spec)?,
        })
    }

    /// The preset named `name` (case, `-` and `_` ignored).
    #[napi(factory)]
    pub fn preset(name: String) -> Result<Layout> {
        Ok(Layout {
            inner: CoreLayout::named(&name).or_throw()?,
        })
    }

    /// A preset name or a spec such as
    /// `"epoch=1288834974657,tick=1,time=41,node=10,seq=12"` (then optionally
    /// `,order=time_seq_node` and `,unsigned`); throws `IDFORGE_INVALID_LAYOUT` otherwise.
    #[napi(factory)]
    pub fn parse(text: String) -> Result<Layout> {
        Ok(Layout {
            inner: CoreLayout::parse(&text).or_throw()?,
        })
    }

    /// The canonical spec (every field), which `Layout.parse` reads back.
    #[napi(getter)]
    pub fn spec(&self) -> String {
        self.inner.spec().to_string()
    }

    /// The preset's name, or else the spec.
    #[napi(js_name = "toString")]
    pub fn text(&self) -> String {
        self.inner.to_string()
    }

    /// The preset names, in order.
    #[napi]
    pub fn preset_names() -> Vec<&'static str> {
        CoreLayout::PRESETS.iter().map(|(n, _)| *n).collect()
    }

    /// The epoch, in Unix milliseconds.
    #[napi(getter)]
    pub fn epoch_ms(&self) -> f64 {
        self.inner.epoch_ms() as f64
    }
    /// The tick unit, in milliseconds.
    #[napi(getter)]
    pub fn tick_ms(&self) -> f64 {
        self.inner.tick_ms() as f64
    }
    /// Bits of the time field.
    #[napi(getter)]
    pub fn time_bits(&self) -> u32 {
        self.inner.time_bits()
    }
    /// Bits of the node field.
    #[napi(getter)]
    pub fn node_bits(&self) -> u32 {
        self.inner.node_bits()
    }
    /// Bits of the sequence field.
    #[napi(getter)]
    pub fn seq_bits(&self) -> u32 {
        self.inner.seq_bits()
    }
    /// `"time_node_seq"` or `"time_seq_node"`.
    #[napi(getter, ts_return_type = "'time_node_seq' | 'time_seq_node'")]
    pub fn order(&self) -> &'static str {
        self.inner.order().name()
    }
    /// Whether the id may use all 64 bits.
    #[napi(getter)]
    pub fn unsigned(&self) -> bool {
        self.inner.is_unsigned()
    }
    /// The largest node id.
    #[napi(getter)]
    pub fn max_node(&self) -> f64 {
        self.inner.max_node() as f64
    }
    /// The bits an id of this layout uses (at most 53 fit a JS `number`).
    #[napi(getter)]
    pub fn total_bits(&self) -> u32 {
        self.inner.total_bits()
    }

    /// The id of `(tick, node, seq)`.
    #[napi]
    pub fn compose_tick(
        &self,
        tick: Either3<BigInt, f64, String>,
        node: Either3<BigInt, f64, String>,
        seq: Either3<BigInt, f64, String>,
    ) -> Result<u64> {
        self.inner
            .compose(uint64(tick)?, uint64(node)?, uint64(seq)?)
            .or_throw()
    }

    /// The id for `time` (Unix ms or a `Date`), `node` and `seq` (default 0).
    #[napi]
    pub fn compose(
        &self,
        time: Either4<BigInt, f64, String, DateTime<Utc>>,
        node: Either3<BigInt, f64, String>,
        seq: Option<f64>,
    ) -> Result<u64> {
        compose(&self.inner, time, uint64(node)?, seq)
    }

    /// The fields of `id`.
    #[napi]
    pub fn decompose(&self, id: Either3<BigInt, f64, String>) -> Result<SnowflakeParts> {
        Ok(SnowflakeParts::of(
            self.inner.decompose(uint64(id)?).or_throw()?,
        ))
    }

    /// The smallest and largest ids of the tick holding `time` (for range queries).
    #[napi]
    pub fn bounds_at(&self, time: Either4<BigInt, f64, String, DateTime<Utc>>) -> Result<IdBounds> {
        bounds_at(&self.inner, time)
    }

    /// Throws `IDFORGE_EPOCH_IN_FUTURE` if the epoch is after `nowMs` (Unix ms).
    #[napi]
    pub fn check_epoch(&self, now_ms: Either3<BigInt, f64, String>) -> Result<()> {
        self.inner.check_epoch(uint64(now_ms)?).or_throw()
    }

    /// The fields, as plain data.
    #[napi(js_name = "toJSON")]
    pub fn json(&self) -> LayoutSpec {
        spec_of(&self.inner)
    }
}
