//! Users, passwords (argon2) and per-tag-pattern permissions.
//!
//! Auth is on when `requirepass` is set (the `default` user, with every right) or when the store
//! holds users. A user's permissions are words: `admin` (everything, including `IDF.TAG
//! CREATE/DROP` and `IDF.USER`), `alloc:PATTERN` (take ids of matching tags; implies read) and
//! `read:PATTERN` (`GET`, `IDF.TAG INFO/LIST`).
//!
//! Checking a password must cost an attacker more than the server (README "Limits"):
//! - at most `auth-concurrency` argon2 checks run at once; the others wait on a semaphore holding
//!   nothing but the password, and the checks reuse a pool of argon2 memory blocks, so the
//!   memory argon2 ever takes is `auth-concurrency` × m_cost (19 MiB each by default) instead of
//!   growing with the number of clients (the blocking pool's threads each kept their own malloc
//!   arena of freed 19 MiB blocks: 64 concurrent wrong AUTHs left 1.2 GB behind per round);
//! - an unknown user is checked against a dummy hash with the same parameters, so it takes the
//!   time a known one takes (no user-name oracle);
//! - each source address (an IPv6 /64) has a token bucket of `auth-fail-burst` attempts,
//!   refilled at one per second: an attempt takes a token before its check and gives it back
//!   on success, so a flood from one address is refused without running argon2.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use argon2::password_hash::{Output, PasswordHash, PasswordHasher, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use tokio::sync::Semaphore;

use super::config::Limits;

use super::glob::glob_match;
use super::lock::lock;
use super::store::{Store, StoreError, UserRow};

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

impl Perms {
    /// Every right.
    pub fn all() -> Perms {
        Perms {
            admin: true,
            rules: Vec::new(),
        }
    }

    /// Parses permission words.
    pub fn parse<'a>(words: impl IntoIterator<Item = &'a str>) -> Result<Perms, String> {
        let mut perms = Perms::default();
        for word in words {
            if word.eq_ignore_ascii_case("admin") {
                perms.admin = true;
                continue;
            }
            let (right, pattern) = match word.split_once(':') {
                Some((r, p)) if r.eq_ignore_ascii_case("read") => (Right::Read, p),
                Some((r, p)) if r.eq_ignore_ascii_case("alloc") => (Right::Alloc, p),
                _ => {
                    return Err(format!(
                        "bad permission '{word}' (admin, alloc:PATTERN or read:PATTERN)"
                    ));
                }
            };
            if pattern.is_empty() {
                return Err(format!("permission '{word}' has an empty pattern"));
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
    /// Bounds the argon2 checks running at once.
    checks: Arc<Semaphore>,
    /// argon2 working memory, reused (one per running check at most).
    blocks: Arc<Mutex<Vec<Vec<Block>>>>,
    /// Failed-attempt allowance per source address.
    failures: FailLimiter,
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

/// A token bucket per source address: `burst` attempts, refilled at one per second.
#[derive(Debug)]
struct FailLimiter {
    burst: u32,
    buckets: Mutex<HashMap<IpAddr, (f64, Instant)>>,
}

/// Addresses tracked at most; past it, the ones whose bucket has refilled are forgotten.
const MAX_TRACKED: usize = 65_536;

impl FailLimiter {
    /// Takes a token for an attempt from `ip`; `false` when it has none.
    fn take(&self, ip: IpAddr, now: Instant) -> bool {
        if self.burst == 0 {
            return true;
        }
        let burst = f64::from(self.burst);
        let mut buckets = lock(&self.buckets);
        if buckets.len() >= MAX_TRACKED && !buckets.contains_key(&ip) {
            buckets.retain(|_, (tokens, at)| {
                *tokens + now.saturating_duration_since(*at).as_secs_f64() < burst
            });
            if buckets.len() >= MAX_TRACKED {
                // An address spray: forget them all rather than grow (README "Limits").
                buckets.clear();
            }
        }
        let (tokens, at) = buckets.entry(ip).or_insert((burst, now));
        *tokens = (*tokens + now.saturating_duration_since(*at).as_secs_f64()).min(burst);
        *at = now;
        if *tokens < 1.0 {
            return false;
        }
        *tokens -= 1.0;
        true
    }

    /// Gives back the token of an attempt that succeeded.
    fn refund(&self, ip: IpAddr) {
        if self.burst == 0 {
            return;
        }
        if let Some((tokens, _)) = lock(&self.buckets).get_mut(&ip) {
            *tokens = (*tokens + 1.0).min(f64::from(self.burst));
        }
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
            checks: Arc::new(Semaphore::new(limits.auth_concurrency)),
            blocks: Arc::new(Mutex::new(Vec::new())),
            failures: FailLimiter {
                burst: limits.auth_fail_burst,
                buckets: Mutex::new(HashMap::new()),
            },
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
        let perms = Perms::parse(row.perms.split_whitespace()).map_err(StoreError)?;
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
        let peer = peer.map(source_key);
        if let Some(ip) = peer {
            if !self.failures.take(ip, Instant::now()) {
                return Checked::Throttled;
            }
        }
        let perms = self.verify(user, password).await;
        match perms {
            Some(perms) => {
                if let Some(ip) = peer {
                    self.failures.refund(ip);
                }
                Checked::Ok(perms)
            }
            None => Checked::Wrong,
        }
    }

    async fn verify(&self, user: &str, password: &str) -> Option<Arc<Perms>> {
        if user == DEFAULT_USER {
            if let Some(pass) = &self.requirepass {
                return constant_time_eq(pass.as_bytes(), password.as_bytes())
                    .then(|| Arc::new(Perms::all()));
            }
        }
        let found = lock(&self.users).get(user).cloned();
        // Queued checks hold only the password: the memory is taken once a permit is.
        let permit = self.checks.clone().acquire_owned().await.ok()?;
        let password = password.to_owned();
        let blocks = self.blocks.clone();
        // Verifying costs milliseconds of CPU and memory by design: off the reactor.
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
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

    /// Adds or replaces a user.
    pub async fn set(
        &self,
        store: &Store,
        name: &str,
        password: &str,
        perms: Perms,
    ) -> Result<(), String> {
        let password = password.to_owned();
        // Hashing takes argon2's memory too: it waits its turn with the checks.
        let permit = self
            .checks
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| e.to_string())?;
        let hash = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            hash_password(&password)
        })
        .await
        .map_err(|e| e.to_string())??;
        let row = UserRow {
            name: name.to_owned(),
            hash: hash.clone(),
            perms: perms.words(),
        };
        store.put_user(&row).await.map_err(|e| e.0)?;
        lock(&self.users).insert(
            name.to_owned(),
            User {
                hash,
                perms: Arc::new(perms),
            },
        );
        Ok(())
    }

    /// Removes a user; `false` when there was none.
    pub async fn delete(&self, store: &Store, name: &str) -> Result<bool, String> {
        let existed = store.delete_user(name).await.map_err(|e| e.0)?;
        lock(&self.users).remove(name);
        Ok(existed)
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

fn hash_password(password: &str) -> Result<String, String> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| e.to_string())?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| e.to_string())?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
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

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use argon2::password_hash::PasswordVerifier;

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
        limiter.refund(a);
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
