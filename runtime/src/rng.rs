//! Fast random bits for UUIDv7 and ULID: a ChaCha12 stream per thread, seeded from the OS
//! random source, and seeded again in a forked child (which would otherwise continue its
//! parent's stream and repeat its random bits).
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

thread_local! {
    /// This thread's stream and the fork generation it was seeded in.
    static STREAM: RefCell<Option<(u64, ChaCha12Rng)>> = const { RefCell::new(None) };
}

/// 64 random bits.
#[inline]
pub(crate) fn u64() -> Result<u64> {
    let generation = fork::current();
    STREAM.with(|cell| {
        let mut slot = cell.borrow_mut();
        match slot.as_mut() {
            Some((seeded_in, rng)) if *seeded_in == generation => Ok(rng.next_u64()),
            _ => {
                let rng = seeded()?;
                let (_, rng) = slot.insert((generation, rng));
                Ok(rng.next_u64())
            }
        }
    })
}

#[cold]
fn seeded() -> Result<ChaCha12Rng> {
    let mut seed = [0u8; 32];
    entropy::fill(&mut seed)?;
    Ok(ChaCha12Rng::from_seed(seed))
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
}
