//! 64-bit snowflake ids: a validated [`Layout`], the common presets, and a lock-free generator.
//!
//! An id is `time | node | seq` (or `time | seq | node`, Sonyflake's order), most significant
//! field first, so ids of later ticks are always larger. The time is counted in ticks of
//! `tick_ms` milliseconds since the layout's epoch.

use crate::error::{Error, Result};
pub use crate::layout_text::Spec;
use crate::tick::{Next, SeqStart, Tick, TickState};

/// Which field follows the time field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Order {
    /// `time | node | seq` (Twitter, Discord, Instagram, Baidu).
    TimeNodeSeq,
    /// `time | seq | node` (Sonyflake).
    TimeSeqNode,
}

/// A validated snowflake layout.
///
/// Built with [`Layout::new`] or taken from a preset; every `Layout` value is valid, so the
/// generator and the codecs need no further checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    epoch_ms: u64,
    tick_ms: u64,
    time_bits: u32,
    node_bits: u32,
    seq_bits: u32,
    order: Order,
    unsigned: bool,
}

/// The fields of a decoded id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Parts {
    /// Ticks since the layout's epoch.
    pub tick: u64,
    /// The start of that tick, in Unix milliseconds.
    pub time_ms: u64,
    /// The node (worker, machine, shard) id.
    pub node: u64,
    /// The sequence within the tick.
    pub seq: u64,
}

const fn mask(bits: u32) -> u64 {
    if bits == 0 {
        0
    } else {
        u64::MAX >> (64 - bits)
    }
}

impl Layout {
    /// Twitter's original layout: 41 bits of ms since 2010-11-04, 10-bit node, 12-bit sequence.
    pub const TWITTER: Layout =
        Layout::preset(1_288_834_974_657, 1, 41, 10, 12, Order::TimeNodeSeq, false);
    /// Discord: 42 bits of ms since 2015-01-01, 10-bit node (worker 5 | process 5), 12-bit
    /// increment; all 64 bits are used, so ids are unsigned.
    pub const DISCORD: Layout =
        Layout::preset(1_420_070_400_000, 1, 42, 10, 12, Order::TimeNodeSeq, true);
    /// Instagram: 41 bits of ms since 2011-08-24 21:07:01.721 UTC, 13-bit shard, 10-bit sequence;
    /// 64 bits in all, so ids are unsigned (they pass `i64::MAX` in 2046, as Instagram's do).
    pub const INSTAGRAM: Layout =
        Layout::preset(1_314_220_021_721, 1, 41, 13, 10, Order::TimeNodeSeq, true);
    /// Sonyflake: 39 bits of 10 ms ticks since 2014-09-01, 8-bit sequence, 16-bit machine id,
    /// in the order `time | seq | node`.
    pub const SONYFLAKE: Layout =
        Layout::preset(1_409_529_600_000, 10, 39, 16, 8, Order::TimeSeqNode, false);
    /// Baidu uid-generator's default: 28 bits of seconds since 2016-05-20 (UTC), 22-bit worker,
    /// 13-bit sequence. Its time field ran out on 2024-11-20, as the original's did: the preset
    /// decodes existing ids; to generate, build a [`Layout::new`] with a recent epoch.
    pub const BAIDU: Layout = Layout::preset(
        1_463_702_400_000,
        1000,
        28,
        22,
        13,
        Order::TimeNodeSeq,
        false,
    );
    /// 53 bits in all, so every id is a safe JavaScript `Number`: 41 bits of ms since
    /// 2020-01-01, 4-bit node, 8-bit sequence (256 ids per ms per node).
    pub const JS_SAFE: Layout =
        Layout::preset(1_577_836_800_000, 1, 41, 4, 8, Order::TimeNodeSeq, false);

    /// Every preset with its name, for parsers and listings.
    pub const PRESETS: [(&'static str, Layout); 6] = [
        ("twitter", Layout::TWITTER),
        ("discord", Layout::DISCORD),
        ("instagram", Layout::INSTAGRAM),
        ("sonyflake", Layout::SONYFLAKE),
        ("baidu", Layout::BAIDU),
        ("js_safe", Layout::JS_SAFE),
    ];

    const fn preset(
        epoch_ms: u64,
        tick_ms: u64,
        time_bits: u32,
        node_bits: u32,
        seq_bits: u32,
        order: Order,
        unsigned: bool,
    ) -> Layout {
        match Layout::new(
            epoch_ms, tick_ms, time_bits, node_bits, seq_bits, order, unsigned,
        ) {
            Ok(layout) => layout,
            // Evaluated at compile time: a bad preset fails the build, never a caller.
            Err(_) => panic!("invalid preset layout"),
        }
    }

    /// Validates and builds a layout.
    ///
    /// Rules: `tick_ms >= 1`; `time_bits >= 1`; `time_bits + seq_bits <= 63` (the lock-free state
    /// packs both in one word); all three fields fit in 63 bits, or 64 when `unsigned`; the last
    /// encodable time fits in a `u64` of milliseconds. Whether the epoch is in the past is checked
    /// by [`Layout::check_epoch`], since the core has no clock.
    #[allow(clippy::too_many_arguments)]
    pub const fn new(
        epoch_ms: u64,
        tick_ms: u64,
        time_bits: u32,
        node_bits: u32,
        seq_bits: u32,
        order: Order,
        unsigned: bool,
    ) -> Result<Layout> {
        if tick_ms == 0 {
            return Err(Error::InvalidLayout("tick_ms must be at least 1"));
        }
        if time_bits == 0 {
            return Err(Error::InvalidLayout("time_bits must be at least 1"));
        }
        if time_bits > 63 || seq_bits > 62 || time_bits + seq_bits > 63 {
            return Err(Error::InvalidLayout(
                "time_bits + seq_bits must be at most 63",
            ));
        }
        if node_bits > 64 {
            return Err(Error::InvalidLayout("node_bits must be at most 64"));
        }
        // Cannot overflow: each width is at most 64 here.
        let total = time_bits + node_bits + seq_bits;
        let limit = if unsigned { 64 } else { 63 };
        if total > limit {
            return Err(if unsigned {
                Error::InvalidLayout("time_bits + node_bits + seq_bits must be at most 64")
            } else {
                Error::InvalidLayout(
                    "time_bits + node_bits + seq_bits must be at most 63 (64 only when unsigned)",
                )
            });
        }
        let span = match mask(time_bits).checked_mul(tick_ms) {
            Some(span) => span,
            None => {
                return Err(Error::InvalidLayout(
                    "the time field outlasts u64 milliseconds",
                ));
            }
        };
        if epoch_ms.checked_add(span).is_none() {
            return Err(Error::InvalidLayout(
                "the time field outlasts u64 milliseconds",
            ));
        }
        Ok(Layout {
            epoch_ms,
            tick_ms,
            time_bits,
            node_bits,
            seq_bits,
            order,
            unsigned,
        })
    }

    /// Looks up a preset by name (case-insensitive; `-` and `_` are the same).
    pub fn preset_named(name: &str) -> Option<Layout> {
        Self::PRESETS
            .iter()
            .find(|(n, _)| names_match(n, name))
            .map(|(_, l)| *l)
    }

    /// The epoch, in Unix milliseconds.
    pub const fn epoch_ms(&self) -> u64 {
        self.epoch_ms
    }
    /// The length of one tick, in milliseconds.
    pub const fn tick_ms(&self) -> u64 {
        self.tick_ms
    }
    /// Width of the time field.
    pub const fn time_bits(&self) -> u32 {
        self.time_bits
    }
    /// Width of the node field.
    pub const fn node_bits(&self) -> u32 {
        self.node_bits
    }
    /// Width of the sequence field.
    pub const fn seq_bits(&self) -> u32 {
        self.seq_bits
    }
    /// Field order after the time.
    pub const fn order(&self) -> Order {
        self.order
    }
    /// Whether ids may use the 64th bit.
    pub const fn is_unsigned(&self) -> bool {
        self.unsigned
    }
    /// Total width of an id.
    pub const fn total_bits(&self) -> u32 {
        self.time_bits + self.node_bits + self.seq_bits
    }
    /// The largest node id.
    pub const fn max_node(&self) -> u64 {
        mask(self.node_bits)
    }
    /// The largest sequence.
    pub const fn max_seq(&self) -> u64 {
        mask(self.seq_bits)
    }
    /// The largest tick.
    pub const fn max_tick(&self) -> u64 {
        mask(self.time_bits)
    }
    /// The start of the last tick the layout can encode, in Unix milliseconds.
    pub const fn max_time_ms(&self) -> u64 {
        // Cannot overflow: checked in `new`.
        self.epoch_ms + self.max_tick() * self.tick_ms
    }

    /// Fails with [`Error::EpochInFuture`] when the epoch lies after `now_ms`.
    pub const fn check_epoch(&self, now_ms: u64) -> Result<()> {
        if self.epoch_ms > now_ms {
            return Err(Error::EpochInFuture {
                epoch_ms: self.epoch_ms,
                now_ms,
            });
        }
        Ok(())
    }

    /// Fails with [`Error::NodeOutOfRange`] when `node` does not fit.
    pub const fn check_node(&self, node: u64) -> Result<()> {
        if node > self.max_node() {
            return Err(Error::NodeOutOfRange {
                node,
                max: self.max_node(),
            });
        }
        Ok(())
    }

    /// The tick that contains `time_ms` (Unix milliseconds).
    pub const fn tick_of(&self, time_ms: u64) -> Result<u64> {
        if time_ms < self.epoch_ms {
            return Err(Error::TimeOutOfRange { time_ms });
        }
        let tick = (time_ms - self.epoch_ms) / self.tick_ms;
        if tick > self.max_tick() {
            return Err(Error::TimeOutOfRange { time_ms });
        }
        Ok(tick)
    }

    /// Builds an id from its fields, checking each fits.
    pub const fn compose(&self, tick: u64, node: u64, seq: u64) -> Result<u64> {
        if tick > self.max_tick() {
            return Err(Error::TimeOutOfRange {
                time_ms: self
                    .epoch_ms
                    .saturating_add(tick.saturating_mul(self.tick_ms)),
            });
        }
        if let Err(e) = self.check_node(node) {
            return Err(e);
        }
        if seq > self.max_seq() {
            return Err(Error::SequenceOutOfRange {
                seq,
                max: self.max_seq(),
            });
        }
        Ok(self.pack(tick, node, seq))
    }

    /// Packs fields already known to fit.
    #[inline]
    const fn pack(&self, tick: u64, node: u64, seq: u64) -> u64 {
        let low_bits = self.node_bits + self.seq_bits;
        let time = if low_bits == 64 { 0 } else { tick << low_bits };
        match self.order {
            Order::TimeNodeSeq => time | (node << self.seq_bits) | seq,
            Order::TimeSeqNode => time | (seq << self.node_bits) | node,
        }
    }

    /// Splits an id into its fields. Fails with [`Error::InvalidArgument`] when the id has bits
    /// set above the layout's width (it cannot have come from this layout).
    pub const fn decompose(&self, id: u64) -> Result<Parts> {
        let total = self.total_bits();
        if total < 64 && id >> total != 0 {
            return Err(Error::InvalidArgument(
                "the id has bits set above the layout's width",
            ));
        }
        let low_bits = self.node_bits + self.seq_bits;
        let tick = if low_bits == 64 { 0 } else { id >> low_bits };
        let (node, seq) = match self.order {
            Order::TimeNodeSeq => ((id >> self.seq_bits) & self.max_node(), id & self.max_seq()),
            Order::TimeSeqNode => (
                id & self.max_node(),
                (id >> self.node_bits) & self.max_seq(),
            ),
        };
        Ok(Parts {
            tick,
            time_ms: self.epoch_ms + tick * self.tick_ms,
            node,
            seq,
        })
    }

    /// The smallest and largest id of the tick containing `time_ms`: every id generated in that
    /// tick, by any node, lies in `min..=max` (for range queries on an id column).
    pub const fn bounds_at(&self, time_ms: u64) -> Result<(u64, u64)> {
        let tick = match self.tick_of(time_ms) {
            Ok(tick) => tick,
            Err(e) => return Err(e),
        };
        Ok((
            self.pack(tick, 0, 0),
            self.pack(tick, self.max_node(), self.max_seq()),
        ))
    }
}

fn names_match(a: &str, b: &str) -> bool {
    let norm = |c: u8| {
        if c == b'-' {
            b'_'
        } else {
            c.to_ascii_lowercase()
        }
    };
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| norm(x) == norm(y))
}

/// A lock-free snowflake generator for one node. Time is passed in on every call.
#[derive(Debug)]
pub struct SnowflakeGen {
    layout: Layout,
    node: u64,
    state: TickState,
}

impl SnowflakeGen {
    /// A generator for `node`, allowed to run up to `max_lead_ms` ahead of the clock (rounded up
    /// to whole ticks) when a tick's sequence is used up or the clock steps back.
    pub fn new(layout: Layout, node: u64, max_lead_ms: u64) -> Result<SnowflakeGen> {
        layout.check_node(node)?;
        let lead_ticks = max_lead_ms.div_ceil(layout.tick_ms);
        let state = TickState::new(layout.time_bits, layout.seq_bits, lead_ticks)?;
        Ok(SnowflakeGen {
            layout,
            node,
            state,
        })
    }

    /// The same generator with each tick's sequence starting at `start` instead of 0:
    /// [`SeqStart::Keyed`] spreads `id % n` evenly at low rates (sharding by id) and still
    /// leaves every tick at least half its sequence range.
    pub fn with_start(mut self, start: SeqStart) -> SnowflakeGen {
        self.state = self.state.with_start(start);
        self
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The node id.
    pub fn node(&self) -> u64 {
        self.node
    }

    /// Where each tick's sequence starts.
    pub fn start(&self) -> SeqStart {
        self.state.start()
    }

    /// The next id at clock time `now_ms` (Unix milliseconds).
    #[inline]
    pub fn next(&self, now_ms: u64) -> Result<Next<u64>> {
        let now_tick = self.tick_at(now_ms)?;
        match self.state.next(now_tick) {
            Tick::Ready { tick, seq } => Ok(Next::Id(self.layout.pack(tick, self.node, seq))),
            other => self.not_ready(other, now_ms),
        }
    }

    /// Fills `out` with consecutive ids of one tick using a single CAS; returns how many were
    /// written (at least 1 when `out` is not empty), or `Pending`.
    #[inline]
    pub fn next_run(&self, now_ms: u64, out: &mut [u64]) -> Result<Next<usize>> {
        if out.is_empty() {
            return Ok(Next::Id(0));
        }
        let now_tick = self.tick_at(now_ms)?;
        match self.state.next_run(now_tick, out.len() as u64) {
            Ok((tick, seq, count)) => {
                let count = count as usize;
                for (i, slot) in out[..count].iter_mut().enumerate() {
                    *slot = self.layout.pack(tick, self.node, seq + i as u64);
                }
                Ok(Next::Id(count))
            }
            Err(other) => self.not_ready(other, now_ms),
        }
    }

    /// The clock's tick at `now_ms`.
    #[inline]
    fn tick_at(&self, now_ms: u64) -> Result<u64> {
        let layout = &self.layout;
        if now_ms < layout.epoch_ms {
            return Err(Error::EpochInFuture {
                epoch_ms: layout.epoch_ms,
                now_ms,
            });
        }
        let since = now_ms - layout.epoch_ms;
        // Most layouts count milliseconds: skip the division for them.
        Ok(if layout.tick_ms == 1 {
            since
        } else {
            since / layout.tick_ms
        })
    }

    /// Maps a tick state that gave no id to the caller's answer.
    #[cold]
    fn not_ready<T>(&self, tick: Tick, now_ms: u64) -> Result<Next<T>> {
        match tick {
            Tick::Pending { until_tick } => Ok(Next::Pending {
                until_ms: self.layout.epoch_ms + until_tick * self.layout.tick_ms,
            }),
            _ => Err(Error::TimeOutOfRange { time_ms: now_ms }),
        }
    }

    /// Makes every later id lie after `time_ms` (the persisted high-water time of an earlier run).
    pub fn resume_after_ms(&self, time_ms: u64) {
        if time_ms >= self.layout.epoch_ms {
            self.state
                .resume_after((time_ms - self.layout.epoch_ms) / self.layout.tick_ms);
        }
    }

    /// The start of the latest tick any id so far may lie in, in Unix milliseconds: what to
    /// persist so that a restart resumes after it.
    pub fn high_water_ms(&self) -> u64 {
        let tick = self.state.high_water_tick().min(self.layout.max_tick());
        self.layout.epoch_ms + tick * self.layout.tick_ms
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn presets_have_the_documented_widths() {
        assert_eq!(Layout::TWITTER.total_bits(), 63);
        assert_eq!(Layout::DISCORD.total_bits(), 64);
        assert!(Layout::DISCORD.is_unsigned());
        assert_eq!(Layout::INSTAGRAM.total_bits(), 64);
        assert_eq!(Layout::SONYFLAKE.total_bits(), 63);
        assert_eq!(Layout::BAIDU.total_bits(), 63);
        assert_eq!(Layout::JS_SAFE.total_bits(), 53);
        assert_eq!(Layout::preset_named("JS-SAFE"), Some(Layout::JS_SAFE));
        assert_eq!(Layout::preset_named("nope"), None);
    }

    #[test]
    fn twitter_known_id_decodes() {
        // Field arithmetic checked against the published bit positions (time >> 22, etc.).
        let id = 1_212_161_842_325_159_937u64;
        let parts = Layout::TWITTER.decompose(id).unwrap();
        assert_eq!(parts.time_ms, (id >> 22) + 1_288_834_974_657);
        assert_eq!(parts.node, (id >> 12) & 0x3ff);
        assert_eq!(parts.seq, id & 0xfff);
        assert_eq!(
            Layout::TWITTER.compose(parts.tick, parts.node, parts.seq),
            Ok(id)
        );
    }

    #[test]
    fn sonyflake_puts_the_node_last() {
        let id = Layout::SONYFLAKE.compose(3, 0xabcd, 5).unwrap();
        assert_eq!(id, (3 << 24) | (5 << 16) | 0xabcd);
    }

    #[test]
    fn invalid_layouts_are_refused() {
        let bad = [
            Layout::new(0, 0, 41, 10, 12, Order::TimeNodeSeq, false),
            Layout::new(0, 1, 0, 10, 12, Order::TimeNodeSeq, false),
            Layout::new(0, 1, 42, 10, 12, Order::TimeNodeSeq, false),
            Layout::new(0, 1, 52, 0, 12, Order::TimeNodeSeq, true),
            Layout::new(0, 1, 41, 12, 12, Order::TimeNodeSeq, true),
            Layout::new(u64::MAX - 5, 1, 41, 10, 12, Order::TimeNodeSeq, false),
            Layout::new(0, 1, 41, u32::MAX - 52, 12, Order::TimeNodeSeq, false),
        ];
        for (i, layout) in bad.iter().enumerate() {
            let code = layout.map(|_| ()).unwrap_err().code();
            assert_eq!(code, crate::ErrorCode::InvalidLayout, "case {i}");
        }
        assert!(Layout::new(0, 1, 42, 10, 12, Order::TimeNodeSeq, true).is_ok());
    }

    #[test]
    fn out_of_range_fields_are_refused() {
        let l = Layout::TWITTER;
        assert_eq!(
            l.compose(0, 1024, 0).unwrap_err().code(),
            crate::ErrorCode::NodeOutOfRange
        );
        assert_eq!(
            l.compose(0, 0, 4096).unwrap_err().code(),
            crate::ErrorCode::SequenceOutOfRange
        );
        assert_eq!(
            l.compose(1 << 41, 0, 0).unwrap_err().code(),
            crate::ErrorCode::TimeOutOfRange
        );
        assert_eq!(
            l.decompose(1 << 63).unwrap_err().code(),
            crate::ErrorCode::InvalidArgument
        );
        assert!(SnowflakeGen::new(l, 1024, 0).is_err());
        assert_eq!(
            l.check_epoch(l.epoch_ms() - 1).unwrap_err().code(),
            crate::ErrorCode::EpochInFuture
        );
    }

    #[test]
    fn bounds_cover_every_node_and_sequence() {
        let l = Layout::INSTAGRAM;
        let t = l.epoch_ms() + 123_456;
        let (lo, hi) = l.bounds_at(t).unwrap();
        let tick = l.tick_of(t).unwrap();
        assert_eq!(lo, l.compose(tick, 0, 0).unwrap());
        assert_eq!(hi, l.compose(tick, l.max_node(), l.max_seq()).unwrap());
        assert!(l.compose(tick - 1, l.max_node(), l.max_seq()).unwrap() < lo);
        assert!(l.compose(tick + 1, 0, 0).unwrap() > hi);
    }

    #[test]
    fn generator_counts_borrows_and_waits() {
        let l = Layout::new(0, 1, 41, 10, 2, Order::TimeNodeSeq, false).unwrap();
        let g = SnowflakeGen::new(l, 7, 1).unwrap();
        let mut ids = [0u64; 8];
        for id in ids.iter_mut() {
            *id = match g.next(100).unwrap() {
                Next::Id(id) => id,
                Next::Pending { .. } => panic!("should borrow one tick"),
            };
        }
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            l.decompose(ids[7]).unwrap(),
            Parts {
                tick: 101,
                time_ms: 101,
                node: 7,
                seq: 3
            }
        );
        assert_eq!(g.next(100).unwrap(), Next::Pending { until_ms: 101 });
        assert_eq!(g.high_water_ms(), 102);
    }

    #[test]
    fn generator_refuses_time_before_epoch_and_after_the_field() {
        let l = Layout::new(1000, 1, 4, 0, 1, Order::TimeNodeSeq, false).unwrap();
        let g = SnowflakeGen::new(l, 0, 0).unwrap();
        assert_eq!(
            g.next(999).unwrap_err().code(),
            crate::ErrorCode::EpochInFuture
        );
        assert_eq!(
            g.next(1016).unwrap_err().code(),
            crate::ErrorCode::TimeOutOfRange
        );
        assert!(matches!(g.next(1015), Ok(Next::Id(_))));
    }
}
