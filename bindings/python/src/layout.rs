//! `Layout`: a validated snowflake layout with the stateless codecs.

use idforge::{Layout as CoreLayout, Order};
use pyo3::prelude::*;

use crate::error::OrRaise;

/// A snowflake layout: widths of the time, node and sequence fields, the epoch and tick unit.
#[pyclass(frozen, eq, hash, module = "idforge._idforge")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Layout {
    pub(crate) inner: CoreLayout,
}

#[pymethods]
impl Layout {
    #[new]
    #[pyo3(signature = (epoch_ms, tick_ms, time_bits, node_bits, seq_bits, order = "time_node_seq", unsigned = false))]
    fn new(
        epoch_ms: u64,
        tick_ms: u64,
        time_bits: u32,
        node_bits: u32,
        seq_bits: u32,
        order: &str,
        unsigned: bool,
    ) -> PyResult<Self> {
        let order = order.parse::<Order>().or_raise()?;
        let inner = CoreLayout::new(
            epoch_ms, tick_ms, time_bits, node_bits, seq_bits, order, unsigned,
        )
        .or_raise()?;
        Ok(Layout { inner })
    }

    /// The preset named `name` (`twitter`, `discord`, `instagram`, `sonyflake`, `baidu`,
    /// `js_safe`; case and `-`/`_` ignored).
    #[staticmethod]
    fn preset(name: &str) -> PyResult<Self> {
        CoreLayout::named(name)
            .map(|inner| Layout { inner })
            .or_raise()
    }

    /// A preset name or a spec such as
    /// `epoch=1288834974657,tick=1,time=41,node=10,seq=12[,order=time_seq_node][,unsigned]`.
    #[staticmethod]
    fn parse(text: &str) -> PyResult<Self> {
        CoreLayout::parse(text)
            .map(|inner| Layout { inner })
            .or_raise()
    }

    /// The canonical spec (every field), which `Layout.parse` reads back.
    #[getter]
    fn spec(&self) -> String {
        self.inner.spec().to_string()
    }

    /// The preset names, in order.
    #[staticmethod]
    fn preset_names() -> Vec<&'static str> {
        CoreLayout::PRESETS.iter().map(|(n, _)| *n).collect()
    }

    #[getter]
    fn epoch_ms(&self) -> u64 {
        self.inner.epoch_ms()
    }
    #[getter]
    fn tick_ms(&self) -> u64 {
        self.inner.tick_ms()
    }
    #[getter]
    fn time_bits(&self) -> u32 {
        self.inner.time_bits()
    }
    #[getter]
    fn node_bits(&self) -> u32 {
        self.inner.node_bits()
    }
    #[getter]
    fn seq_bits(&self) -> u32 {
        self.inner.seq_bits()
    }
    #[getter]
    fn order(&self) -> &'static str {
        self.inner.order().name()
    }
    #[getter]
    fn unsigned(&self) -> bool {
        self.inner.is_unsigned()
    }
    #[getter]
    fn max_node(&self) -> u64 {
        self.inner.max_node()
    }

    /// The id of `(tick, node, seq)`.
    fn compose(&self, tick: u64, node: u64, seq: u64) -> PyResult<u64> {
        self.inner.compose(tick, node, seq).or_raise()
    }

    /// `(tick, time_ms, node, seq)` of an id.
    fn decompose(&self, id: u64) -> PyResult<(u64, u64, u64, u64)> {
        let p = self.inner.decompose(id).or_raise()?;
        Ok((p.tick, p.time_ms, p.node, p.seq))
    }

    /// `(min, max)`: the smallest and largest ids of the tick holding `time_ms`.
    fn bounds_at(&self, time_ms: u64) -> PyResult<(u64, u64)> {
        self.inner.bounds_at(time_ms).or_raise()
    }

    /// Checks that the epoch is not after `now_ms`.
    fn check_epoch(&self, now_ms: u64) -> PyResult<()> {
        self.inner.check_epoch(now_ms).or_raise()
    }

    /// The preset's name, or else the spec.
    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self) -> String {
        let l = &self.inner;
        format!(
            "Layout(epoch_ms={}, tick_ms={}, time_bits={}, node_bits={}, seq_bits={}, order='{}', unsigned={})",
            l.epoch_ms(),
            l.tick_ms(),
            l.time_bits(),
            l.node_bits(),
            l.seq_bits(),
            self.order(),
            if l.is_unsigned() { "True" } else { "False" }
        )
    }
}
