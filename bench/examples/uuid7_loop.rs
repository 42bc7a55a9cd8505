//! A second method for the UUIDv7 ratio of `benches/ids.rs`: a plain loop that keeps every id
//! in a vector, as a user's loop does, for ours and the `uuid` crate's `Uuid::now_v7`, several
//! rounds alternating. Prints ns per id and the ratio.
//!
//!     cargo run --release -p idforge-bench --example uuid7_loop

use std::time::Instant;

const N: usize = 2_000_000;
const ROUNDS: usize = 5;

fn main() {
    let ours = idforge::Uuid7s::new().expect("generator");
    let mut kept: Vec<u128> = Vec::with_capacity(N);
    let mut best = [f64::MAX; 2];
    for _ in 0..ROUNDS {
        for (slot, best) in best.iter_mut().enumerate() {
            kept.clear();
            let start = Instant::now();
            if slot == 0 {
                for _ in 0..N {
                    kept.push(ours.next().expect("uuid7").as_u128());
                }
            } else {
                for _ in 0..N {
                    kept.push(uuid::Uuid::now_v7().as_u128());
                }
            }
            let ns = start.elapsed().as_nanos() as f64 / N as f64;
            assert!(kept.windows(2).all(|w| w[0] < w[1]), "ids increase");
            *best = best.min(ns);
        }
    }
    println!(
        "idforge Uuid7s.next   {:6.2} ns/id (best of {ROUNDS} x {N})",
        best[0]
    );
    println!("uuid Uuid::now_v7     {:6.2} ns/id", best[1]);
    println!("speed-up              {:6.2}x", best[1] / best[0]);
}
