//! Passwords argon2 verified lately, remembered as an HMAC of user and password under a key
//! kept only in memory, so a reconnecting client is let in without another check.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ring::hmac;

use crate::serve::lock::lock;

/// How long a password argon2 verified is let in again without a check.
pub const VERIFIED_FOR: Duration = Duration::from_secs(600);

/// The most verified passwords remembered (only correct passwords enter, so clients cannot
/// fill it; past it the oldest is forgotten).
pub(super) const MAX_VERIFIED: usize = 4096;

/// Passwords argon2 verified lately, keyed by an HMAC of user and password.
pub(super) struct Verified {
    key: hmac::Key,
    seen: Mutex<HashMap<[u8; 32], Remembered>>,
}

pub(super) struct Remembered {
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
    pub(super) fn new() -> Option<Verified> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).ok()?;
        Some(Verified {
            key: hmac::Key::new(hmac::HMAC_SHA256, &key),
            seen: Mutex::new(HashMap::new()),
        })
    }

    pub(super) fn mac(&self, user: &str, password: &str) -> [u8; 32] {
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
    pub(super) fn knows(&self, user: &str, password: &str, hash: &str, now: Instant) -> bool {
        let mac = self.mac(user, password);
        lock(&self.seen).get(&mac).is_some_and(|r| {
            r.user == user && r.hash == hash && now.saturating_duration_since(r.at) < VERIFIED_FOR
        })
    }

    pub(super) fn remember(&self, user: &str, password: &str, hash: &str, now: Instant) {
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

    pub(super) fn forget(&self, user: &str) {
        lock(&self.seen).retain(|_, r| r.user != user);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
