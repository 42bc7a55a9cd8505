//! Property tests for snowflake layouts and the snowflake generator.

use std::collections::BTreeSet;

use idforge_core::snowflake::{Layout, Order, Parts, SnowflakeGen};
use idforge_core::tick::Next;
use proptest::collection::vec;
use proptest::prelude::*;

/// A layout whose every width, tick length and epoch satisfy the rules of `Layout::new`.
fn any_layout() -> impl Strategy<Value = Layout> {
    (1u32..=63, any::<bool>())
        .prop_flat_map(|(time_bits, unsigned)| {
            (Just(time_bits), 0..=63 - time_bits, Just(unsigned))
        })
        .prop_flat_map(|(time_bits, seq_bits, unsigned)| {
            let limit = if unsigned { 64 } else { 63 };
            let max_tick = u64::MAX >> (64 - time_bits);
            (
                Just(time_bits),
                0..=limit - time_bits - seq_bits,
                Just(seq_bits),
                Just(unsigned),
                any::<bool>(),
                1..=(u64::MAX / max_tick).min(100_000),
            )
        })
        .prop_flat_map(
            |(time_bits, node_bits, seq_bits, unsigned, sony, tick_ms)| {
                let span = (u64::MAX >> (64 - time_bits)) * tick_ms;
                let epoch = 0..=(u64::MAX - span).min(1 << 45);
                (
                    epoch,
                    Just((tick_ms, time_bits, node_bits, seq_bits, sony, unsigned)),
                )
            },
        )
        .prop_map(
            |(epoch_ms, (tick_ms, time_bits, node_bits, seq_bits, sony, unsigned))| {
                let order = if sony {
                    Order::TimeSeqNode
                } else {
                    Order::TimeNodeSeq
                };
                Layout::new(
                    epoch_ms, tick_ms, time_bits, node_bits, seq_bits, order, unsigned,
                )
                .expect("a layout within the rules is accepted")
            },
        )
}

/// 0, `max`, or anything in between.
fn upto(max: u64) -> impl Strategy<Value = u64> {
    prop_oneof![Just(0), Just(max), 0..=max]
}

/// Twitter's widths with a 2-bit sequence, so that sequences carry all the time.
fn seq2() -> Layout {
    Layout::new(0, 1, 41, 10, 2, Order::TimeNodeSeq, false).unwrap()
}

fn generator_layout() -> impl Strategy<Value = Layout> {
    prop_oneof![Just(Layout::TWITTER), Just(Layout::SONYFLAKE), Just(seq2())]
}

fn layout_and_fields() -> impl Strategy<Value = (Layout, u64, u64, u64)> {
    prop_oneof![
        3 => any_layout(),
        1 => generator_layout(),
    ]
    .prop_flat_map(|l| {
        (
            Just(l),
            upto(l.max_tick()),
            upto(l.max_node()),
            upto(l.max_seq()),
        )
    })
}

proptest! {
    #[test]
    fn compose_then_decompose_round_trips((layout, tick, node, seq) in layout_and_fields()) {
        let id = layout.compose(tick, node, seq).unwrap();
        let time_ms = layout.epoch_ms() + tick * layout.tick_ms();
        prop_assert_eq!(layout.decompose(id), Ok(Parts { tick, time_ms, node, seq }));
        let total = layout.total_bits();
        prop_assert!(total == 64 || id >> total == 0);
        prop_assert!(layout.is_unsigned() || id <= i64::MAX as u64);
        // The id lies within the bounds of its tick, whatever time inside the tick is asked.
        // (The last tick may end past u64::MAX; only its start is guaranteed to fit.)
        let last_ms = time_ms.saturating_add(layout.tick_ms() - 1);
        for t in [time_ms, last_ms] {
            let (lo, hi) = layout.bounds_at(t).unwrap();
            prop_assert!(lo <= id && id <= hi);
        }
    }

    #[test]
    fn later_ticks_compose_greater_whatever_the_node(
        (layout, t1, t2, a, b) in prop_oneof![3 => any_layout(), 1 => generator_layout()]
            .prop_flat_map(|l| (Just(l), 0..l.max_tick()))
            .prop_flat_map(|(l, t1)| {
                let fields = || (upto(l.max_node()), upto(l.max_seq()));
                (Just(l), Just(t1), t1 + 1..=l.max_tick(), fields(), fields())
            })
    ) {
        let early = layout.compose(t1, a.0, a.1).unwrap();
        let late = layout.compose(t2, b.0, b.1).unwrap();
        prop_assert!(early < late, "{early} !< {late}");
    }

    #[test]
    fn generated_ids_strictly_increase_under_any_clock(
        layout in generator_layout(),
        node_seed in any::<u64>(),
        max_lead_ms in prop_oneof![Just(0u64), 0..50u64, 0..5_000u64],
        start in 0u64..(1 << 40),
        deltas in vec(
            prop_oneof![
                4 => Just(0i64),
                4 => -20i64..=20,
                1 => -100_000i64..=100_000,
            ],
            1..300,
        ),
    ) {
        let nodes = layout.max_node() + 1;
        let node = node_seed % nodes;
        let other = (node + 1 + node_seed / nodes % (nodes - 1)) % nodes;
        prop_assert_ne!(node, other);
        let gens = [
            SnowflakeGen::new(layout, node, max_lead_ms).unwrap(),
            SnowflakeGen::new(layout, other, max_lead_ms).unwrap(),
        ];
        let lead_ticks = max_lead_ms.div_ceil(layout.tick_ms());
        let epoch = layout.epoch_ms();
        let mut now = epoch + start;
        let mut last = [None::<u64>; 2];
        let mut all = BTreeSet::new();
        for (i, delta) in deltas.iter().enumerate() {
            now = now.saturating_add_signed(*delta).max(epoch);
            let k = i % 2;
            let g = &gens[k];
            let mut waited = false;
            let id = loop {
                match g.next(now).unwrap() {
                    Next::Id(id) => break id,
                    Next::Pending { until_ms } => {
                        // One wait is always enough, and it is for a later time.
                        prop_assert!(!waited, "still pending after waiting until {now}");
                        prop_assert!(until_ms > now, "pending until {until_ms} at {now}");
                        now = until_ms;
                        waited = true;
                    }
                }
            };
            if let Some(prev) = last[k] {
                prop_assert!(id > prev, "node {}: {id} after {prev}", g.node());
            }
            last[k] = Some(id);
            prop_assert!(all.insert(id), "duplicate id {id}");
            let parts = layout.decompose(id).unwrap();
            prop_assert_eq!(parts.node, g.node());
            let now_tick = (now - epoch) / layout.tick_ms();
            prop_assert!(
                parts.tick >= now_tick && parts.tick - now_tick <= lead_ticks,
                "tick {} at clock tick {now_tick} with lead {lead_ticks}", parts.tick
            );
        }
    }
}
