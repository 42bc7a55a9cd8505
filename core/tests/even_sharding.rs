//! Snowflakes whose tick sequence starts at a keyed-random value shard evenly by `id % n` at
//! low rates, where the default start (0) puts every id in one shard.

use idforge_core::snowflake::{Layout, SnowflakeGen};
use idforge_core::tick::{Next, SeqStart};

/// The chi-square statistic of `counts` against a uniform spread.
fn chi_square(counts: &[u64]) -> f64 {
    let total: u64 = counts.iter().sum();
    let expected = total as f64 / counts.len() as f64;
    counts
        .iter()
        .map(|&c| (c as f64 - expected).powi(2) / expected)
        .sum()
}

/// The 99th percentile of chi-square with 15 degrees of freedom.
const CHI2_15_P99: f64 = 30.578;

/// `id % 16` over 100,000 ids made at one id per millisecond of a fake clock.
fn shard_counts(generator: &SnowflakeGen, start_ms: u64) -> [u64; 16] {
    let mut counts = [0u64; 16];
    let mut last = 0;
    for i in 0..100_000u64 {
        let Ok(Next::Id(id)) = generator.next(start_ms + i) else {
            panic!("no id at {i}")
        };
        assert!(id > last, "ids strictly increase");
        last = id;
        counts[(id % 16) as usize] += 1;
    }
    counts
}

#[test]
fn keyed_start_spreads_id_mod_16_within_the_99_percent_bound() {
    let start_ms = Layout::TWITTER.epoch_ms() + 1_000_000;
    for key in [1u64, 0x9E37_79B9_7F4A_7C15, 0xDEAD_BEEF] {
        let keyed = SnowflakeGen::new(Layout::TWITTER, 5, 1_000)
            .unwrap()
            .with_start(SeqStart::Keyed(key));
        let counts = shard_counts(&keyed, start_ms);
        let chi = chi_square(&counts);
        assert!(
            chi < CHI2_15_P99,
            "key {key:#x}: chi-square {chi} for {counts:?}"
        );
    }
    let plain = SnowflakeGen::new(Layout::TWITTER, 5, 1_000).unwrap();
    let counts = shard_counts(&plain, start_ms);
    assert_eq!(
        counts[0], 100_000,
        "the default start puts every id in shard 0"
    );
    assert!(chi_square(&counts) > CHI2_15_P99);
}

#[test]
fn keyed_start_keeps_half_the_sequence_per_tick_in_every_preset() {
    for name in [
        "twitter",
        "discord",
        "instagram",
        "sonyflake",
        "baidu",
        "js_safe",
    ] {
        let layout = Layout::preset_named(name).unwrap();
        let g = SnowflakeGen::new(layout, 1, 0)
            .unwrap()
            .with_start(SeqStart::Keyed(77));
        let now = layout.epoch_ms() + 5 * layout.tick_ms();
        let half = 1u64 << (layout.seq_bits() - 1);
        let mut last = 0;
        for n in 0..half {
            match g.next(now) {
                Ok(Next::Id(id)) => {
                    assert!(id > last, "{name}: increasing");
                    last = id;
                }
                other => panic!("{name}: id {n} of the tick's guaranteed {half}: {other:?}"),
            }
        }
    }
}
