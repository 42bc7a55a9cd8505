//! The segment client's double buffer (Meituan Leaf style) and its dynamic step.
//!
//! Ranges of ids ([`Segment`]s) come from a central allocator; the buffer holds two of them. The
//! hot path is one `fetch_add` on the active slot's cursor. The caller whose take crosses the
//! prefetch mark is told to fetch the next range, so it usually arrives before the active one is
//! used up; then callers switch slots without waiting.
//!
//! ## Why a value is never handed out twice
//!
//! Each slot's cursor packs a *tag* (which installation of the slot it counts for) with the
//! offset taken. Offsets count up to a fixed limit: a range of `len` ids starts at `limit -
//! len`, so the cursor alone says whether ids are left. A take is `fetch_add(1)`: every offset
//! of a tag is returned to exactly one caller. The caller then reads the slot's `origin` (the
//! id at offset 0) and checks, seqlock-style, that the cursor still carries its tag: if the slot
//! was refilled in between, the origin it read may belong to the new range and it retries
//! instead (the old offset becomes a gap, never a repeat). An install only reuses a slot whose
//! ids are all taken, marks the cursor as being written before touching `origin`, and publishes
//! the new tag last. `tests/loom.rs` model-checks this.
//!
//! ## Why a thread's ids never go back
//!
//! A range installed while the other slot still holds ids is *held*: a flag in its cursor. A
//! take that gets a held id first looks at the other slot. If that slot still holds ids of an
//! older range, the take is dropped (a gap) and the caller moves there; otherwise this range
//! is the oldest with ids left, and the caller clears the flag and keeps its id. So a caller
//! that read the active slot's index, then stalled while that slot was used up and refilled,
//! cannot take the new range ahead of the older one and then go back to it. The hot path only
//! tests the flag in the value its add returned.

use crate::error::{Error, Result};
use crate::sync::{AtomicU64, Ordering, fence};

/// Bits of a cursor that count the offset within the slot's segment.
const OFFSET_BITS: u32 = 40;
const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;
/// Offsets at or past this are used up: a range of `len` ids starts at `OFFSET_LIMIT - len`.
const OFFSET_LIMIT: u64 = 1 << (OFFSET_BITS - 1);
/// The cursor's flag of a held range: installed while the other slot still held ids.
const HELD: u64 = 1 << OFFSET_BITS;
/// The tag (which installation of the slot) sits above the offset and the flag.
const TAG_SHIFT: u32 = OFFSET_BITS + 1;
/// Tag of a slot that holds nothing.
const TAG_EMPTY: u64 = 0;
/// Tag of a slot being written by an install.
const TAG_WRITING: u64 = (1 << (64 - TAG_SHIFT)) - 1;
/// Offsets past this on a used-up slot are folded back to the limit, so failed takes can never
/// carry into the flag and tag bits, however long a slot stays empty.
const OFFSET_FOLD_AT: u64 = OFFSET_LIMIT + (OFFSET_LIMIT >> 1);

/// A half-open range of ids `start..end` handed out by an allocator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Segment {
    start: u64,
    end: u64,
}

impl Segment {
    /// The longest segment the buffer can index (2^38 ids).
    pub const MAX_LEN: u64 = 1 << (OFFSET_BITS - 2);

    /// The ids `start..end`. Fails when the range is empty, inverted or longer than [`Self::MAX_LEN`].
    pub const fn new(start: u64, end: u64) -> Result<Segment> {
        if end <= start {
            return Err(Error::InvalidSegment("end must be greater than start"));
        }
        if end - start > Self::MAX_LEN {
            return Err(Error::InvalidSegment("longer than 2^38 ids"));
        }
        Ok(Segment { start, end })
    }

    /// Leaf's convention: the allocator returned `max_id` after adding `step`, so the segment
    /// is `max_id - step + 1 ..= max_id`.
    pub const fn from_leaf(max_id: u64, step: u64) -> Result<Segment> {
        if step == 0 || step > max_id {
            return Err(Error::InvalidSegment("step must be in 1..=max_id"));
        }
        let end = match max_id.checked_add(1) {
            Some(end) => end,
            None => return Err(Error::Overflow("max_id is u64::MAX")),
        };
        Segment::new(end - step, end)
    }

    /// The first id.
    pub const fn start(&self) -> u64 {
        self.start
    }
    /// One past the last id.
    pub const fn end(&self) -> u64 {
        self.end
    }
    /// How many ids the segment holds.
    pub const fn len(&self) -> u64 {
        self.end - self.start
    }
    /// Always false: a segment holds at least one id.
    pub const fn is_empty(&self) -> bool {
        false
    }
    /// Whether `id` lies in the segment.
    pub const fn contains(&self, id: u64) -> bool {
        self.start <= id && id < self.end
    }
}

/// The outcome of [`SegmentBuffer::take`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// An id no other caller received.
    Id {
        /// The id.
        id: u64,
        /// This caller crossed the active segment's prefetch mark: it should ask for the next
        /// segment now. One take per installed segment carries this flag (rarely two, when a
        /// take at the mark was dropped to keep a thread's ids going up; asking twice is
        /// harmless).
        prefetch: bool,
    },
    /// Both slots are used up (or never filled): install a segment and try again.
    Empty,
}

/// Why a take on one slot returned no id.
#[derive(Clone, Copy)]
enum Missed {
    /// The slot is used up (or empty, or being written).
    Dry,
    /// The slot was refilled between the take and the read of its range.
    Stale,
    /// The take got an id of a held range: kept or dropped.
    Held,
}

/// What one slot's cursor said about a take.
enum SlotTake {
    Id {
        id: u64,
        prefetch: bool,
    },
    /// An id of a held range (see the module doc): `cursor` is the value the take saw.
    Held {
        id: u64,
        prefetch: bool,
        cursor: u64,
    },
    /// The slot holds no ids for this caller (used up, empty, or being written).
    Dry,
    /// The slot was refilled between the take and the read of its range: retry.
    Stale,
}

#[derive(Debug)]
struct Slot {
    cursor: AtomicU64,
    /// The id at offset 0 (wrapping): a take's id is `origin + offset`.
    origin: AtomicU64,
    /// The offset whose take carries the prefetch flag, computed at install so a take does
    /// no multiplication or division.
    prefetch_at: AtomicU64,
}

/// Whether a cursor value counts for a range (not empty, not being written).
fn installed(tag: u64) -> bool {
    tag != TAG_EMPTY && tag != TAG_WRITING
}

impl Slot {
    fn new() -> Slot {
        Slot {
            cursor: AtomicU64::new(TAG_EMPTY << TAG_SHIFT),
            origin: AtomicU64::new(0),
            prefetch_at: AtomicU64::new(0),
        }
    }

    #[inline]
    fn take(&self) -> SlotTake {
        // Acquire pairs with the install's Release store of the tag (through the RMW chain), so
        // a valid tag's origin is visible below.
        let v = self.cursor.fetch_add(1, Ordering::Acquire);
        let tag = v >> TAG_SHIFT;
        if !installed(tag) {
            self.fold(v);
            return SlotTake::Dry;
        }
        let origin = self.origin.load(Ordering::Relaxed);
        let prefetch_at = self.prefetch_at.load(Ordering::Relaxed);
        // Seqlock check: if the origin came from a later install, this load sees its tag.
        fence(Ordering::Acquire);
        if self.cursor.load(Ordering::Relaxed) >> TAG_SHIFT != tag {
            return SlotTake::Stale;
        }
        let offset = v & OFFSET_MASK;
        if offset >= OFFSET_LIMIT {
            self.fold(v);
            return SlotTake::Dry;
        }
        let (id, prefetch) = (origin.wrapping_add(offset), offset == prefetch_at);
        if v & HELD != 0 {
            return SlotTake::Held {
                id,
                prefetch,
                cursor: v,
            };
        }
        SlotTake::Id { id, prefetch }
    }

    /// Clears the held flag of installation `tag` (once: later calls, or a slot refilled
    /// meanwhile, get `None`); returns the next offset to be taken at that moment.
    #[cold]
    fn release(&self, tag: u64) -> Option<u64> {
        let mut v = self.cursor.load(Ordering::Relaxed);
        loop {
            if v >> TAG_SHIFT != tag || v & HELD == 0 {
                return None;
            }
            // Release: a take that then sees the range unheld also sees what this caller saw
            // of the other slot (used up), so its next take cannot find older ids there.
            match self
                .cursor
                .compare_exchange(v, v & !HELD, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return Some(v & OFFSET_MASK),
                Err(now) => v = now,
            }
        }
    }

    /// The tag of the range this slot holds, if it still has ids.
    fn live_tag(&self) -> Option<u64> {
        let v = self.cursor.load(Ordering::Acquire);
        let tag = v >> TAG_SHIFT;
        (installed(tag) && v & OFFSET_MASK < OFFSET_LIMIT).then_some(tag)
    }

    /// Keeps a used-up slot's offset far below the flag and tag bits. The CAS fails harmlessly
    /// if the slot was refilled meanwhile; the folded offset is still used up.
    #[cold]
    fn fold(&self, seen: u64) {
        if seen & OFFSET_MASK >= OFFSET_FOLD_AT {
            let folded = (seen & !OFFSET_MASK) | OFFSET_LIMIT;
            let _ = self.cursor.compare_exchange(
                seen.wrapping_add(1),
                folded,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
    }

    /// Ids left in this slot (0 when empty or being written): the cursor alone tells.
    fn remaining(&self) -> u64 {
        let v = self.cursor.load(Ordering::Acquire);
        if installed(v >> TAG_SHIFT) {
            OFFSET_LIMIT.saturating_sub(v & OFFSET_MASK)
        } else {
            0
        }
    }

    /// Writes `segment` into this used-up slot as installation `tag`, `held` or not.
    fn write(&self, segment: Segment, tag: u64, held: bool, prefetch_pct: u64) {
        let first = OFFSET_LIMIT - segment.len();
        // Every write to a cursor is an RMW (swap, not store): the same effect here, and it
        // keeps loom's model exact (loom lets plain stores split an RMW, tokio-rs/loom#254).
        self.cursor
            .swap(TAG_WRITING << TAG_SHIFT, Ordering::Relaxed);
        // Seqlock write: a reader that sees the new origin also sees WRITING (or later).
        fence(Ordering::Release);
        self.origin
            .store(segment.start.wrapping_sub(first), Ordering::Relaxed);
        // No overflow: len <= 2^38 and pct <= 99.
        let mark = segment.len() * prefetch_pct / 100;
        self.prefetch_at.store(first + mark, Ordering::Relaxed);
        let flag = if held { HELD } else { 0 };
        self.cursor
            .swap(tag << TAG_SHIFT | flag | first, Ordering::Release);
    }
}

/// Whether installation tag `a` came before `b`. Tags count installs and wrap; the two slots'
/// live tags are never more than a few installs apart.
fn older(a: u64, b: u64) -> bool {
    let d = b.wrapping_sub(a) & TAG_WRITING;
    d != 0 && d < TAG_WRITING / 2
}

/// A lock-free double buffer of segments.
///
/// `take` may be called from any number of threads. `install` and `reset` must not run
/// concurrently with each other (the runtime's single refill worker calls them); a concurrent
/// call is refused rather than allowed to corrupt the buffer.
#[derive(Debug)]
pub struct SegmentBuffer {
    slots: [Slot; 2],
    /// Index of the slot takes go to first; only a hint, correctness rests on the cursors.
    active: AtomicU64,
    /// Set while an install or reset runs.
    installing: AtomicU64,
    /// The last tag handed to an install.
    last_tag: AtomicU64,
    prefetch_pct: u64,
}

impl SegmentBuffer {
    /// Leaf's default: ask for the next segment once 10% of the current one is used.
    pub const DEFAULT_PREFETCH_PCT: u8 = 10;

    /// An empty buffer that signals prefetch once `prefetch_pct` percent (0..=99) of a segment
    /// is used.
    pub fn new(prefetch_pct: u8) -> Result<SegmentBuffer> {
        if prefetch_pct > 99 {
            return Err(Error::InvalidArgument("prefetch percentage must be 0..=99"));
        }
        Ok(SegmentBuffer {
            slots: [Slot::new(), Slot::new()],
            active: AtomicU64::new(0),
            installing: AtomicU64::new(0),
            last_tag: AtomicU64::new(TAG_EMPTY),
            prefetch_pct: u64::from(prefetch_pct),
        })
    }

    /// Takes the next id: one atomic add on the hot path.
    #[inline]
    pub fn take(&self) -> Take {
        let a = (self.active.load(Ordering::Relaxed) & 1) as usize;
        // Everything but a plain id goes to one out-of-line call, so the hot path stays small
        // enough to inline into every caller and returns its id in registers.
        // Scalar arguments only: an enum with data would go through memory.
        let (missed, held, prefetch) = match self.slots[a].take() {
            SlotTake::Id { id, prefetch } => return Take::Id { id, prefetch },
            SlotTake::Held {
                id,
                prefetch,
                cursor,
            } => (Missed::Held, (id, cursor), prefetch),
            SlotTake::Dry => (Missed::Dry, (0, 0), false),
            SlotTake::Stale => (Missed::Stale, (0, 0), false),
        };
        self.take_again(a, missed, held, prefetch)
    }

    /// Whether to keep a take of a held range from slot `a` (`cursor`: the value the take saw),
    /// with its prefetch flag: kept when no older ids are left in the other slot (the range is
    /// released), else `None`: dropped for them.
    fn settle_held(&self, a: usize, prefetch: bool, cursor: u64) -> Option<bool> {
        let tag = cursor >> TAG_SHIFT;
        if self.slots[a ^ 1].live_tag().is_some_and(|t| older(t, tag)) {
            // The other slot's older ids go first: this take is a gap.
            return None;
        }
        // The oldest range with ids left: it is no longer held. Its prefetch mark may have
        // gone to a take dropped while it was held, so the caller that releases it past the
        // mark asks for the next range too (at worst twice, which the refill ignores).
        let prefetch_at = self.slots[a].prefetch_at.load(Ordering::Relaxed);
        let past_mark = self.slots[a]
            .release(tag)
            .is_some_and(|next| next > prefetch_at);
        Some(prefetch || past_mark)
    }

    /// The rest of [`take`](Self::take) after a try on slot `a` got no plain id. `held`: the
    /// id and the cursor value of a held take; `prefetch_owed`: the prefetch flag of a take
    /// not returned (yet), passed to the id returned.
    #[cold]
    #[inline(never)]
    fn take_again(
        &self,
        mut a: usize,
        mut missed: Missed,
        mut held: (u64, u64),
        mut prefetch_owed: bool,
    ) -> Take {
        loop {
            let move_on = match missed {
                Missed::Held => match self.settle_held(a, prefetch_owed, held.1) {
                    Some(prefetch) => {
                        return Take::Id {
                            id: held.0,
                            prefetch,
                        };
                    }
                    // Dropped: the other slot's older ids go first.
                    None => true,
                },
                Missed::Stale => false,
                Missed::Dry => {
                    if self.slots[a ^ 1].remaining() == 0 {
                        return Take::Empty;
                    }
                    true
                }
            };
            if move_on {
                // Another caller may have switched already; either way, retry.
                let _ = self.active.compare_exchange(
                    a as u64,
                    (a ^ 1) as u64,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
            }
            a = (self.active.load(Ordering::Relaxed) & 1) as usize;
            missed = match self.slots[a].take() {
                SlotTake::Id { id, prefetch } => {
                    return Take::Id {
                        id,
                        prefetch: prefetch || prefetch_owed,
                    };
                }
                SlotTake::Held {
                    id,
                    prefetch,
                    cursor,
                } => {
                    prefetch_owed |= prefetch;
                    held = (id, cursor);
                    Missed::Held
                }
                SlotTake::Stale => Missed::Stale,
                SlotTake::Dry => Missed::Dry,
            };
        }
    }

    /// Ids left across both slots (a snapshot).
    pub fn remaining(&self) -> u64 {
        self.slots[0].remaining() + self.slots[1].remaining()
    }

    /// Whether a slot is free for [`install`](Self::install), i.e. a fetch would not be wasted.
    pub fn has_free_slot(&self) -> bool {
        self.slots.iter().any(|s| s.remaining() == 0)
    }

    /// Installs a freshly fetched segment into a used-up slot. Fails with
    /// [`Error::BufferFull`] when both slots still hold ids or another install is running.
    pub fn install(&self, segment: Segment) -> Result<()> {
        self.exclusive(|| {
            let a = (self.active.load(Ordering::Relaxed) & 1) as usize;
            let target = if self.slots[a ^ 1].remaining() == 0 {
                a ^ 1
            } else if self.slots[a].remaining() == 0 {
                // The other slot still holds ids: point takes at it first, so ranges are
                // served in the order they were fetched.
                let _ = self.active.compare_exchange(
                    a as u64,
                    (a ^ 1) as u64,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
                a
            } else {
                return Err(Error::BufferFull);
            };
            let mut tag = self.last_tag.load(Ordering::Relaxed) + 1;
            if tag >= TAG_WRITING {
                tag = TAG_EMPTY + 1;
            }
            self.last_tag.store(tag, Ordering::Relaxed);
            // Held while the other slot still has ids: takes must not pass over those.
            let held = self.slots[target ^ 1].remaining() > 0;
            self.slots[target].write(segment, tag, held, self.prefetch_pct);
            Ok(())
        })
    }

    /// Drops both buffered segments (in a forked child, whose parent keeps using them). A take
    /// racing with the reset gets either an id of the old segment or `Empty`, never a repeat.
    /// Clears a stuck install flag left by a thread that does not exist in the child.
    pub fn reset_after_fork(&self) {
        self.installing.store(0, Ordering::Release);
        let _ = self.exclusive(|| {
            for slot in &self.slots {
                slot.cursor.swap(TAG_EMPTY << TAG_SHIFT, Ordering::Release);
            }
            Ok(())
        });
    }

    fn exclusive(&self, f: impl FnOnce() -> Result<()>) -> Result<()> {
        if self
            .installing
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return Err(Error::BufferFull);
        }
        let result = f();
        self.installing.store(0, Ordering::Release);
        result
    }
}

/// Leaf's dynamic step: keep each segment lasting about `target_ms`.
///
/// A segment used up faster than the target doubles the next step; one that lasted more than
/// twice the target halves it; the step stays within `min..=max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepPolicy {
    /// The smallest step (Leaf: the step configured for the tag).
    pub min: u64,
    /// The largest step (Leaf: 1,000,000).
    pub max: u64,
    /// How long a segment should last, in milliseconds (Leaf: 15 minutes).
    pub target_ms: u64,
}

impl StepPolicy {
    /// Leaf's constants for a tag configured with `step`.
    pub const fn leaf(step: u64) -> StepPolicy {
        StepPolicy {
            min: step,
            max: if step > 1_000_000 { step } else { 1_000_000 },
            target_ms: 15 * 60 * 1000,
        }
    }

    /// The step for the next fetch, given the current step and how long the last segment
    /// lasted (`None` when unknown, e.g. the first fetch).
    pub const fn next_step(&self, current: u64, lasted_ms: Option<u64>) -> u64 {
        let next = match lasted_ms {
            None => current,
            Some(ms) if ms < self.target_ms => current.saturating_mul(2),
            Some(ms) if ms < self.target_ms.saturating_mul(2) => current,
            Some(_) => current / 2,
        };
        if next < self.min {
            self.min
        } else if next > self.max {
            self.max
        } else {
            next
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn take_id(b: &SegmentBuffer) -> (u64, bool) {
        match b.take() {
            Take::Id { id, prefetch } => (id, prefetch),
            Take::Empty => panic!("unexpectedly empty"),
        }
    }

    #[test]
    fn empty_until_installed_then_switches_without_gaps() {
        let b = SegmentBuffer::new(10).unwrap();
        assert_eq!(b.take(), Take::Empty);
        b.install(Segment::new(100, 110).unwrap()).unwrap();
        let mut prefetches = 0;
        for want in 100..110 {
            let (id, p) = take_id(&b);
            assert_eq!(id, want);
            prefetches += usize::from(p);
            if p {
                assert_eq!(id, 101, "10% of 10 ids is offset 1");
                b.install(Segment::new(500, 503).unwrap()).unwrap();
            }
        }
        assert_eq!(prefetches, 1);
        assert_eq!(b.remaining(), 3);
        assert_eq!(
            b.install(Segment::new(900, 901).unwrap()),
            Ok(()),
            "first slot is used up"
        );
        assert_eq!(
            b.install(Segment::new(950, 951).unwrap()),
            Err(Error::BufferFull)
        );
        let rest: [u64; 4] = core::array::from_fn(|_| take_id(&b).0);
        assert_eq!(rest, [500, 501, 502, 900]);
        assert_eq!(b.take(), Take::Empty);
    }

    /// A caller that read the active index before its slot was used up and refilled must not
    /// take the new range while the other slot still holds older ids: its next call would go
    /// back (a thread's ids went down in an HA test before ranges were held).
    #[test]
    fn a_stale_index_never_takes_a_newer_range_first() {
        let b = SegmentBuffer::new(0).unwrap();
        b.install(Segment::new(0, 1).unwrap()).unwrap();
        b.install(Segment::new(5, 7).unwrap()).unwrap();
        assert_eq!(take_id(&b), (0, true));
        // The first slot is used up: the next range goes there, held behind the other's ids,
        // and takes point at the older range.
        b.install(Segment::new(10, 12).unwrap()).unwrap();
        let active = b.active.load(Ordering::Relaxed) as usize;
        assert_eq!(b.slots[active].remaining(), 2, "the older range, 5..7");
        // A caller that still reads the refilled slot's index (it read it before the refill).
        b.active.store((active ^ 1) as u64, Ordering::Relaxed);
        let (first, _) = take_id(&b);
        assert_eq!(first, 5, "the older range first; 10 is dropped (a gap)");
        let rest: [u64; 2] = core::array::from_fn(|_| take_id(&b).0);
        assert_eq!(rest, [6, 11]);
        assert_eq!(b.take(), Take::Empty);
    }

    /// A held range whose older neighbour is used up is released by its first take: no id is
    /// dropped, and later takes are on the fast path again.
    #[test]
    fn a_held_range_is_released_once_the_older_one_is_used_up() {
        let b = SegmentBuffer::new(50).unwrap();
        b.install(Segment::new(0, 2).unwrap()).unwrap();
        b.install(Segment::new(10, 14).unwrap()).unwrap();
        let slot = |tag: u64| {
            b.slots
                .iter()
                .find(|s| s.cursor.load(Ordering::Relaxed) >> TAG_SHIFT == tag)
                .unwrap()
        };
        assert_eq!(slot(1).cursor.load(Ordering::Relaxed) & HELD, 0);
        assert_ne!(slot(2).cursor.load(Ordering::Relaxed) & HELD, 0, "held");
        let ids: [u64; 6] = core::array::from_fn(|_| take_id(&b).0);
        assert_eq!(ids, [0, 1, 10, 11, 12, 13], "no gap");
        assert_eq!(slot(2).cursor.load(Ordering::Relaxed) & HELD, 0, "released");
    }

    /// The worst range: the longest, ending at the top of u64 (the origin wraps).
    #[test]
    fn the_longest_range_at_the_top_of_the_id_space() {
        let b = SegmentBuffer::new(99).unwrap();
        let start = u64::MAX - Segment::MAX_LEN;
        b.install(Segment::new(start, u64::MAX).unwrap()).unwrap();
        assert_eq!(b.remaining(), Segment::MAX_LEN);
        assert_eq!(take_id(&b), (start, false));
        assert_eq!(take_id(&b), (start + 1, false));
        assert_eq!(b.remaining(), Segment::MAX_LEN - 2);
        // The last id: jump the cursor to the range's last offset.
        let slot = b.slots.iter().find(|s| s.remaining() > 0).unwrap();
        slot.cursor
            .fetch_add(Segment::MAX_LEN - 3, Ordering::Relaxed);
        assert_eq!(take_id(&b).0, u64::MAX - 1);
        assert_eq!(b.take(), Take::Empty);
    }

    #[test]
    fn install_tags_order_across_the_wrap() {
        assert!(older(1, 2));
        assert!(!older(2, 1));
        assert!(!older(3, 3));
        assert!(
            older(TAG_WRITING - 1, 1),
            "the tag after the last wraps to 1"
        );
        assert!(!older(1, TAG_WRITING - 1));
    }

    #[test]
    fn many_failed_takes_never_reach_the_tag() {
        let b = SegmentBuffer::new(0).unwrap();
        b.install(Segment::new(0, 1).unwrap()).unwrap();
        assert_eq!(take_id(&b), (0, true));
        // Pretend a huge number of failed takes happened on the slot that served the id.
        let slot = b
            .slots
            .iter()
            .find(|s| s.cursor.load(Ordering::Relaxed) >> TAG_SHIFT == 1)
            .unwrap();
        slot.cursor
            .fetch_add(OFFSET_FOLD_AT - OFFSET_LIMIT, Ordering::Relaxed);
        assert_eq!(b.take(), Take::Empty);
        let v = slot.cursor.load(Ordering::Relaxed);
        assert_eq!(v & OFFSET_MASK, OFFSET_LIMIT, "folded back, still used up");
        assert_eq!(v & HELD, 0, "the flag kept");
        assert_eq!(v >> TAG_SHIFT, 1, "tag kept");
    }

    #[test]
    fn reset_after_fork_drops_buffered_ranges() {
        let b = SegmentBuffer::new(50).unwrap();
        b.install(Segment::new(0, 10).unwrap()).unwrap();
        b.install(Segment::new(10, 20).unwrap()).unwrap();
        b.reset_after_fork();
        assert_eq!(b.take(), Take::Empty);
        b.install(Segment::new(1000, 1001).unwrap()).unwrap();
        assert_eq!(take_id(&b).0, 1000);
    }

    #[test]
    fn segments_validate() {
        assert!(Segment::new(5, 5).is_err());
        assert!(Segment::new(6, 5).is_err());
        assert!(Segment::new(0, Segment::MAX_LEN + 1).is_err());
        assert_eq!(Segment::from_leaf(2000, 1000), Segment::new(1001, 2001));
        assert!(Segment::from_leaf(10, 0).is_err());
        assert!(Segment::from_leaf(u64::MAX, 1).is_err());
        assert!(SegmentBuffer::new(100).is_err());
    }

    #[test]
    fn step_policy_follows_leaf() {
        let p = StepPolicy::leaf(1000);
        let min = 60_000;
        assert_eq!(p.next_step(1000, None), 1000);
        assert_eq!(p.next_step(1000, Some(min)), 2000);
        assert_eq!(p.next_step(4000, Some(20 * min)), 4000);
        assert_eq!(p.next_step(4000, Some(31 * min)), 2000);
        assert_eq!(p.next_step(1000, Some(31 * min)), 1000, "never below min");
        assert_eq!(
            p.next_step(800_000, Some(min)),
            1_000_000,
            "never above max"
        );
    }
}
