//! Segment sources, measured from one client thread (run by `bench/sources.sh`):
//!
//! 1. ids/s through `Segments::next` for fixed steps 1, 100, 1000 and 10000 against each URL
//!    given (our server, Redis, …): how much of the allocator's round trip the double buffer
//!    hides;
//! 2. a stalled allocator: every reply of the first URL held 50 ms by a loopback proxy while
//!    the client draws a steady 100,000 ids/s; once the dynamic step has adapted (after 1 s),
//!    the latency of `next()` (p50/p99/p999/max) and the number of calls that waited.
//!
//! Prints Markdown. Usage: `sources LABEL=URL [LABEL=URL…]`.

use std::time::{Duration, Instant};

use idforge::{SegmentOptions, Segments};

use idforge_testkit::delay_proxy::DelayProxy;

const STEPS: [u64; 4] = [1, 100, 1000, 10_000];

fn tag(name: &str) -> String {
    format!(
        "bench-{name}-{}-{}",
        std::process::id(),
        Instant::now().elapsed().as_nanos()
    )
}

/// ids/s drawn by one thread in `window` with a fixed step.
fn rate(url: &str, step: u64, window: Duration) -> f64 {
    // A fixed step, so every refill asks for the same range; a longer wait under load.
    let options = SegmentOptions {
        timeout: Duration::from_secs(10),
        ..idforge_testkit::fixed_step(step)
    };
    let segments = Segments::open(url, &tag(&step.to_string()), options).expect("open");
    segments.ready().expect("first range");
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < window {
        for _ in 0..64 {
            std::hint::black_box(segments.next().expect("an id"));
        }
        n += 64;
    }
    n as f64 / start.elapsed().as_secs_f64()
}

fn stalled(url: &str) {
    // host:port of the URL (after any user:pass@), scheme and options kept.
    let (scheme, rest) = url.split_once("://").expect("a network URL");
    let (auth, hostport) = rest.rsplit_once('@').map_or(("", rest), |(a, h)| (a, h));
    let hostport = hostport.split(['/', '?']).next().unwrap();
    let proxy = DelayProxy::start(hostport, Duration::from_millis(50));
    let at = if auth.is_empty() {
        String::new()
    } else {
        format!("{auth}@")
    };
    let slow = format!("{scheme}://{at}127.0.0.1:{}", proxy.port);
    let options = SegmentOptions {
        step: 100,
        timeout: Duration::from_secs(10),
        ..Default::default()
    };
    let segments = Segments::open(&slow, &tag("stall"), options).expect("open");
    segments.ready().expect("first range");
    let period = Duration::from_micros(10);
    let total = 300_000u32;
    let warmup = 100_000u32;
    let mut lat = Vec::with_capacity((total - warmup) as usize);
    let mut waits_at_warmup = 0;
    let start = Instant::now();
    for i in 0..total {
        while start.elapsed() < period * i {
            std::hint::spin_loop();
        }
        if i == warmup {
            waits_at_warmup = segments.stats().waits;
        }
        let t = Instant::now();
        std::hint::black_box(segments.next().expect("an id"));
        if i >= warmup {
            lat.push(t.elapsed().as_nanos() as u64);
        }
    }
    lat.sort_unstable();
    let q = |p: f64| lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)];
    let stats = segments.stats();
    println!(
        "\nStalled allocator ({scheme}://, every reply +50 ms), 100,000 ids/s for 3 s, \
         latency of `next()` after the first second ({} calls):\n",
        lat.len()
    );
    println!("| p50 | p99 | p999 | max | calls that waited (after warm-up) | step reached |");
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    println!(
        "| {} ns | {} ns | {} ns | {:.1} µs | {} | {} |",
        q(0.50),
        q(0.99),
        q(0.999),
        *lat.last().unwrap() as f64 / 1000.0,
        stats.waits - waits_at_warmup,
        stats.step
    );
}

fn main() {
    let targets: Vec<(String, String)> = std::env::args()
        .skip(1)
        .map(|a| {
            let (label, url) = a.split_once('=').expect("LABEL=URL");
            (label.to_owned(), url.to_owned())
        })
        .collect();
    assert!(!targets.is_empty(), "usage: sources LABEL=URL [LABEL=URL…]");
    let window = Duration::from_millis(
        std::env::var("BENCH_WINDOW_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000),
    );
    print!("| step |");
    for (label, _) in &targets {
        print!(" {label} (ids/s) |");
    }
    println!();
    println!("| ---: |{}", " ---: |".repeat(targets.len()));
    for step in STEPS {
        print!("| {step} |");
        for (_, url) in &targets {
            print!(" {:.0} |", rate(url, step, window));
        }
        println!();
    }
    stalled(&targets[0].1);
}
