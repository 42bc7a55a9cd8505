//! Durable storage of high-water marks, users and snowflake clocks: SQL databases ([`sql`]:
//! SQLite, PostgreSQL, MySQL/MariaDB on Meituan Leaf's table) or etcd ([`etcd`]: keys moved by
//! compare-and-swap transactions, fenced by the leader key of the server's `serve::ha`).
//!
//! Whatever the store, every id below a tag's `max_id` may have been handed out and none at or
//! above it has been.
//!
//! The [`guard`] is here too: the record kept beside the server of what its store must at least
//! hold, and the checks that compare the two ([`integrity`]). This crate has no network front;
//! the server (`idforge-server`) serves from it, and `idforge store` inspects and repairs it.

pub mod etcd;
pub mod guard;
pub mod integrity;
pub mod sql;

pub use integrity::redacted;

pub use etcd::EtcdStore;
pub use sql::SqlStore;

/// A store failure (connection, SQL, etcd or a refused URL), as text for replies and logs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(pub String);

/// The result of a store call.
pub type StoreResult<T> = Result<T, StoreError>;

/// Which database a store talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// SQLite, embedded (`sqlite://path`), with `synchronous=FULL` and a write-ahead log.
    Sqlite,
    /// PostgreSQL (`postgres://…`).
    Postgres,
    /// MySQL or MariaDB (`mysql://…`).
    MySql,
    /// etcd (`etcd://host:port[,host:port…][/prefix]`): always run with leader election.
    Etcd,
}

impl Kind {
    /// The kind a URL names.
    pub fn of(url: &str) -> StoreResult<Kind> {
        let scheme = url.split(':').next().unwrap_or("");
        match scheme {
            "sqlite" => Ok(Kind::Sqlite),
            "postgres" | "postgresql" => Ok(Kind::Postgres),
            "mysql" | "mariadb" => Ok(Kind::MySql),
            "etcd" | "etcds" => Ok(Kind::Etcd),
            _ => Err(StoreError(format!(
                "unsupported store URL scheme {scheme:?} (sqlite://, postgres://, mysql://, etcd://, etcds://)"
            ))),
        }
    }

    /// The name shown in `INFO` and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Sqlite => "sqlite",
            Kind::Postgres => "postgres",
            Kind::MySql => "mysql",
            Kind::Etcd => "etcd",
        }
    }
}

/// One tag: a row of `leaf_alloc`, or its keys in etcd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagRow {
    /// The tag (`biz_tag`).
    pub tag: String,
    /// Every id below this may have been issued; none at or above it has been.
    pub max_id: i64,
    /// The base step: how many ids one persist reserves at least.
    pub step: i64,
    /// Free text.
    pub description: Option<String>,
}

/// One user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRow {
    /// The user name.
    pub name: String,
    /// The argon2 PHC string of the password.
    pub hash: String,
    /// The permissions, space-separated (`admin`, `alloc:PATTERN`, `read:PATTERN`).
    pub perms: String,
}

/// One high-water move in a [`Store::persist`] batch: `tag`'s `max_id` from `old` to `new`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagMove {
    /// The tag.
    pub tag: String,
    /// The `max_id` this server last wrote or read (the compare of compare-and-set).
    pub old: i64,
    /// The new `max_id`.
    pub new: i64,
}

/// One snowflake clock brought back in a [`Store::lower_clocks`] batch: `name`'s persisted time
/// from `old` to `new` (Unix ms), as a compare-and-set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClockMove {
    /// The clock's name.
    pub name: String,
    /// The persisted time this server last wrote or read (the compare of compare-and-set).
    pub old: i64,
    /// The new, lower, persisted time.
    pub new: i64,
}

/// One worker-id lease (`IDF.WORKER`) of a service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerRow {
    /// The worker (snowflake node) id.
    pub id: i64,
    /// The holder's secret; empty once released.
    pub token: String,
    /// The lease's end (Unix ms, the leader's clock).
    pub expires_ms: i64,
    /// The latest id time (Unix ms) the holder reported: the id is not handed out again before
    /// this has passed either.
    pub last_time_ms: i64,
    /// The lease's length, for renewals.
    pub ttl_ms: i64,
    /// The name its last holder gave (`ACQUIRE … HOLDER name`); empty when it gave none.
    pub holder: String,
    /// Until when (Unix ms, the leader's clock) the id stays reserved for `holder` after its
    /// lease ends: no other holder gets it before (0: no reservation).
    pub reserved_ms: i64,
    /// Bumped by each write; the compare of compare-and-set (0: no row yet).
    pub version: i64,
}

/// A store: one of the kinds above.
#[derive(Debug, Clone)]
pub enum Store {
    /// SQLite, PostgreSQL or MySQL.
    Sql(SqlStore),
    /// etcd.
    Etcd(EtcdStore),
}

/// Runs the same call on whichever store this is.
macro_rules! each {
    ($self:ident, $s:ident => $call:expr) => {
        match $self {
            Store::Sql($s) => $call,
            Store::Etcd($s) => $call,
        }
    };
}

impl Store {
    /// Connects to `url` and prepares what is missing (tables, for SQL).
    pub async fn open(url: &str) -> StoreResult<Store> {
        Ok(match Kind::of(url)? {
            Kind::Etcd => Store::Etcd(EtcdStore::open(url).await?),
            _ => Store::Sql(SqlStore::open(url).await?),
        })
    }

    /// The database kind.
    pub fn kind(&self) -> Kind {
        each!(self, s => s.kind())
    }

    /// The etcd store, when this is one (it carries the leader election).
    pub fn etcd(&self) -> Option<&EtcdStore> {
        match self {
            Store::Etcd(s) => Some(s),
            Store::Sql(_) => None,
        }
    }

    /// The SQL store, when this is one.
    pub fn sql(&self) -> Option<&SqlStore> {
        match self {
            Store::Sql(s) => Some(s),
            Store::Etcd(_) => None,
        }
    }

    /// One tag.
    pub async fn tag(&self, tag: &str) -> StoreResult<Option<TagRow>> {
        each!(self, s => s.tag(tag).await)
    }

    /// Every tag, sorted by name.
    pub async fn tags(&self) -> StoreResult<Vec<TagRow>> {
        each!(self, s => s.tags().await)
    }

    /// At most `limit` tag names after `after` (from the first when empty), in the store's
    /// order: one page, never every row.
    pub async fn tag_names(&self, after: &str, limit: usize) -> StoreResult<Vec<String>> {
        each!(self, s => s.tag_names(after, limit).await)
    }

    /// Adds a tag; `false` when it exists already (then nothing changes).
    pub async fn create_tag(&self, row: &TagRow) -> StoreResult<bool> {
        each!(self, s => s.create_tag(row).await)
    }

    /// Removes a tag; `false` when there was none.
    pub async fn drop_tag(&self, tag: &str) -> StoreResult<bool> {
        each!(self, s => s.drop_tag(tag).await)
    }

    /// Moves many high-water marks and snowflake clocks in one transaction.
    ///
    /// Each tag move is a compare-and-set on `max_id`; the tags whose stored mark did not hold
    /// `old` (changed by someone else, or dropped) are returned and left as they were. Clocks
    /// only move forward. On etcd the whole transaction also requires this server to still
    /// hold the leader key; when it does not, nothing is written and the call fails.
    pub async fn persist(
        &self,
        tags: &[TagMove],
        clocks: &[(String, i64)],
    ) -> StoreResult<Vec<String>> {
        each!(self, s => s.persist(tags, clocks).await)
    }

    /// Brings snowflake clocks back (at a clean stop, to the last tick an id was made in), each a
    /// compare-and-set on the persisted time, in one transaction fenced like
    /// [`Store::persist`]; returns the clocks whose stored time did not hold `old`.
    pub async fn lower_clocks(&self, clocks: &[ClockMove]) -> StoreResult<Vec<String>> {
        each!(self, s => s.lower_clocks(clocks).await)
    }

    /// The persisted time of a snowflake clock (Unix ms), if it ever ran.
    pub async fn clock(&self, name: &str) -> StoreResult<Option<i64>> {
        each!(self, s => s.clock(name).await)
    }

    /// Every user, sorted by name.
    pub async fn users(&self) -> StoreResult<Vec<UserRow>> {
        each!(self, s => s.users().await)
    }

    /// Adds or replaces a user.
    pub async fn put_user(&self, user: &UserRow) -> StoreResult<()> {
        each!(self, s => s.put_user(user).await)
    }

    /// Removes a user; `false` when there was none.
    pub async fn delete_user(&self, name: &str) -> StoreResult<bool> {
        each!(self, s => s.delete_user(name).await)
    }

    /// The worker-id leases of `service`, by id.
    pub async fn workers(&self, service: &str) -> StoreResult<Vec<WorkerRow>> {
        each!(self, s => s.workers(service).await)
    }

    /// One worker lease of `service`, if it was ever taken.
    pub async fn worker(&self, service: &str, id: i64) -> StoreResult<Option<WorkerRow>> {
        each!(self, s => s.worker(service, id).await)
    }

    /// Writes `row` if the stored one still has `row.version` (0: none yet); the stored copy
    /// then has the next version. `false` when another write came first. Fenced by the leader
    /// term like [`Store::persist`], in the same transaction.
    pub async fn put_worker(&self, service: &str, row: &WorkerRow) -> StoreResult<bool> {
        let done = self
            .put_workers(&[(service.to_owned(), row.clone())])
            .await?;
        Ok(done.first() == Some(&true))
    }

    /// Many [`Store::put_worker`]s of distinct leases in one fenced transaction (one commit);
    /// whether each held.
    pub async fn put_workers(&self, writes: &[(String, WorkerRow)]) -> StoreResult<Vec<bool>> {
        each!(self, s => s.put_workers(writes).await)
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> StoreResult<()> {
        each!(self, s => s.ping().await)
    }

    /// Closes the connections.
    pub async fn close(&self) {
        each!(self, s => s.close().await)
    }
}
