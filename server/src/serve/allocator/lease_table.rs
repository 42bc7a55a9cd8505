//! The copy of a service's leases the leader keeps (`Leases`) and the rules of a lease: its
//! token (with the id's time floor), when an id is free again and for whom (reservations), and
//! the group a lease write goes in. The commands that use them are in `workers.rs`.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::sync::oneshot;

use idforge_store::{StoreError, WorkerRow};

/// The leader's wall clock, in Unix ms (leases are wall-clock times: they outlive a process).
pub(super) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A lease's secret: 32 random hex digits, then `.` and the id's time floor (kept in the
/// token, so renewals can tell it again without a column of its own), then `.f` for a holder
/// that keeps its lease in a file (see [`token_in_file`]).
pub(super) fn lease_token(floor_ms: i64, in_file: bool) -> String {
    let mut raw = [0u8; 16];
    // Without entropy the token is only guessable, not shared: the time keeps it unique.
    if getrandom::fill(&mut raw).is_err() {
        raw[..8].copy_from_slice(&now_ms().to_le_bytes());
    }
    let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    let file = if in_file { FILE_MARK } else { "" };
    format!("{hex}.{floor_ms}{file}")
}

/// The end of the token of a lease kept in a file.
pub(super) const FILE_MARK: &str = ".f";

/// Whether the token's holder keeps its lease in a file (`ACQUIRE … HOLDER name FILE`): such a
/// holder may go on using its id past its lease's end while the server is out of its reach, up
/// to the end of its reservation, and brings the lease back by renewing it with the token. So
/// its ended (not released) lease goes to no one before the reservation ends, not even to its
/// own name: only the token renews it.
pub(super) fn token_in_file(token: &str) -> bool {
    token.ends_with(FILE_MARK)
}

/// The time floor a token was made with (0 for tokens of older servers, which had none).
pub(super) fn token_floor(token: &str) -> i64 {
    token
        .strip_suffix(FILE_MARK)
        .unwrap_or(token)
        .rsplit_once('.')
        .and_then(|(_, floor)| floor.parse().ok())
        .unwrap_or(0)
}

/// How far past its lease's current end a holder may report a time (RENEW/RELEASE `TIME`): the
/// lease's TTL, and at least a minute.
///
/// The reported time keeps the id from being handed out until it has passed, so an unbounded
/// one (`TIME 9e18`) would keep the id, and a place under `--max-leases`, forever. A holder
/// reports the end of what its lease covers: this runtime never past the end the server told
/// it, so at or below the current end; runtimes before the server told its clock count 90% of
/// the TTL from their own send time, which is past the server's end only when their clock leads
/// the server's, by the lead less a tenth of the TTL. The slack accepts those up to a lead of
/// 1.1 TTL (11 s at the default 10 s TTL) and at least a minute (so short TTLs do not refuse
/// a clock merely loosely kept). It costs little: a holder that stops renewing frees its id at
/// most this much later than its lease's end, as if its TTL were that much longer.
pub(super) fn time_slack(ttl_ms: i64) -> i64 {
    ttl_ms.max(TIME_SLACK_MIN_MS)
}

/// The least [`time_slack`].
pub(super) const TIME_SLACK_MIN_MS: i64 = 60_000;

/// How many times a compare-and-set lost to another writer is tried again.
pub(super) const TRIES: usize = 8;

/// When an id with this row may be leased again by its own holder (the name in the row): its
/// lease has ended and the last time its holder reported has passed.
pub(super) fn own_free_at(row: &WorkerRow) -> i64 {
    row.expires_ms.max(row.last_time_ms.saturating_add(1))
}

/// When an id with this row may be leased again by any holder: as [`own_free_at`], and its
/// reservation for its holder (if any) has ended.
pub(super) fn free_at(row: &WorkerRow) -> i64 {
    own_free_at(row).max(row.reserved_ms)
}

/// The latest time an id with this row may have been put in an id by its holder: the holder
/// reported it, or its lease's end bounds it (a holder's ids stay below the end it was told).
/// Given to another holder, the reservation's end counts too: it is when the id became free.
pub(super) fn floor_of(row: &WorkerRow) -> i64 {
    free_at(row).saturating_sub(1).max(0)
}

/// [`floor_of`] for the row's own holder taking the id back within its reservation.
pub(super) fn own_floor_of(row: &WorkerRow) -> i64 {
    own_free_at(row).saturating_sub(1).max(0)
}

/// Until when an id stays reserved for `holder` once its lease ends at `end_ms` (0: no name,
/// no reservation).
pub(super) fn reservation(holder: &str, end_ms: i64, reserve_ms: i64) -> i64 {
    if holder.is_empty() {
        0
    } else {
        end_ms.saturating_add(reserve_ms)
    }
}

/// This server's count of leases held, over every service (see [`Leases`]'s `held`).
#[derive(Debug, Default)]
pub(crate) struct LeaseCount {
    /// Leases held or not yet free, and ids being written, over every copy in memory.
    pub(super) held: Arc<AtomicUsize>,
    /// When (Unix ms) the copies were last swept for leases that became free.
    pub(super) swept_ms: AtomicI64,
}

/// How often, at most, a full server sweeps every copy for leases that became free.
pub(super) const SWEEP_EVERY_MS: i64 = 100;

/// One service's leases as this server last read or wrote them.
#[derive(Debug)]
pub(crate) struct Leases {
    /// Which reading of the store this is (see `Allocator::lease_generation`).
    pub(super) generation: u64,
    /// The rows, by id.
    pub(super) rows: HashMap<i64, WorkerRow>,
    /// `(free_at, id)` of the rows not known to be free yet.
    pub(super) waiting: BTreeSet<(i64, i64)>,
    /// Ids whose row is free (its `free_at` has passed).
    pub(super) free: BTreeSet<i64>,
    /// Ids below `fresh` without a row.
    pub(super) holes: BTreeSet<i64>,
    /// The lowest id above every row.
    pub(super) fresh: i64,
    /// Ids an ACQUIRE in flight is writing (in none of the sets above meanwhile).
    pub(super) taken: HashSet<i64>,
    /// The id each holder name last took (rows with a holder only; bounded by the rows).
    pub(super) by_holder: HashMap<String, i64>,
    /// Used since the last idle sweep (see `Allocator::evict_idle`).
    pub(crate) used: bool,
    /// Idle sweeps in a row that found it unused.
    pub(crate) idle_sweeps: u32,
    /// What this copy adds to `count`: its rows not known to be free, and its ids being
    /// written. Kept by [`recount`](Self::recount); given back when the copy is dropped.
    pub(super) held: usize,
    /// The server's count (see [`LeaseCount`]).
    pub(super) count: Arc<AtomicUsize>,
}

impl Drop for Leases {
    fn drop(&mut self) {
        self.count.fetch_sub(self.held, Ordering::Relaxed);
    }
}

impl Leases {
    pub(super) fn new(generation: u64, rows: Vec<WorkerRow>, count: Arc<AtomicUsize>) -> Leases {
        let mut leases = Leases {
            generation,
            rows: HashMap::new(),
            waiting: BTreeSet::new(),
            free: BTreeSet::new(),
            holes: BTreeSet::new(),
            fresh: rows
                .iter()
                .map(|r| r.id.saturating_add(1))
                .max()
                .unwrap_or(0),
            taken: HashSet::new(),
            by_holder: HashMap::new(),
            used: true,
            idle_sweeps: 0,
            held: 0,
            count,
        };
        let ids: HashSet<i64> = rows.iter().map(|r| r.id).collect();
        // Rows are made lowest id first, so holes are rare (another writer, a hand edit); at
        // most a bounded number are remembered, the rest are only found after a re-read.
        leases.holes = (0..leases.fresh)
            .filter(|id| !ids.contains(id))
            .take(1 << 16)
            .collect();
        // A name with two rows (it took another id while its old one was held) goes back to
        // the one it took last.
        let mut named: Vec<&WorkerRow> = rows.iter().filter(|r| !r.holder.is_empty()).collect();
        named.sort_by_key(|r| (r.expires_ms, r.id));
        for row in named {
            leases.by_holder.insert(row.holder.clone(), row.id);
        }
        for row in rows {
            leases.waiting.insert((free_at(&row), row.id));
            leases.rows.insert(row.id, row);
        }
        leases.recount();
        leases
    }

    /// Brings `held` and the server's count up to date after a change.
    pub(super) fn recount(&mut self) {
        let held = self.waiting.len() + self.taken.len();
        if held > self.held {
            self.count.fetch_add(held - self.held, Ordering::Relaxed);
        } else {
            self.count.fetch_sub(self.held - held, Ordering::Relaxed);
        }
        self.held = held;
    }

    /// Moves the rows whose `free_at` has passed to the free ids.
    pub(super) fn advance(&mut self, now: i64) {
        while let Some(&(at, id)) = self.waiting.first() {
            if at > now {
                break;
            }
            self.waiting.pop_first();
            self.free.insert(id);
        }
        self.recount();
    }

    /// How many leases of this service are held (or ended but not yet free, or being
    /// written), as of the last [`advance`](Self::advance).
    pub(super) fn held(&self) -> usize {
        self.held
    }

    /// Takes the lowest free id below `max` for a write: `(id, stored version, time floor)`.
    pub(super) fn pick(&mut self, now: i64, max: i64) -> Option<(i64, i64, i64)> {
        self.used = true;
        self.advance(now);
        let id = [self.free.first(), self.holes.first(), Some(&self.fresh)]
            .into_iter()
            .flatten()
            .copied()
            .min()?;
        if id >= max {
            return None;
        }
        if !self.free.remove(&id) && !self.holes.remove(&id) {
            self.fresh += 1;
        }
        self.taken.insert(id);
        self.recount();
        let row = self.rows.get(&id);
        Some((id, row.map_or(0, |r| r.version), row.map_or(0, floor_of)))
    }

    /// Takes the id `holder` took last for a write, when it is below `max` and free for it
    /// (its lease ended and, unless the grant tells the floor, its last time passed: reserved
    /// for it or free for all): `(id, stored version, time floor)`. `None` for no name, or
    /// when that id is not free for it.
    ///
    /// A holder told the floor makes no id at or below it, so its last reported time need not
    /// have passed: an instance restarted at once (its last ids a little ahead of the clock)
    /// gets its own id, and waits out the difference, instead of another id.
    pub(super) fn pick_own(
        &mut self,
        holder: &str,
        now: i64,
        max: i64,
        floor_told: bool,
    ) -> Option<(i64, i64, i64)> {
        if holder.is_empty() {
            return None;
        }
        let id = *self.by_holder.get(holder)?;
        let row = self.rows.get(&id)?;
        // A lease kept in a file and not given back may still be in use: only its token
        // brings it back (its reservation ends, then it is free for all).
        let in_use = !row.token.is_empty() && token_in_file(&row.token);
        let free_for_it = !in_use
            && if floor_told {
                row.expires_ms <= now
            } else {
                own_free_at(row) <= now
            };
        if id >= max || row.holder != holder || !free_for_it || self.taken.contains(&id) {
            return None;
        }
        let (version, floor, at) = (row.version, own_floor_of(row), free_at(row));
        self.used = true;
        self.waiting.remove(&(at, id));
        self.free.remove(&id);
        self.taken.insert(id);
        self.recount();
        Some((id, version, floor))
    }

    /// Whether an ACQUIRE of this service is writing.
    pub(crate) fn busy(&self) -> bool {
        !self.taken.is_empty()
    }

    /// Puts back an id whose write failed (nothing was written).
    pub(super) fn untake(&mut self, id: i64) {
        if self.taken.remove(&id) {
            match self.rows.get(&id) {
                Some(row) => {
                    self.waiting.insert((free_at(row), id));
                }
                None => {
                    self.holes.insert(id);
                }
            }
        }
        self.recount();
    }

    /// Records a row this server wrote (its version already the stored one).
    pub(super) fn written(&mut self, row: WorkerRow) {
        self.used = true;
        self.taken.remove(&row.id);
        self.free.remove(&row.id);
        self.holes.remove(&row.id);
        if let Some(old) = self.rows.get(&row.id) {
            self.waiting.remove(&(free_at(old), row.id));
            if self.by_holder.get(&old.holder) == Some(&row.id) && old.holder != row.holder {
                self.by_holder.remove(&old.holder);
            }
        }
        if !row.holder.is_empty() {
            self.by_holder.insert(row.holder.clone(), row.id);
        }
        if row.id >= self.fresh {
            self.holes.extend((self.fresh..row.id).take(1 << 16));
            self.fresh = row.id + 1;
        }
        self.waiting.insert((free_at(&row), row.id));
        self.rows.insert(row.id, row);
        self.recount();
    }
}

/// A lease write waiting for its group's commit.
#[derive(Debug)]
pub(crate) struct LeaseWrite {
    pub(super) service: String,
    pub(super) row: WorkerRow,
    pub(super) done: oneshot::Sender<Result<bool, StoreError>>,
}

/// The most lease writes committed together.
pub(super) const GROUP: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, expires_ms: i64, last_time_ms: i64) -> WorkerRow {
        WorkerRow {
            id,
            token: "t".into(),
            expires_ms,
            last_time_ms,
            ttl_ms: 1000,
            holder: String::new(),
            reserved_ms: 0,
            version: 1,
        }
    }

    fn named(id: i64, expires_ms: i64, holder: &str, reserved_ms: i64) -> WorkerRow {
        WorkerRow {
            holder: holder.into(),
            reserved_ms,
            ..row(id, expires_ms, 5)
        }
    }

    #[test]
    fn a_reserved_id_goes_back_to_its_holder_only() {
        // 0 ended at 10, reserved for "a" until 500; 1 ended at 10, reserved for "b" until 20.
        let mut l = Leases::new(
            1,
            vec![named(0, 10, "a", 500), named(1, 10, "b", 20)],
            Arc::default(),
        );
        // Others get neither while they are reserved: the lowest id free for all is 2.
        assert_eq!(l.pick(15, 10), Some((2, 0, 0)));
        assert_eq!(l.pick_own("c", 15, 10, false), None, "a name never seen");
        // "a" gets its own id back within its reservation, with its own floor (its lease's
        // last instant), not the reservation's.
        assert_eq!(l.pick_own("a", 15, 10, false), Some((0, 1, 9)));
        assert_eq!(l.pick_own("a", 15, 10, false), None, "being written");
        // Past "b"'s reservation its id is free for all, with a floor at the reservation's end.
        assert_eq!(l.pick(25, 10), Some((1, 1, 19)));
        // Below MAX only; and not while its lease is live.
        l.written(WorkerRow {
            version: 2,
            ..named(0, 100, "a", 600)
        });
        assert_eq!(l.pick_own("a", 50, 10, false), None, "live");
        assert_eq!(l.pick_own("a", 150, 0, false), None, "past MAX");
        assert_eq!(l.pick_own("a", 150, 10, false), Some((0, 2, 99)));
    }

    #[test]
    fn a_name_follows_the_id_it_took_last() {
        // "a" holds 0 and took 3 later (0 was live when it came back); 3 is the one it gets.
        let mut l = Leases::new(
            1,
            vec![named(0, 100, "a", 900), named(3, 200, "a", 1000)],
            Arc::default(),
        );
        assert_eq!(l.pick_own("a", 250, 10, false), Some((3, 1, 199)));
        l.untake(3);
        // An anonymous holder takes 0 past its reservation: the name no longer leads there.
        l.written(WorkerRow {
            version: 2,
            ..row(0, 2000, 5)
        });
        l.written(WorkerRow {
            version: 2,
            ..named(3, 300, "b", 400)
        });
        assert_eq!(l.pick_own("a", 2500, 10, false), None);
        assert_eq!(l.pick_own("b", 350, 10, false), Some((3, 2, 299)));
    }

    #[test]
    fn a_holder_told_the_floor_need_not_wait_for_its_last_time() {
        // "a" released 0 at 100, reporting ids up to 180 (made a little ahead of its clock).
        let mut l = Leases::new(1, vec![named(0, 100, "a", 900)], Arc::default());
        l.written(WorkerRow {
            last_time_ms: 180,
            ..named(0, 100, "a", 900)
        });
        assert_eq!(l.pick_own("a", 120, 10, false), None, "untold: waits");
        // Told, it gets the id at once with a floor at its last time: it waits for it itself.
        assert_eq!(l.pick_own("a", 120, 10, true), Some((0, 1, 180)));
        l.untake(0);
        assert_eq!(l.pick_own("a", 90, 10, true), None, "never while leased");
    }

    #[test]
    fn a_lease_kept_in_a_file_goes_back_to_no_one_until_given_back() {
        // "a" keeps its lease in a file; it ended at 100 without a RELEASE: "a" may be going on
        // with it while cut off from the server.
        let in_file = WorkerRow {
            token: lease_token(0, true),
            ..named(0, 100, "a", 900)
        };
        let mut l = Leases::new(1, vec![in_file.clone()], Arc::default());
        assert_eq!(l.pick_own("a", 500, 10, true), None, "only its token");
        assert_eq!(l.pick(500, 10).map(|p| p.0), Some(1), "no one else's");
        // Given back (the token cleared), it is its name's again.
        l.written(WorkerRow {
            token: String::new(),
            version: 2,
            ..in_file
        });
        assert_eq!(l.pick_own("a", 500, 10, true), Some((0, 2, 99)));
    }

    #[test]
    fn the_lowest_free_id_is_picked_and_never_twice() {
        // 0 held until 100, 1 free since 10, 3 held; 2 has no row.
        let mut l = Leases::new(
            1,
            vec![row(0, 100, 5), row(1, 10, 5), row(3, 100, 5)],
            Arc::default(),
        );
        assert_eq!(l.pick(50, 10), Some((1, 1, 9)));
        assert_eq!(l.pick(50, 10), Some((2, 0, 0)));
        assert_eq!(l.pick(50, 10), Some((4, 0, 0)));
        assert_eq!(l.pick(50, 5), None, "0 and 3 are held below 5");
        // A failed write puts its id back; a successful one records the new row.
        l.untake(2);
        l.written(WorkerRow {
            version: 1,
            ..row(4, 200, 50)
        });
        assert_eq!(l.pick(50, 10), Some((2, 0, 0)));
        // Time passes: 0 and 3 end (0's holder reported a time past its end). The floor is
        // the later of the lease's last instant and the reported time.
        l.written(row(0, 100, 150));
        assert_eq!(l.pick(120, 10), Some((3, 1, 99)));
        assert_eq!(l.pick(151, 10), Some((0, 1, 150)));
        assert_eq!(l.pick(151, 10), Some((5, 0, 0)));
    }

    #[test]
    fn the_held_count_follows_every_copy_and_leaves_with_it() {
        let count = Arc::new(AtomicUsize::new(0));
        let mut a = Leases::new(1, vec![row(0, 100, 5), row(1, 10, 5)], count.clone());
        let b = Leases::new(1, vec![row(0, 100, 5)], count.clone());
        assert_eq!(
            count.load(Ordering::Relaxed),
            3,
            "rows not known free count"
        );
        a.advance(50);
        assert_eq!((a.held(), count.load(Ordering::Relaxed)), (1, 2));
        // A pick is held while written and after.
        let (id, ..) = a.pick(50, 10).unwrap();
        assert_eq!(count.load(Ordering::Relaxed), 3);
        a.untake(id);
        a.advance(50);
        assert_eq!(count.load(Ordering::Relaxed), 2);
        let (id, version, _) = a.pick(50, 10).unwrap();
        a.written(WorkerRow {
            version: version + 1,
            ..row(id, 200, 50)
        });
        assert_eq!((a.held(), count.load(Ordering::Relaxed)), (2, 3));
        drop(b);
        assert_eq!(count.load(Ordering::Relaxed), 2);
        drop(a);
        assert_eq!(count.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_token_carries_its_floor() {
        let t = lease_token(1_700_000_000_123, false);
        assert_eq!(t.len(), 32 + 1 + 13);
        assert_eq!(token_floor(&t), 1_700_000_000_123);
        assert!(!token_in_file(&t));
        assert_eq!(token_floor(&lease_token(0, false)), 0);
        let f = lease_token(1_700_000_000_123, true);
        assert_eq!(f.len(), 32 + 1 + 13 + 2);
        assert!(token_in_file(&f));
        assert_eq!(token_floor(&f), 1_700_000_000_123);
        // A token of an older server (hex only) has no floor to tell.
        assert_eq!(token_floor("0123456789abcdef0123456789abcdef"), 0);
    }

    #[test]
    fn a_row_written_past_the_fresh_ids_leaves_holes() {
        let mut l = Leases::new(1, vec![], Arc::default());
        l.written(row(3, 100, 5));
        let picks: Vec<i64> = (0..4).filter_map(|_| l.pick(50, 10)).map(|p| p.0).collect();
        assert_eq!(picks, [0, 1, 2, 4]);
    }
}
