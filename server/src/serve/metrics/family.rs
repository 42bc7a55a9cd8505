//! A family of counters labelled by name, made by the room that counts (the commands count
//! requests by command): `/metrics` renders it without knowing what the names stand for.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// One counter per name.
#[derive(Debug)]
pub struct Family {
    names: Box<[&'static str]>,
    counts: Box<[AtomicU64]>,
}

impl Family {
    /// A counter for each of `names`, at 0; counter `i` is `names[i]`'s.
    pub fn new(names: Box<[&'static str]>) -> Family {
        let counts = names.iter().map(|_| AtomicU64::new(0)).collect();
        Family { names, counts }
    }

    /// Counts one for the `i`th name (an index past the names counts nothing).
    pub fn add(&self, i: usize) {
        if let Some(count) = self.counts.get(i) {
            count.fetch_add(1, Relaxed);
        }
    }

    /// The sum over every name.
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Relaxed)).sum()
    }

    /// `(name, count)` for every name, in order.
    pub fn each(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        (self.names.iter().copied()).zip(self.counts.iter().map(|c| c.load(Relaxed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_has_its_counter() {
        let family = Family::new(["incr", "get", "other"].into());
        family.add(0);
        family.add(0);
        family.add(2);
        family.add(3);
        let all: Vec<_> = family.each().collect();
        assert_eq!(all, [("incr", 2), ("get", 0), ("other", 1)]);
        assert_eq!(family.total(), 3);
    }
}
