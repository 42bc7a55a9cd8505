//! What the guard needs of a SQL store ([`crate::guard`]): the store's identity and stripe
//! (rows of `idforge_meta`), every clock, an integrity check (SQLite), unfenced raises of marks for
//! `idforge store repair`, and opening with the real cause of a failure.

use sqlx::{Connection, Row};

use super::SqlStore;
use crate::{Kind, StoreError, StoreResult};

const META_DDL: &str = "CREATE TABLE IF NOT EXISTS idforge_meta (
    name VARCHAR(64) NOT NULL PRIMARY KEY,
    value VARCHAR(256) NOT NULL)";

/// Opens one connection outside the pool and runs `pragmas`, so that a store that cannot be
/// used (a missing directory, a read-only or damaged file, a refused login) is reported with
/// its own cause at once, not as the pool's "timed out" after seconds.
pub(super) async fn first_connection(url: &str, pragmas: &[&str]) -> StoreResult<()> {
    let shown = crate::redacted(url);
    let mut conn = sqlx::AnyConnection::connect(url)
        .await
        .map_err(|e| StoreError(format!("cannot open {shown}: {e}")))?;
    for pragma in pragmas {
        sqlx::query(pragma)
            .execute(&mut conn)
            .await
            .map_err(|e| StoreError(format!("cannot use {shown}: {e}")))?;
    }
    let _ = conn.close().await;
    Ok(())
}

impl SqlStore {
    /// The value of `name` in `idforge_meta`, if it has one.
    pub async fn meta(&self, name: &str) -> StoreResult<Option<String>> {
        sqlx::query(META_DDL).execute(&self.pool).await?;
        let sql = self.sql("SELECT value FROM idforge_meta WHERE name = ?");
        let row = sqlx::query(&sql)
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|r| r.try_get::<String, _>(0)).transpose()?)
    }

    /// Gives `name` the value `candidate` unless it has one; returns the one it has.
    pub async fn claim_meta(&self, name: &str, candidate: &str) -> StoreResult<String> {
        sqlx::query(META_DDL).execute(&self.pool).await?;
        let sql = self.insert_ignore("idforge_meta (name, value) VALUES (?, ?)");
        sqlx::query(&sql)
            .bind(name)
            .bind(candidate)
            .execute(&self.pool)
            .await?;
        self.meta(name)
            .await?
            .ok_or_else(|| StoreError(format!("the store's {name} could not be written")))
    }

    /// Sets `name` to `new` if it holds `old`; whether it did.
    pub async fn replace_meta(&self, name: &str, old: &str, new: &str) -> StoreResult<bool> {
        let sql = self.sql("UPDATE idforge_meta SET value = ? WHERE name = ? AND value = ?");
        let done = sqlx::query(&sql)
            .bind(new)
            .bind(name)
            .bind(old)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Every snowflake clock.
    pub async fn clocks(&self) -> StoreResult<Vec<(String, i64)>> {
        let rows = sqlx::query("SELECT name, time_ms FROM idforge_clock")
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect()
    }

    /// SQLite's `quick_check`: `None` when the file is sound (or this is not SQLite), else
    /// what it found.
    pub async fn quick_check(&self) -> StoreResult<Option<String>> {
        if self.kind != Kind::Sqlite {
            return Ok(None);
        }
        let rows = sqlx::query("PRAGMA quick_check(10)")
            .fetch_all(&self.pool)
            .await?;
        let found: Vec<String> = rows
            .iter()
            .filter_map(|r| r.try_get::<String, _>(0).ok())
            .filter(|s| s != "ok")
            .collect();
        Ok((!found.is_empty()).then(|| found.join("; ")))
    }

    /// Copies SQLite's write-ahead log into the database file and empties it, so the file
    /// alone holds everything (a clean shutdown; a backup of `idforge.db` is then complete).
    pub async fn checkpoint(&self) {
        if self.kind == Kind::Sqlite {
            if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                .execute(&self.pool)
                .await
            {
                tracing::warn!(error = %e, "checkpoint failed");
            }
        }
    }

    /// Moves `tag`'s `max_id` from `old` to `new` by compare-and-set, without a leader fence:
    /// only for `idforge store repair`, with no server serving.
    pub async fn cas_mark(&self, tag: &str, old: i64, new: i64) -> StoreResult<bool> {
        let sql = self.sql(
            "UPDATE leaf_alloc SET max_id = ?, update_time = CURRENT_TIMESTAMP \
             WHERE biz_tag = ? AND max_id = ?",
        );
        let done = sqlx::query(&sql)
            .bind(new)
            .bind(tag)
            .bind(old)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Raises a clock to at least `ms` (unfenced, like [`SqlStore::cas_mark`]).
    pub async fn raise_clock(&self, name: &str, ms: i64) -> StoreResult<()> {
        let update =
            self.sql("UPDATE idforge_clock SET time_ms = ? WHERE name = ? AND time_ms < ?");
        let done = sqlx::query(&update)
            .bind(ms)
            .bind(name)
            .bind(ms)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            let insert = self.insert_ignore("idforge_clock (name, time_ms) VALUES (?, ?)");
            sqlx::query(&insert)
                .bind(name)
                .bind(ms)
                .execute(&self.pool)
                .await?;
        }
        Ok(())
    }

    /// Runs one statement as is (tests that damage a store on purpose).
    #[cfg(test)]
    pub(crate) async fn execute_raw(&self, sql: &str) -> StoreResult<()> {
        sqlx::query(sql).execute(&self.pool).await?;
        Ok(())
    }
}
