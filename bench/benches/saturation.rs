//! Saturated snowflake rate: threads call `next()` in a tight loop for a fixed time, and we count
//! the ids actually returned. A TWITTER layout holds 4,096 ids a millisecond (4.096 M/s); with
//! the default `Borrow` policy a generator may also run up to 1 s ahead of the clock, so a run of
//! `D` seconds can return up to `(D + 1) × 4.096 M` ids, while `Wait` stays under 4.096 M/s.
//!
//! Prints a table; with `IDFORGE_SATURATION_JSON=path` also writes the results there as JSON
//! (read by `bench/bench.sh`). `IDFORGE_SATURATION_SECS` changes the run length (default 2).

#![allow(missing_docs)]

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use idforge::{Layout, Policy, Snowflake};

/// Calls between two looks at the clock to see if the run is over.
const CHECK_EVERY: u64 = 256;

struct Run {
    name: String,
    threads: usize,
    secs: f64,
    ids: u64,
    errors: u64,
    /// Ids a second over the last second of the run (the steady state once any lead is used up).
    tail_rate: f64,
}

impl Run {
    fn rate(&self) -> f64 {
        self.ids as f64 / self.secs
    }
}

/// Runs `threads` threads calling `next` (which returns whether it got an id) for `run`; counts
/// ids, errors, and the ids of the final second.
fn saturate<G: Send + Sync + 'static>(
    name: &str,
    threads: usize,
    run: Duration,
    generator: Arc<G>,
    next: fn(&G) -> bool,
) -> Run {
    let barrier = Arc::new(Barrier::new(threads + 1));
    let tail = run.saturating_sub(Duration::from_secs(1));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let generator = generator.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let start = Instant::now();
                let (mut ids, mut errors) = (0u64, 0u64);
                let mut at_tail: Option<(u64, Duration)> = None;
                loop {
                    for _ in 0..CHECK_EVERY {
                        if next(&generator) {
                            ids += 1;
                        } else {
                            errors += 1;
                        }
                    }
                    let elapsed = start.elapsed();
                    if at_tail.is_none() && elapsed >= tail {
                        at_tail = Some((ids, elapsed));
                    }
                    if elapsed >= run {
                        let (tail_ids, tail_start) = at_tail.unwrap_or((0, Duration::ZERO));
                        let tail_rate =
                            (ids - tail_ids) as f64 / (elapsed - tail_start).as_secs_f64();
                        return (ids, errors, tail_rate, elapsed);
                    }
                }
            })
        })
        .collect();
    barrier.wait();
    let mut total = Run {
        name: name.to_owned(),
        threads,
        secs: 0.0,
        ids: 0,
        errors: 0,
        tail_rate: 0.0,
    };
    for h in handles {
        let (ids, errors, last, elapsed) = h.join().expect("bench thread");
        total.ids += ids;
        total.errors += errors;
        total.tail_rate += last;
        total.secs = total.secs.max(elapsed.as_secs_f64());
    }
    total
}

fn ours(policy: Policy) -> Arc<Snowflake> {
    Arc::new(
        Snowflake::builder(Layout::TWITTER)
            .node(1)
            .policy(policy)
            .build()
            .expect("generator"),
    )
}

fn main() {
    // `cargo bench` passes `--bench` (and any filter); this binary takes no options.
    let secs: f64 = std::env::var("IDFORGE_SATURATION_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    let run = Duration::from_secs_f64(secs);
    let borrow = Policy::default();
    let wait = Policy::Wait {
        budget: Duration::from_secs(1),
    };
    let next = |s: &Snowflake| s.next().is_ok();

    let mut runs = vec![
        saturate("idforge Borrow(1 s)", 1, run, ours(borrow), next),
        saturate("idforge Borrow(1 s)", 2, run, ours(borrow), next),
        saturate("idforge Wait(1 s)", 1, run, ours(wait), next),
        saturate("idforge Wait(1 s)", 2, run, ours(wait), next),
    ];
    {
        use ferroid::generator::AtomicSnowflakeGenerator;
        use ferroid::id::SnowflakeTwitterId;
        use ferroid::time::{MonotonicClock, TWITTER_EPOCH};
        type Ferroid = AtomicSnowflakeGenerator<SnowflakeTwitterId, MonotonicClock<1>>;
        let g: Arc<Ferroid> = Arc::new(AtomicSnowflakeGenerator::new(
            1,
            MonotonicClock::<1>::with_epoch(TWITTER_EPOCH),
        ));
        runs.push(saturate("ferroid Atomic", 1, run, g, |g| {
            std::hint::black_box(g.next_id(|_| std::thread::yield_now()));
            true
        }));
    }
    runs.push(saturate(
        "snowflaked sync",
        1,
        run,
        Arc::new(snowflaked::sync::Generator::new(1)),
        |g| {
            std::hint::black_box(g.generate::<u64>());
            true
        },
    ));

    println!(
        "{:<22} {:>7} {:>8} {:>12} {:>12} {:>14} {:>7}",
        "generator", "threads", "secs", "ids", "mean M/s", "last 1 s M/s", "errors"
    );
    let mut json = String::from("[\n");
    for (i, r) in runs.iter().enumerate() {
        println!(
            "{:<22} {:>7} {:>8.3} {:>12} {:>12.3} {:>14.3} {:>7}",
            r.name,
            r.threads,
            r.secs,
            r.ids,
            r.rate() / 1e6,
            r.tail_rate / 1e6,
            r.errors
        );
        let _ = writeln!(
            json,
            "  {{\"name\": \"{}\", \"threads\": {}, \"secs\": {:.6}, \"ids\": {}, \
             \"errors\": {}, \"ids_per_sec\": {:.1}, \"last_second_ids_per_sec\": {:.1}}}{}",
            r.name,
            r.threads,
            r.secs,
            r.ids,
            r.errors,
            r.rate(),
            r.tail_rate,
            if i + 1 < runs.len() { "," } else { "" }
        );
    }
    json.push(']');
    if let Ok(path) = std::env::var("IDFORGE_SATURATION_JSON") {
        std::fs::write(&path, json).unwrap_or_else(|e| panic!("writing {path}: {e}"));
        println!("wrote {path}");
    }
}
