//! Ids handed out per second over the last minute, for the status page: once a second the
//! sampler reads the server's id counter and each loaded tag's position (no work on the hot
//! path). At most [`MAX_TAGS`] tags are followed, the first by name (those the status page
//! lists), read without copying the others; a tag that leaves memory leaves the history.
//!
//! A tag loaded since the last sample (its first `INCR`, `INCRBY` or HTTP request loads it)
//! counts from its position at the load, so the ids of the request that loaded it count too:
//! the tags' figures add up to the server's, whatever path handed the ids out.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::Http;
use crate::serve::allocator::tags::TagView;
use crate::serve::lock::lock;
use crate::serve::shared::Shared;

/// Seconds of history.
pub(crate) const WINDOW: usize = 60;
/// The most tags followed.
pub(crate) const MAX_TAGS: usize = 1000;

/// The samples: one a second, oldest first, at most `WINDOW + 1`.
#[derive(Debug, Default)]
pub(crate) struct Rates {
    history: Mutex<History>,
}

#[derive(Debug, Default)]
struct History {
    total: VecDeque<i64>,
    tags: HashMap<String, VecDeque<i64>>,
    /// When the last sample was taken.
    sampled: Option<Instant>,
}

fn push(samples: &mut VecDeque<i64>, value: i64) {
    if samples.len() > WINDOW {
        samples.pop_front();
    }
    samples.push_back(value);
}

impl Rates {
    /// Records one second's sample: the server's ids so far, and the loaded tags' positions.
    pub(crate) fn record(&self, total: u64, tags: &[TagView]) {
        self.record_at(Instant::now(), total, tags);
    }

    /// [`Rates::record`] taken at `now`.
    fn record_at(&self, now: Instant, total: u64, tags: &[TagView]) {
        let mut h = lock(&self.history);
        push(&mut h.total, i64::try_from(total).unwrap_or(i64::MAX));
        let since = h.sampled.replace(now);
        let loaded: std::collections::HashSet<&str> = tags.iter().map(|t| t.tag.as_str()).collect();
        h.tags.retain(|name, _| loaded.contains(name.as_str()));
        for t in tags {
            if !h.tags.contains_key(&t.tag) && h.tags.len() >= MAX_TAGS {
                continue;
            }
            let samples = h.tags.entry(t.tag.clone()).or_default();
            if samples.is_empty() && since.is_some_and(|at| t.loaded.1 >= at) {
                // Loaded since the last sample: where it stood then.
                push(samples, t.loaded.0);
            }
            push(samples, t.next);
        }
    }

    /// Ids per second, oldest first (up to [`WINDOW`] values): the server's (`None`) or a tag's.
    pub(crate) fn per_second(&self, tag: Option<&str>) -> Vec<u64> {
        let h = lock(&self.history);
        let samples = match tag {
            None => Some(&h.total),
            Some(t) => h.tags.get(t),
        };
        samples.map_or_else(Vec::new, |s| {
            let s: Vec<i64> = s.iter().copied().collect();
            // A tag reloaded after a failover can move back: no negative rate.
            s.windows(2)
                .map(|w| u64::try_from(w[1].saturating_sub(w[0])).unwrap_or(0))
                .collect()
        })
    }

    /// The ids handed out in the last minute: the sum of [`Rates::per_second`].
    pub(crate) fn last_minute(&self, tag: Option<&str>) -> u64 {
        self.per_second(tag).iter().sum()
    }
}

/// Samples once a second until aborted.
pub(crate) async fn sample(shared: Arc<Shared>, http: Arc<Http>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let allocator = &shared.allocator;
        http.rates.record(
            allocator.metrics().ids_total(),
            &allocator.first_tag_views(MAX_TAGS),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static EARLY: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

    fn view(tag: &str, next: i64) -> TagView {
        TagView {
            tag: tag.into(),
            next,
            last: next - 1,
            cached_to: next + 10,
            step: (10, 10),
            persisted_ago: None,
            // Loaded before the samples of the tests that use it (an Instant an hour back
            // would not exist on a machine up for less).
            loaded: (1, *EARLY.get_or_init(Instant::now)),
        }
    }

    #[test]
    fn rates_are_differences_within_the_window() {
        let r = Rates::default();
        for (i, total) in [0u64, 10, 30, 30].into_iter().enumerate() {
            r.record(total, &[view("a", 1 + 5 * i as i64)]);
        }
        assert_eq!(r.per_second(None), vec![10, 20, 0]);
        assert_eq!(r.per_second(Some("a")), vec![5, 5, 5]);
        assert_eq!(r.last_minute(None), 30);
        r.record(40, &[view("a", 1)]);
        assert_eq!(r.per_second(Some("a")).last(), Some(&0), "moved back: 0");
        r.record(50, &[]);
        assert!(r.per_second(Some("a")).is_empty(), "gone from memory");
        for i in 0..100u64 {
            r.record(i, &[]);
        }
        assert_eq!(r.per_second(None).len(), WINDOW);
    }

    /// A tag loaded between two samples (its first request loaded it) counts from where it was
    /// loaded: the ids of that request count, and the tags add up to the server's figure.
    #[test]
    fn a_tag_loaded_between_samples_counts_from_its_load() {
        let r = Rates::default();
        let t0 = Instant::now();
        r.record_at(t0, 0, &[]);
        let at = |s: u64| t0 + Duration::from_secs(s);
        // One request loaded "orders" and took 50; "payments" took 1000 in one INCRBY.
        let orders = TagView {
            loaded: (1, at(0) + Duration::from_millis(300)),
            ..view("orders", 51)
        };
        let payments = TagView {
            loaded: (1, at(0) + Duration::from_millis(600)),
            ..view("payments", 1001)
        };
        r.record_at(at(1), 1050, &[orders.clone(), payments.clone()]);
        assert_eq!(r.last_minute(Some("orders")), 50);
        assert_eq!(r.last_minute(Some("payments")), 1000);
        assert_eq!(r.last_minute(None), 1050);
        // Then 30 more from orders, one a second apart.
        r.record_at(at(2), 1080, &[view("orders", 81), payments]);
        assert_eq!(r.last_minute(Some("orders")), 80);
        assert_eq!(r.last_minute(None), 1080);
        // A tag already loaded when first seen (past the sampler's followed tags before) has no
        // history from before: no burst counted.
        let old = TagView {
            loaded: (1, at(0)),
            ..view("old", 500)
        };
        r.record_at(at(3), 1080, &[old]);
        assert_eq!(r.last_minute(Some("old")), 0);
    }
}
