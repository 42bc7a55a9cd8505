//! Leader election on a SQL store (`--ha` with SQLite, PostgreSQL or MySQL): one row of
//! `idforge_leader` is the lease. Its `expires_ms` is the database's clock, so the servers'
//! clocks never have to agree; its `token` grows with each new leader and is the fence every
//! persist of the leader checks inside its own transaction (see [`SqlStore::persist`]).

use sqlx::Row;

use super::SqlStore;
use crate::{Kind, StoreResult};

/// The leader row, the members' rows, and the fence column the leader's writes bump.
pub(super) const DDL: [&str; 2] = [
    "CREATE TABLE IF NOT EXISTS idforge_leader (
        name VARCHAR(64) NOT NULL PRIMARY KEY,
        holder VARCHAR(64) NOT NULL,
        addr VARCHAR(300) NOT NULL,
        token BIGINT NOT NULL,
        expires_ms BIGINT NOT NULL,
        writes BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS idforge_members (
        id VARCHAR(64) NOT NULL PRIMARY KEY,
        addr VARCHAR(300) NOT NULL,
        expires_ms BIGINT NOT NULL)",
];

/// The leader row as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderRow {
    /// The holder's id (empty: nobody).
    pub holder: String,
    /// The holder's `host:port`.
    pub addr: String,
    /// The fencing token of the holder's term.
    pub token: i64,
    /// Whether the lease is still running (by the database's clock).
    pub live: bool,
}

impl SqlStore {
    /// The database's clock in Unix ms, as an SQL expression.
    fn now_ms(&self) -> &'static str {
        match self.kind {
            Kind::Sqlite => "CAST((julianday('now') - 2440587.5) * 86400000 AS BIGINT)",
            Kind::Postgres => "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
            Kind::MySql | Kind::Etcd => "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)",
        }
    }

    /// The leader row (a row that never held a leader reads as nobody, not live).
    pub async fn leader(&self) -> StoreResult<LeaderRow> {
        let sql = format!(
            "SELECT holder, addr, token, CASE WHEN expires_ms > {} THEN 1 ELSE 0 END \
             FROM idforge_leader WHERE name = 'leader'",
            self.now_ms()
        );
        let row = sqlx::query(&sql).fetch_optional(&self.pool).await?;
        Ok(match row {
            Some(r) => LeaderRow {
                holder: r.try_get(0)?,
                addr: r.try_get(1)?,
                token: r.try_get(2)?,
                live: r.try_get::<i64, _>(3)? == 1,
            },
            None => LeaderRow {
                holder: String::new(),
                addr: String::new(),
                token: 0,
                live: false,
            },
        })
    }

    /// Takes the lease for `ttl_ms` when nobody holds it (or its holder's ran out); returns the
    /// new term's fencing token.
    pub async fn campaign(&self, me: &str, addr: &str, ttl_ms: i64) -> StoreResult<Option<i64>> {
        let seed = self.insert_ignore(
            "idforge_leader (name, holder, addr, token, expires_ms, writes) \
             VALUES ('leader', '', '', 0, 0, 0)",
        );
        sqlx::query(&seed).execute(&self.pool).await?;
        let now = self.now_ms();
        let take = self.sql(&format!(
            "UPDATE idforge_leader SET holder = ?, addr = ?, token = token + 1, \
             expires_ms = {now} + ? WHERE name = 'leader' AND expires_ms <= {now}"
        ));
        let mut conn = self.pool.acquire().await?;
        let done = self.take_lead_on(&mut conn, &take, me, addr, ttl_ms).await;
        super::settle(conn, done)
    }

    /// The `take` statement of [`SqlStore::campaign`] and the new token, in one transaction.
    async fn take_lead_on(
        &self,
        conn: &mut sqlx::AnyConnection,
        take: &str,
        me: &str,
        addr: &str,
        ttl_ms: i64,
    ) -> StoreResult<Option<i64>> {
        let mut tx = sqlx::Connection::begin(conn).await?;
        let done = sqlx::query(take)
            .bind(me)
            .bind(addr)
            .bind(ttl_ms)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() != 1 {
            tx.rollback().await?;
            return Ok(None);
        }
        let token: i64 = sqlx::query("SELECT token FROM idforge_leader WHERE name = 'leader'")
            .fetch_one(&mut *tx)
            .await?
            .try_get(0)?;
        tx.commit().await?;
        Ok(Some(token))
    }

    /// Extends our lease by `ttl_ms` from the database's now; `false` when it is not ours any
    /// more (or ran out: an ended lease is never brought back).
    pub async fn renew(&self, me: &str, token: i64, ttl_ms: i64) -> StoreResult<bool> {
        let now = self.now_ms();
        let sql = self.sql(&format!(
            "UPDATE idforge_leader SET expires_ms = {now} + ? \
             WHERE name = 'leader' AND holder = ? AND token = ? AND expires_ms > {now}"
        ));
        let done = sqlx::query(&sql)
            .bind(ttl_ms)
            .bind(me)
            .bind(token)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Ends the lease of term `token` now (ours on resigning, a dead leader's on takeover).
    pub async fn end_term(&self, token: i64) -> StoreResult<()> {
        let sql = self.sql(
            "UPDATE idforge_leader SET holder = '', expires_ms = 0 \
             WHERE name = 'leader' AND token = ?",
        );
        sqlx::query(&sql).bind(token).execute(&self.pool).await?;
        Ok(())
    }

    /// Registers this server for `ttl_ms` and returns the members whose registration runs:
    /// `(id, addr)`.
    pub async fn members(
        &self,
        me: &str,
        addr: &str,
        ttl_ms: i64,
    ) -> StoreResult<Vec<(String, String)>> {
        let mut conn = self.pool.acquire().await?;
        let done = self.members_on(&mut conn, me, addr, ttl_ms).await;
        super::settle(conn, done)
    }

    /// [`SqlStore::members`] in one transaction on `conn`.
    async fn members_on(
        &self,
        conn: &mut sqlx::AnyConnection,
        me: &str,
        addr: &str,
        ttl_ms: i64,
    ) -> StoreResult<Vec<(String, String)>> {
        let now = self.now_ms();
        let mut tx = sqlx::Connection::begin(conn).await?;
        let delete = self.sql("DELETE FROM idforge_members WHERE id = ?");
        sqlx::query(&delete).bind(me).execute(&mut *tx).await?;
        let insert = self.sql(&format!(
            "INSERT INTO idforge_members (id, addr, expires_ms) VALUES (?, ?, {now} + ?)"
        ));
        sqlx::query(&insert)
            .bind(me)
            .bind(addr)
            .bind(ttl_ms)
            .execute(&mut *tx)
            .await?;
        let live = format!("SELECT id, addr FROM idforge_members WHERE expires_ms > {now}");
        let rows = sqlx::query(&live).fetch_all(&mut *tx).await?;
        tx.commit().await?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect()
    }

    /// Inside a leader's write: bumps the leader row if (and only if) `holder` still holds term
    /// `token` and its lease runs; the statement also locks the row until the transaction ends,
    /// so no new term can begin in between.
    pub(super) fn fence_sql(&self) -> String {
        let now = self.now_ms();
        self.sql(&format!(
            "UPDATE idforge_leader SET writes = writes + 1 \
             WHERE name = 'leader' AND holder = ? AND token = ? AND expires_ms > {now}"
        ))
    }
}
