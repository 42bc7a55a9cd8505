//! Many tags, a few ids each, from one process (run by `bench/many-tags.sh`): `TAGS`
//! generators on one URL, drawn round-robin at a steady total rate for `SECONDS`, with a small
//! fixed step so refills keep happening. Reports what the process spent and held: CPU time,
//! threads, open sockets, RSS, and the latency of `next()` (p50/p99/p999/max), measured by the
//! loop that keeps every id (and checks none repeats).
//!
//! Uses only what every version of `idforge` has (`Segments::open`, `next`) and reads threads,
//! sockets and CPU from `/proc`, so the same source builds against an older runtime for a
//! before/after run.
//!
//! Usage: `many_tags URL [TAGS=10000] [SECONDS=30] [RATE=10000 ids/s] [STEP=10]`. Prints one
//! Markdown table row: `| tags | ids | CPU s | threads | sockets | RSS MB | p50 | p99 | p999 |
//! max | failed |`.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use idforge::{SegmentOptions, Segments};

/// A field of `/proc/self/status` (`Threads`, `VmRSS` in kB).
fn status(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The process's user + system CPU time, in seconds (`/proc/self/stat`, clock ticks of 1/100 s).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) close with ')'.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the ')'.
    (ticks(11) + ticks(12)) as f64 / 100.0
}

/// Open sockets of the process.
fn sockets() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|dir| {
            dir.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter(|target| target.to_string_lossy().starts_with("socket:"))
                .count()
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[u64], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 * p) as usize).min(sorted.len() - 1);
    Duration::from_nanos(sorted[i])
}

fn arg(args: &[String], i: usize, default: u64) -> u64 {
    args.get(i)
        .map_or(default, |v| v.parse().expect("a number"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let url = args
        .get(1)
        .expect("usage: many_tags URL [TAGS] [SECONDS] [RATE] [STEP]");
    let tags = arg(&args, 2, 10_000) as usize;
    let seconds = arg(&args, 3, 30);
    let rate = arg(&args, 4, 10_000);
    let step = arg(&args, 5, 10);
    // A fixed step, so every refill asks for the same range; a longer wait under load.
    let options = SegmentOptions {
        timeout: Duration::from_secs(10),
        ..idforge_testkit::fixed_step(step)
    };
    let run = std::process::id();
    let all: Vec<Segments> = (0..tags)
        .map(|i| Segments::open(url, &format!("many-{run}-{i}"), options).expect("open"))
        .collect();
    // Every tag's first id, so the run starts with ranges in place.
    let mut seen: HashSet<(usize, u64)> = HashSet::with_capacity(tags * 64);
    let mut failed = 0u64;
    for (i, s) in all.iter().enumerate() {
        match s.next() {
            Ok(id) => assert!(seen.insert((i, id)), "a repeated id"),
            Err(_) => failed += 1,
        }
    }
    let cpu_before = cpu_seconds();
    let started = Instant::now();
    let window = Duration::from_secs(seconds);
    let total = rate * seconds;
    let mut latencies: Vec<u64> = Vec::with_capacity(total as usize);
    let mut drawn = 0u64;
    let (mut threads, mut socks) = (0, 0);
    while drawn < total {
        // Paced: call n is due at n / rate seconds; sleep when ahead.
        let due = Duration::from_secs_f64(drawn as f64 / rate as f64);
        let now = started.elapsed();
        if now < due {
            std::thread::sleep((due - now).min(Duration::from_millis(1)));
            continue;
        }
        let i = (drawn as usize) % tags;
        let t = Instant::now();
        let got = all[i].next();
        latencies.push(t.elapsed().as_nanos() as u64);
        match got {
            Ok(id) => assert!(seen.insert((i, id)), "a repeated id"),
            Err(_) => failed += 1,
        }
        drawn += 1;
        if drawn == total / 2 {
            threads = status("Threads");
            socks = sockets();
        }
        if started.elapsed() > window * 3 {
            break; // far behind the pace: report what was done
        }
    }
    let cpu = cpu_seconds() - cpu_before;
    let rss_mb = status("VmRSS") as f64 / 1024.0;
    latencies.sort_unstable();
    println!(
        "| {tags} | {drawn} in {:.1} s | {cpu:.2} | {threads} | {socks} | {rss_mb:.0} | {:.1?} | \
         {:.1?} | {:.1?} | {:.1?} | {failed} |",
        started.elapsed().as_secs_f64(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        percentile(&latencies, 0.999),
        percentile(&latencies, 1.0),
    );
}
