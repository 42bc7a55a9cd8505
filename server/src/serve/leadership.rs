//! This server's role ([`Leadership`]): what the allocator asks before it hands out an id, "am I
//! the leader, and is my lease still good *now*?". The answer is a deadline on the monotonic
//! clock, moved ahead by each lease renewal of the election (`ha`); it never lasts past the
//! lease's end at the store, so a server paused past its lease serves nothing when it resumes.
//! Also the servers of a group as clients reach them ([`Peer`]) and the election's settings
//! ([`ElectionConfig`]). At the bottom floor: the allocator and the settings use it, the
//! elections (above them) move it.
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::serve::lock::lock;

/// How an election runs (etcd's in [`etcd`], a SQL store's in [`sql`]).
#[derive(Debug, Clone)]
pub struct ElectionConfig {
    /// The lease's time to live, in whole seconds (etcd's unit).
    pub lease_ttl: i64,
    /// How often a standby reads the leader key.
    pub poll: Duration,
    /// Revoke the lease of a leader whose port refuses connections.
    pub probe: bool,
}

/// A server of the group, as clients reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    /// A 40-hex-digit id, new at each start (`CLUSTER MYID`).
    pub id: String,
    /// The host clients connect to.
    pub host: String,
    /// The port clients connect to.
    pub port: u16,
}

impl Peer {
    /// `host:port`.
    pub fn addr(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// A peer with a fresh random id.
    pub fn new(host: &str, port: u16) -> Peer {
        let mut raw = [0u8; 20];
        // A failing system RNG only makes ids less unique across restarts; use the time then.
        if getrandom::fill(&mut raw).is_err() {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos();
            raw[..16].copy_from_slice(&t.to_le_bytes());
        }
        Peer {
            id: raw.iter().map(|b| format!("{b:02x}")).collect(),
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            port,
        }
    }

    /// The leader key's value: `id host:port`.
    pub fn encode(&self) -> String {
        format!("{} {}", self.id, self.addr())
    }

    /// Reads [`Peer::encode`]'s text.
    pub fn decode(text: &str) -> Option<Peer> {
        let (id, addr) = text.split_once(' ')?;
        let (host, port) = addr.rsplit_once(':')?;
        Some(Peer {
            id: id.to_owned(),
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            port: port.parse().ok()?,
        })
    }
}

/// A deadline meaning "for ever": a server alone serves without a lease.
const FOREVER: u64 = u64::MAX;

/// This server's role and the leader it knows.
#[derive(Debug)]
pub struct Leadership {
    /// The zero of `valid_until`.
    origin: Instant,
    /// Serving until this many ns after `origin` (0: not serving; [`FOREVER`]: alone).
    valid_until: AtomicU64,
    elected: bool,
    me: Peer,
    leader: Mutex<Option<Peer>>,
    /// The leader's term as the store numbers it (etcd: its key's create revision; SQL: the
    /// fencing token); 0: not known (alone, or no leader seen yet).
    term: std::sync::atomic::AtomicI64,
    /// Every server of the group with a live lease (the leader among them).
    members: Mutex<Vec<Peer>>,
    /// `IDF.FAILOVER` asks the election to hand over…
    pub(super) failover: Notify,
    /// …and this is told when it did.
    pub(super) failover_done: Notify,
}

impl Leadership {
    /// A server alone: always the leader.
    pub fn alone(me: Peer) -> Leadership {
        Leadership::new(me, false)
    }

    /// A member of an elected group: a standby until its election ([`etcd`], [`sql`]) wins a lease.
    pub fn elected(me: Peer) -> Leadership {
        Leadership::new(me, true)
    }

    fn new(me: Peer, elected: bool) -> Leadership {
        Leadership {
            origin: Instant::now(),
            valid_until: AtomicU64::new(if elected { 0 } else { FOREVER }),
            elected,
            leader: Mutex::new((!elected).then(|| me.clone())),
            term: std::sync::atomic::AtomicI64::new(0),
            members: Mutex::new(vec![me.clone()]),
            me,
            failover: Notify::new(),
            failover_done: Notify::new(),
        }
    }

    /// Whether this server may hand out ids at this instant.
    #[inline]
    pub fn serving(&self) -> bool {
        let until = self.valid_until.load(Ordering::Acquire);
        until == FOREVER || (until != 0 && self.nanos(Instant::now()) < until)
    }

    /// Whether the server runs in an elected group.
    pub fn is_elected(&self) -> bool {
        self.elected
    }

    /// This server.
    pub fn me(&self) -> &Peer {
        &self.me
    }

    /// The leader this server knows of (itself when it leads), if any.
    pub fn leader(&self) -> Option<Peer> {
        lock(&self.leader).clone()
    }

    /// The servers of the group other than the leader (the replicas of `CLUSTER SLOTS`),
    /// sorted by id.
    pub fn standbys(&self) -> Vec<Peer> {
        let leader = self.leader().map(|l| l.id);
        let mut others: Vec<Peer> = lock(&self.members)
            .iter()
            .filter(|p| Some(&p.id) != leader.as_ref())
            .cloned()
            .collect();
        others.sort_by(|a, b| a.id.cmp(&b.id));
        others
    }

    /// Records the members read from the store.
    pub(super) fn set_members(&self, members: Vec<Peer>) {
        *lock(&self.members) = members;
    }

    fn nanos(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.origin).as_nanos()).unwrap_or(FOREVER - 1)
    }

    /// Serve until `until` (a lease was won or renewed).
    pub(super) fn serve_until(&self, until: Instant) {
        *lock(&self.leader) = Some(self.me.clone());
        self.valid_until
            .store(self.nanos(until).clamp(1, FOREVER - 1), Ordering::Release);
    }

    /// Stop serving at once.
    pub(super) fn stop_serving(&self) {
        if self.elected {
            self.valid_until.store(0, Ordering::Release);
        }
    }

    /// The leader's term (the status page's), if known.
    pub fn term(&self) -> Option<i64> {
        Some(self.term.load(Ordering::Relaxed)).filter(|t| *t != 0)
    }

    /// Records the term of the leader seen or won (see `term`).
    pub(super) fn set_term(&self, term: i64) {
        self.term.store(term, Ordering::Relaxed);
    }

    /// Records the leader seen in the store (`None`: there is none).
    pub(super) fn set_leader(&self, leader: Option<Peer>) {
        *lock(&self.leader) = leader;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_lease_is_served_until_its_deadline() {
        let alone = Leadership::alone(Peer::new("127.0.0.1", 1));
        assert!(alone.serving());
        alone.stop_serving();
        assert!(alone.serving(), "a server alone has no lease to lose");

        let l = Leadership::elected(Peer::new("127.0.0.1", 2));
        assert!(!l.serving());
        assert_eq!(l.leader(), None);
        l.serve_until(Instant::now() + Duration::from_secs(60));
        assert!(l.serving());
        assert_eq!(l.leader().unwrap(), *l.me());
        l.serve_until(Instant::now());
        assert!(!l.serving(), "a deadline in the past");
        l.serve_until(Instant::now() + Duration::from_secs(60));
        l.stop_serving();
        assert!(!l.serving());
    }

    #[test]
    fn peers_round_trip_through_the_leader_key() {
        let p = Peer::new("10.0.0.5", 7379);
        assert_eq!(p.id.len(), 40);
        assert_ne!(p.id, Peer::new("10.0.0.5", 7379).id);
        assert_eq!(Peer::decode(&p.encode()).unwrap(), p);
        let v6 = Peer::new("[::1]", 7000);
        assert_eq!(v6.addr(), "[::1]:7000");
        assert_eq!(Peer::decode(&v6.encode()).unwrap(), v6);
        assert_eq!(Peer::decode("nope"), None);
    }
}
