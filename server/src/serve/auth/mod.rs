//! Users, passwords (argon2) and per-tag-pattern permissions.
//!
//! Auth is on when `requirepass` is set (the `default` user, with every right) or when the store
//! holds users. A user's permissions are words: `admin` (everything, including `IDF.TAG
//! CREATE/DROP` and `IDF.USER`), `alloc:PATTERN` (take ids of matching tags; implies read) and
//! `read:PATTERN` (`GET`, `IDF.TAG INFO/LIST`).
//!
//! Users turn auth on, and only an admin can manage them: without `requirepass`, a change that
//! would leave users but no admin among them (a first user that is not an admin, deleting or
//! demoting the last admin) is refused ([`UserChangeError::NoAdminLeft`]), since after it no
//! client could ever run `IDF.USER` again (only a restart with `--requirepass` would let one).
//!
//! Checking a password must cost an attacker more than the server (docs/server.md "Limits"):
//! - at most `auth-concurrency` argon2 checks run at once; the others wait in line holding
//!   nothing but the password, and the checks reuse a pool of argon2 memory blocks, so the
//!   memory argon2 ever takes is `auth-concurrency` × m_cost (19 MiB each by default) instead of
//!   growing with the number of clients (the blocking pool's threads each kept their own malloc
//!   arena of freed 19 MiB blocks: 64 concurrent wrong AUTHs left 1.2 GB behind per round);
//! - an unknown user is checked against a dummy hash with the same parameters, so it takes the
//!   time a known one takes (no user-name oracle);
//! - each source address (an IPv6 /64) has a token bucket of `auth-fail-burst` attempts,
//!   refilled at one per second: an attempt takes a token before its check and gives it back
//!   on success, so a flood from one address is refused without running argon2.
//!
//! A flood of wrong passwords from many addresses (each within its allowance) still fills the
//! line of checks, and used to hold a real user's AUTH for seconds behind it (600 connections
//! from 200 addresses: 6.6-8.8 s). So that it cannot:
//! - the line has three lanes (`Gate`): first the addresses that passed an AUTH in the last
//!   [`TRUSTED_FOR`] and failed none since, then the addresses it knows nothing of, last those
//!   that failed one in the last [`SUSPECT_FOR`] (and passed none since). So a flood's first
//!   attempts queue behind every address that has a client logged in, and its later ones behind
//!   everybody else; a client at an address that is not flooding waits for the checks already
//!   running, not for the flood. (A client at an address never seen before, during a flood from
//!   addresses never seen before either, still waits with the flood's first attempts.)
//! - a password verified by argon2 is remembered for [`VERIFIED_FOR`] (`Verified`), as an
//!   HMAC-SHA256 of the user and password under a key drawn at start and kept only in memory,
//!   together with the hash it was checked against: the same user and password again (a pool
//!   reconnecting, even from an address that shares in the flood) is let in without a check,
//!   without waiting, and without taking from its address's allowance. A change of password
//!   (its hash changes) or of the users ends it. What this costs: a memory dump of the process
//!   would let passwords used in the last [`VERIFIED_FOR`] be tried at HMAC speed rather than
//!   argon2's (the dump holds the key); the argon2 hashes of every user are in memory anyway.

pub mod credential;

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use argon2::password_hash::{Output, PasswordHash, PasswordHasher, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use ring::hmac;
use tokio::sync::oneshot;

use super::config::Limits;

use super::lock::lock;
use super::store::{Store, StoreError, UserRow};
use crate::text::glob::glob_match;
use credential::constant_time_eq;

/// What a permission allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Right {
    /// Read a tag's state.
    Read,
    /// Take ids of a tag (or snowflake name).
    Alloc,
}

/// A user's rights.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Perms {
    admin: bool,
    rules: Vec<(Right, String)>,
}

/// Why permission words were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PermsError {
    /// A word that is no permission.
    #[error("bad permission '{0}' (admin, alloc:PATTERN or read:PATTERN)")]
    Unknown(String),
    /// `read:` or `alloc:` without a pattern.
    #[error("permission '{0}' has an empty pattern")]
    EmptyPattern(String),
}

impl Perms {
    /// Every right.
    pub fn all() -> Perms {
        Perms {
            admin: true,
            rules: Vec::new(),
        }
    }

    /// Parses permission words.
    pub fn parse<'a>(words: impl IntoIterator<Item = &'a str>) -> Result<Perms, PermsError> {
        let mut perms = Perms::default();
        for word in words {
            if word.eq_ignore_ascii_case("admin") {
                perms.admin = true;
                continue;
            }
            let (right, pattern) = match word.split_once(':') {
                Some((r, p)) if r.eq_ignore_ascii_case("read") => (Right::Read, p),
                Some((r, p)) if r.eq_ignore_ascii_case("alloc") => (Right::Alloc, p),
                _ => return Err(PermsError::Unknown(word.to_owned())),
            };
            if pattern.is_empty() {
                return Err(PermsError::EmptyPattern(word.to_owned()));
            }
            perms.rules.push((right, pattern.to_owned()));
        }
        Ok(perms)
    }

    /// Administrator rights.
    pub fn is_admin(&self) -> bool {
        self.admin
    }

    /// Whether `right` is granted on `tag`.
    pub fn allows(&self, right: Right, tag: &str) -> bool {
        self.admin
            || self.rules.iter().any(|(r, pattern)| {
                (*r == right || *r == Right::Alloc)
                    && glob_match(pattern.as_bytes(), tag.as_bytes())
            })
    }

    /// The permission words.
    pub fn words(&self) -> String {
        let mut words: Vec<String> = Vec::new();
        if self.admin {
            words.push("admin".into());
        }
        for (r, p) in &self.rules {
            let r = if *r == Right::Read { "read" } else { "alloc" };
            words.push(format!("{r}:{p}"));
        }
        words.join(" ")
    }
}

#[derive(Debug, Clone)]
struct User {
    hash: String,
    perms: Arc<Perms>,
}

/// The user table, cached in memory.
#[derive(Debug)]
pub struct Auth {
    requirepass: Option<String>,
    users: Mutex<HashMap<String, User>>,
    /// Bounds the argon2 checks running at once; addresses that failed lately wait last.
    checks: Arc<Gate>,
    /// argon2 working memory, reused (one per running check at most).
    blocks: Arc<Mutex<Vec<Vec<Block>>>>,
    /// Failed-attempt allowance per source address.
    failures: FailLimiter,
    /// Passwords argon2 verified lately (`None`: no random key could be drawn).
    verified: Option<Verified>,
    /// Taken by every change of the users, so that the check that an admin remains and the
    /// write it allows are one step (two concurrent `DEL`s of the last two admins cannot both
    /// pass it).
    changes: tokio::sync::Mutex<()>,
}

/// Why a change of the users was not made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserChangeError {
    /// The change would leave users none of whom is an admin, on a server without
    /// `requirepass`: no one could manage the users any more. The message says what to do.
    NoAdminLeft(String),
    /// The store (or hashing the password) failed.
    Store(String),
}

impl std::fmt::Display for UserChangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UserChangeError::NoAdminLeft(m) | UserChangeError::Store(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for UserChangeError {}

/// Whether the users, after `name` is set to `perms` (`None`: deleted), could still be managed;
/// `current` maps each user to whether it is an admin. Users that are all gone are fine (auth is
/// off again, as on a fresh server); so is any change while `requirepass` gives the `default`
/// user every right.
fn check_admin_left<'a>(
    requirepass: bool,
    current: impl IntoIterator<Item = (&'a str, bool)>,
    name: &str,
    perms: Option<&Perms>,
) -> Result<(), UserChangeError> {
    if requirepass {
        return Ok(());
    }
    let mut others = 0usize;
    let mut other_admins = 0usize;
    let mut was_admin = false;
    let mut existed = false;
    for (user, admin) in current {
        if user == name {
            existed = true;
            was_admin = admin;
        } else {
            others += 1;
            other_admins += usize::from(admin);
        }
    }
    let (users, admins) = match perms {
        Some(p) => (others + 1, other_admins + usize::from(p.is_admin())),
        None => (others, other_admins),
    };
    if users == 0 || admins > 0 {
        return Ok(());
    }
    let message = if others == 0 && !existed {
        format!(
            "the first user must be an admin: users turn auth on, and only an admin can manage \
             them (IDF.USER SET {name} <password> admin, then add the others; or start the \
             server with --requirepass)"
        )
    } else if was_admin {
        format!(
            "'{name}' is the last admin: no one could manage the remaining users (make another \
             user an admin first, or start the server with --requirepass)"
        )
    } else {
        // Users without an admin already (left by an older server): this one would not help.
        format!(
            "the users have no admin: make '{name}' an admin (or start the server with \
             --requirepass)"
        )
    };
    Err(UserChangeError::NoAdminLeft(message))
}

/// How long an address that failed an AUTH waits behind those that did not.
pub const SUSPECT_FOR: Duration = Duration::from_secs(60);

/// How long an address that passed an AUTH goes first (while it fails none).
pub const TRUSTED_FOR: Duration = Duration::from_secs(3600);

/// How long a password argon2 verified is let in again without a check.
pub const VERIFIED_FOR: Duration = Duration::from_secs(600);

/// The most verified passwords remembered (only correct passwords enter, so clients cannot
/// fill it; past it the oldest is forgotten).
const MAX_VERIFIED: usize = 4096;

/// Which lane of the [`Gate`] a check waits in, in the order they are served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    /// From an address that passed an AUTH within [`TRUSTED_FOR`] and failed none since (and
    /// hashing new users' passwords).
    First,
    /// From an address neither trusted nor suspect.
    Unknown,
    /// From an address that failed an AUTH within [`SUSPECT_FOR`] and passed none since.
    Later,
}

/// At most `max` argon2 runs at once; a freed slot goes to the longest waiter of the first
/// lane that has one.
#[derive(Debug)]
struct Gate {
    max: usize,
    state: Mutex<GateState>,
}

#[derive(Debug, Default)]
struct GateState {
    running: usize,
    /// By [`Lane`], in order.
    lanes: [VecDeque<oneshot::Sender<()>>; 3],
}

/// A slot of the [`Gate`], handed on when dropped.
#[derive(Debug)]
struct Slot(Arc<Gate>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// A place in line; if it is dropped (the client left) after the slot was handed to it, the
/// slot goes on to the next.
struct Waiting {
    gate: Arc<Gate>,
    rx: oneshot::Receiver<()>,
    granted: bool,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.granted {
            return;
        }
        self.rx.close();
        if self.rx.try_recv().is_ok() {
            self.gate.release();
        }
    }
}

impl Gate {
    fn new(max: usize) -> Gate {
        Gate {
            max,
            state: Mutex::new(GateState::default()),
        }
    }

    /// Waits for a slot in `lane`.
    async fn enter(self: &Arc<Gate>, lane: Lane) -> Slot {
        let rx = {
            let mut state = lock(&self.state);
            if state.running < self.max {
                state.running += 1;
                return Slot(self.clone());
            }
            let (tx, rx) = oneshot::channel();
            state.lanes[lane as usize].push_back(tx);
            rx
        };
        let mut waiting = Waiting {
            gate: self.clone(),
            rx,
            granted: false,
        };
        // The sender is only dropped unsent by `release` skipping a closed receiver, never
        // while this one waits: an error here cannot happen, and would mean no slot was given.
        let given = (&mut waiting.rx).await.is_ok();
        waiting.granted = given;
        if !given {
            // Unreachable in practice; take a slot the plain way rather than run unbounded.
            drop(waiting);
            return Box::pin(self.enter(lane)).await;
        }
        Slot(self.clone())
    }

    /// Hands a freed slot to the next waiter still there, or frees it.
    fn release(&self) {
        let mut state = lock(&self.state);
        loop {
            let next = state.lanes.iter_mut().find_map(VecDeque::pop_front);
            match next {
                Some(tx) => {
                    if tx.send(()).is_ok() {
                        return;
                    }
                }
                None => {
                    state.running = state.running.saturating_sub(1);
                    return;
                }
            }
        }
    }
}

/// Passwords argon2 verified lately, keyed by an HMAC of user and password.
struct Verified {
    key: hmac::Key,
    seen: Mutex<HashMap<[u8; 32], Remembered>>,
}

struct Remembered {
    user: String,
    /// The stored hash the password was verified against: a new password ends it.
    hash: String,
    at: Instant,
}

impl std::fmt::Debug for Verified {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verified")
            .field("remembered", &lock(&self.seen).len())
            .finish()
    }
}

impl Verified {
    fn new() -> Option<Verified> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).ok()?;
        Some(Verified {
            key: hmac::Key::new(hmac::HMAC_SHA256, &key),
            seen: Mutex::new(HashMap::new()),
        })
    }

    fn mac(&self, user: &str, password: &str) -> [u8; 32] {
        let mut ctx = hmac::Context::with_key(&self.key);
        // Lengths first, so no two (user, password) pairs make the same input.
        ctx.update(&(user.len() as u64).to_be_bytes());
        ctx.update(user.as_bytes());
        ctx.update(password.as_bytes());
        let mut out = [0u8; 32];
        out.copy_from_slice(ctx.sign().as_ref());
        out
    }

    /// Whether `password` was verified for `user` against `hash` within [`VERIFIED_FOR`].
    fn knows(&self, user: &str, password: &str, hash: &str, now: Instant) -> bool {
        let mac = self.mac(user, password);
        lock(&self.seen).get(&mac).is_some_and(|r| {
            r.user == user && r.hash == hash && now.saturating_duration_since(r.at) < VERIFIED_FOR
        })
    }

    fn remember(&self, user: &str, password: &str, hash: &str, now: Instant) {
        let mac = self.mac(user, password);
        let mut seen = lock(&self.seen);
        if seen.len() >= MAX_VERIFIED && !seen.contains_key(&mac) {
            seen.retain(|_, r| now.saturating_duration_since(r.at) < VERIFIED_FOR);
            if seen.len() >= MAX_VERIFIED {
                let oldest = seen.iter().min_by_key(|(_, r)| r.at).map(|(k, _)| *k);
                if let Some(k) = oldest {
                    seen.remove(&k);
                }
            }
        }
        seen.insert(
            mac,
            Remembered {
                user: user.to_owned(),
                hash: hash.to_owned(),
                at: now,
            },
        );
    }

    fn forget(&self, user: &str) {
        lock(&self.seen).retain(|_, r| r.user != user);
    }
}

/// What [`Auth::check`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// The password is right: the user's rights.
    Ok(Arc<Perms>),
    /// Wrong user or password.
    Wrong,
    /// The source address has used its failed-attempt allowance; nothing was checked.
    Throttled,
}

/// A token bucket per source address: `burst` attempts, refilled at one per second; and when
/// it last failed.
#[derive(Debug)]
struct FailLimiter {
    burst: u32,
    buckets: Mutex<HashMap<IpAddr, Source>>,
}

#[derive(Debug, Clone, Copy)]
struct Source {
    tokens: f64,
    at: Instant,
    failed: Option<Instant>,
    passed: Option<Instant>,
}

impl Source {
    /// The lane of a check from this address now.
    fn lane(&self, now: Instant) -> Lane {
        let lately = |t: Option<Instant>, within: Duration| {
            t.filter(|t| now.saturating_duration_since(*t) < within)
        };
        match (
            lately(self.passed, TRUSTED_FOR),
            lately(self.failed, SUSPECT_FOR),
        ) {
            (Some(p), Some(f)) if f > p => Lane::Later,
            (Some(p), _) if self.failed.is_none_or(|f| f <= p) => Lane::First,
            (None, Some(_)) => Lane::Later,
            _ => Lane::Unknown,
        }
    }
}

/// Addresses tracked at most; past it, the ones whose bucket has refilled are forgotten.
const MAX_TRACKED: usize = 65_536;

impl FailLimiter {
    /// `ip`'s entry, made room for.
    fn source<'a>(
        &self,
        buckets: &'a mut HashMap<IpAddr, Source>,
        ip: IpAddr,
        now: Instant,
    ) -> &'a mut Source {
        let burst = f64::from(self.burst);
        if buckets.len() >= MAX_TRACKED && !buckets.contains_key(&ip) {
            buckets.retain(|_, s| {
                s.tokens + now.saturating_duration_since(s.at).as_secs_f64() < burst
                    || s.lane(now) != Lane::Unknown
            });
            if buckets.len() >= MAX_TRACKED {
                // An address spray: forget them all rather than grow (docs/server.md "Limits"), but
                // those with a client logged in (a spray cannot make those).
                buckets.retain(|_, s| s.lane(now) == Lane::First);
                if buckets.len() >= MAX_TRACKED {
                    buckets.clear();
                }
            }
        }
        buckets.entry(ip).or_insert(Source {
            tokens: burst,
            at: now,
            failed: None,
            passed: None,
        })
    }

    /// Takes a token for an attempt from `ip`; `false` when it has none.
    fn take(&self, ip: IpAddr, now: Instant) -> bool {
        if self.burst == 0 {
            return true;
        }
        let burst = f64::from(self.burst);
        let mut buckets = lock(&self.buckets);
        let s = self.source(&mut buckets, ip, now);
        s.tokens = (s.tokens + now.saturating_duration_since(s.at).as_secs_f64()).min(burst);
        s.at = now;
        if s.tokens < 1.0 {
            return false;
        }
        s.tokens -= 1.0;
        true
    }

    /// Notes an attempt from `ip` that succeeded, giving back its token.
    fn passed(&self, ip: IpAddr, now: Instant) {
        let burst = f64::from(self.burst);
        let mut buckets = lock(&self.buckets);
        let s = self.source(&mut buckets, ip, now);
        s.tokens = (s.tokens + 1.0).min(burst);
        s.passed = Some(now);
    }

    /// Notes a failed attempt from `ip`.
    fn failed(&self, ip: IpAddr, now: Instant) {
        let mut buckets = lock(&self.buckets);
        self.source(&mut buckets, ip, now).failed = Some(now);
    }

    /// The lane of a check from `ip` now.
    fn lane(&self, ip: IpAddr, now: Instant) -> Lane {
        lock(&self.buckets)
            .get(&ip)
            .map_or(Lane::Unknown, |s| s.lane(now))
    }
}

/// The bucket key: the address, or its /64 for IPv6 (one host holds a whole /64).
fn source_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
        },
    }
}

/// The name of the `requirepass` user.
pub const DEFAULT_USER: &str = "default";

impl Auth {
    /// Loads the users from the store.
    pub async fn load(
        store: &Store,
        requirepass: Option<String>,
        limits: &Limits,
    ) -> Result<Auth, StoreError> {
        Ok(Auth {
            requirepass,
            users: Mutex::new(read_users(store).await?),
            checks: Arc::new(Gate::new(limits.auth_concurrency)),
            blocks: Arc::new(Mutex::new(Vec::new())),
            failures: FailLimiter {
                burst: limits.auth_fail_burst,
                buckets: Mutex::new(HashMap::new()),
            },
            verified: Verified::new(),
            changes: tokio::sync::Mutex::new(()),
        })
    }

    /// Reads the users again (another server of the group may have changed them); on a store
    /// failure the copy in memory stays.
    pub async fn reload(&self, store: &Store) {
        match read_users(store).await {
            Ok(users) => *lock(&self.users) = users,
            Err(e) => tracing::warn!(error = %e, "cannot reload users"),
        }
    }
}

async fn read_users(store: &Store) -> Result<HashMap<String, User>, StoreError> {
    let mut users = HashMap::new();
    for row in store.users().await? {
        let perms =
            Perms::parse(row.perms.split_whitespace()).map_err(|e| StoreError(e.to_string()))?;
        users.insert(
            row.name,
            User {
                hash: row.hash,
                perms: Arc::new(perms),
            },
        );
    }
    Ok(users)
}

impl Auth {
    /// Whether clients must authenticate.
    pub fn required(&self) -> bool {
        self.requirepass.is_some() || !lock(&self.users).is_empty()
    }

    /// Checks a user's password from source address `peer`.
    pub async fn check(&self, peer: Option<IpAddr>, user: &str, password: &str) -> Checked {
        if user == DEFAULT_USER {
            if let Some(pass) = &self.requirepass {
                return self.check_requirepass(peer, pass, password);
            }
        }
        let now = Instant::now();
        let found = lock(&self.users).get(user).cloned();
        // Verified lately: in at once, whatever its address did (the same work for any user,
        // known or not, and any password).
        if let Some(v) = &self.verified {
            let hash = found.as_ref().map_or("", |u| u.hash.as_str());
            if v.knows(user, password, hash, now) {
                if let Some(u) = found {
                    return Checked::Ok(u.perms);
                }
            }
        }
        let peer = peer.map(source_key);
        if let Some(ip) = peer {
            if !self.failures.take(ip, now) {
                return Checked::Throttled;
            }
        }
        let lane = peer.map_or(Lane::Unknown, |ip| self.failures.lane(ip, now));
        match self.verify(found.clone(), password, lane).await {
            Some(perms) => {
                if let Some(ip) = peer {
                    self.failures.passed(ip, Instant::now());
                }
                if let (Some(v), Some(u)) = (&self.verified, &found) {
                    v.remember(user, password, &u.hash, Instant::now());
                }
                Checked::Ok(perms)
            }
            None => {
                if let Some(ip) = peer {
                    self.failures.failed(ip, Instant::now());
                }
                Checked::Wrong
            }
        }
    }

    /// The `default` user of `requirepass`: a comparison, no argon2 (still limited per
    /// address).
    fn check_requirepass(&self, peer: Option<IpAddr>, pass: &str, password: &str) -> Checked {
        let peer = peer.map(source_key);
        let now = Instant::now();
        if let Some(ip) = peer {
            if !self.failures.take(ip, now) {
                return Checked::Throttled;
            }
        }
        if constant_time_eq(pass.as_bytes(), password.as_bytes()) {
            if let Some(ip) = peer {
                self.failures.passed(ip, now);
            }
            return Checked::Ok(Arc::new(Perms::all()));
        }
        if let Some(ip) = peer {
            self.failures.failed(ip, now);
        }
        Checked::Wrong
    }

    /// Runs argon2 for `found` (or the dummy hash) once a slot of `lane` is free.
    async fn verify(&self, found: Option<User>, password: &str, lane: Lane) -> Option<Arc<Perms>> {
        // Waiting checks hold only the password: the memory is taken once a slot is.
        let slot = self.checks.enter(lane).await;
        let password = password.to_owned();
        let blocks = self.blocks.clone();
        // Verifying costs milliseconds of CPU and memory by design: off the reactor.
        tokio::task::spawn_blocking(move || {
            let _slot = slot;
            let mut memory = lock(&blocks).pop().unwrap_or_default();
            // An unknown user: the same work against a dummy hash, then no.
            let (hash, perms) = match &found {
                Some(u) => (u.hash.as_str(), Some(u.perms.clone())),
                None => (dummy_hash(), None),
            };
            let ok = verify_with(hash, password.as_bytes(), &mut memory);
            lock(&blocks).push(memory);
            if ok { perms } else { None }
        })
        .await
        .ok()
        .flatten()
    }

    /// Adds or replaces a user. Refused when it would leave no admin (see the module's doc).
    pub async fn set(
        &self,
        store: &Store,
        name: &str,
        password: &str,
        perms: Perms,
    ) -> Result<(), UserChangeError> {
        let _change = self.changes.lock().await;
        self.check_change(store, name, Some(&perms)).await?;
        let password = password.to_owned();
        // Hashing takes argon2's memory too: it waits its turn with the checks.
        let slot = self.checks.enter(Lane::First).await;
        let hash = tokio::task::spawn_blocking(move || {
            let _slot = slot;
            hash_password(&password)
        })
        .await
        .map_err(|e| UserChangeError::Store(e.to_string()))?
        .map_err(|e| UserChangeError::Store(e.to_string()))?;
        let row = UserRow {
            name: name.to_owned(),
            hash: hash.clone(),
            perms: perms.words(),
        };
        store
            .put_user(&row)
            .await
            .map_err(|e| UserChangeError::Store(e.0))?;
        if let Some(v) = &self.verified {
            v.forget(name);
        }
        lock(&self.users).insert(
            name.to_owned(),
            User {
                hash,
                perms: Arc::new(perms),
            },
        );
        Ok(())
    }

    /// Removes a user; `false` when there was none. Refused when it would leave no admin.
    pub async fn delete(&self, store: &Store, name: &str) -> Result<bool, UserChangeError> {
        let _change = self.changes.lock().await;
        self.check_change(store, name, None).await?;
        let existed = store
            .delete_user(name)
            .await
            .map_err(|e| UserChangeError::Store(e.0))?;
        lock(&self.users).remove(name);
        if let Some(v) = &self.verified {
            v.forget(name);
        }
        Ok(existed)
    }

    /// Refuses a change that would leave users no one can manage, judged on the store's users
    /// (another server of the group may have changed them since this one last read them).
    async fn check_change(
        &self,
        store: &Store,
        name: &str,
        perms: Option<&Perms>,
    ) -> Result<(), UserChangeError> {
        if self.requirepass.is_some() {
            return Ok(());
        }
        let users = read_users(store)
            .await
            .map_err(|e| UserChangeError::Store(e.0))?;
        check_admin_left(
            false,
            users.iter().map(|(n, u)| (n.as_str(), u.perms.is_admin())),
            name,
            perms,
        )
    }

    /// The rights of user `name` as they are now (`None`: no such user). For credentials checked
    /// elsewhere (an HTTP token names its user), so a change of the user's rights applies at once.
    pub(crate) fn perms_of(&self, name: &str) -> Option<Arc<Perms>> {
        if name == DEFAULT_USER && self.requirepass.is_some() {
            return Some(Arc::new(Perms::all()));
        }
        lock(&self.users).get(name).map(|u| u.perms.clone())
    }

    /// (name, permission words) of every user, sorted.
    pub fn list(&self) -> Vec<(String, String)> {
        let mut users: Vec<(String, String)> = lock(&self.users)
            .iter()
            .map(|(n, u)| (n.clone(), u.perms.words()))
            .collect();
        users.sort();
        users
    }
}

/// Why a password could not be hashed.
#[derive(Debug, thiserror::Error)]
enum HashError {
    /// No random salt from the system.
    #[error("no random salt: {0}")]
    Salt(String),
    /// argon2 refused.
    #[error("argon2: {0}")]
    Argon2(String),
}

fn hash_password(password: &str) -> Result<String, HashError> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| HashError::Salt(e.to_string()))?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| HashError::Salt(e.to_string()))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| HashError::Argon2(e.to_string()))
}

/// The largest argon2 memory a stored hash may ask for (256 MiB): a bad row must not make every
/// check allocate gigabytes.
const MAX_M_COST_KIB: u32 = 256 * 1024;

/// Checks `password` against a PHC-format argon2 `hash`, computing in `memory` (grown as needed
/// and kept for the next check).
fn verify_with(hash: &str, password: &[u8], memory: &mut Vec<Block>) -> bool {
    let Ok(hash) = PasswordHash::new(hash) else {
        return false;
    };
    let (Ok(algorithm), Ok(params)) =
        (Algorithm::try_from(hash.algorithm), Params::try_from(&hash))
    else {
        return false;
    };
    let version = match hash.version.map(Version::try_from) {
        None => Version::default(),
        Some(Ok(v)) => v,
        Some(Err(_)) => return false,
    };
    let (Some(salt), Some(expected)) = (hash.salt, hash.hash) else {
        return false;
    };
    if params.m_cost() > MAX_M_COST_KIB {
        return false;
    }
    let mut salt_buf = [0u8; 64];
    let Ok(salt) = salt.decode_b64(&mut salt_buf) else {
        return false;
    };
    if memory.len() < params.block_count() {
        memory.resize(params.block_count(), Block::default());
    }
    let mut out = vec![0u8; expected.len()];
    let argon2 = Argon2::new(algorithm, version, params);
    if argon2
        .hash_password_into_with_memory(
            password,
            salt,
            &mut out,
            &mut memory[..argon2.params().block_count()],
        )
        .is_err()
    {
        return false;
    }
    constant_time_eq(&out, expected.as_bytes())
}

/// What unknown users are checked against: a PHC string with the parameters new users get, a
/// random salt and a random output (no password hashes to it). Checking it costs what checking a
/// user's hash costs, and making it costs nothing (a real hash took 0.4 s of a debug build's
/// startup, or its first unknown-user AUTH: an oracle of its own).
fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| {
        let mut bytes = [0u8; 48];
        // Without randomness the fixed zeros still cost the same to check.
        let _ = getrandom::fill(&mut bytes);
        let p = Params::default();
        let salt = SaltString::encode_b64(&bytes[..16]).map(|s| s.to_string());
        let output = Output::new(&bytes[16..]).map(|o| o.to_string());
        format!(
            "$argon2id$v=19$m={},t={},p={}${}${}",
            p.m_cost(),
            p.t_cost(),
            p.p_cost(),
            salt.unwrap_or_default(),
            output.unwrap_or_default()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use argon2::password_hash::PasswordVerifier;

    #[test]
    fn no_change_leaves_users_without_an_admin() {
        let admin = Perms::all();
        let app = Perms::parse(["alloc:orders"]).unwrap();
        let refused =
            |r: Result<(), UserChangeError>| matches!(r, Err(UserChangeError::NoAdminLeft(_)));
        // The first user: an admin, or nothing (without requirepass).
        assert!(refused(check_admin_left(false, [], "app", Some(&app))));
        assert!(check_admin_left(false, [], "root", Some(&admin)).is_ok());
        assert!(check_admin_left(true, [], "app", Some(&app)).is_ok());
        // With an admin, others may be anything.
        let two = [("root", true), ("app", false)];
        assert!(check_admin_left(false, two, "viewer", Some(&app)).is_ok());
        assert!(check_admin_left(false, two, "app", None).is_ok());
        // The last admin: not deleted nor demoted while others remain...
        assert!(refused(check_admin_left(false, two, "root", None)));
        assert!(refused(check_admin_left(false, two, "root", Some(&app))));
        // ...but once another admin exists, either goes.
        let admins = [("root", true), ("ops", true), ("app", false)];
        assert!(check_admin_left(false, admins, "root", None).is_ok());
        assert!(check_admin_left(false, admins, "root", Some(&app)).is_ok());
        // The only user may go: auth is off again, as on a fresh server.
        assert!(check_admin_left(false, [("root", true)], "root", None).is_ok());
        // requirepass keeps an admin (`default`) whatever the users are.
        assert!(check_admin_left(true, two, "root", None).is_ok());
        let Err(UserChangeError::NoAdminLeft(m)) = check_admin_left(false, [], "app", Some(&app))
        else {
            panic!("refused")
        };
        assert!(m.starts_with("the first user must be an admin"), "{m}");
        for (users, name, perms) in [
            (&[][..], "app", Some(&app)),
            (&two[..], "root", None),
            (&[("app", false)][..], "viewer", Some(&app)),
        ] {
            let Err(e) = check_admin_left(false, users.iter().copied(), name, perms) else {
                panic!("refused")
            };
            let m = e.to_string();
            assert!(!m.contains("  ") && m.contains("--requirepass"), "{m}");
        }
    }

    #[test]
    fn permissions_by_pattern() {
        let p = Perms::parse(["alloc:orders*", "read:*"]).unwrap();
        assert!(p.allows(Right::Alloc, "orders:eu"));
        assert!(p.allows(Right::Read, "orders"));
        assert!(p.allows(Right::Read, "users"));
        assert!(!p.allows(Right::Alloc, "users"));
        assert!(!p.is_admin());
        assert_eq!(p.words(), "alloc:orders* read:*");
        let r = Perms::parse(["read:a"]).unwrap();
        assert!(!r.allows(Right::Alloc, "a"));
        assert!(Perms::all().allows(Right::Alloc, "x"));
        assert!(Perms::parse(["write:x"]).is_err());
        assert!(Perms::parse(["read:"]).is_err());
    }

    #[test]
    fn passwords_hash_and_verify() {
        let hash = hash_password("s3cret").unwrap();
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        let parsed = PasswordHash::new(&hash).unwrap();
        assert!(
            Argon2::default()
                .verify_password(b"s3cret", &parsed)
                .is_ok()
        );
        assert!(Argon2::default().verify_password(b"nope", &parsed).is_err());
        assert_ne!(hash, hash_password("s3cret").unwrap(), "salted");
        // The pooled-memory check agrees with the library's.
        let mut memory = Vec::new();
        assert!(verify_with(&hash, b"s3cret", &mut memory));
        assert!(!verify_with(&hash, b"nope", &mut memory));
        assert!(!verify_with("not a hash", b"s3cret", &mut memory));
        assert!(!verify_with(dummy_hash(), b"", &mut memory));
        let dummy = PasswordHash::new(dummy_hash()).unwrap();
        assert_eq!(dummy.algorithm, parsed.algorithm);
        assert_eq!(dummy.version, parsed.version);
        assert_eq!(dummy.hash.unwrap().len(), parsed.hash.unwrap().len());
        // Every step before the argon2 run accepts it (so the check does run argon2).
        assert!(Params::try_from(&dummy).is_ok());
        assert!(Algorithm::try_from(dummy.algorithm).is_ok());
        assert!(dummy.salt.unwrap().decode_b64(&mut [0u8; 64]).is_ok());
        assert_eq!(
            PasswordHash::new(dummy_hash()).unwrap().params,
            parsed.params,
            "the dummy costs what a user's hash costs"
        );
    }

    #[test]
    fn the_gate_serves_the_first_lane_first_and_loses_no_slot() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let gate = Arc::new(Gate::new(1));
            let held = gate.enter(Lane::Later).await;
            let order = Arc::new(Mutex::new(Vec::new()));
            let mut tasks = Vec::new();
            // Three from flooding addresses line up before one from an unknown address and two
            // from addresses with a client logged in.
            for (name, lane) in [
                ("later1", Lane::Later),
                ("later2", Lane::Later),
                ("later3", Lane::Later),
                ("unknown", Lane::Unknown),
                ("first1", Lane::First),
                ("first2", Lane::First),
            ] {
                let (gate, order) = (gate.clone(), order.clone());
                tasks.push(tokio::spawn(async move {
                    let _slot = gate.enter(lane).await;
                    lock(&order).push(name);
                    tokio::task::yield_now().await;
                }));
                tokio::task::yield_now().await;
            }
            // One waiter leaves (its client went away) before its turn.
            let gone = tasks.remove(1);
            gone.abort();
            let _ = gone.await;
            drop(held);
            for t in tasks {
                t.await.unwrap();
            }
            assert_eq!(
                *lock(&order),
                ["first1", "first2", "unknown", "later1", "later3"]
            );
            // The slot came back.
            let a = gate.enter(Lane::Later).await;
            assert_eq!(lock(&gate.state).running, 1);
            drop(a);
            assert_eq!(lock(&gate.state).running, 0);
        });
    }

    #[test]
    fn a_slot_handed_to_a_waiter_that_left_goes_on() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let gate = Arc::new(Gate::new(1));
            let held = gate.enter(Lane::First).await;
            let mut waiter = Box::pin(gate.enter(Lane::First));
            // Registered in line, then the slot is handed to it while nobody polls it.
            assert!(futures_poll(&mut waiter).is_none());
            drop(held);
            drop(waiter);
            assert_eq!(lock(&gate.state).running, 0, "the slot came back");
            let _again = gate.enter(Lane::Later).await;
        });
    }

    /// Polls a future once.
    fn futures_poll<F: std::future::Future + Unpin>(f: &mut F) -> Option<F::Output> {
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        match std::pin::Pin::new(f).poll(&mut cx) {
            std::task::Poll::Ready(v) => Some(v),
            std::task::Poll::Pending => None,
        }
    }

    #[test]
    fn verified_passwords_are_known_until_the_hash_changes() {
        let v = Verified::new().unwrap();
        let t0 = Instant::now();
        assert!(!v.knows("alice", "pw", "$hash1", t0));
        v.remember("alice", "pw", "$hash1", t0);
        assert!(v.knows("alice", "pw", "$hash1", t0));
        assert!(!v.knows("alice", "pw2", "$hash1", t0), "another password");
        assert!(
            !v.knows("alic", "epw", "$hash1", t0),
            "another split of the same bytes"
        );
        assert!(!v.knows("bob", "pw", "$hash1", t0), "another user");
        assert!(
            !v.knows("alice", "pw", "$hash2", t0),
            "the password changed"
        );
        assert!(
            !v.knows("alice", "pw", "$hash1", t0 + VERIFIED_FOR),
            "too long ago"
        );
        v.forget("alice");
        assert!(!v.knows("alice", "pw", "$hash1", t0));
        // Bounded: the oldest goes.
        for i in 0..MAX_VERIFIED + 10 {
            v.remember(
                &format!("u{i}"),
                "pw",
                "$h",
                t0 + Duration::from_millis(i as u64),
            );
        }
        assert_eq!(lock(&v.seen).len(), MAX_VERIFIED);
        assert!(!v.knows("u0", "pw", "$h", t0 + Duration::from_secs(1)));
        let last = MAX_VERIFIED + 9;
        assert!(v.knows(&format!("u{last}"), "pw", "$h", t0 + Duration::from_secs(1)));
    }

    #[test]
    fn addresses_go_first_with_a_client_logged_in_and_last_while_they_fail() {
        let limiter = FailLimiter {
            burst: 0,
            buckets: Mutex::new(HashMap::new()),
        };
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        assert_eq!(limiter.lane(a, t0), Lane::Unknown);
        limiter.failed(a, t0);
        assert_eq!(limiter.lane(a, at(1)), Lane::Later);
        assert_eq!(limiter.lane(a, t0 + SUSPECT_FOR), Lane::Unknown, "forgiven");
        limiter.passed(a, at(2));
        assert_eq!(
            limiter.lane(a, at(3)),
            Lane::First,
            "a success after the failure"
        );
        assert_eq!(
            limiter.lane(a, t0 + TRUSTED_FOR + at(2).duration_since(t0)),
            Lane::Unknown
        );
        limiter.failed(a, at(4));
        assert_eq!(
            limiter.lane(a, at(5)),
            Lane::Later,
            "a failure after the success"
        );
        assert_eq!(
            limiter.lane("10.0.0.2".parse().unwrap(), at(5)),
            Lane::Unknown
        );
    }

    #[test]
    fn failed_attempts_are_limited_per_address() {
        let limiter = FailLimiter {
            burst: 3,
            buckets: Mutex::new(HashMap::new()),
        };
        let t0 = Instant::now();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        assert!((0..3).all(|_| limiter.take(a, t0)));
        assert!(!limiter.take(a, t0), "the burst is used");
        assert!(limiter.take(b, t0), "another address has its own");
        limiter.passed(a, t0);
        assert!(limiter.take(a, t0), "a success gives its token back");
        assert!(!limiter.take(a, t0));
        assert!(limiter.take(a, t0 + std::time::Duration::from_millis(1100)));
        let off = FailLimiter {
            burst: 0,
            buckets: Mutex::new(HashMap::new()),
        };
        assert!((0..100).all(|_| off.take(a, t0)));
        let v6: IpAddr = "2001:db8::1".parse().unwrap();
        let v6b: IpAddr = "2001:db8::ffff:1".parse().unwrap();
        assert_eq!(source_key(v6), source_key(v6b));
    }
}
