//! Users, passwords (argon2) and per-tag-pattern permissions.
//!
//! Auth is on when `requirepass` is set (the `default` user, with every right) or when the store
//! holds users. A user's permissions are words: `admin` (everything, including `IDF.TAG
//! CREATE/DROP` and `IDF.USER`), `alloc:PATTERN` (take ids of matching tags; implies read) and
//! `read:PATTERN` (`GET`, `IDF.TAG INFO/LIST`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

use super::engine::lock;
use super::glob::glob_match;
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
}

/// The name of the `requirepass` user.
pub const DEFAULT_USER: &str = "default";

impl Auth {
    /// Loads the users from the store.
    pub async fn load(store: &Store, requirepass: Option<String>) -> Result<Auth, StoreError> {
        Ok(Auth {
            requirepass,
            users: Mutex::new(read_users(store).await?),
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

    /// Checks a user's password; its rights on success.
    pub async fn check(&self, user: &str, password: &str) -> Option<Arc<Perms>> {
        if user == DEFAULT_USER {
            if let Some(pass) = &self.requirepass {
                return constant_time_eq(pass.as_bytes(), password.as_bytes())
                    .then(|| Arc::new(Perms::all()));
            }
        }
        let found = lock(&self.users).get(user).cloned();
        let password = password.to_owned();
        // Verifying costs milliseconds of CPU and memory by design: off the reactor.
        tokio::task::spawn_blocking(move || {
            let Some(user) = &found else {
                return None;
            };
            let hash = PasswordHash::new(&user.hash).ok()?;
            Argon2::default()
                .verify_password(password.as_bytes(), &hash)
                .is_ok()
                .then(|| user.perms.clone())
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
        let hash = tokio::task::spawn_blocking(move || hash_password(&password))
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

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
