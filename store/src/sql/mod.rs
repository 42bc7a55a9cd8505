//! The SQL stores: SQLite, PostgreSQL and MySQL/MariaDB through sqlx's `Any` driver (the SQL
//! differs only where the dialects do).
//!
//! Tags live in Meituan Leaf's table, so a team can move from Leaf without moving data:
//! `leaf_alloc(biz_tag, max_id, step, description, update_time)`. As in Leaf, every id below
//! `max_id` may have been handed out and none at or above it has been.

use std::time::Duration;

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, Connection, Row};

use super::{ClockMove, Kind, StoreError, StoreResult, TagMove, TagRow, UserRow, WorkerRow};

mod integrity;
mod leader;
pub use leader::LeaderRow;

/// Whether this server's writes of marks, clocks and leases are fenced by a leader term.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fence {
    /// A server alone (no `--ha`): nothing to check.
    Off,
    /// Elected, but not the leader now: every such write is refused.
    Refuse,
    /// The leader of term `token`, as `holder`.
    Term { holder: String, token: i64 },
}

/// Hands `conn` back to the pool after a write transaction, or closes it when the transaction
/// failed: whatever failed (a statement, the commit, the rollback) may have left the connection
/// in a state the driver does not know, and a write on it must never look committed.
pub(super) fn settle<T>(mut conn: PoolConnection<Any>, done: StoreResult<T>) -> StoreResult<T> {
    if done.is_err() {
        conn.close_on_drop();
    }
    done
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> StoreError {
        StoreError(e.to_string())
    }
}

/// The tables besides Leaf's (`idforge::source::leaf_table::LEAF_DDL`, shared with the runtime's SQL source).
const SCHEMA: [&str; 3] = [
    "CREATE TABLE IF NOT EXISTS idforge_users (
        name VARCHAR(128) NOT NULL PRIMARY KEY,
        hash VARCHAR(256) NOT NULL,
        perms VARCHAR(2048) NOT NULL)",
    "CREATE TABLE IF NOT EXISTS idforge_clock (
        name VARCHAR(128) NOT NULL PRIMARY KEY,
        time_ms BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS idforge_workers (
        service VARCHAR(128) NOT NULL,
        worker_id BIGINT NOT NULL,
        token VARCHAR(64) NOT NULL,
        expires_ms BIGINT NOT NULL,
        last_time_ms BIGINT NOT NULL,
        ttl_ms BIGINT NOT NULL,
        version BIGINT NOT NULL,
        holder VARCHAR(128) NOT NULL DEFAULT '',
        reserved_ms BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (service, worker_id))",
];

/// Columns `idforge_workers` gained after its first release (sticky worker ids), with their
/// types: a table made before gets them when a server opens it. Servers before them leave
/// them as they are (their writes name the other columns only).
const WORKER_COLUMNS: [(&str, &str); 2] = [
    ("holder", "VARCHAR(128) NOT NULL DEFAULT ''"),
    ("reserved_ms", "BIGINT NOT NULL DEFAULT 0"),
];

/// Every SQLite connection: busy_timeout first, so the others wait for a lock too; every commit
/// reaches the disk before its ids are served; readers never block the writer.
const SQLITE_PRAGMAS: [&str; 3] = [
    "PRAGMA busy_timeout=5000",
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=FULL",
];

/// A connection pool to one database, with the schema in place.
#[derive(Debug, Clone)]
pub struct SqlStore {
    pool: AnyPool,
    kind: Kind,
    fence: std::sync::Arc<std::sync::Mutex<Fence>>,
}

impl SqlStore {
    /// Connects to `url` and creates the tables that are missing.
    pub async fn open(url: &str) -> StoreResult<SqlStore> {
        let kind = Kind::of(url)?;
        if kind == Kind::Etcd {
            return Err(StoreError("an etcd URL is not a SQL store".into()));
        }
        install_default_drivers();
        let sqlite = kind == Kind::Sqlite;
        let mut options = AnyPoolOptions::new()
            .acquire_timeout(Duration::from_secs(5))
            .max_connections(if sqlite { 2 } else { 4 })
            .after_release(move |conn, _| {
                Box::pin(async move {
                    // SQLite's driver rolls a dropped transaction back on its worker thread:
                    // wait for it, so the depth below is what that rollback left.
                    if sqlite {
                        conn.ping().await?;
                    }
                    // Still "in a transaction" after the rollback means the rollback failed
                    // (SQLite had already rolled back by itself, as on a full disk): the
                    // driver's count and the database disagree, and the next `begin` would be
                    // a savepoint of a transaction that never commits. Close it.
                    Ok(!conn.is_in_transaction())
                })
            });
        if sqlite {
            // Every commit reaches the disk before its ids are served; readers never block it.
            options = options.after_connect(|conn, _| {
                Box::pin(async move {
                    // busy_timeout first, so the other pragmas wait for a lock too.
                    for pragma in SQLITE_PRAGMAS {
                        sqlx::query(pragma).execute(&mut *conn).await?;
                    }
                    Ok(())
                })
            });
        }
        // One connection first, so a store that cannot be used says why at once.
        let pragmas: &[&str] = if kind == Kind::Sqlite {
            &SQLITE_PRAGMAS
        } else {
            &[]
        };
        integrity::first_connection(url, pragmas).await?;
        let pool = options.connect(url).await?;
        let store = SqlStore {
            pool,
            kind,
            fence: std::sync::Arc::new(std::sync::Mutex::new(Fence::Off)),
        };
        let leaf = idforge::source::leaf_table::LEAF_DDL.replace("{table}", "leaf_alloc");
        sqlx::query(&leaf).execute(&store.pool).await?;
        for ddl in SCHEMA.iter().chain(&leader::DDL) {
            sqlx::query(ddl).execute(&store.pool).await?;
        }
        store.add_worker_columns().await?;
        Ok(store)
    }

    /// Adds the [`WORKER_COLUMNS`] a table made by an older server lacks.
    async fn add_worker_columns(&self) -> StoreResult<()> {
        for (column, ty) in WORKER_COLUMNS {
            let probe = format!("SELECT {column} FROM idforge_workers WHERE 1 = 0");
            if sqlx::query(&probe).execute(&self.pool).await.is_ok() {
                continue;
            }
            let add = format!("ALTER TABLE idforge_workers ADD COLUMN {column} {ty}");
            if let Err(e) = sqlx::query(&add).execute(&self.pool).await {
                // Another server opening the store at the same time may have added it.
                if sqlx::query(&probe).execute(&self.pool).await.is_err() {
                    return Err(e.into());
                }
            }
        }
        Ok(())
    }

    /// The database kind.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Fences every later write of marks, clocks and worker leases: with `Some((holder,
    /// token))` each must find that term still running, with `None` each is refused (elected,
    /// not leading).
    pub fn set_fence(&self, term: Option<(String, i64)>) {
        *self.fence.lock().unwrap_or_else(|e| e.into_inner()) = match term {
            Some((holder, token)) => Fence::Term { holder, token },
            None => Fence::Refuse,
        };
    }

    /// Checks the fence as the first statement of `tx` (which it then holds the leader row in).
    async fn fenced(&self, tx: &mut sqlx::Transaction<'_, sqlx::Any>) -> StoreResult<()> {
        let fence = self.fence.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match fence {
            Fence::Off => Ok(()),
            Fence::Refuse => Err(StoreError("not the leader: write refused".into())),
            Fence::Term { holder, token } => {
                let done = sqlx::query(&self.fence_sql())
                    .bind(holder)
                    .bind(token)
                    .execute(&mut **tx)
                    .await?;
                if done.rows_affected() == 1 {
                    Ok(())
                } else {
                    Err(StoreError(
                        "fenced: this server's leader term is over".into(),
                    ))
                }
            }
        }
    }

    /// `sql` with `?` placeholders in this dialect (`$1, $2, …` for PostgreSQL).
    fn sql(&self, sql: &str) -> String {
        if self.kind == Kind::Postgres {
            idforge::source::leaf_table::numbered_placeholders(sql)
        } else {
            sql.to_owned()
        }
    }

    /// `INSERT` that does nothing when the key exists.
    fn insert_ignore(&self, rest: &str) -> String {
        self.sql(&match self.kind {
            Kind::Sqlite => format!("INSERT OR IGNORE INTO {rest}"),
            Kind::Postgres => format!("INSERT INTO {rest} ON CONFLICT DO NOTHING"),
            // (An etcd kind never reaches here: `open` refuses it.)
            Kind::MySql | Kind::Etcd => format!("INSERT IGNORE INTO {rest}"),
        })
    }

    /// One tag's row.
    pub async fn tag(&self, tag: &str) -> StoreResult<Option<TagRow>> {
        let sql =
            self.sql("SELECT biz_tag, max_id, step, description FROM leaf_alloc WHERE biz_tag = ?");
        let row = sqlx::query(&sql)
            .bind(tag)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| tag_row(&r)).transpose()
    }

    /// Every tag, sorted by name.
    pub async fn tags(&self) -> StoreResult<Vec<TagRow>> {
        let rows = sqlx::query(
            "SELECT biz_tag, max_id, step, description FROM leaf_alloc ORDER BY biz_tag",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(tag_row).collect()
    }

    /// At most `limit` tag names after `after` (from the first when empty), in the database's
    /// order of `biz_tag`: one page of an index range, never the whole table.
    pub async fn tag_names(&self, after: &str, limit: usize) -> StoreResult<Vec<String>> {
        let sql = self.sql(&format!(
            "SELECT biz_tag FROM leaf_alloc WHERE biz_tag > ? ORDER BY biz_tag LIMIT {limit}"
        ));
        let rows = sqlx::query(&sql).bind(after).fetch_all(&self.pool).await?;
        Ok(rows
            .iter()
            .map(|r| r.try_get::<String, _>(0))
            .collect::<Result<_, _>>()?)
    }

    /// Adds a tag; `false` when it exists already (then nothing changes).
    pub async fn create_tag(&self, row: &TagRow) -> StoreResult<bool> {
        let sql = self.insert_ignore(
            "leaf_alloc (biz_tag, max_id, step, description, update_time) \
             VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)",
        );
        let done = sqlx::query(&sql)
            .bind(&row.tag)
            .bind(row.max_id)
            .bind(row.step)
            .bind(row.description.clone())
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Removes a tag; `false` when there was none.
    pub async fn drop_tag(&self, tag: &str) -> StoreResult<bool> {
        let sql = self.sql("DELETE FROM leaf_alloc WHERE biz_tag = ?");
        let done = sqlx::query(&sql).bind(tag).execute(&self.pool).await?;
        Ok(done.rows_affected() == 1)
    }

    /// Moves many high-water marks and snowflake clocks in one transaction (see
    /// [`super::Store::persist`]).
    pub async fn persist(
        &self,
        tags: &[TagMove],
        clocks: &[(String, i64)],
    ) -> StoreResult<Vec<String>> {
        let mut conn = self.pool.acquire().await?;
        let done = self.persist_on(&mut conn, tags, clocks).await;
        settle(conn, done)
    }

    /// [`SqlStore::persist`] in one transaction on `conn`.
    async fn persist_on(
        &self,
        conn: &mut AnyConnection,
        tags: &[TagMove],
        clocks: &[(String, i64)],
    ) -> StoreResult<Vec<String>> {
        let update_tag = self.sql(
            "UPDATE leaf_alloc SET max_id = ?, update_time = CURRENT_TIMESTAMP \
             WHERE biz_tag = ? AND max_id = ?",
        );
        let update_clock =
            self.sql("UPDATE idforge_clock SET time_ms = ? WHERE name = ? AND time_ms <= ?");
        let insert_clock = self.insert_ignore("idforge_clock (name, time_ms) VALUES (?, ?)");
        let mut tx = conn.begin().await?;
        self.fenced(&mut tx).await?;
        let mut conflicts = Vec::new();
        for m in tags {
            let done = sqlx::query(&update_tag)
                .bind(m.new)
                .bind(&m.tag)
                .bind(m.old)
                .execute(&mut *tx)
                .await?;
            if done.rows_affected() != 1 {
                conflicts.push(m.tag.clone());
            }
        }
        for (name, time_ms) in clocks {
            let done = sqlx::query(&update_clock)
                .bind(*time_ms)
                .bind(name)
                .bind(*time_ms)
                .execute(&mut *tx)
                .await?;
            if done.rows_affected() == 0 {
                sqlx::query(&insert_clock)
                    .bind(name)
                    .bind(*time_ms)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        tx.commit().await?;
        Ok(conflicts)
    }

    /// Brings snowflake clocks back (see [`super::Store::lower_clocks`]).
    pub async fn lower_clocks(&self, clocks: &[ClockMove]) -> StoreResult<Vec<String>> {
        let mut conn = self.pool.acquire().await?;
        let done = self.lower_clocks_on(&mut conn, clocks).await;
        settle(conn, done)
    }

    /// [`SqlStore::lower_clocks`] in one transaction on `conn`.
    async fn lower_clocks_on(
        &self,
        conn: &mut AnyConnection,
        clocks: &[ClockMove],
    ) -> StoreResult<Vec<String>> {
        let lower = self.sql("UPDATE idforge_clock SET time_ms = ? WHERE name = ? AND time_ms = ?");
        let mut tx = conn.begin().await?;
        self.fenced(&mut tx).await?;
        let mut conflicts = Vec::new();
        for m in clocks {
            let done = sqlx::query(&lower)
                .bind(m.new)
                .bind(&m.name)
                .bind(m.old)
                .execute(&mut *tx)
                .await?;
            if done.rows_affected() != 1 {
                conflicts.push(m.name.clone());
            }
        }
        tx.commit().await?;
        Ok(conflicts)
    }

    /// The persisted time of a snowflake clock (Unix ms), if it ever ran.
    pub async fn clock(&self, name: &str) -> StoreResult<Option<i64>> {
        let sql = self.sql("SELECT time_ms FROM idforge_clock WHERE name = ?");
        let row = sqlx::query(&sql)
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|r| r.try_get::<i64, _>(0)).transpose()?)
    }

    /// Every user.
    pub async fn users(&self) -> StoreResult<Vec<UserRow>> {
        let rows = sqlx::query("SELECT name, hash, perms FROM idforge_users ORDER BY name")
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(UserRow {
                    name: r.try_get(0)?,
                    hash: r.try_get(1)?,
                    perms: r.try_get(2)?,
                })
            })
            .collect()
    }

    /// Adds or replaces a user.
    pub async fn put_user(&self, user: &UserRow) -> StoreResult<()> {
        let mut conn = self.pool.acquire().await?;
        let done = self.put_user_on(&mut conn, user).await;
        settle(conn, done)
    }

    /// [`SqlStore::put_user`] in one transaction on `conn`.
    async fn put_user_on(&self, conn: &mut AnyConnection, user: &UserRow) -> StoreResult<()> {
        let mut tx = conn.begin().await?;
        let delete = self.sql("DELETE FROM idforge_users WHERE name = ?");
        sqlx::query(&delete)
            .bind(&user.name)
            .execute(&mut *tx)
            .await?;
        let insert = self.sql("INSERT INTO idforge_users (name, hash, perms) VALUES (?, ?, ?)");
        sqlx::query(&insert)
            .bind(&user.name)
            .bind(&user.hash)
            .bind(&user.perms)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Removes a user; `false` when there was none.
    pub async fn delete_user(&self, name: &str) -> StoreResult<bool> {
        let sql = self.sql("DELETE FROM idforge_users WHERE name = ?");
        let done = sqlx::query(&sql).bind(name).execute(&self.pool).await?;
        Ok(done.rows_affected() == 1)
    }

    /// The worker-id leases of `service`, by id.
    pub async fn workers(&self, service: &str) -> StoreResult<Vec<WorkerRow>> {
        let sql = self.sql(
            "SELECT worker_id, token, expires_ms, last_time_ms, ttl_ms, version, holder, \
             reserved_ms FROM idforge_workers WHERE service = ? ORDER BY worker_id",
        );
        let rows = sqlx::query(&sql)
            .bind(service)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(worker_row).collect()
    }

    /// One worker lease of `service`, if it was ever taken.
    pub async fn worker(&self, service: &str, id: i64) -> StoreResult<Option<WorkerRow>> {
        let sql = self.sql(
            "SELECT worker_id, token, expires_ms, last_time_ms, ttl_ms, version, holder, \
             reserved_ms FROM idforge_workers WHERE service = ? AND worker_id = ?",
        );
        let row = sqlx::query(&sql)
            .bind(service)
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| worker_row(&r)).transpose()
    }

    /// Compare-and-sets of many worker leases (distinct ones) in one fenced transaction: one
    /// commit for all; whether each held.
    pub async fn put_workers(&self, writes: &[(String, WorkerRow)]) -> StoreResult<Vec<bool>> {
        let mut conn = self.pool.acquire().await?;
        let done = self.put_workers_on(&mut conn, writes).await;
        settle(conn, done)
    }

    /// [`SqlStore::put_workers`] in one transaction on `conn`.
    async fn put_workers_on(
        &self,
        conn: &mut AnyConnection,
        writes: &[(String, WorkerRow)],
    ) -> StoreResult<Vec<bool>> {
        let insert = self.insert_ignore(
            "idforge_workers (token, expires_ms, last_time_ms, ttl_ms, holder, reserved_ms, \
             service, worker_id, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)",
        );
        let update = self.sql(
            "UPDATE idforge_workers SET token = ?, expires_ms = ?, last_time_ms = ?, \
             ttl_ms = ?, holder = ?, reserved_ms = ?, version = version + 1 \
             WHERE service = ? AND worker_id = ? AND version = ?",
        );
        let mut tx = conn.begin().await?;
        self.fenced(&mut tx).await?;
        let mut held = Vec::with_capacity(writes.len());
        for (service, row) in writes {
            // Every statement in the fenced transaction (one on the pool would need a second
            // connection while this one is held: concurrent ACQUIREs deadlocked SQLite's pool
            // of two).
            let done = if row.version == 0 {
                self.bind_worker(&insert, service, row)
                    .execute(&mut *tx)
                    .await?
            } else {
                self.bind_worker(&update, service, row)
                    .bind(row.version)
                    .execute(&mut *tx)
                    .await?
            };
            held.push(done.rows_affected() == 1);
        }
        tx.commit().await?;
        Ok(held)
    }

    fn bind_worker<'q>(
        &self,
        sql: &'q str,
        service: &'q str,
        row: &WorkerRow,
    ) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
        sqlx::query(sql)
            .bind(row.token.clone())
            .bind(row.expires_ms)
            .bind(row.last_time_ms)
            .bind(row.ttl_ms)
            .bind(row.holder.clone())
            .bind(row.reserved_ms)
            .bind(service)
            .bind(row.id)
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> StoreResult<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// Closes the pool (waits for connections to finish).
    pub async fn close(&self) {
        self.checkpoint().await;
        self.pool.close().await;
    }
}

fn worker_row(r: &sqlx::any::AnyRow) -> StoreResult<WorkerRow> {
    Ok(WorkerRow {
        id: r.try_get(0)?,
        token: r.try_get(1)?,
        expires_ms: r.try_get(2)?,
        last_time_ms: r.try_get(3)?,
        ttl_ms: r.try_get(4)?,
        version: r.try_get(5)?,
        holder: r.try_get(6)?,
        reserved_ms: r.try_get(7)?,
    })
}

fn tag_row(r: &sqlx::any::AnyRow) -> StoreResult<TagRow> {
    Ok(TagRow {
        tag: r.try_get(0)?,
        max_id: r.try_get(1)?,
        step: r.try_get(2)?,
        description: r.try_get(3)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One worker lease's compare-and-set (what `Store::put_worker` does).
    async fn put_one(store: &SqlStore, row: &WorkerRow) -> StoreResult<bool> {
        let done = store.put_workers(&[("s".to_owned(), row.clone())]).await?;
        Ok(done.first() == Some(&true))
    }

    async fn sqlite() -> (tempfile::TempDir, SqlStore) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("s.db").display());
        let store = SqlStore::open(&url).await.unwrap();
        (dir, store)
    }

    #[tokio::test]
    async fn a_workers_table_of_an_older_server_gains_the_holder_columns() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("s.db").display());
        // The table as servers before sticky ids made it, with a lease in it.
        {
            install_default_drivers();
            let pool = AnyPoolOptions::new().connect(&url).await.unwrap();
            sqlx::query(
                "CREATE TABLE idforge_workers (service VARCHAR(128) NOT NULL, \
                 worker_id BIGINT NOT NULL, token VARCHAR(64) NOT NULL, \
                 expires_ms BIGINT NOT NULL, last_time_ms BIGINT NOT NULL, \
                 ttl_ms BIGINT NOT NULL, version BIGINT NOT NULL, \
                 PRIMARY KEY (service, worker_id))",
            )
            .execute(&pool)
            .await
            .unwrap();
            sqlx::query("INSERT INTO idforge_workers VALUES ('s', 0, 't', 10, 5, 5, 1)")
                .execute(&pool)
                .await
                .unwrap();
            pool.close().await;
        }
        let store = SqlStore::open(&url).await.unwrap();
        let old = store.worker("s", 0).await.unwrap().unwrap();
        assert_eq!(
            (old.holder.as_str(), old.reserved_ms, old.version),
            ("", 0, 1)
        );
        let named = WorkerRow {
            holder: "web-0".into(),
            reserved_ms: 99,
            ..old
        };
        assert!(put_one(&store, &named).await.unwrap());
        let stored = store.worker("s", 0).await.unwrap().unwrap();
        assert_eq!((stored.holder.as_str(), stored.reserved_ms), ("web-0", 99));
        store.close().await;
        // Opened again (the columns are there now), nothing changes.
        let store = SqlStore::open(&url).await.unwrap();
        assert_eq!(store.workers("s").await.unwrap()[0].holder, "web-0");
        store.close().await;
    }

    #[tokio::test]
    async fn clocks_are_brought_back_only_from_the_time_they_hold() {
        // Tags, clocks moving forward and users: tests/every_store.rs, on every store.
        let (_dir, store) = sqlite().await;
        store.persist(&[], &[("c".into(), 50)]).await.unwrap();
        // Brought back only from the time it holds (a clean stop's compare-and-set).
        let back = |old, new| ClockMove {
            name: "c".into(),
            old,
            new,
        };
        assert_eq!(store.lower_clocks(&[back(49, 30)]).await.unwrap(), ["c"]);
        assert_eq!(store.clock("c").await.unwrap(), Some(50));
        assert!(
            store
                .lower_clocks(&[back(50, 30)])
                .await
                .unwrap()
                .is_empty()
        );
        assert_eq!(store.clock("c").await.unwrap(), Some(30));
    }

    #[tokio::test]
    async fn leader_terms_fence_the_writes() {
        let (_dir, store) = sqlite().await;
        let row = TagRow {
            tag: "t".into(),
            max_id: 1,
            step: 10,
            description: None,
        };
        store.create_tag(&row).await.unwrap();
        let m = |old, new| TagMove {
            tag: "t".into(),
            old,
            new,
        };
        // Alone (no --ha) nothing is checked.
        assert!(store.persist(&[m(1, 11)], &[]).await.unwrap().is_empty());
        // Elected but not leading: refused.
        store.set_fence(None);
        let refused = store.persist(&[m(11, 21)], &[]).await.unwrap_err();
        assert!(refused.0.contains("not the leader"), "{refused}");
        assert!(!store.leader().await.unwrap().live);
        let token = store.campaign("a", "h:1", 60_000).await.unwrap().unwrap();
        assert_eq!(
            store.campaign("b", "h:2", 60_000).await.unwrap(),
            None,
            "a holds it"
        );
        let leader = store.leader().await.unwrap();
        assert_eq!((leader.holder.as_str(), leader.live), ("a", true));
        store.set_fence(Some(("a".into(), token)));
        assert!(store.persist(&[m(11, 21)], &[]).await.unwrap().is_empty());
        assert!(store.renew("a", token, 60_000).await.unwrap());
        assert!(!store.renew("b", token, 60_000).await.unwrap());
        // The term ends (a takeover): the old leader's writes fail and change nothing.
        store.end_term(token).await.unwrap();
        assert!(
            !store.renew("a", token, 60_000).await.unwrap(),
            "never brought back"
        );
        let fenced = store.persist(&[m(21, 31)], &[]).await.unwrap_err();
        assert!(fenced.0.contains("fenced"), "{fenced}");
        assert_eq!(store.tag("t").await.unwrap().unwrap().max_id, 21);
        let next = store.campaign("b", "h:2", 60_000).await.unwrap().unwrap();
        assert!(next > token);
        let members = store.members("b", "h:2", 1000).await.unwrap();
        assert_eq!(members, [("b".to_string(), "h:2".to_string())]);
    }

    #[tokio::test]
    async fn worker_leases_are_fenced_and_tags_page() {
        let (_dir, store) = sqlite().await;
        let row = WorkerRow {
            id: 0,
            token: "t".into(),
            expires_ms: 10,
            last_time_ms: 5,
            ttl_ms: 5,
            holder: "h".into(),
            reserved_ms: 20,
            version: 0,
        };
        // Elected, not leading: neither the first write of a lease nor a later one lands.
        store.set_fence(None);
        let refused = put_one(&store, &row).await.unwrap_err();
        assert!(refused.0.contains("not the leader"), "{refused}");
        assert_eq!(store.worker("s", 0).await.unwrap(), None);
        let token = store.campaign("a", "h:1", 60_000).await.unwrap().unwrap();
        store.set_fence(Some(("a".into(), token)));
        assert!(put_one(&store, &row).await.unwrap());
        assert!(!put_one(&store, &row).await.unwrap(), "version 0 is gone");
        let stored = store.worker("s", 0).await.unwrap().unwrap();
        assert_eq!(stored.version, 1);
        store.end_term(token).await.unwrap();
        let fenced = put_one(&store, &stored).await.unwrap_err();
        assert!(fenced.0.contains("fenced"), "{fenced}");
        assert_eq!(store.workers("s").await.unwrap(), [stored]);
        // Tag names come a page at a time, after the cursor.
        for tag in ["b", "a", "c"] {
            let row = TagRow {
                tag: tag.into(),
                max_id: 1,
                step: 1,
                description: None,
            };
            store.create_tag(&row).await.unwrap();
        }
        assert_eq!(store.tag_names("", 2).await.unwrap(), ["a", "b"]);
        assert_eq!(store.tag_names("b", 2).await.unwrap(), ["c"]);
        assert!(store.tag_names("c", 2).await.unwrap().is_empty());
    }

    #[test]
    fn url_schemes() {
        assert!(Kind::of("redis://x").unwrap_err().0.contains("redis"));
        assert_eq!(Kind::of("postgresql://x").unwrap(), Kind::Postgres);
    }
}
