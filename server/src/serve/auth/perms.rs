//! Permission words (`admin`, `alloc:PATTERN`, `read:PATTERN`) and what they allow.

use crate::text::glob::glob_match;

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
}
