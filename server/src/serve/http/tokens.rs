//! HTTP tokens: who a request acts as.
//!
//! The `--http-tokens` file holds one `SHA256-HEX USER` line per token (blank lines and `#`
//! comments allowed): only the hash of a token is kept on disk and in memory, and a token acts
//! as an idforge user, with that user's rights as they are now (the same ACL as RESP; a token
//! sees only its user's tags). Tokens are long random strings (tinyid's are 32 hex digits), so
//! one SHA-256 guards them; the argon2 of passwords is for what people choose.
//!
//! A request without a token acts as `--http-anonymous-user` when one is set. Without tokens and
//! without auth on the server (no users, no `requirepass`), every request has every right, as a
//! RESP client has there.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::serve::auth::{Auth, DEFAULT_USER, Perms};

/// The SHA-256 of a token.
pub(crate) type TokenHash = [u8; 32];

/// The tokens file, read at start.
#[derive(Debug, Default)]
pub(crate) struct Tokens {
    users: HashMap<TokenHash, String>,
    /// A tokens file was given: a request needs a token from it (or the anonymous user).
    configured: bool,
    anonymous: Option<String>,
}

/// Who a request acts as.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    /// The idforge user.
    pub user: String,
    /// Its rights.
    pub perms: Arc<Perms>,
    /// What its rate limit is counted against: the token's hash (`None`: no token).
    pub key: Option<TokenHash>,
    /// Whether the rate limit applies: not on an open server (no tokens, no auth), where there
    /// is no one to count requests against but the whole server.
    pub limited: bool,
}

impl Caller {
    /// The owner a tag created for this caller is counted against (`None` for an admin), as
    /// `INCR` counts it.
    pub(crate) fn owner(&self) -> Option<&str> {
        (!self.perms.is_admin()).then_some(self.user.as_str())
    }
}

/// Why a request has no caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// No token, and no anonymous user.
    NoToken,
    /// A token that is not in the file (or whose user is gone).
    BadToken,
}

/// The SHA-256 of `token`.
pub(crate) fn hash(token: &[u8]) -> TokenHash {
    let digest = ring::digest::digest(&ring::digest::SHA256, token);
    let mut out = [0u8; 32];
    out.copy_from_slice(digest.as_ref());
    out
}

impl Tokens {
    /// Reads the tokens file (`None`: no tokens).
    pub(crate) fn load(
        path: Option<&Path>,
        anonymous: Option<String>,
    ) -> Result<Tokens, TokensError> {
        let Some(path) = path else {
            return Ok(Tokens {
                anonymous,
                ..Tokens::default()
            });
        };
        let text = std::fs::read_to_string(path).map_err(TokensError::Read)?;
        Ok(Tokens {
            users: parse(&text)?,
            configured: true,
            anonymous,
        })
    }

    /// Whether a tokens file was given.
    pub(crate) fn configured(&self) -> bool {
        self.configured
    }

    /// Who a request with `token` (empty or `None`: none) acts as, by `auth`'s users now.
    pub(crate) fn caller(&self, auth: &Auth, token: Option<&[u8]>) -> Result<Caller, Refused> {
        let open = !self.configured && !auth.required();
        let as_user = |user: &str, key| {
            auth.perms_of(user)
                .map(|perms| Caller {
                    user: user.to_owned(),
                    perms,
                    key,
                    limited: true,
                })
                .ok_or(Refused::BadToken)
        };
        // Without a tokens file on an open server a token means nothing (a tinyid client
        // always sends one): such a request is one without a token, so both get one answer.
        let token = token.filter(|t| !t.is_empty() && !open);
        match token {
            Some(token) => {
                let key = hash(token);
                match self.users.get(&key) {
                    Some(user) => as_user(user, Some(key)),
                    None => Err(Refused::BadToken),
                }
            }
            None => match &self.anonymous {
                Some(user) => as_user(user, None),
                None if open => Ok(everyone()),
                None => Err(Refused::NoToken),
            },
        }
    }
}

/// The caller of an open server: every right.
fn everyone() -> Caller {
    Caller {
        user: DEFAULT_USER.to_owned(),
        perms: Arc::new(Perms::all()),
        key: None,
        limited: false,
    }
}

/// The `SHA256-HEX USER` lines.
/// Why the tokens file cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TokensError {
    /// It could not be read.
    #[error("{0}")]
    Read(std::io::Error),
    /// A line that is not `SHA256-HEX USER`.
    #[error("line {line}: expected SHA256-HEX USER")]
    Shape {
        /// Its number, from 1.
        line: usize,
    },
    /// A hash that is not 64 hex digits.
    #[error("line {line}: not 64 hex digits (a SHA-256)")]
    NotSha256 {
        /// Its number, from 1.
        line: usize,
    },
    /// A token listed twice.
    #[error("line {line}: the same token twice")]
    Twice {
        /// Its number, from 1.
        line: usize,
    },
}

fn parse(text: &str) -> Result<HashMap<TokenHash, String>, TokensError> {
    let mut users = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line_no = i + 1;
        let mut words = line.split_whitespace();
        let (Some(hex), Some(user), None) = (words.next(), words.next(), words.next()) else {
            return Err(TokensError::Shape { line: line_no });
        };
        let hash = from_hex(hex).ok_or(TokensError::NotSha256 { line: line_no })?;
        if users.insert(hash, user.to_owned()).is_some() {
            return Err(TokensError::Twice { line: line_no });
        }
    }
    Ok(users)
}

fn from_hex(hex: &str) -> Option<TokenHash> {
    let bytes = hex.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks(2).enumerate() {
        let text = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(text, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An open server's auth (no users, no password), on a throwaway SQLite store.
    async fn open_auth() -> (tempfile::TempDir, Auth) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("s.db").display());
        let store = idforge_store::Store::open(&url).await.unwrap();
        let limits = crate::serve::config::Limits::default().auth();
        let auth = Auth::load(&store, None, limits).await.unwrap();
        (dir, auth)
    }

    #[tokio::test]
    async fn an_anonymous_user_answers_made_up_tokens_as_requests_without_one() {
        let (_dir, auth) = open_auth().await;
        // The anonymous user does not exist on this open server: both are refused alike.
        let tokens = Tokens::load(None, Some("nobody".into())).unwrap();
        let none = tokens.caller(&auth, None).map(|c| c.user);
        let made_up = tokens.caller(&auth, Some(b"made-up")).map(|c| c.user);
        assert_eq!(none, Err(Refused::BadToken));
        assert_eq!(made_up, none, "a made-up token gets no more than no token");
        // Without an anonymous user an open server lets both in, as everyone.
        let open = Tokens::load(None, None).unwrap();
        assert!(open.caller(&auth, None).is_ok_and(|c| c.perms.is_admin()));
        assert!(
            open.caller(&auth, Some(b"x"))
                .is_ok_and(|c| c.perms.is_admin())
        );
    }

    #[test]
    fn token_lines_are_checked() {
        // sha256("abc")
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        let users = parse(&format!("# tokens\n\n{abc} alice\n")).unwrap();
        assert_eq!(users.get(&hash(b"abc")).map(String::as_str), Some("alice"));
        for (bad, why) in [
            (abc.to_owned(), "line 1: expected"),
            (format!("{abc} alice extra"), "expected"),
            ("abc alice".to_owned(), "64 hex"),
            (format!("{} alice", &abc.replace('b', "g")), "64 hex"),
            (format!("{abc} a\n{abc} b"), "line 2: the same token twice"),
        ] {
            let e = parse(&bad).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
    }
}
