//! Fast random bits for UUIDv7 and ULID: a ChaCha12 stream per thread (or one a caller owns),
//! seeded from the OS random source, and seeded again in a forked child (which would otherwise
//! continue its parent's stream and repeat its random bits).
//!
//! ChaCha12 is the cryptographically secure generator behind `rand`'s `ThreadRng`; RFC 9562
//! (section 6.9) asks for one so that ids are hard to guess. `ThreadRng` itself no longer
//! reseeds after `fork()`, so the stream is kept here, tagged with the fork generation.

use std::cell::RefCell;

use rand_chacha::ChaCha12Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};

use crate::entropy;
use crate::error::Result;
use crate::fork;

/// A stream of random bits with one owner: ChaCha12, seeded from the OS random source on its
/// first draw and again on the first draw in a forked child.
///
/// The generators draw from one per thread. A caller that already serialises its calls (a
/// binding holding Python's GIL) can keep its own and pass it to
/// [`TimeOrdered::next_with`](crate::TimeOrdered::next_with), which skips the thread-local
/// lookup.
#[derive(Default)]
pub struct Random {
    /// The stream and the fork generation it was seeded in.
    stream: Option<(u64, ChaCha12Rng)>,
}

impl Random {
    /// An empty stream: it is seeded on its first draw.
    pub const fn new() -> Random {
        Random { stream: None }
    }

    /// 64 random bits. Fails only when the OS random source does (when seeding).
    #[inline]
    pub fn next_u64(&mut self) -> Result<u64> {
        let generation = fork::current();
        match &mut self.stream {
            Some((seeded_in, rng)) if *seeded_in == generation => Ok(rng.next_u64()),
            _ => self.reseed(generation),
        }
    }

    #[cold]
    #[inline(never)]
    fn reseed(&mut self, generation: u64) -> Result<u64> {
        let mut seed = [0u8; 32];
        entropy::fill(&mut seed)?;
        let (_, rng) = self
            .stream
            .insert((generation, ChaCha12Rng::from_seed(seed)));
        Ok(rng.next_u64())
    }
}

thread_local! {
    /// This thread's stream.
    static STREAM: RefCell<Random> = const { RefCell::new(Random::new()) };
}

/// 64 random bits from this thread's stream.
#[inline]
pub(crate) fn u64() -> Result<u64> {
    STREAM.with(|cell| cell.borrow_mut().next_u64())
}

#[cfg(test)]
mod tests {
    #[test]
    fn threads_draw_different_streams() {
        let a: Vec<u64> = (0..4).map(|_| super::u64().unwrap()).collect();
        let b: Vec<u64> = std::thread::spawn(|| (0..4).map(|_| super::u64().unwrap()).collect())
            .join()
            .unwrap();
        assert_ne!(a, b);
        assert_ne!(a[0], a[1]);
    }

    #[test]
    fn owned_streams_are_seeded_apart() {
        let mut a = super::Random::new();
        let mut b = super::Random::default();
        let xs: Vec<u64> = (0..4).map(|_| a.next_u64().unwrap()).collect();
        let ys: Vec<u64> = (0..4).map(|_| b.next_u64().unwrap()).collect();
        assert_ne!(xs, ys);
        assert_ne!(xs[0], xs[1]);
    }
}
