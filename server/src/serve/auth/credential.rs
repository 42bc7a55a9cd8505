//! Secrets in requests: the credential of an `Authorization` header (a bearer token, or basic
//! auth's password), and comparing secrets in time that depends only on their lengths. Shared
//! by the client port's AUTH, the metrics port and the HTTP API.

/// The secret of an `Authorization` header's value: a bearer token, or basic auth's password.
pub(crate) fn credential(value: &str) -> Option<Vec<u8>> {
    let (scheme, cred) = value.trim().split_once(' ')?;
    let cred = cred.trim();
    if scheme.eq_ignore_ascii_case("bearer") {
        return Some(cred.as_bytes().to_vec());
    }
    if scheme.eq_ignore_ascii_case("basic") {
        let decoded = base64_decode(cred)?;
        let i = decoded.iter().position(|b| *b == b':')?;
        return Some(decoded[i + 1..].to_vec());
    }
    None
}

/// Compares two secrets in time that depends only on their lengths.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Standard base64 (with or without padding); a dozen lines rather than a crate for one header.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|c| *c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_and_basic_credentials() {
        assert_eq!(credential("Bearer s3cret").as_deref(), Some(&b"s3cret"[..]));
        assert_eq!(
            credential(" bearer  s3cret ").as_deref(),
            Some(&b"s3cret"[..])
        );
        // "prom:s3cret"
        assert_eq!(
            credential("Basic cHJvbTpzM2NyZXQ=").as_deref(),
            Some(&b"s3cret"[..])
        );
        assert_eq!(credential("Digest x"), None);
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd") && !constant_time_eq(b"abc", b"ab"));
        assert_eq!(base64_decode("aGk=").unwrap(), b"hi");
        assert!(base64_decode("a*").is_none());
    }
}
