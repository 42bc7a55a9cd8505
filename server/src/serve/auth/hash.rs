//! argon2 password hashes: making one, checking one in reused memory, and the dummy hash that
//! unknown users are checked against.

use std::sync::OnceLock;

use argon2::password_hash::{Output, PasswordHash, PasswordHasher, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};

use super::credential::constant_time_eq;

/// Why a password could not be hashed.
#[derive(Debug, thiserror::Error)]
pub(super) enum HashError {
    /// No random salt from the system.
    #[error("no random salt: {0}")]
    Salt(String),
    /// argon2 refused.
    #[error("argon2: {0}")]
    Argon2(String),
}

pub(super) fn hash_password(password: &str) -> Result<String, HashError> {
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
pub(super) const MAX_M_COST_KIB: u32 = 256 * 1024;

/// Checks `password` against a PHC-format argon2 `hash`, computing in `memory` (grown as needed
/// and kept for the next check).
pub(super) fn verify_with(hash: &str, password: &[u8], memory: &mut Vec<Block>) -> bool {
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
pub(super) fn dummy_hash() -> &'static str {
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
}
