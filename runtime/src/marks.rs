//! High-water marks: the ids this process already took from a source, per source and tag, so a
//! range that goes back (a Redis restarted without `appendfsync always`, a lying server) is
//! refused instead of handing out its ids a second time.
//!
//! Checked only when a range is installed (the refill worker), never on the hot path. Marks are
//! process-wide, keyed by the source's credential-free [`SegmentSource::identity`] and the tag,
//! so every [`Segments`](crate::Segments) of a tag on one source shares one; a source without
//! an identity gets a mark per generator. A forked child inherits its parent's marks (memory is
//! copied), which is right: the parent's ids are taken for the child too.
//!
//! Two generators of one key may fetch at the same time, and an honest source may then answer
//! the later-installed one with the lower range. So a new range must lie above every range
//! installed *before its fetch began* (the ticket), and be disjoint from those installed
//! while it was under way (kept in a short list).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use idforge_core::segment::Segment;

use crate::error::{Error, ErrorCode, Result};
use crate::fork;
use crate::source::SegmentSource;

/// How many recent installs a mark keeps to check fetches that overlapped them in time. With
/// more installs of one key during a single fetch, that fetch's range must lie above all.
const RECENT: usize = 16;

/// Every mark of the process, by (source identity, tag). Entries stay for the process's life:
/// one per source and tag used, a few dozen bytes each.
static REGISTRY: Mutex<BTreeMap<(String, String), Arc<Mark>>> = Mutex::new(BTreeMap::new());

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The ids taken from one source for one tag.
#[derive(Debug, Default)]
pub(crate) struct Mark {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// One past the highest id installed (0: none yet).
    next_free: u64,
    /// Installs so far.
    seq: u64,
    /// The last [`RECENT`] installs: (seq, range).
    recent: VecDeque<(u64, Segment)>,
}

/// What a mark was when a fetch began.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ticket {
    seq: u64,
    next_free: u64,
}

/// The mark for `tag` on `source`: shared process-wide when the source has an identity.
pub(crate) fn mark_for(source: &dyn SegmentSource, tag: &str) -> Result<Arc<Mark>> {
    let Some(identity) = source.identity() else {
        return Ok(Arc::default());
    };
    fork::register()?;
    // Quiesced: a fork never copies this lock held by a thread the child does not have.
    Ok(fork::quiesced(|| {
        lock(&REGISTRY)
            .entry((identity, tag.to_owned()))
            .or_default()
            .clone()
    }))
}

impl Mark {
    /// Taken just before a fetch.
    pub(crate) fn ticket(&self) -> Ticket {
        fork::quiesced(|| {
            let s = lock(&self.state);
            Ticket {
                seq: s.seq,
                next_free: s.next_free,
            }
        })
    }

    /// Records `range`, fetched after `ticket` was taken, or refuses it (`INVALID_SEGMENT`,
    /// nothing recorded) when any of its ids may already have been taken. A range that
    /// overlaps only partly is refused whole.
    pub(crate) fn admit(&self, ticket: Ticket, range: Segment, what: &str) -> Result<()> {
        fork::quiesced(|| {
            let mut s = lock(&self.state);
            let mut floor = ticket.next_free;
            let mut clash = None;
            let evicted_since_ticket = s
                .recent
                .front()
                .is_some_and(|&(oldest, _)| oldest > ticket.seq + 1);
            if evicted_since_ticket {
                floor = s.next_free;
            } else {
                clash = s.recent.iter().find(|(seq, r)| {
                    *seq > ticket.seq && range.start() < r.end() && r.start() < range.end()
                });
            }
            if range.start() < floor || clash.is_some() {
                let taken = match clash {
                    Some((_, r)) => format!("{}..={}", r.start(), r.end() - 1),
                    None => format!("up to {}", floor - 1),
                };
                // Permanent: the caller learns at once that its source went back.
                return Err(Error::permanent(
                    ErrorCode::InvalidSegment,
                    format!(
                        "{what}: the source handed out ids {}..={}, but ids {taken} were \
                         already taken from it by this process: range refused (the source \
                         went back: a Redis restarted without appendfsync always?)",
                        range.start(),
                        range.end() - 1
                    ),
                ));
            }
            s.seq += 1;
            let seq = s.seq;
            s.recent.push_back((seq, range));
            if s.recent.len() > RECENT {
                s.recent.pop_front();
            }
            s.next_free = s.next_free.max(range.end());
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(start: u64, end: u64) -> Segment {
        Segment::new(start, end).unwrap()
    }

    #[test]
    fn ranges_must_go_up() {
        let m = Mark::default();
        m.admit(m.ticket(), seg(1, 11), "t").unwrap();
        for (start, end) in [(1, 11), (5, 15), (10, 20), (0, 5)] {
            let e = m.admit(m.ticket(), seg(start, end), "t").unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidSegment, "{start}..{end}");
        }
        m.admit(m.ticket(), seg(11, 21), "t").unwrap();
        // A gap is fine (a lost reply, another process's range).
        m.admit(m.ticket(), seg(100, 110), "t").unwrap();
        assert_eq!(
            m.admit(m.ticket(), seg(50, 60), "t").unwrap_err().code(),
            ErrorCode::InvalidSegment
        );
    }

    #[test]
    fn concurrent_fetches_may_install_out_of_order_but_never_overlap() {
        let m = Mark::default();
        let (a, b, c) = (m.ticket(), m.ticket(), m.ticket());
        m.admit(b, seg(11, 21), "t").unwrap();
        // Fetched at the same time as b: lower is fine, overlapping is not.
        m.admit(a, seg(1, 11), "t").unwrap();
        assert_eq!(
            m.admit(c, seg(15, 25), "t").unwrap_err().code(),
            ErrorCode::InvalidSegment
        );
        // Fetched after both: must be above both.
        assert!(m.admit(m.ticket(), seg(1, 5), "t").is_err());
    }

    #[test]
    fn a_long_fetch_past_many_installs_must_lie_above_all() {
        let m = Mark::default();
        let slow = m.ticket();
        for i in 0..(RECENT as u64 + 2) {
            m.admit(m.ticket(), seg(100 + i * 10, 110 + i * 10), "t")
                .unwrap();
        }
        assert!(m.admit(slow, seg(1, 11), "t").is_err());
        m.admit(slow, seg(10_000, 10_010), "t").unwrap();
    }
}
