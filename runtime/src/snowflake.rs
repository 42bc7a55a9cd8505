//! The thread-safe, fork-aware snowflake generator.

use std::path::PathBuf;
use std::time::Duration;

use idforge_core::Error as CoreError;
use idforge_core::snowflake::{Layout, Parts, SnowflakeGen};
use idforge_core::tick::{Next, SeqStart};

use crate::clock::{Clock, SystemClock};
use crate::entropy;
use crate::error::Result;
use crate::fork;
use crate::lease::{DEFAULT_LEASE_TTL, LeaseParams, WorkerLease};
use crate::policy::{self, Policy};
use crate::state_file::StateFile;

/// Snowflake ids for one node: `Send + Sync`, one clock read and one atomic add per id.
///
/// Under a [`Policy::Borrow`] of at least 50 ms (the default borrows 1 s), [`next`] reads the
/// coarse clock ([`Clock::recent_ms`]): 3-5 ns where a precise read costs ~23, for ids whose
/// time trails the clock by up to one kernel tick (1-10 ms; 4 ms at HZ=250). It is never ahead
/// of the clock, so the policy's lead still holds. [`Policy::Wait`] and [`Policy::Error`],
/// which promise ids never ahead of the clock, and the batch calls, read the precise clock:
/// their ids carry the millisecond they were made in.
///
/// A fixed node id cannot be shared by a forked child and its parent, so in a child every call
/// fails with `FORKED` until the child builds its own generator with its own node id.
///
/// [`next`]: Snowflake::next
#[derive(Debug)]
pub struct Snowflake<C: Clock = SystemClock> {
    generator: SnowflakeGen,
    clock: C,
    policy: Policy,
    /// Whether [`next`](Snowflake::next) may read [`Clock::recent_ms`]: when the policy's lead
    /// covers the coarse clock's lag with room, so the lag never turns into waiting.
    recent: bool,
    born_in: u64,
    state: Option<StateFile>,
    lease: Option<WorkerLease>,
}

/// Options for a [`Snowflake`]; start with [`Snowflake::builder`].
#[derive(Debug, Clone)]
pub struct SnowflakeBuilder<C: Clock = SystemClock> {
    layout: Layout,
    node: u64,
    policy: Policy,
    clock: C,
    state_file: Option<(PathBuf, u64)>,
    lease: Option<LeaseConfig>,
    random_start: bool,
}

/// Where a builder leases its node id from.
#[derive(Debug, Clone)]
struct LeaseConfig {
    url: String,
    service: String,
    ttl: Duration,
    /// How far this host's clock may differ from the server's (`None`: the URL's
    /// `max_skew_ms`, else [`DEFAULT_MAX_SKEW`](crate::lease::DEFAULT_MAX_SKEW)).
    max_skew: Option<Duration>,
    /// The holder's name (`None`: the URL's `holder`, else none).
    holder: Option<String>,
    /// The file the lease is kept in (`None`: the URL's `lease_file`, else none).
    file: Option<PathBuf>,
}

impl LeaseConfig {
    /// Options set before [`SnowflakeBuilder::lease`] names the server.
    fn unnamed() -> LeaseConfig {
        LeaseConfig {
            url: String::new(),
            service: String::new(),
            ttl: DEFAULT_LEASE_TTL,
            max_skew: None,
            holder: None,
            file: None,
        }
    }
}

impl Snowflake {
    /// A generator for `node` with the default policy (borrow up to 1 s) and the system clock.
    pub fn new(layout: Layout, node: u64) -> Result<Snowflake> {
        Snowflake::builder(layout).node(node).build()
    }

    /// Starts building a generator for `layout` (node 0, default policy, system clock).
    pub fn builder(layout: Layout) -> SnowflakeBuilder {
        SnowflakeBuilder {
            layout,
            node: 0,
            policy: Policy::default(),
            clock: SystemClock::shared(),
            state_file: None,
            lease: None,
            random_start: false,
        }
    }
}

impl<C: Clock> SnowflakeBuilder<C> {
    /// The node (worker, machine, shard) id; must fit the layout.
    pub fn node(mut self, node: u64) -> Self {
        self.node = node;
        self
    }

    /// Starts each tick's sequence at a random value below half its range instead of 0, so
    /// that `id % n` spreads evenly over shards even at a few ids per tick (by default most ids
    /// end in sequence 0). A tick then holds at least half its sequence range (2,048 ids per ms
    /// in the Twitter layout) before borrowing the next; ids still strictly increase.
    pub fn random_start(mut self, random: bool) -> Self {
        self.random_start = random;
        self
    }

    /// What to do when ahead of the clock.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// Persist a high-water time in `path` so that ids stay unique across restarts even if the
    /// clock was stepped back while the process was down. One generator owns the file at a
    /// time: building another on it fails with `IO` while the first lives (see
    /// [`StateFile::open`]).
    pub fn state_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.state_file = Some((path.into(), StateFile::DEFAULT_WINDOW_MS));
        self
    }

    /// Like [`state_file`](Self::state_file) with a chosen persist window (ms).
    pub fn state_file_with_window(mut self, path: impl Into<PathBuf>, window_ms: u64) -> Self {
        self.state_file = Some((path.into(), window_ms));
        self
    }

    /// Leases the node id from an idforge server (`IDF.WORKER`) instead of [`node`]: the
    /// lowest id of `service` no live process holds, renewed in the background and released
    /// when the generator is dropped. If the lease is lost or cannot be renewed in time, every
    /// call fails with `LEASE_LOST`: build a new generator. `url` is
    /// `idforge://[user:pass@]host:port[,host:port…]`, optionally with `?max_skew_ms=N` (see
    /// [`lease_max_skew`](Self::lease_max_skew)).
    ///
    /// Ids carry times after the id's time floor (the latest time its earlier holder could
    /// have used, told by the server): a clock behind it waits within the policy (as after a
    /// restart with a state file) or fails with `CLOCK_BEHIND`, never making an id at or
    /// below it. A server older than time floors tells none (it refuses `CLOCK`): the lease is
    /// then taken as before floors, the id kept apart from its earlier holder's only by the
    /// id's reuse delay on the server's clock.
    ///
    /// [`node`]: Self::node
    pub fn lease(mut self, url: impl Into<String>, service: impl Into<String>) -> Self {
        let mut config = self.lease.take().unwrap_or_else(LeaseConfig::unnamed);
        config.url = url.into();
        config.service = service.into();
        self.lease = Some(config);
        self
    }

    /// Names this instance to the lease server (sticky ids; wins over the URL's `holder`): a
    /// stable name of the instance, such as its host and port or its pod's name, 1-128
    /// characters of `A-Za-z0-9_-.:`. The server gives a named holder back the id it held
    /// before whenever that id is free for it, and keeps the id reserved for it for a while
    /// after its lease ends (the server's `--worker-reserve-ms`), so a restart gets the same
    /// node id. Two live instances must not share a name. A server older than names leases
    /// without one. Takes effect with [`lease`](Self::lease), before or after it.
    pub fn lease_holder(mut self, name: impl Into<String>) -> Self {
        self.lease.get_or_insert_with(LeaseConfig::unnamed).holder = Some(name.into());
        self
    }

    /// Keeps the lease in the file at `path` (wins over the URL's `lease_file`; needs a
    /// [`lease_holder`](Self::lease_holder)), so that an instance restarted while the server is
    /// out of reach still starts (Leaf's weak dependency). The file holds the id, its token,
    /// the reservation's end and a mark above every id made; the renewer rewrites it (fsync)
    /// before the lease's validity moves past the mark, never the id path.
    ///
    /// At start, the file's lease is renewed with its token (the same id, even after its end);
    /// when the server cannot be reached, the generator goes on with the file's id only while
    /// the reservation has certainly not ended (its end on the server's clock, judged on this
    /// host's boot clock since the write, less the allowed skew and at least 1 s; never with a
    /// file from an earlier boot) and only with ids after the file's mark; it keeps trying the
    /// server, and stops with `LEASE_LOST` before the reservation could end. Cut off while
    /// running, it goes on the same way. A file that is damaged, cut, or another service's or
    /// holder's is refused (`IO`), a clock behind the file's mark by more than the margin is
    /// `CLOCK_BEHIND`, and a server out of reach with no usable file is `SOURCE_UNAVAILABLE`.
    /// Dropped, the generator leaves the lease to end by itself (reserved for its name) and the
    /// file ready for the next start.
    pub fn lease_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.lease.get_or_insert_with(LeaseConfig::unnamed).file = Some(path.into());
        self
    }

    /// How far this host's clock may differ from the lease server's (default 1 s, or the
    /// URL's `max_skew_ms`; this wins over both): past it the lease is given back and
    /// [`build`](Self::build) fails with `CLOCK_BEHIND`. A clock ahead is also allowed at most
    /// a quarter of the lease's TTL (its leases end by the server's clock), and one behind less
    /// than 90% of it (the id's time floor can be as late as the server's clock, and the first
    /// ids must fall within the lease). Takes effect with [`lease`](Self::lease), before or
    /// after it. A server older than time floors tells no clock: nothing is checked then.
    pub fn lease_max_skew(mut self, max_skew: Duration) -> Self {
        self.lease.get_or_insert_with(LeaseConfig::unnamed).max_skew = Some(max_skew);
        self
    }

    /// The lease's time to live (default 10 s; the lease is renewed every third of it). Takes
    /// effect with [`lease`](Self::lease), before or after it.
    pub fn lease_ttl(mut self, ttl: Duration) -> Self {
        self.lease.get_or_insert_with(LeaseConfig::unnamed).ttl = ttl;
        self
    }

    /// Uses another clock (tests, simulations).
    pub fn clock<D: Clock>(self, clock: D) -> SnowflakeBuilder<D> {
        SnowflakeBuilder {
            layout: self.layout,
            node: self.node,
            policy: self.policy,
            clock,
            state_file: self.state_file,
            lease: self.lease,
            random_start: self.random_start,
        }
    }

    /// Validates everything and builds the generator.
    pub fn build(self) -> Result<Snowflake<C>> {
        let born_in = fork::register()?;
        let now = self.clock.now_ms();
        self.layout.check_epoch(now)?;
        let lease = match &self.lease {
            Some(l) if l.url.is_empty() => {
                return Err(CoreError::InvalidArgument(
                    "lease_ttl, lease_max_skew, lease_holder or lease_file without lease(url, service)",
                )
                .into());
            }
            Some(l) => Some(WorkerLease::acquire_with(
                &l.url,
                &l.service,
                l.ttl,
                self.layout.max_node().saturating_add(1),
                LeaseParams {
                    max_skew: l.max_skew,
                    holder: l.holder.clone(),
                    file: l.file.clone(),
                },
            )?),
            None => None,
        };
        let node = lease.as_ref().map_or(self.node, WorkerLease::id);
        self.layout.check_node(node)?;
        let lead_ms = self.policy.max_lead().as_millis().min(u128::from(u64::MAX)) as u64;
        let mut generator = SnowflakeGen::new(self.layout, node, lead_ms)?;
        if self.random_start {
            generator = generator.with_start(SeqStart::Keyed(entropy::u64()?));
        }
        if let Some(lease) = &lease {
            // No id at or below the time an earlier holder of this node id could have used,
            // whatever this host's clock says: the policy waits for it or refuses.
            generator.resume_after_ms(lease.floor_ms());
        }
        let state = match self.state_file {
            None => None,
            Some((path, window)) => {
                // The last millisecond of the layout's last tick: a mark past it leaves no id.
                let max_ms = self
                    .layout
                    .max_time_ms()
                    .saturating_add(self.layout.tick_ms().saturating_sub(1));
                let (file, held_ms) = StateFile::open_within(path, window, max_ms)?;
                generator.resume_after_ms(held_ms);
                file.cover(now.max(held_ms))?;
                Some(file)
            }
        };
        Ok(Snowflake {
            generator,
            clock: self.clock,
            policy: self.policy,
            recent: self.policy.max_lead() >= RECENT_MIN_LEAD,
            born_in,
            state,
            lease,
        })
    }
}

impl<C: Clock> Snowflake<C> {
    /// The next id.
    #[inline]
    pub fn next(&self) -> Result<u64> {
        self.next_within(false)
    }

    /// The next id, never sleeping: where [`next`](Self::next) would wait for the clock (the
    /// tick's sequence is used up and the policy allows no more lead), this fails at once with
    /// `CLOCK_BEHIND`. For callers that must not block, such as an event loop.
    #[inline]
    pub fn next_now(&self) -> Result<u64> {
        self.next_within(true)
    }

    #[inline]
    fn next_within(&self, no_wait: bool) -> Result<u64> {
        // Fast path, small enough to inline into callers (the C ABI, the bindings): no state
        // file, not forked, and the tick has room. A failed attempt issues nothing, so the slow
        // path simply starts over with the policy.
        if self.state.is_none() && self.lease.is_none() && fork::current() == self.born_in {
            let now = if self.recent {
                self.clock.recent_ms()
            } else {
                self.clock.now_ms()
            };
            if let Ok(Next::Id(id)) = self.generator.next(now) {
                return Ok(id);
            }
        }
        self.next_slow(no_wait)
    }

    #[cold]
    #[inline(never)]
    fn next_slow(&self, no_wait: bool) -> Result<u64> {
        self.check_fork()?;
        let budget = if no_wait {
            Duration::ZERO
        } else {
            self.policy.max_wait()
        };
        let id = policy::run(&self.clock, budget, |now| Ok(self.generator.next(now)?))?;
        self.persist(id)?;
        Ok(id)
    }

    /// Fills `out` with fresh ids, in increasing order; one clock read and one CAS per run of
    /// ids sharing a tick. On error, the ids written before it are valid and issued.
    pub fn next_many(&self, out: &mut [u64]) -> Result<()> {
        self.fill(out, self.policy.max_wait())
    }

    /// [`next_many`](Self::next_many) without sleeping: fails with `CLOCK_BEHIND` where it
    /// would wait for the clock (the ids written before are valid and issued).
    pub fn next_many_now(&self, out: &mut [u64]) -> Result<()> {
        self.fill(out, Duration::ZERO)
    }

    /// Fills `out` run by run, waiting at most `budget` for each.
    fn fill(&self, out: &mut [u64], budget: Duration) -> Result<()> {
        let mut done = 0;
        while done < out.len() {
            done += self.next_run(&mut out[done..], budget)?;
        }
        Ok(())
    }

    /// Fills the start of `out` with consecutive ids of one tick (one clock read, one CAS) and
    /// returns how many (at least one unless `out` is empty); never sleeps. A binding serves
    /// single ids from such a run to save crossings into native code.
    pub fn next_run_now(&self, out: &mut [u64]) -> Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        self.next_run(out, Duration::ZERO)
    }

    fn next_run(&self, out: &mut [u64], budget: Duration) -> Result<usize> {
        self.check_fork()?;
        let n = policy::run(&self.clock, budget, |now| {
            Ok(self.generator.next_run(now, out)?)
        })?;
        self.persist(out[n - 1])?;
        Ok(n)
    }

    /// Covers `id`'s time in the state file, when there is one; refuses it when it is not
    /// covered by the worker lease, when there is one.
    fn persist(&self, id: u64) -> Result<()> {
        if let Some(lease) = &self.lease {
            lease.check(self.layout().decompose(id)?.time_ms)?;
        }
        if let Some(state) = &self.state {
            let time_ms = self.layout().decompose(id)?.time_ms;
            state.cover(time_ms)?;
        }
        Ok(())
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        self.generator.layout()
    }

    /// The node id.
    pub fn node(&self) -> u64 {
        self.generator.node()
    }

    /// The policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// Whether each tick's sequence starts at a random value
    /// ([`SnowflakeBuilder::random_start`]).
    pub fn random_start(&self) -> bool {
        self.generator.start() != SeqStart::Zero
    }

    /// Splits an id of this layout into its fields.
    pub fn decode(&self, id: u64) -> Result<Parts> {
        Ok(self.layout().decompose(id)?)
    }

    /// The worker lease the node id comes from, if any.
    pub fn lease(&self) -> Option<&WorkerLease> {
        self.lease.as_ref()
    }

    /// The high-water time persisted in the state file, if one is configured.
    pub fn persisted_ms(&self) -> Option<u64> {
        self.state.as_ref().map(StateFile::persisted_ms)
    }

    #[inline]
    fn check_fork(&self) -> Result<()> {
        if fork::current() != self.born_in {
            return Err(CoreError::Forked.into());
        }
        Ok(())
    }
}

/// The least lead under which [`Snowflake::next`] reads the coarse clock: its lag (a kernel tick,
/// at most 10 ms, sometimes a little more on a loaded machine) fits in it five times over.
const RECENT_MIN_LEAD: Duration = Duration::from_millis(50);

impl<C: Clock> Drop for Snowflake<C> {
    fn drop(&mut self) {
        // Settle the state file's mark to the last tick used, so a restart soon after
        // continues at once instead of waiting out the window. Not in a forked child: its copy
        // of the generator is behind its parent's, which still writes the file.
        if let Some(state) = self
            .state
            .as_ref()
            .filter(|_| fork::current() == self.born_in)
        {
            let _ = state.settle(self.generator.high_water_ms());
        }
        // Tell the server the latest time used, so the id is free again as soon as it passed.
        if let Some(lease) = &mut self.lease {
            lease.release(self.generator.high_water_ms());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::error::ErrorCode;
    use std::sync::Arc;
    use std::time::Duration;

    fn tiny() -> Layout {
        // 2 sequence bits: 4 ids per ms, so limits are reached quickly.
        Layout::new(
            1_000,
            1,
            41,
            4,
            2,
            idforge_core::snowflake::Order::TimeNodeSeq,
            false,
        )
        .unwrap()
    }

    /// A clock whose coarse reading trails its precise one by 10 ms, to see which one is read.
    #[derive(Debug)]
    struct Trailing(u64);

    impl Clock for Trailing {
        fn now_ms(&self) -> u64 {
            self.0
        }
        fn recent_ms(&self) -> u64 {
            self.0 - 10
        }
    }

    #[test]
    fn next_reads_the_coarse_clock_only_under_a_lead_that_covers_it() {
        let time_of = |policy: Policy, batch: bool| {
            let g = Snowflake::builder(tiny())
                .policy(policy)
                .clock(Trailing(50_000))
                .build()
                .unwrap();
            let id = if batch {
                let mut out = [0; 1];
                g.next_many(&mut out).unwrap();
                out[0]
            } else {
                g.next().unwrap()
            };
            g.decode(id).unwrap().time_ms
        };
        let borrow = |ms| Policy::Borrow {
            max_lead: Duration::from_millis(ms),
        };
        assert_eq!(time_of(Policy::default(), false), 49_990);
        assert_eq!(time_of(borrow(50), false), 49_990);
        assert_eq!(time_of(borrow(49), false), 50_000);
        let wait = Policy::Wait {
            budget: Duration::from_secs(1),
        };
        assert_eq!(time_of(wait, false), 50_000);
        assert_eq!(time_of(Policy::Error, false), 50_000);
        // Batches pay one precise read per run.
        assert_eq!(time_of(Policy::default(), true), 50_000);
    }

    #[test]
    fn ids_on_the_system_clock_are_never_ahead_of_it_and_trail_it_only_under_borrow() {
        let clock = SystemClock::shared();
        let wait = Policy::Wait {
            budget: Duration::from_secs(1),
        };
        for policy in [Policy::default(), wait] {
            let g = Snowflake::builder(Layout::TWITTER)
                .policy(policy)
                .build()
                .unwrap();
            for _ in 0..4_000 {
                let before = clock.now_ms();
                let made = g.decode(g.next().unwrap()).unwrap().time_ms;
                let after = clock.now_ms();
                // Fewer ids in all than one tick's sequence holds (4,096): none borrows time.
                assert!(made <= after, "{policy:?}: id at {made}, clock at {after}");
                if policy == wait {
                    assert!(made >= before, "wait: id at {made}, made after {before}");
                } else {
                    // A tick (1-10 ms), or a few on a loaded VM; far less than a second.
                    assert!(
                        made + 1000 >= before,
                        "borrow: id at {made} trails {before}"
                    );
                }
            }
        }
    }

    #[test]
    fn wait_policy_waits_for_the_next_tick() {
        let clock = Arc::new(ManualClock::new(5_000));
        let g = Snowflake::builder(tiny())
            .node(3)
            .policy(Policy::Wait {
                budget: Duration::from_secs(5),
            })
            .clock(clock.clone())
            .build()
            .unwrap();
        for _ in 0..4 {
            g.next().unwrap();
        }
        let mover = {
            let clock = clock.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(30));
                clock.advance(1);
            })
        };
        let id = g.next().unwrap();
        mover.join().unwrap();
        assert_eq!(g.decode(id).unwrap().time_ms, 5_001);
    }

    #[test]
    fn now_variants_fail_where_next_would_wait_and_issue_nothing_twice() {
        let clock = Arc::new(ManualClock::new(5_000));
        let g = Snowflake::builder(tiny())
            .policy(Policy::Wait {
                budget: Duration::from_secs(5),
            })
            .clock(clock.clone())
            .build()
            .unwrap();
        // One run takes the whole tick (4 ids); the next call would have to wait a tick.
        let mut run = [0u64; 8];
        assert_eq!(g.next_run_now(&mut run).unwrap(), 4);
        assert_eq!(g.next_run_now(&mut []).unwrap(), 0);
        assert_eq!(g.next_now().unwrap_err().code(), ErrorCode::ClockBehind);
        let mut many = [0u64; 2];
        assert_eq!(
            g.next_many_now(&mut many).unwrap_err().code(),
            ErrorCode::ClockBehind
        );
        clock.set(5_001);
        let after = g.next_now().unwrap();
        assert!(run[..4].windows(2).all(|w| w[0] < w[1]) && run[3] < after);
        g.next_many_now(&mut many).unwrap();
        assert!(after < many[0] && many[0] < many[1]);
    }

    #[test]
    fn error_policy_refuses_a_clock_far_behind() {
        let clock = Arc::new(ManualClock::new(5_000));
        let g = Snowflake::builder(tiny())
            .policy(Policy::Error)
            .clock(clock.clone())
            .build()
            .unwrap();
        g.next().unwrap();
        clock.set(4_000);
        let err = g.next().unwrap_err();
        assert_eq!(err.code(), ErrorCode::ClockBehind);
    }

    #[test]
    fn wait_policy_times_out_within_its_budget() {
        let clock = Arc::new(ManualClock::new(5_000));
        let g = Snowflake::builder(tiny())
            .policy(Policy::Wait {
                budget: Duration::from_millis(20),
            })
            .clock(clock.clone())
            .build()
            .unwrap();
        for _ in 0..4 {
            g.next().unwrap();
        }
        let t = std::time::Instant::now();
        let err = g.next().unwrap_err();
        assert_eq!(err.code(), ErrorCode::Timeout);
        assert!(t.elapsed() >= Duration::from_millis(20));
    }

    #[test]
    fn borrow_policy_runs_ahead_then_stops_at_the_lead() {
        let clock = Arc::new(ManualClock::new(5_000));
        let g = Snowflake::builder(tiny())
            .policy(Policy::Borrow {
                max_lead: Duration::from_millis(2),
            })
            .clock(clock.clone())
            .build()
            .unwrap();
        let mut ids = vec![0u64; 12];
        g.next_many(&mut ids).unwrap();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            g.decode(ids[11]).unwrap().time_ms,
            5_002,
            "borrowed two ticks"
        );
        // The clock does not move: a 13th id would need a 3 ms lead.
        let err = g.next().unwrap_err();
        assert_eq!(err.code(), ErrorCode::Timeout);
    }

    #[test]
    fn state_file_survives_a_clock_stepped_back_while_down() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("node-3.hw");
        let clock = Arc::new(ManualClock::new(100_000));
        let first = {
            let g = Snowflake::builder(tiny())
                .state_file_with_window(&path, 1_000)
                .clock(clock.clone())
                .build()
                .unwrap();
            let id = g.next().unwrap();
            assert_eq!(g.persisted_ms(), Some(101_000));
            id
        };
        // "Restart" with the clock 10 s behind: resuming would have to wait 11 s, so it refuses.
        clock.set(90_000);
        let g = Snowflake::builder(tiny())
            .state_file_with_window(&path, 1_000)
            .clock(clock.clone())
            .build()
            .unwrap();
        assert_eq!(g.next().unwrap_err().code(), ErrorCode::ClockBehind);
        // Once the clock is past the mark, ids resume above every earlier one.
        clock.set(101_500);
        let id = g.next().unwrap();
        assert!(id > first);
        assert!(g.decode(id).unwrap().time_ms > 101_000);
    }

    #[test]
    fn refuses_bad_configuration() {
        let future = Layout::new(
            u64::MAX / 4,
            1,
            41,
            10,
            12,
            idforge_core::snowflake::Order::TimeNodeSeq,
            false,
        )
        .unwrap();
        assert_eq!(
            Snowflake::new(future, 0).unwrap_err().code(),
            ErrorCode::EpochInFuture
        );
        assert_eq!(
            Snowflake::new(Layout::TWITTER, 1024).unwrap_err().code(),
            ErrorCode::NodeOutOfRange
        );
    }

    #[test]
    fn a_state_file_mark_past_the_layout_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("node-3.hw");
        let held = tiny().max_time_ms() + 5;
        StateFile::write_mark_to(&path, held).unwrap();
        let err = Snowflake::builder(tiny())
            .state_file_with_window(&path, 1_000)
            .clock(Arc::new(ManualClock::new(100_000)))
            .build()
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::TimeOutOfRange);
        assert_eq!(StateFile::read_mark(&path).unwrap(), held, "not written");
    }
}
