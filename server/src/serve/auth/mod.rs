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
//!   [`TRUSTED_FOR`](gate::TRUSTED_FOR) and failed none since, then the addresses it knows nothing of, last those
//!   that failed one in the last [`SUSPECT_FOR`](gate::SUSPECT_FOR) (and passed none since). So a flood's first
//!   attempts queue behind every address that has a client logged in, and its later ones behind
//!   everybody else; a client at an address that is not flooding waits for the checks already
//!   running, not for the flood. (A client at an address never seen before, during a flood from
//!   addresses never seen before either, still waits with the flood's first attempts.)
//! - a password verified by argon2 is remembered for [`VERIFIED_FOR`](verified::VERIFIED_FOR) (`Verified`), as an
//!   HMAC-SHA256 of the user and password under a key drawn at start and kept only in memory,
//!   together with the hash it was checked against: the same user and password again (a pool
//!   reconnecting, even from an address that shares in the flood) is let in without a check,
//!   without waiting, and without taking from its address's allowance. A change of password
//!   (its hash changes) or of the users ends it. What this costs: a memory dump of the process
//!   would let passwords used in the last [`VERIFIED_FOR`](verified::VERIFIED_FOR) be tried at HMAC speed rather than
//!   argon2's (the dump holds the key); the argon2 hashes of every user are in memory anyway.

mod admins;
pub mod credential;
mod gate;
mod hash;
mod limiter;
mod perms;
mod verified;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use argon2::Block;

use super::lock::lock;
pub use admins::UserChangeError;
use admins::check_admin_left;
use credential::constant_time_eq;
use gate::{Gate, Lane};
use hash::{dummy_hash, hash_password, verify_with};
use idforge_store::{Store, StoreError, UserRow};
use limiter::{FailLimiter, source_key};
pub use perms::{Perms, Right};
use verified::Verified;

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

/// The name of the `requirepass` user.
pub const DEFAULT_USER: &str = "default";

/// The bounds on password checks (the settings `auth-concurrency` and `auth-fail-burst`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthLimits {
    /// argon2 checks running at once.
    pub concurrency: usize,
    /// Failed attempts an address may make at once (refilled at one a second; 0: no limit).
    pub fail_burst: u32,
}

impl Auth {
    /// Loads the users from the store.
    pub async fn load(
        store: &Store,
        requirepass: Option<String>,
        limits: AuthLimits,
    ) -> Result<Auth, StoreError> {
        Ok(Auth {
            requirepass,
            users: Mutex::new(read_users(store).await?),
            checks: Arc::new(Gate::new(limits.concurrency)),
            blocks: Arc::new(Mutex::new(Vec::new())),
            failures: FailLimiter::new(limits.fail_burst),
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
