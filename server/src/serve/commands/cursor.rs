//! `IDF.TAG SCAN` cursors: opaque, and unreadable to whoever holds them.
//!
//! A cursor has to say where the next page starts, which is the last tag name the page read, and
//! that may be a name the caller may not read (the page is filtered after it is read, so that a
//! page costs one bounded read whatever the caller's rights). So the name is sealed:
//! ChaCha20-Poly1305 under a key drawn at random when the process starts and never written
//! anywhere, with a nonce that is a per-process counter (so never reused under one key), over the
//! name padded to the longest a tag may be (so the cursor's length says nothing either). What a
//! cursor shows is how many cursors this process had made before it, and nothing about any tag.
//!
//! A cursor that was altered, or made by another process (before a restart, or by another server
//! of an HA group), does not open: the client is told to start over from `0`.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};

/// The longest tag name (see `idforge::source::validate_tag`).
const MAX_NAME: usize = 128;
/// What a sealed cursor holds: the name's length, then the name padded with zeros.
const PLAIN: usize = 1 + MAX_NAME;
/// Binds cursors to their one use.
const AAD: &[u8] = b"idforge IDF.TAG SCAN cursor v1";

/// Why a cursor cannot be made or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CursorError {
    /// Not a cursor this process made (or altered).
    #[error(
        "ERR invalid cursor: use 0 or a cursor IDF.TAG SCAN returned (cursors last as long as \
         the server process that made them: after a restart or a failover, start again from 0)"
    )]
    Invalid,
    /// The system's random source failed when the key was drawn.
    #[error("ERR cannot make SCAN cursors: {0}")]
    NoKey(String),
}

struct Sealer {
    key: LessSafeKey,
    made: AtomicU64,
}

/// This process's key, drawn on first use.
fn sealer() -> Result<&'static Sealer, CursorError> {
    static SEALER: OnceLock<Result<Sealer, CursorError>> = OnceLock::new();
    SEALER
        .get_or_init(|| {
            let no_key = |e: &dyn std::fmt::Display| CursorError::NoKey(e.to_string());
            let mut key = [0u8; 32];
            getrandom::fill(&mut key).map_err(|e| no_key(&e))?;
            let key = UnboundKey::new(&CHACHA20_POLY1305, &key).map_err(|e| no_key(&e))?;
            Ok(Sealer {
                key: LessSafeKey::new(key),
                made: AtomicU64::new(0),
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The cursor of a page that ends after tag `after` (a valid tag name): lowercase hex.
pub fn seal(after: &str) -> Result<String, CursorError> {
    let sealer = sealer()?;
    let name = after.as_bytes();
    // Tag names are at most MAX_NAME bytes; a longer one would be a bug upstream, never a
    // cursor that opens to something else.
    if name.len() > MAX_NAME {
        return Err(CursorError::Invalid);
    }
    let mut nonce = [0u8; NONCE_LEN];
    let count = sealer.made.fetch_add(1, Ordering::Relaxed);
    nonce[NONCE_LEN - 8..].copy_from_slice(&count.to_be_bytes());
    let mut sealed = Vec::with_capacity(NONCE_LEN + PLAIN + 16);
    sealed.extend_from_slice(&nonce);
    let mut body = [0u8; PLAIN];
    body[0] = name.len() as u8;
    body[1..1 + name.len()].copy_from_slice(name);
    let mut body = body.to_vec();
    sealer
        .key
        .seal_in_place_append_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(AAD),
            &mut body,
        )
        .map_err(|_| CursorError::Invalid)?;
    sealed.extend_from_slice(&body);
    Ok(hex(&sealed))
}

/// The tag name a cursor made by [`seal`] in this process ends after.
pub fn open(cursor: &[u8]) -> Result<String, CursorError> {
    let sealer = sealer()?;
    let bytes = unhex(cursor).ok_or(CursorError::Invalid)?;
    if bytes.len() != NONCE_LEN + PLAIN + CHACHA20_POLY1305.tag_len() {
        return Err(CursorError::Invalid);
    }
    let (nonce, body) = bytes.split_at(NONCE_LEN);
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| CursorError::Invalid)?;
    let mut body = body.to_vec();
    let plain = sealer
        .key
        .open_in_place(nonce, Aad::from(AAD), &mut body)
        .map_err(|_| CursorError::Invalid)?;
    let len = usize::from(plain[0]);
    let name = plain.get(1..1 + len).ok_or(CursorError::Invalid)?;
    let name = std::str::from_utf8(name).map_err(|_| CursorError::Invalid)?;
    Ok(name.to_owned())
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

fn unhex(text: &[u8]) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    text.chunks(2)
        .map(|pair| Some((digit(pair[0])? << 4) | digit(pair[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_show_nothing_of_the_name() {
        let secret = "secret-customer-acme";
        let a = seal(secret).unwrap();
        assert_eq!(open(a.as_bytes()).unwrap(), secret);
        assert!(!a.contains("secret") && !a.contains(&hex(secret.as_bytes())));
        // The same name twice: two different cursors; a short and a long name: the same length.
        let b = seal(secret).unwrap();
        assert_ne!(a, b);
        assert_eq!(open(b.as_bytes()).unwrap(), secret);
        let long = "x".repeat(MAX_NAME);
        assert_eq!(seal("a").unwrap().len(), seal(&long).unwrap().len());
        assert_eq!(open(seal(&long).unwrap().as_bytes()).unwrap(), long);
        assert_eq!(open(a.to_uppercase().as_bytes()).unwrap(), secret);
    }

    #[test]
    fn altered_or_foreign_cursors_do_not_open() {
        let good = seal("public-a").unwrap();
        let mut flipped = good.clone().into_bytes();
        // Every position: a cursor altered anywhere (nonce, name or tag) is refused.
        for i in 0..flipped.len() {
            let was = flipped[i];
            flipped[i] = if was == b'0' { b'1' } else { b'0' };
            assert_eq!(open(&flipped), Err(CursorError::Invalid), "byte {i}");
            flipped[i] = was;
        }
        for bad in [
            &b""[..],
            b"0",
            b".public-a",
            b"zz",
            b"abc",
            &good.as_bytes()[..good.len() - 2],
            format!("{good}00").as_bytes(),
        ] {
            assert_eq!(open(bad), Err(CursorError::Invalid), "{bad:?}");
        }
        // Sealed under another key (another process): refused.
        let other = LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &[7u8; 32]).unwrap());
        let mut body = vec![0u8; PLAIN];
        body[0] = 1;
        body[1] = b'a';
        let nonce = [0u8; NONCE_LEN];
        other
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(AAD),
                &mut body,
            )
            .unwrap();
        let foreign = hex(&[&nonce[..], &body].concat());
        assert_eq!(open(foreign.as_bytes()), Err(CursorError::Invalid));
    }
}
