//! Stripes (`--stripe K/N`): N independent servers, each on its own store, hand out disjoint ids
//! for every tag without talking to each other (Flickr's ticket servers, tinyid's
//! `delta`/`remainder`).
//!
//! The id space is cut into blocks of `block` ids (`1..=block` is block 0); block `b` belongs to
//! stripe `b mod N`. A server keeps its tags in its own *local* space (`1, 2, 3, …` without
//! holes), which its store and persister use unchanged; local block `q` is global block
//! `q·N + K`, so a local range within one block is a contiguous global range. `INCRBY n` takes
//! its `n` ids from one block (skipping the rest of a block that cannot hold them), so a
//! client's range is still contiguous. Ids go up on each server and interleave, block by block,
//! across servers.
//!
//! Without `--stripe` the stripe is `0/1`: local and global are the same.

use crate::serve::setting_error::SettingError;
use std::fmt;

use idforge_store::Store;

/// The default `--stripe-block`: ten million ids, so ids of stripe K start at `K·10^7 + 1`.
pub const DEFAULT_BLOCK: i64 = 10_000_000;
/// The largest `--stripe-block`.
pub const MAX_BLOCK: i64 = 1 << 40;
/// The most stripes.
pub const MAX_STRIPES: i64 = 1024;

/// This server's stripe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stripe {
    /// This server's stripe, `0..count`.
    pub index: i64,
    /// How many stripes there are.
    pub count: i64,
    /// Ids per block.
    pub block: i64,
}

impl Default for Stripe {
    fn default() -> Stripe {
        Stripe::NONE
    }
}

impl fmt::Display for Stripe {
    /// `K/N/block`, as the store keeps it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.index, self.count, self.block)
    }
}

impl Stripe {
    /// No stripes: every id is this server's.
    pub const NONE: Stripe = Stripe {
        index: 0,
        count: 1,
        block: DEFAULT_BLOCK,
    };

    /// `K/N` with `block` ids per block, checked.
    pub fn parse(text: &str, block: i64) -> Result<Stripe, SettingError> {
        let bad = || SettingError::Invalid {
            name: "stripe",
            reason: format!("{text:?} is not K/N (0 <= K < N <= {MAX_STRIPES})"),
        };
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            k.trim().parse::<i64>().map_err(|_| bad())?,
            n.trim().parse::<i64>().map_err(|_| bad())?,
        );
        if !(1..=MAX_STRIPES).contains(&count) || !(0..count).contains(&index) {
            return Err(bad());
        }
        if !(1..=MAX_BLOCK).contains(&block) {
            return Err(SettingError::OutOfRange {
                name: "stripe-block".into(),
                value: block.to_string(),
                min: "1".into(),
                max: MAX_BLOCK.to_string(),
            });
        }
        Ok(Stripe {
            index,
            count,
            block,
        })
    }

    /// Whether there is more than one stripe.
    pub fn is_striped(&self) -> bool {
        self.count > 1
    }

    /// The global id of local id `local`; `None` past `i64::MAX`, and below 1 (a store may
    /// hold any value: a hand edit, a Leaf row at 0), where the stripes' blocks are not defined.
    pub fn global(&self, local: i64) -> Option<i64> {
        if !self.is_striped() {
            return Some(local);
        }
        if local < 1 {
            return None;
        }
        let p = local - 1;
        let (q, offset) = (p / self.block, p % self.block);
        q.checked_mul(self.count)?
            .checked_add(self.index)?
            .checked_mul(self.block)?
            .checked_add(offset)?
            .checked_add(1)
    }

    /// The smallest local id whose global id is `global` or more (`global` >= 1).
    pub fn local_at_or_above(&self, global: i64) -> i64 {
        if !self.is_striped() {
            return global;
        }
        let p = global - 1;
        let (b, offset) = (p / self.block, p % self.block);
        let (round, stripe) = (b / self.count, b % self.count);
        let q = match stripe.cmp(&self.index) {
            std::cmp::Ordering::Equal => return round * self.block + offset + 1,
            // The block of this stripe later in the same round.
            std::cmp::Ordering::Less => round,
            std::cmp::Ordering::Greater => round + 1,
        };
        q.saturating_mul(self.block).saturating_add(1)
    }

    /// How many local ids from `next` on `n` ids take: `n`, plus the rest of `next`'s block
    /// when the block cannot hold them. `None` when `n` is larger than a block.
    pub fn span(&self, next: i64, n: i64) -> Option<i64> {
        if !self.is_striped() {
            return Some(n);
        }
        if n > self.block {
            return None;
        }
        let left = self.block - (next - 1).rem_euclid(self.block);
        Some(if n <= left { n } else { left + n })
    }

    /// Worker ids (`IDF.WORKER`) are striped one by one: local worker `i` is `i·N + K`.
    pub fn worker_global(&self, local: i64) -> i64 {
        local.saturating_mul(self.count).saturating_add(self.index)
    }

    /// The local number of worker id `global`, `None` when it is another stripe's.
    pub fn worker_local(&self, global: i64) -> Option<i64> {
        (global >= 0 && global % self.count == self.index).then(|| global / self.count)
    }

    /// How many of the worker ids `0..max` are this stripe's.
    pub fn local_workers(&self, max: i64) -> i64 {
        if max <= self.index {
            return 0;
        }
        (max - self.index - 1) / self.count + 1
    }

    /// The last id handed out (or skipped) before local id `next`, as `GET` shows it: every
    /// later id is larger. Before the first, the id below the stripe's first.
    pub fn last_before(&self, next: i64) -> i64 {
        if next <= 1 {
            return self.global(1).map_or(i64::MAX, |g| g - 1);
        }
        self.global(next - 1).unwrap_or(i64::MAX)
    }
}

/// Checks that `store` holds the positions of `stripe`, claiming an unclaimed store for it
/// (a server without stripes claims `0/1`): an error that says what to do when it holds
/// another's. With `takeover`, a striped server takes a store used without stripes: safe once no
/// server without stripes uses it, since a stripe's global id is never below its local one, so
/// every id already handed out stays below the stripe's.
pub async fn check_store(store: &Store, stripe: Stripe, takeover: bool) -> Result<(), StripeError> {
    let ours = stripe.to_string();
    let held = store.claim_stripe(&ours).await?;
    if held == ours {
        return Ok(());
    }
    let held_unstriped = held.starts_with("0/1/");
    let (k, n, block) = (stripe.index, stripe.count, stripe.block);
    match (stripe.is_striped(), held_unstriped) {
        (true, true) if takeover => {
            if store.replace_stripe(&held, &ours).await? {
                tracing::warn!(stripe = %ours, "took over a store used without stripes");
                return Ok(());
            }
            Err(StripeError::Changed)
        }
        (true, true) => Err(StripeError::Unstriped { k, n }),
        (true, false) => Err(StripeError::Other { held, k, n, block }),
        (false, _) => Err(StripeError::NotStriped { held }),
    }
}

/// Why a server may not use its store with its stripe settings: each says what to do.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StripeError {
    /// The store's stripe could not be read or written.
    #[error("cannot read the store's stripe: {0}")]
    Store(#[from] idforge_store::StoreError),
    /// Another server changed the store's stripe during a takeover.
    #[error("the store's stripe changed while this server took it over: start it again")]
    Changed,
    /// A striped server on a store used without stripes, without `--stripe-takeover`.
    #[error(
        "the store was used without stripes; once no server without --stripe uses it any \
         more, start this server with --stripe-takeover to make it stripe {k}/{n}'s"
    )]
    Unstriped {
        /// This server's stripe.
        k: i64,
        /// Of this many.
        n: i64,
    },
    /// The store holds another stripe.
    #[error(
        "the store holds stripe {held} (K/N/block), and this server was started with \
         --stripe {k}/{n} --stripe-block {block}: each stripe needs a store of its own; \
         start it with the store's settings or give it another store"
    )]
    Other {
        /// The store's stripe (K/N/block).
        held: String,
        /// This server's stripe.
        k: i64,
        /// Of this many.
        n: i64,
        /// Its block.
        block: i64,
    },
    /// A server without stripes on a striped store.
    #[error(
        "the store holds stripe {held} (K/N/block) and this server was started without \
         --stripe: its ids would repeat the other stripes'; start it with that stripe"
    )]
    NotStriped {
        /// The store's stripe (K/N/block).
        held: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stripes(count: i64, block: i64) -> Vec<Stripe> {
        (0..count)
            .map(|k| Stripe::parse(&format!("{k}/{count}"), block).unwrap())
            .collect()
    }

    #[test]
    fn parses_and_refuses() {
        let s = Stripe::parse("1/3", 10).unwrap();
        assert_eq!(
            (s.index, s.count, s.block, s.to_string()),
            (1, 3, 10, "1/3/10".into())
        );
        for bad in ["3/3", "-1/2", "1", "1/0", "a/2", "0/1025", ""] {
            assert!(Stripe::parse(bad, 10).is_err(), "{bad}");
        }
        assert!(Stripe::parse("0/2", 0).is_err());
        assert!(Stripe::parse("0/2", MAX_BLOCK + 1).is_err());
        assert!(!Stripe::parse("0/1", 5).unwrap().is_striped());
    }

    #[test]
    fn unstriped_is_the_identity() {
        let s = Stripe::NONE;
        for v in [1, 2, 999, i64::MAX] {
            assert_eq!(s.global(v), Some(v));
            assert_eq!(s.local_at_or_above(v), v);
            assert_eq!(s.span(v, 1_000_000_000), Some(1_000_000_000));
        }
    }

    #[test]
    fn stripes_are_disjoint_and_cover_every_id() {
        for (count, block) in [(2, 1), (2, 10), (3, 7), (5, 3)] {
            let mut owner = std::collections::HashMap::new();
            for s in stripes(count, block) {
                let mut last = 0;
                for local in 1..=200 {
                    let g = s.global(local).unwrap();
                    assert!(g > last, "increasing on one server");
                    last = g;
                    assert_eq!(owner.insert(g, s.index), None, "{g} twice");
                    // The inverse: the local id of a global id of this stripe is itself.
                    assert_eq!(s.local_at_or_above(g), local);
                }
            }
            // Every global id up to what all stripes reached belongs to exactly one.
            let covered = 200 / block * block * count;
            assert!((1..=covered).all(|g| owner.contains_key(&g)));
        }
    }

    #[test]
    fn a_global_id_maps_to_the_first_local_id_at_or_above_it() {
        for s in stripes(3, 7) {
            for g in 1..300 {
                let local = s.local_at_or_above(g);
                assert!(s.global(local).unwrap() >= g);
                assert!(local == 1 || s.global(local - 1).unwrap() < g, "{s} {g}");
            }
        }
    }

    #[test]
    fn a_span_stays_within_one_block() {
        let s = Stripe::parse("1/2", 10).unwrap();
        assert_eq!(s.span(1, 10), Some(10));
        assert_eq!(s.span(5, 6), Some(6));
        assert_eq!(s.span(5, 7), Some(6 + 7), "skips the 6 left in the block");
        assert_eq!(s.span(11, 3), Some(3));
        assert_eq!(s.span(1, 11), None);
        // Every span's ids are contiguous globally.
        for next in 1..40 {
            for n in 1..=10 {
                let span = s.span(next, n).unwrap();
                let first = next + span - n;
                let (a, b) = (s.global(first).unwrap(), s.global(first + n - 1).unwrap());
                assert_eq!(b - a, n - 1, "next {next} n {n}");
            }
        }
    }

    #[test]
    fn worker_ids_are_striped_one_by_one() {
        for count in [1, 2, 3] {
            let mut seen = std::collections::HashSet::new();
            for s in stripes(count, 10) {
                let max = 10;
                let n = s.local_workers(max);
                for local in 0..n {
                    let w = s.worker_global(local);
                    assert!(w < max && seen.insert(w), "{w}");
                    assert_eq!(s.worker_local(w), Some(local));
                }
                assert!(
                    s.worker_global(n) >= max,
                    "all of this stripe's ids below max"
                );
                assert_eq!(s.worker_local(s.index + 1).is_some(), count == 1);
            }
            assert_eq!(seen.len(), 10, "every id below max is some stripe's");
        }
        assert_eq!(Stripe::parse("2/3", 10).unwrap().local_workers(2), 0);
    }

    #[test]
    fn the_top_of_the_space_is_refused_not_wrapped() {
        let s = Stripe::parse("1/2", 1 << 40).unwrap();
        // Stripe 1 of 2 owns the last block: its last local id is the last id.
        assert_eq!(s.global(i64::MAX / 2), Some(i64::MAX));
        let past = i64::MAX / 2 + 1;
        assert_eq!(s.global(past), None);
        assert_eq!(s.last_before(past), i64::MAX);
        assert_eq!(s.last_before(past + 5), i64::MAX);
        // Before the first id: the one below the stripe's first.
        assert_eq!(s.last_before(1), 1 << 40);
        assert_eq!(Stripe::NONE.last_before(1), 0);
        assert_eq!(Stripe::NONE.last_before(10), 9);
        // Below the first id, nothing of any stripe.
        assert_eq!(s.global(0), None);
        assert_eq!(s.global(-7), None);
    }
}
