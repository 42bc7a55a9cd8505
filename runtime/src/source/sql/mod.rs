//! Ranges from Meituan Leaf's table in PostgreSQL, MySQL/MariaDB or SQLite:
//! `leaf_alloc(biz_tag, max_id, step, description, update_time)`.
//!
//! One transaction per range, as Leaf does it: `max_id = max_id + step`, then read `max_id`;
//! the range is `max_id - step .. max_id` (every id below `max_id` may be in use, none at or
//! above it). So idforge clients and Leaf's own servers can share one table, and a team moves
//! from Leaf without moving data.

use std::time::{Duration, Instant};

use idforge_core::Error as CoreError;
use idforge_core::segment::Segment;
use sqlx::{AnyConnection, Connection};

use super::leaf_table::{LEAF_DDL, numbered_placeholders};
use super::per_process::PerProcess;
use super::sqlite_alone;
use super::url::{self, percent_decode};
use super::{SegmentSource, check_step, validate_tag};
use crate::error::{Error, ErrorCode, Result};

/// How long one range may take unless the URL says otherwise (`timeout_ms`).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
/// PostgreSQL and MySQL connections per process and source unless the URL sets `pool`.
const DEFAULT_POOL: usize = 4;
/// The most the URL's `pool` may ask for.
const MAX_POOL: usize = 64;
/// SQLite: the most tags one transaction serves (a batch costs one fsync, not one per tag).
const SQLITE_BATCH: usize = 64;

/// Which database a [`SqlSource`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqlKind {
    /// `sqlite://path` (created when missing; `synchronous=FULL`, WAL).
    Sqlite,
    /// `postgres://…` or `postgresql://…`.
    Postgres,
    /// `mysql://…` or `mariadb://…`.
    MySql,
}

/// Ranges from a Leaf table. URL parameters (removed before the URL reaches the driver):
/// `table` (default `leaf_alloc`), `auto_create` (default `true`: create the table and
/// unknown tags' rows; `false` uses the table as it is and refuses unknown tags), `timeout_ms`,
/// for PostgreSQL and MySQL `pool` (connections in the process, default 4, at most 64; a tag
/// whose row is locked holds up only its own), and for SQLite `other_sqlite` (`refuse`, the default: no range while the file is open in this
/// process outside idforge; `same`: those connections use idforge's own SQLite library).
#[derive(Debug)]
pub struct SqlSource {
    kind: SqlKind,
    url: String,
    table: String,
    auto_create: bool,
    timeout: Duration,
    /// SQLite: the database file (none for an in-memory database).
    sqlite_file: Option<std::path::PathBuf>,
    /// SQLite: refuse ranges while the file is open in this process outside idforge (URL
    /// `other_sqlite=refuse`, the default; `same` when those connections use our library).
    check_other_sqlite: bool,
    /// PostgreSQL and MySQL: the process's connections (URL `pool`, default 4), each used by
    /// one fetch at a time. SQLite opens one per batch instead (see `fetch_many`).
    links: Vec<PerProcess<Link>>,
}

/// A connection with the small runtime that drives it (one per process and source).
struct Link {
    conn: Option<AnyConnection>,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Link")
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        // The socket belongs to this runtime's reactor: drop it while the runtime is current.
        let _entered = self.runtime.enter();
        self.conn.take();
    }
}

fn unavailable(message: String) -> Error {
    Error::transient(ErrorCode::SourceUnavailable, message)
}

fn valid_table(name: &str) -> bool {
    let ident = |s: &str| {
        let mut bytes = s.bytes();
        matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
            && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
    };
    name.len() <= 128 && name.split('.').count() <= 2 && name.split('.').all(ident)
}

impl SqlSource {
    /// A source for `url` (`postgres://`, `mysql://`, `sqlite://`); connects on the first fetch.
    pub fn new(url: &str) -> Result<SqlSource> {
        let scheme = url.split(':').next().unwrap_or("");
        let kind = match scheme {
            "sqlite" => SqlKind::Sqlite,
            "postgres" | "postgresql" => SqlKind::Postgres,
            "mysql" | "mariadb" => SqlKind::MySql,
            _ => return Err(CoreError::InvalidUrl("not a SQL URL").into()),
        };
        let (head, query) = url.split_once('?').unwrap_or((url, ""));
        // The database file as the driver reads it: `sqlite://path` or `sqlite:path`, decoded.
        let sqlite_file = match head
            .strip_prefix("sqlite://")
            .or(head.strip_prefix("sqlite:"))
        {
            Some(path) if kind == SqlKind::Sqlite => {
                let path = percent_decode(path)?;
                (!path.is_empty() && !path.starts_with(":memory:"))
                    .then(|| std::path::PathBuf::from(path))
            }
            _ => None,
        };
        let mut ours = Vec::new();
        let mut driver = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let key = pair.split('=').next().unwrap_or("");
            if ["table", "auto_create", "timeout_ms", "other_sqlite", "pool"].contains(&key) {
                let value = pair.split_once('=').map_or("", |(_, v)| v);
                ours.push((key.to_owned(), percent_decode(value)?));
            } else {
                driver.push(pair);
            }
        }
        let table = url::param(&ours, "table")
            .unwrap_or("leaf_alloc")
            .to_owned();
        if !valid_table(&table) {
            return Err(CoreError::InvalidUrl("table is a SQL name: [schema.]name").into());
        }
        let auto_create = match url::param(&ours, "auto_create") {
            None | Some("true" | "1") => true,
            Some("false" | "0") => false,
            Some(_) => return Err(CoreError::InvalidUrl("auto_create is true or false").into()),
        };
        let timeout = url::timeout(&ours, DEFAULT_TIMEOUT)?;
        let check_other_sqlite = match url::param(&ours, "other_sqlite") {
            None | Some("refuse") => true,
            Some("same") => false,
            Some(_) => return Err(CoreError::InvalidUrl("other_sqlite is refuse or same").into()),
        };
        // SQLite locks the whole file: one lane, batched; a server locks rows, so a tag whose
        // row another transaction holds must not hold up the rest.
        let pool = match (kind, url::param(&ours, "pool")) {
            (SqlKind::Sqlite, None) => 1,
            (_, None) => DEFAULT_POOL,
            (_, Some(n)) => match n.parse::<usize>() {
                Ok(n @ 1..=MAX_POOL) => n,
                _ => return Err(CoreError::InvalidUrl("pool is a number of 1 to 64").into()),
            },
        };
        if kind == SqlKind::Sqlite && !driver.iter().any(|p| p.starts_with("mode=")) {
            driver.push("mode=rwc"); // create the file when missing
        }
        // MariaDB is MySQL to the driver. An SQLite file as sqlx reads it on every platform
        // (`sqlite://C:\dir\x.db` would be a host named C): super::sqlite_url.
        let head = match &sqlite_file {
            Some(path) if cfg!(windows) => super::sqlite_url(&path.to_string_lossy(), true),
            _ => head
                .strip_prefix("mariadb:")
                .map_or(head.to_owned(), |rest| format!("mysql:{rest}")),
        };
        let url = if driver.is_empty() {
            head
        } else {
            format!("{head}?{}", driver.join("&"))
        };
        sqlx::any::install_default_drivers();
        Ok(SqlSource {
            kind,
            url,
            table,
            auto_create,
            timeout,
            sqlite_file,
            check_other_sqlite,
            links: (0..pool)
                .map(|_| PerProcess::new())
                .collect::<Result<_>>()?,
        })
    }

    /// The database kind.
    pub fn kind(&self) -> SqlKind {
        self.kind
    }

    /// `sql` with `?` placeholders in this dialect (`$1, $2, …` for PostgreSQL) and the table.
    fn sql(&self, sql: &str) -> String {
        let sql = sql.replace("{table}", &self.table);
        if self.kind == SqlKind::Postgres {
            numbered_placeholders(&sql)
        } else {
            sql
        }
    }

    /// A connection, made before `deadline`.
    fn connect(&self, deadline: Instant) -> Result<Link> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| unavailable(format!("could not start the SQL runtime: {e}")))?;
        // The timer is made inside the runtime (it needs its clock).
        let conn = runtime
            .block_on(async { tokio::time::timeout_at(deadline.into(), self.open_conn()).await });
        let conn = conn
            .map_err(|_elapsed| self.timed_out())?
            .map_err(|e| self.db_error(e))?;
        Ok(Link {
            conn: Some(conn),
            runtime,
        })
    }

    /// Connects, sets SQLite up and creates the table when asked.
    async fn open_conn(&self) -> sqlx::Result<AnyConnection> {
        let mut conn = AnyConnection::connect(&self.url).await?;
        match self.set_up(&mut conn).await {
            Ok(()) => Ok(conn),
            Err(e) => {
                // Closed now, not later by the driver's thread: a SQLite file must show no
                // descriptor of ours once a fetch has returned (see sqlite_alone).
                let _ = conn.close().await;
                Err(e)
            }
        }
    }

    /// SQLite's settings, and the table when asked.
    async fn set_up(&self, conn: &mut AnyConnection) -> sqlx::Result<()> {
        if self.kind == SqlKind::Sqlite {
            // busy_timeout first: another connection closing the file (its WAL checkpoint)
            // holds a lock that would fail the next statements at once with SQLITE_BUSY. A
            // short one: SQLite's own busy handler backs off to 100 ms polls, which starved a
            // process for 20 s among five (in CI, twice, also with a 5 s wait here); `fetch`
            // retries a busy set-up, and `fetch_on` the write lock, every 0.5-1.5 ms.
            for pragma in [
                "PRAGMA busy_timeout=5",
                "PRAGMA journal_mode=WAL",
                "PRAGMA synchronous=FULL",
            ] {
                sqlx::query(pragma).execute(&mut *conn).await?;
            }
        }
        // The table of a striped idforge server (`--stripe K/N`) holds that server's own
        // positions, not ids: ranges taken here would repeat the ids it hands out. (A database
        // without idforge's meta table fails the query: nothing to check.)
        let stripe =
            sqlx::query_scalar::<_, String>("SELECT value FROM idforge_meta WHERE name = 'stripe'")
                .fetch_optional(&mut *conn)
                .await;
        if let Ok(Some(stripe)) = stripe {
            if self.table == "leaf_alloc" && !stripe.starts_with("0/1/") {
                return Err(sqlx::Error::Configuration(
                    format!(
                        "this database is the store of a striped idforge server (stripe \
                         {stripe}): its max_id are that server's own positions, not ids; use \
                         idforge://…?mode=any instead"
                    )
                    .into(),
                ));
            }
        }
        if self.auto_create {
            match sqlx::query(&self.sql(LEAF_DDL)).execute(&mut *conn).await {
                // PostgreSQL: two connections creating the table at once (`IF NOT EXISTS` does
                // not lock the name) end with one of them on a unique violation of the catalog
                // (23505), "relation already exists" (42P07) or "type already exists" (42710,
                // the table's row type): the table is there, which is the point.
                Err(sqlx::Error::Database(db))
                    if self.kind == SqlKind::Postgres
                        && matches!(db.code().as_deref(), Some("23505" | "42P07" | "42710")) => {}
                other => {
                    other?;
                }
            }
        }
        Ok(())
    }

    fn db_error(&self, e: sqlx::Error) -> Error {
        let code = match &e {
            sqlx::Error::PoolTimedOut => ErrorCode::Timeout,
            sqlx::Error::Io(io)
                if matches!(
                    io.kind(),
                    std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
                ) =>
            {
                ErrorCode::Timeout
            }
            _ => ErrorCode::SourceUnavailable,
        };
        let message = format!("{:?} table {}: {e}", self.kind, self.table);
        if transient_db(self.kind, &e) {
            Error::transient(code, message)
        } else {
            Error::permanent(code, message)
        }
    }

    /// Each tag's new `max_id`, in one transaction: `None` when the tag has no row,
    /// `Some(Err(max))` when `step` more would pass the end of `BIGINT`.
    async fn bump_all(
        &self,
        conn: &mut AnyConnection,
        requests: &[(&str, i64)],
    ) -> sqlx::Result<Vec<Bumped>> {
        // SQLite: take the write lock up front. A deferred transaction's UPDATE reads first, and
        // when another connection commits in between, its upgrade fails at once with
        // SQLITE_BUSY (the busy timeout does not apply to a stale snapshot).
        let mut tx = if self.kind == SqlKind::Sqlite {
            conn.begin_with("BEGIN IMMEDIATE").await?
        } else {
            conn.begin().await?
        };
        let update = self.sql(
            "UPDATE {table} SET max_id = max_id + ?, update_time = CURRENT_TIMESTAMP \
             WHERE biz_tag = ? AND max_id <= ?",
        );
        let select = self.sql("SELECT max_id FROM {table} WHERE biz_tag = ?");
        let mut bumped = Vec::with_capacity(requests.len());
        for &(tag, step) in requests {
            // Leaf's two statements per tag. An UPDATE that found no row can be followed by a
            // SELECT that finds one another connection created meanwhile (PostgreSQL's READ
            // COMMITTED takes a snapshot per statement; MySQL's UPDATE reads the newest rows,
            // its SELECT the transaction's snapshot): that row is bumped again, not mistaken
            // for one at the end of `BIGINT`. Once there, a row stays, so one more try is
            // enough; the third is a margin.
            let mut outcome = None;
            for _ in 0..3 {
                let updated = sqlx::query(&update)
                    .bind(step)
                    .bind(tag)
                    .bind(i64::MAX - step)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                let max: Option<i64> = sqlx::query_scalar(&select)
                    .bind(tag)
                    .fetch_optional(&mut *tx)
                    .await?;
                outcome = match max {
                    Some(max) if updated == 1 => Some(Ok(max)),
                    Some(max) if max > i64::MAX - step => Some(Err(max)),
                    Some(_) => continue,
                    None => None,
                };
                break;
            }
            bumped.push(outcome);
        }
        tx.commit().await?;
        Ok(bumped)
    }

    /// [`bump_all`](Self::bump_all), creating the rows of tags that have none first when it may.
    async fn bump_or_create_all(
        &self,
        conn: &mut AnyConnection,
        requests: &[(&str, i64)],
    ) -> sqlx::Result<Vec<Bumped>> {
        let mut bumped = self.bump_all(conn, requests).await?;
        if !self.auto_create {
            return Ok(bumped);
        }
        let missing: Vec<usize> = (0..requests.len())
            .filter(|&i| bumped[i].is_none())
            .collect();
        if missing.is_empty() {
            return Ok(bumped);
        }
        let again: Vec<(&str, i64)> = missing.iter().map(|&i| requests[i]).collect();
        for &(tag, step) in &again {
            self.create_row(conn, tag, step).await?;
        }
        for (i, result) in missing.into_iter().zip(self.bump_all(conn, &again).await?) {
            bumped[i] = result;
        }
        Ok(bumped)
    }

    async fn create_row(&self, conn: &mut AnyConnection, tag: &str, step: i64) -> sqlx::Result<()> {
        let insert = match self.kind {
            SqlKind::Sqlite => "INSERT OR IGNORE INTO",
            SqlKind::Postgres => "INSERT INTO",
            SqlKind::MySql => "INSERT IGNORE INTO",
        };
        let conflict = if self.kind == SqlKind::Postgres {
            " ON CONFLICT DO NOTHING"
        } else {
            ""
        };
        let sql = self.sql(&format!(
            "{insert} {{table}} (biz_tag, max_id, step, description) \
             VALUES (?, 1, ?, 'created by idforge'){conflict}"
        ));
        // Leaf's `step` column is an INT; our step may be larger.
        let row_step = step.min(i64::from(i32::MAX));
        sqlx::query(&sql)
            .bind(tag)
            .bind(row_step)
            .execute(conn)
            .await?;
        Ok(())
    }

    fn timed_out(&self) -> Error {
        Error::transient(
            ErrorCode::Timeout,
            format!(
                "{:?}: no range within timeout_ms ({} ms)",
                self.kind,
                self.timeout.as_millis()
            ),
        )
    }

    /// A range for each request on `link`, in one transaction, before `deadline`: `Err` when
    /// the transaction failed (no range for any), else each tag's own outcome.
    fn fetch_on(
        &self,
        link: &mut Link,
        requests: &[(&str, u64)],
        deadline: Instant,
    ) -> Result<Vec<Result<Segment>>> {
        // check_step bounds each step to 2^38.
        let steps: Vec<(&str, i64)> = requests.iter().map(|&(t, s)| (t, s as i64)).collect();
        let conn = link.conn.as_mut().expect("a link holds its connection");
        let outcome = link.runtime.block_on(async {
            tokio::time::timeout_at(deadline.into(), async {
                loop {
                    match self.bump_or_create_all(conn, &steps).await {
                        // SQLite: another process holds the write lock. Its own busy handler
                        // backs off to 100 ms polls, and a poller that slow loses the lock to
                        // fresher ones again and again (seconds of starvation among a few
                        // processes): poll every millisecond or two instead, until the deadline.
                        Err(e) if self.kind == SqlKind::Sqlite && sqlx_busy(&e) => {
                            tokio::time::sleep(busy_pause()).await
                        }
                        done => break done,
                    }
                }
            })
            .await
        });
        let bumped = match outcome {
            Err(_elapsed) => return Err(self.timed_out()),
            Ok(result) => result.map_err(|e| self.db_error(e))?,
        };
        Ok(steps
            .iter()
            .zip(bumped)
            .map(|(&(tag, step), bumped)| self.range(tag, step, bumped))
            .collect())
    }

    /// The range a tag's bump gives.
    fn range(&self, tag: &str, step: i64, bumped: Bumped) -> Result<Segment> {
        match bumped {
            None => Err(Error::permanent(
                ErrorCode::InvalidArgument,
                format!("no such tag {tag:?} in table {}", self.table),
            )),
            Some(Err(max)) => Err(Error::permanent(
                ErrorCode::Overflow,
                format!("tag {tag:?} is at max_id {max}: no {step} more ids fit"),
            )),
            Some(Ok(max)) if max >= step => Ok(Segment::new((max - step) as u64, max as u64)?),
            Some(Ok(max)) => Err(Error::permanent(
                ErrorCode::InvalidSegment,
                format!("tag {tag:?}: max_id {max} after adding {step} is negative"),
            )),
        }
    }
}

impl SqlSource {
    /// Ranges on a connection of its own, closed (its worker thread ended) before returning.
    fn fetch_closed(
        &self,
        requests: &[(&str, u64)],
        deadline: Instant,
    ) -> Result<Vec<Result<Segment>>> {
        let mut link = self.connect(deadline)?;
        let result = self.fetch_on(&mut link, requests, deadline);
        if let Some(conn) = link.conn.take() {
            // A failed close leaves nothing to undo: the ranges' transaction has ended.
            let _ = link.runtime.block_on(conn.close());
        }
        result
    }

    /// SQLite: ranges in one transaction on a connection opened and closed for them.
    fn fetch_sqlite(&self, requests: &[(&str, u64)]) -> Result<Vec<Result<Segment>>> {
        // SQLite keeps process-wide lock and file state that a fork must neither copy
        // half-updated nor carry into the child with an open connection: each batch opens
        // and closes its own connection, with no fork in between.
        // A connection opening while another closes the file (its last-close checkpoint)
        // can get SQLITE_BUSY without the busy timeout being consulted: try again, within
        // the source's timeout, outside the fork guard so a fork is not held up.
        let deadline = Instant::now() + self.timeout;
        let mut pause = Duration::from_millis(1);
        // With no other SQLite library in this process on the file (see sqlite_alone): our
        // fetches of the file take turns, and check the process's descriptors around each.
        let alone = match &self.sqlite_file {
            Some(file) if self.check_other_sqlite => {
                sqlite_alone::hold(file, deadline)?.map(|held| (file, held))
            }
            _ => None,
        };
        loop {
            if let Some((file, _)) = &alone {
                sqlite_alone::check(file, deadline, true)?;
            }
            let result = crate::fork::quiesced(|| self.fetch_closed(requests, deadline));
            let result = match (&alone, result) {
                (Some((file, _)), Ok(ranges)) => {
                    // Our connection is closed: a descriptor now was opened meanwhile.
                    sqlite_alone::check(file, deadline, false).map(|()| ranges)
                }
                (_, result) => result,
            };
            match &result {
                Err(e) if sqlite_busy(e) && Instant::now() + pause < deadline => {
                    std::thread::sleep(pause);
                    pause = busy_pause();
                }
                _ => return result,
            }
        }
    }

    /// PostgreSQL, MySQL: ranges on a free connection of the pool, kept for the next fetch
    /// unless the request failed.
    fn fetch_pooled(&self, requests: &[(&str, u64)]) -> Result<Vec<Result<Segment>>> {
        // One deadline for connecting and the ranges.
        let deadline = Instant::now() + self.timeout;
        let run = |slot: &mut Option<Link>| {
            let link = match slot {
                Some(link) => link,
                None => slot.insert(self.connect(deadline)?),
            };
            let result = self.fetch_on(link, requests, deadline);
            // After a failure the connection's state is unknown (a transaction cut off by the
            // timeout, a dropped socket): start over on the next fetch. A tag error keeps it.
            if result.is_err() {
                *slot = None;
            }
            result
        };
        // Never wait behind one busy link (its fetch may be stuck on a locked row): try each
        // in turn until one is free or the time is up.
        loop {
            for link in &self.links {
                if let Some(result) = link.try_with(run) {
                    return result;
                }
            }
            if Instant::now() >= deadline {
                return Err(self.timed_out());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// A tag's bump: its new `max_id`, `Err(max)` at the end of `BIGINT`, `None` without a row.
type Bumped = Option<std::result::Result<i64, i64>>;

/// Whether trying again may mend `e`: the network, the pool, a busy or locked SQLite file, or a
/// database error of a server restarting, failing over (a read-only standby), overloaded, or
/// breaking a lock wait or deadlock. Bad credentials, a missing table, bad SQL: permanent.
fn transient_db(kind: SqlKind, e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => {
            let code = db.code().unwrap_or_default();
            let message = db.message();
            // SQLite: the primary result code (low byte) 5 BUSY or 6 LOCKED. Only SQLite's
            // codes are numbers: PostgreSQL's 42501 (permission denied) would pass the test.
            let sqlite_busy = kind == SqlKind::Sqlite
                && code.parse::<u32>().is_ok_and(|c| matches!(c & 0xff, 5 | 6));
            // PostgreSQL and MySQL SQLSTATEs: connection exceptions, serialization failure and
            // deadlock, insufficient resources, operator intervention (a server shutting down
            // or starting), a lock not available, a read-only transaction (a standby).
            let sqlstate = kind != SqlKind::Sqlite
                && (code.starts_with("08")
                    || code.starts_with("53")
                    || code.starts_with("57P")
                    || ["40001", "40P01", "55P03", "25006"].contains(&code.as_ref()));
            // MySQL reports lock wait timeouts and the like under the generic HY000.
            let mysql = kind == SqlKind::MySql
                && code == "HY000"
                && [
                    "Lock wait timeout",
                    "Too many connections",
                    "read-only",
                    "shutdown",
                ]
                .iter()
                .any(|m| message.contains(m));
            sqlite_busy || sqlstate || mysql
        }
        _ => false,
    }
}

/// Whether `e`, from SQLite, is SQLITE_BUSY (any extended code): nothing was written.
fn sqlx_busy(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(db) => db
            .code()
            .and_then(|c| c.parse::<u32>().ok())
            .is_some_and(|c| c & 0xff == 5),
        _ => false,
    }
}

/// 0.5 to 1.5 ms, varied so that pollers of one lock do not move in step.
fn busy_pause() -> std::time::Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    std::time::Duration::from_micros(500 + u64::from(nanos % 1000))
}

/// Whether `e` is SQLite's "database is locked" (SQLITE_BUSY, any extended code): nothing was
/// written, so the fetch may be tried again.
fn sqlite_busy(e: &Error) -> bool {
    matches!(e, Error::Source { message, .. }
        if message.contains("database is locked") || message.contains("(code: 5)"))
}

impl SegmentSource for SqlSource {
    fn identity(&self) -> Option<String> {
        // The URL without user, password and driver parameters, and the table.
        let head = self.url.split('?').next().unwrap_or("");
        let bare = match head.split_once("://") {
            Some((scheme, rest)) => {
                let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
                let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
                format!("{scheme}://{host}/{path}")
            }
            None => head.to_owned(),
        };
        Some(format!("{bare}#{}", self.table))
    }

    fn fetch(&self, tag: &str, step: u64) -> Result<Segment> {
        let mut ranges = self.fetch_many(&[(tag, step)]);
        ranges
            .pop()
            .unwrap_or_else(|| Err(unavailable("no range".into())))
    }

    /// SQLite: the tags in one transaction. PostgreSQL and MySQL are given one at a time (one
    /// locked row would hold a whole transaction), on a pool of connections.
    fn fetch_many(&self, requests: &[(&str, u64)]) -> Vec<Result<Segment>> {
        let checked: Vec<Result<()>> = requests
            .iter()
            .map(|&(tag, step)| {
                validate_tag(tag)?;
                check_step(step)
            })
            .collect();
        let valid: Vec<(&str, u64)> = requests
            .iter()
            .zip(&checked)
            .filter(|(_, ok)| ok.is_ok())
            .map(|(&request, _)| request)
            .collect();
        let fetched = match (valid.is_empty(), self.kind) {
            (true, _) => Ok(Vec::new()),
            (false, SqlKind::Sqlite) => self.fetch_sqlite(&valid),
            (false, _) => self.fetch_pooled(&valid),
        };
        let (mut ranges, failed) = match fetched {
            Ok(ranges) => (ranges.into_iter(), None),
            Err(e) => (Vec::new().into_iter(), Some(e)),
        };
        checked
            .into_iter()
            .map(|ok| {
                ok?;
                match &failed {
                    Some(e) => Err(e.again()),
                    None => ranges
                        .next()
                        .unwrap_or_else(|| Err(unavailable("no range".into()))),
                }
            })
            .collect()
    }

    fn lanes(&self) -> usize {
        self.links.len()
    }

    fn max_batch(&self) -> usize {
        match self.kind {
            SqlKind::Sqlite => SQLITE_BATCH,
            _ => 1,
        }
    }

    fn connections(&self) -> usize {
        self.links
            .iter()
            .map(|link| link.peek(|slot| slot.is_some()))
            .sum()
    }
}

#[cfg(test)]
mod tests;
