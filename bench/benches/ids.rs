//! Single-thread cost of one id: idforge's generators, their peers, and the physical floors (a
//! clock read, an atomic add), in one run. `bench/bench.sh` turns the results into ratios.
//!
//! Snowflake generators (ours, ferroid, snowflaked) and ObjectIds are measured below their
//! sequence limit: a tight loop makes ids far faster than a 12-bit sequence per millisecond
//! allows (4.096 M/s), and past that limit a generator waits for the clock, so a reused
//! generator would measure the clock's pace, not the call. [`chunked`] therefore takes each
//! 4,000 ids (under one tick's 4,096) from a fresh generator, built outside the timed loop. The
//! sequence-bound rate is what `benches/saturation.rs` measures.

#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use idforge::{
    Clock, Flake128s, Layout, MemorySource, ObjectIds, Policy, Segment, SegmentOptions, Segments,
    Snowflake, SystemClock, Ulids, Uuid7s, WorkerId,
};
use idforge_core::objectid::ObjectIdGen;
use idforge_core::segment::{SegmentBuffer, Take};
use idforge_core::snowflake::SnowflakeGen;

/// Ids taken from one snowflake generator before a fresh one is built (one tick holds 4,096).
const SNOWFLAKE_CHUNK: u64 = 4_000;
/// Ids taken from one ObjectId generator (one second holds 2^24, plus a second of lead).
const OBJECTID_CHUNK: u64 = 1_000_000;
/// Batch size of the `next_many` bench.
const MANY: usize = 1024;

/// Times `iters` calls of `call`, on a fresh state from `make` every `chunk` calls; building and
/// dropping the states is not timed.
fn chunked<S>(
    iters: u64,
    chunk: u64,
    mut make: impl FnMut() -> S,
    mut call: impl FnMut(&S),
) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(chunk);
        let state = make();
        let start = Instant::now();
        for _ in 0..n {
            call(black_box(&state));
        }
        total += start.elapsed();
        drop(state);
        left -= n;
    }
    total
}

/// Takes the id out of a call's `Result` the way a caller does (`?`: the error moves to a cold
/// path), so that, as for the peers, the bench keeps the id itself.
#[inline(always)]
fn id<T>(r: idforge::Result<T>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => fail(e),
    }
}

#[cold]
#[inline(never)]
fn fail(e: idforge::Error) -> ! {
    panic!("generator failed: {e}")
}

/// Keeps a result without reading it back. `black_box(&v)` makes the compiler store `v`;
/// `black_box(v)` also reloads it, and a reload wider than the stores that wrote it (16 bytes of
/// a `Timespec` written as two 8-byte words) misses store-to-load forwarding and adds a few ns
/// that belong to the bench, not to the call.
#[inline(always)]
fn keep<T>(v: T) {
    black_box(&v);
}

fn coarse_monotonic() -> rustix::time::Timespec {
    rustix::time::clock_gettime(rustix::time::ClockId::MonotonicCoarse)
}

/// Segments over an in-process source with a big, growing step: refills are rare, so this
/// measures the buffered path (one atomic add), with the refill worker running beside it.
fn segments() -> Segments {
    let segments = Segments::new(
        Arc::new(MemorySource::new()),
        "bench",
        SegmentOptions {
            step: 1_000_000,
            max_step: 64_000_000,
            dynamic_step: true,
            ..SegmentOptions::default()
        },
    )
    .expect("generator");
    segments.next().expect("first range");
    segments
}

fn floors(c: &mut Criterion) {
    let mut g = c.benchmark_group("clock");
    g.bench_function("Instant::now", |b| b.iter(|| keep(Instant::now())));
    g.bench_function("SystemTime::now", |b| b.iter(|| keep(SystemTime::now())));
    g.bench_function("CLOCK_MONOTONIC_COARSE", |b| {
        b.iter(|| {
            // The fields one by one, as a caller reads them (see `keep`).
            let t = coarse_monotonic();
            keep(t.tv_sec);
            keep(t.tv_nsec);
        })
    });
    g.finish();

    let mut g = c.benchmark_group("atomic");
    let counter = AtomicU64::new(0);
    g.bench_function("fetch_add (Relaxed)", |b| {
        b.iter(|| keep(black_box(&counter).fetch_add(1, Ordering::Relaxed)))
    });
    // The floor of any generator shared between threads that reads the clock for each id: a
    // clock read then an atomic add. On this VM the add after the clock's ordered TSC read
    // costs ~8 ns, four times a lone add (the order does not matter: measured both ways).
    let clock = SystemClock::shared();
    g.bench_function("SystemClock.now_ms then fetch_add", |b| {
        b.iter(|| {
            let now = black_box(&clock).now_ms();
            keep(black_box(&counter).fetch_add(1, Ordering::Relaxed).max(now))
        })
    });
    // The same with the coarse clock, the one `snowflake.next` reads under its default policy.
    g.bench_function("SystemClock.recent_ms then fetch_add", |b| {
        b.iter(|| {
            let now = black_box(&clock).recent_ms();
            keep(black_box(&counter).fetch_add(1, Ordering::Relaxed).max(now))
        })
    });
    g.finish();
}

fn ours(c: &mut Criterion) {
    let mut g = c.benchmark_group("idforge");
    g.bench_function("snowflake.next", |b| {
        b.iter_custom(|iters| {
            chunked(
                iters,
                SNOWFLAKE_CHUNK,
                || Snowflake::new(Layout::TWITTER, 1).expect("generator"),
                |s| {
                    keep(id(s.next()));
                },
            )
        })
    });

    // Wait never runs ahead of the clock, so it reads the precise clock for each id.
    let wait = Policy::Wait {
        budget: Duration::from_secs(1),
    };
    g.bench_function("snowflake.next (Wait: precise clock)", |b| {
        b.iter_custom(|iters| {
            chunked(
                iters,
                SNOWFLAKE_CHUNK,
                || {
                    Snowflake::builder(Layout::TWITTER)
                        .node(1)
                        .policy(wait)
                        .build()
                        .expect("generator")
                },
                |s| {
                    keep(id(s.next()));
                },
            )
        })
    });

    g.throughput(Throughput::Elements(MANY as u64));
    g.bench_function("snowflake.next_many(1024) per id", |b| {
        let mut out = vec![0u64; MANY];
        b.iter_custom(|iters| {
            // Four batches of 1,024 fill one tick's 4,096 sequences.
            chunked(
                iters,
                4,
                || Snowflake::new(Layout::TWITTER, 1).expect("generator"),
                |s| {
                    id(s.next_many(&mut out));
                    black_box(&out);
                },
            )
        })
    });
    g.throughput(Throughput::Elements(1));

    g.bench_function("objectid", |b| {
        b.iter_custom(|iters| {
            chunked(
                iters,
                OBJECTID_CHUNK,
                || ObjectIds::new().expect("generator"),
                |g| {
                    keep(id(g.next()));
                },
            )
        })
    });

    let flakes = Flake128s::new(WorkerId::Random).expect("generator");
    g.bench_function("flake128", |b| b.iter(|| keep(id(flakes.next()))));

    // One shared generator, as a service uses it: a counter of 2^17 or more per millisecond is
    // far above a tight loop's rate, so no chunking is needed.
    let uuid7s = Uuid7s::new().expect("generator");
    g.bench_function("uuid7", |b| b.iter(|| keep(id(uuid7s.next()))));
    let ulids = Ulids::new().expect("generator");
    g.bench_function("ulid", |b| b.iter(|| keep(id(ulids.next()))));

    let segments = segments();
    g.bench_function("segments.next", |b| b.iter(|| keep(id(segments.next()))));
    g.finish();
    let stats = segments.stats();
    eprintln!(
        "segments: {} ranges fetched, {} waits on an empty buffer, step now {}",
        stats.ranges_fetched, stats.waits, stats.step
    );
}

/// The pieces of our hot paths, measured apart, to tell where the time goes.
fn pieces(c: &mut Criterion) {
    let mut g = c.benchmark_group("pieces");
    let clock = SystemClock::shared();
    g.bench_function("SystemClock.now_ms", |b| {
        b.iter(|| keep(black_box(&clock).now_ms()))
    });
    g.bench_function("CLOCK_MONOTONIC as ms (integer math)", |b| {
        b.iter(|| {
            let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
            keep(t.tv_sec as u64 * 1000 + t.tv_nsec as u64 / 1_000_000)
        })
    });
    g.bench_function("SystemClock.now_secs", |b| {
        b.iter(|| keep(black_box(&clock).now_secs()))
    });
    let now_ms = clock.now_ms();
    g.bench_function("core SnowflakeGen.next (fixed time)", |b| {
        b.iter_custom(|iters| {
            chunked(
                iters,
                SNOWFLAKE_CHUNK,
                || SnowflakeGen::new(Layout::TWITTER, 1, 1000).expect("generator"),
                |g| {
                    keep(g.next(black_box(now_ms)));
                },
            )
        })
    });
    g.bench_function("core SnowflakeGen.next(SystemClock.now_ms())", |b| {
        b.iter_custom(|iters| {
            chunked(
                iters,
                SNOWFLAKE_CHUNK,
                || SnowflakeGen::new(Layout::TWITTER, 1, 1000).expect("generator"),
                |g| {
                    keep(g.next(clock.now_ms()));
                },
            )
        })
    });
    let now_secs = (now_ms / 1000) as u32;
    g.bench_function("core ObjectIdGen.next (fixed time)", |b| {
        b.iter_custom(|iters| {
            chunked(
                iters,
                OBJECTID_CHUNK,
                || ObjectIdGen::new([1, 2, 3, 4, 5], 7, 1),
                |g| {
                    keep(g.next(black_box(now_secs)));
                },
            )
        })
    });
    let buffer = SegmentBuffer::new(10).expect("buffer");
    buffer
        .install(Segment::new(1, Segment::MAX_LEN).expect("segment"))
        .expect("install");
    g.bench_function("core SegmentBuffer.take", |b| {
        b.iter(|| match black_box(&buffer).take() {
            Take::Id { id, .. } => keep(id),
            Take::Empty => panic!("a 2^38-id segment ran out"),
        })
    });
    g.finish();
}

fn peers(c: &mut Criterion) {
    let mut g = c.benchmark_group("peers");

    // ferroid's lock-free generator (one AtomicU64 CAS per id); its clock is a thread that
    // stores the time once a millisecond, so a call reads an atomic instead of a clock.
    g.bench_function("ferroid AtomicSnowflakeGenerator", |b| {
        use ferroid::generator::AtomicSnowflakeGenerator;
        use ferroid::id::SnowflakeTwitterId;
        use ferroid::time::{MonotonicClock, TWITTER_EPOCH};
        b.iter_custom(|iters| {
            chunked(
                iters,
                SNOWFLAKE_CHUNK,
                || {
                    AtomicSnowflakeGenerator::<SnowflakeTwitterId, _>::new(
                        1,
                        MonotonicClock::<1>::with_epoch(TWITTER_EPOCH),
                    )
                },
                |g| {
                    keep(g.next_id(|_| std::thread::yield_now()));
                },
            )
        })
    });

    g.bench_function("snowflaked sync::Generator", |b| {
        b.iter_custom(|iters| {
            chunked(
                iters,
                SNOWFLAKE_CHUNK,
                || snowflaked::sync::Generator::new(1),
                |g| {
                    keep(g.generate::<u64>());
                },
            )
        })
    });

    g.bench_function("uuid now_v7", |b| b.iter(|| keep(uuid::Uuid::now_v7())));

    g.bench_function("bson ObjectId::new", |b| {
        b.iter(|| keep(bson::oid::ObjectId::new()))
    });

    let mut ulids = ulid::Generator::new();
    g.bench_function("ulid Generator.generate", |b| {
        b.iter(|| keep(ulids.generate().ok()))
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! {
    name = benches;
    config = config();
    targets = floors, ours, peers, pieces
}
criterion_main!(benches);
