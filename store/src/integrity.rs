//! What the guard ([`crate::guard`]) and `idforge store` need of every store: its
//! identity, every clock, an integrity check, and unfenced raises of marks for a repair.

use super::{Store, StoreError, StoreResult, TagRow};

/// `url` with any password replaced by `***`, for messages.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let host_start = rest.find('/').unwrap_or(rest.len());
    match rest[..host_start].rfind('@') {
        Some(at) => {
            let user = rest[..at].split(':').next().unwrap_or("");
            format!("{scheme}://{user}:***@{}", &rest[at + 1..])
        }
        None => url.to_owned(),
    }
}

impl Store {
    /// The store's setting `name` (`identity`, `stripe`), if it has one.
    async fn meta(&self, name: &str) -> StoreResult<Option<String>> {
        match self {
            Store::Sql(s) => s.meta(name).await,
            Store::Etcd(s) => s.meta(name).await,
        }
    }

    /// Gives the store's setting `name` the value `candidate` unless it has one; returns the
    /// one it has.
    async fn claim_meta(&self, name: &str, candidate: &str) -> StoreResult<String> {
        match self {
            Store::Sql(s) => s.claim_meta(name, candidate).await,
            Store::Etcd(s) => s.claim_meta(name, candidate).await,
        }
    }

    /// Sets the store's setting `name` to `new` if it holds `old`; whether it did.
    async fn replace_meta(&self, name: &str, old: &str, new: &str) -> StoreResult<bool> {
        match self {
            Store::Sql(s) => s.replace_meta(name, old, new).await,
            Store::Etcd(s) => s.replace_meta(name, old, new).await,
        }
    }

    /// The store's identity (a random name it was given when first used), if it has one.
    pub async fn identity(&self) -> StoreResult<Option<String>> {
        self.meta("identity").await
    }

    /// Gives the store the identity `candidate` unless it has one; returns the one it has.
    pub async fn claim_identity(&self, candidate: &str) -> StoreResult<String> {
        self.claim_meta("identity", candidate).await
    }

    /// Records `stripe` (`K/N/block`; `0/1/…` without stripes) as the one whose positions the
    /// store holds, unless it has one; returns the one it has.
    pub async fn claim_stripe(&self, stripe: &str) -> StoreResult<String> {
        self.claim_meta("stripe", stripe).await
    }

    /// Changes the store's stripe from `old` to `new`; whether it still held `old`.
    pub async fn replace_stripe(&self, old: &str, new: &str) -> StoreResult<bool> {
        self.replace_meta("stripe", old, new).await
    }

    /// Every snowflake clock and its persisted time.
    pub async fn clocks(&self) -> StoreResult<Vec<(String, i64)>> {
        match self {
            Store::Sql(s) => s.clocks().await,
            Store::Etcd(s) => s.clocks().await,
        }
    }

    /// The database's own integrity check where there is one (SQLite's `quick_check`):
    /// `None` when it found nothing.
    pub async fn quick_check(&self) -> StoreResult<Option<String>> {
        match self {
            Store::Sql(s) => s.quick_check().await,
            Store::Etcd(_) => Ok(None),
        }
    }

    /// Raises `tag`'s `max_id` to at least `at_least` (creating it with `step` when missing),
    /// without the leader fence: for `idforge store repair` only, with no server serving.
    /// Returns the mark before.
    pub async fn raise_tag(&self, tag: &str, at_least: i64, step: i64) -> StoreResult<Option<i64>> {
        let before = self.tag(tag).await?;
        match &before {
            None => {
                let row = TagRow {
                    tag: tag.to_owned(),
                    max_id: at_least,
                    step,
                    description: None,
                };
                self.create_tag(&row).await?;
            }
            Some(row) if row.max_id < at_least => {
                let moved = match self {
                    Store::Sql(s) => s.cas_mark(tag, row.max_id, at_least).await?,
                    Store::Etcd(s) => s.cas_mark(tag, row.max_id, at_least).await?,
                };
                if !moved {
                    return Err(StoreError(format!(
                        "tag {tag} changed during the repair: is a server still running?"
                    )));
                }
            }
            Some(_) => {}
        }
        Ok(before.map(|r| r.max_id))
    }

    /// Raises a clock to at least `ms`, without the leader fence (for a repair).
    pub async fn raise_clock(&self, name: &str, ms: i64) -> StoreResult<()> {
        match self {
            Store::Sql(s) => s.raise_clock(name, ms).await,
            Store::Etcd(s) => s.raise_clock(name, ms).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(
            redacted("postgres://u:secret@h:5432/db"),
            "postgres://u:***@h:5432/db"
        );
        assert_eq!(
            redacted("sqlite://a/b.db?mode=rwc"),
            "sqlite://a/b.db?mode=rwc"
        );
        assert_eq!(redacted("etcd://h:1/p@x"), "etcd://h:1/p@x");
    }
}
