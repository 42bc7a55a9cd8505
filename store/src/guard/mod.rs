//! The guard: a record kept outside the store of what the store must at least hold, so that a
//! store that went back is caught before it serves an id twice.
//!
//! After every persist the server appends the new marks to a small checksummed file in its data
//! dir and fsyncs it before serving any id the persist covers ([`log`]). At start and whenever
//! it takes the lead, it compares the store with the guard: a store with another identity, an
//! empty one (no identity) where the guard says ids were served, a tag or clock below its mark,
//! or (SQLite) a file that fails `quick_check` makes the server refuse to serve, with the way
//! out in the message (`idforge store verify`, `idforge store repair`).
//!
//! A guard that is new (no file: a first start, or an operator deleted it) trusts the store as
//! it is and takes it as the baseline. A guard file that exists but holds no identity (emptied,
//! cut to its header) on a store that has one is refused: a guard was kept for that store and
//! its marks are lost, so the store as it is may be behind ([`Finding::GuardLost`]).

mod lines;
pub mod log;

use std::path::Path;
use std::sync::{Arc, Mutex};

pub use log::{Fix, Found, Log, LogError, Mark, Marks};

use crate::{Store, StoreError, StoreResult};

/// A difference between the store and its guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// The database's own check failed.
    Damaged(String),
    /// The store has another identity than the guard recorded, or none (empty, replaced).
    OtherStore {
        /// What the guard recorded.
        guard: String,
        /// What the store holds (`None`: no identity: an empty or new database).
        store: Option<String>,
    },
    /// A tag's `max_id` is below its mark (or the tag is gone).
    TagBehind {
        /// The tag.
        tag: String,
        /// The store's `max_id` (`None`: missing).
        store: Option<i64>,
        /// The guard's mark.
        guard: i64,
    },
    /// The guard file holds no identity (emptied, or cut to its header) but the store has
    /// one: a guard was kept for the store and its marks are lost.
    GuardLost {
        /// The store's identity.
        store: String,
        /// The guard file's size.
        bytes: u64,
    },
    /// A snowflake clock is behind its mark (or gone).
    ClockBehind {
        /// The clock.
        name: String,
        /// The store's time (`None`: missing).
        store: Option<i64>,
        /// The guard's mark.
        guard: i64,
    },
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let or_missing = |v: &Option<i64>| v.map_or("missing".to_owned(), |v| v.to_string());
        match self {
            Finding::Damaged(why) => write!(f, "the database fails its integrity check: {why}"),
            Finding::OtherStore { guard, store: None } => write!(
                f,
                "the store has no identity (empty or new) but the guard recorded store {guard}"
            ),
            Finding::OtherStore {
                guard,
                store: Some(s),
            } => write!(f, "the store is {s}, the guard recorded store {guard}"),
            Finding::TagBehind { tag, store, guard } => write!(
                f,
                "tag {tag}: max_id {} in the store, the guard recorded {guard}",
                or_missing(store)
            ),
            Finding::GuardLost { store, bytes } => write!(
                f,
                "the guard file holds no marks ({bytes} bytes: emptied or cut) but the store \
                 {store} was guarded before: its marks are lost"
            ),
            Finding::ClockBehind { name, store, guard } => write!(
                f,
                "clock {name}: {} in the store, the guard recorded {guard}",
                or_missing(store)
            ),
        }
    }
}

/// The one-paragraph refusal for logs and errors: what was found (the first few) and the way
/// out.
pub fn refusal(findings: &[Finding], guard: &Path) -> String {
    if let Some(lost) = findings
        .iter()
        .find(|f| matches!(f, Finding::GuardLost { .. }))
    {
        return format!(
            "{lost}; taking the store as it is could repeat ids (it may be an older copy), so \
             this server refuses to. The guard is {}. With every server of the store stopped, \
             `idforge store repair --above N` (N: the largest id a client may have received) \
             continues every tag the store holds above N and every snowflake clock after the \
             repair's time; a tag or snowflake name the store lost is not known to it: name \
             each with --tag NAME or --clock NAME. Or `idforge store repair --trust-store` \
             takes the store as it is (same --data-dir/--store/--guard); see docs/server.md, \
             \"When the store goes back\"",
            guard.display()
        );
    }
    let shown: Vec<String> = findings.iter().take(3).map(Finding::to_string).collect();
    let more = findings.len().saturating_sub(shown.len());
    format!(
        "the store went back or was replaced: {}{}; serving would repeat ids, so this server \
         refuses to. The guard is {}. Check with `idforge store verify`, then raise the store \
         above the guard with `idforge store repair` (same --data-dir/--store/--guard); see \
         docs/server.md, \"When the store goes back\"",
        shown.join("; "),
        if more > 0 {
            format!(" (and {more} more)")
        } else {
            String::new()
        },
        guard.display()
    )
}

/// Compares the store with `marks`.
pub async fn inspect(store: &Store, marks: &Marks) -> StoreResult<Vec<Finding>> {
    let mut findings = Vec::new();
    if let Some(why) = store.quick_check().await? {
        findings.push(Finding::Damaged(why));
    }
    if let Some(guard) = &marks.identity {
        let have = store.identity().await?;
        if have.as_ref() != Some(guard) {
            findings.push(Finding::OtherStore {
                guard: guard.clone(),
                store: have,
            });
        }
    }
    if !marks.tags.is_empty() {
        let rows: std::collections::HashMap<String, i64> = store
            .tags()
            .await?
            .into_iter()
            .map(|r| (r.tag, r.max_id))
            .collect();
        let mut behind: Vec<Finding> = marks
            .tags
            .iter()
            .filter_map(|(tag, &guard)| {
                let have = rows.get(tag).copied();
                (have.is_none_or(|v| v < guard)).then(|| Finding::TagBehind {
                    tag: tag.clone(),
                    store: have,
                    guard,
                })
            })
            .collect();
        behind.sort_by_key(Finding::to_string);
        findings.extend(behind);
    }
    if !marks.clocks.is_empty() {
        let clocks: std::collections::HashMap<String, i64> =
            store.clocks().await?.into_iter().collect();
        for (name, &guard) in &marks.clocks {
            let have = clocks.get(name).copied();
            if have.is_none_or(|v| v < guard) {
                findings.push(Finding::ClockBehind {
                    name: name.clone(),
                    store: have,
                    guard,
                });
            }
        }
    }
    Ok(findings)
}

/// [`Finding::GuardLost`] when the guard file `log` exists without an identity and the store
/// has one.
pub async fn lost(store: &Store, log: &Log) -> StoreResult<Option<Finding>> {
    let Found::NoIdentity { bytes } = log.found() else {
        return Ok(None);
    };
    Ok(store
        .identity()
        .await?
        .map(|store| Finding::GuardLost { store, bytes }))
}

/// What the store holds now, as a guard baseline (with its identity, claimed when missing).
///
/// With `with_marks` false only the identity: a server elected among several must not take
/// the marks it sees as bounds, since the leader may still give back part of its cached range
/// (a handover lowers a mark to the next unused id); it records only the marks it writes.
pub async fn baseline(store: &Store, with_marks: bool) -> StoreResult<Marks> {
    let identity = store.claim_identity(&new_identity()).await?;
    if !with_marks {
        return Ok(Marks {
            identity: Some(identity),
            ..Marks::default()
        });
    }
    Ok(Marks {
        identity: Some(identity),
        tags: store
            .tags()
            .await?
            .into_iter()
            .map(|r| (r.tag, r.max_id))
            .collect(),
        clocks: store.clocks().await?.into_iter().collect(),
    })
}

fn new_identity() -> String {
    let mut raw = [0u8; 16];
    if getrandom::fill(&mut raw).is_err() {
        // Unique enough without entropy: the time and the process.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        raw.copy_from_slice(&(t ^ u128::from(std::process::id()) << 96).to_le_bytes());
    }
    raw.iter().map(|b| format!("{b:02x}")).collect()
}

/// The guard of a running server.
#[derive(Debug)]
pub struct Guard {
    log: Arc<Mutex<Log>>,
    path: std::path::PathBuf,
}

/// Why the guard could not be attached, or refuses the store.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GuardError {
    /// The guard file could not be read or written.
    #[error("{0}")]
    File(String),
    /// The store could not be read.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// The store is behind the guard (or damaged, or emptied): the refusal, with the way out.
    #[error("{0}")]
    Refused(String),
}

impl From<LogError> for GuardError {
    fn from(e: LogError) -> GuardError {
        GuardError::File(e.to_string())
    }
}

impl Guard {
    /// Opens the guard at `path` and checks `store` against it: the guard when the store holds
    /// at least every mark, else the refusal. A new guard takes the store as its baseline
    /// (its marks too when this server is alone: see [`baseline`]); an emptied one is refused
    /// ([`lost`]).
    pub async fn attach(store: &Store, path: &Path, alone: bool) -> Result<Guard, GuardError> {
        let log = Log::open(path)?;
        for fix in log.fixes() {
            tracing::warn!(guard = %path.display(), "{fix}");
        }
        if log.marks().identity.is_none() {
            let mut log = log;
            if let Some(lost) = lost(store, &log).await? {
                return Err(GuardError::Refused(refusal(&[lost], path)));
            }
            // Damage is refused even with a new guard: there is nothing to trust.
            if let Some(why) = store.quick_check().await? {
                return Err(GuardError::Refused(refusal(&[Finding::Damaged(why)], path)));
            }
            let base = baseline(store, alone).await?;
            tracing::info!(
                guard = %path.display(),
                tags = base.tags.len(),
                "new guard: the store as it is now is the baseline"
            );
            log.reset(base)?;
            return Ok(Guard::new(log, path));
        }
        let guard = Guard::new(log, path);
        guard.verify(store).await?;
        Ok(guard)
    }

    fn new(log: Log, path: &Path) -> Guard {
        Guard {
            log: Arc::new(Mutex::new(log)),
            path: path.to_owned(),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Checks the store against the guard now (at start, and when taking the lead).
    pub async fn verify(&self, store: &Store) -> Result<(), GuardError> {
        let marks = self.lock().marks().clone();
        let findings = inspect(store, &marks).await?;
        if findings.is_empty() {
            Ok(())
        } else {
            Err(GuardError::Refused(refusal(&findings, &self.path)))
        }
    }

    /// Appends `marks` and waits until they are on disk (off the event loop).
    pub async fn record(&self, marks: Vec<Mark>) -> StoreResult<()> {
        if marks.is_empty() {
            return Ok(());
        }
        let log = self.log.clone();
        tokio::task::spawn_blocking(move || {
            log.lock().unwrap_or_else(|e| e.into_inner()).append(&marks)
        })
        .await
        .map_err(|e| StoreError(format!("guard: {e}")))?
        .map_err(|e| {
            tracing::error!(error = %e, "cannot write the guard");
            StoreError(format!("guard: {e}"))
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TagMove, TagRow};

    async fn sqlite(dir: &Path) -> Store {
        let url = format!("sqlite://{}?mode=rwc", dir.join("s.db").display());
        Store::open(&url).await.unwrap()
    }

    #[tokio::test]
    async fn a_store_behind_its_guard_is_refused_and_a_repair_raises_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = sqlite(dir.path()).await;
        let row = TagRow {
            tag: "orders".into(),
            max_id: 1,
            step: 10,
            description: None,
        };
        store.create_tag(&row).await.unwrap();
        let path = dir.path().join("g");
        let guard = Guard::attach(&store, &path, true).await.unwrap();
        store
            .persist(
                &[TagMove {
                    tag: "orders".into(),
                    old: 1,
                    new: 500,
                }],
                &[("ids".into(), 1000)],
            )
            .await
            .unwrap();
        guard
            .record(vec![
                Mark::Tag("orders".into(), 500),
                Mark::Clock("ids".into(), 1000),
            ])
            .await
            .unwrap();
        guard.verify(&store).await.unwrap();
        // The store goes back (a restored backup).
        sqlx_set(&store, "UPDATE leaf_alloc SET max_id = 100").await;
        sqlx_set(&store, "DELETE FROM idforge_clock").await;
        let why = guard.verify(&store).await.unwrap_err().to_string();
        assert!(why.contains("tag orders: max_id 100"), "{why}");
        assert!(why.contains("clock ids: missing"), "{why}");
        drop(guard);
        // A restart refuses too; a repair raises the store and the guard accepts it again.
        assert!(Guard::attach(&store, &path, true).await.is_err());
        assert_eq!(store.raise_tag("orders", 500, 10).await.unwrap(), Some(100));
        store.raise_clock("ids", 1000).await.unwrap();
        Guard::attach(&store, &path, true).await.unwrap();
    }

    #[tokio::test]
    async fn another_or_an_empty_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g");
        {
            let store = sqlite(dir.path()).await;
            Guard::attach(&store, &path, true).await.unwrap();
            store.close().await;
        }
        // The database is deleted: a new, empty one has no identity.
        for f in ["s.db", "s.db-wal", "s.db-shm"] {
            let _ = std::fs::remove_file(dir.path().join(f));
        }
        let store = sqlite(dir.path()).await;
        let why = Guard::attach(&store, &path, true)
            .await
            .unwrap_err()
            .to_string();
        assert!(why.contains("no identity"), "{why}");
        store.claim_identity("someone-else").await.unwrap();
        let why = Guard::attach(&store, &path, true)
            .await
            .unwrap_err()
            .to_string();
        assert!(why.contains("the store is someone-else"), "{why}");
    }

    #[tokio::test]
    async fn an_emptied_guard_of_a_guarded_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g");
        let store = sqlite(dir.path()).await;
        Guard::attach(&store, &path, true).await.unwrap();
        let whole = std::fs::read(&path).unwrap();
        for emptied in [&b""[..], &b"idforge-guard 1\n"[..], &b"idforge-gu"[..]] {
            std::fs::write(&path, emptied).unwrap();
            let why = Guard::attach(&store, &path, true)
                .await
                .unwrap_err()
                .to_string();
            assert!(why.contains("holds no marks"), "{why}");
            assert!(why.contains("idforge store repair --above N"), "{why}");
            assert!(why.contains("--trust-store"), "{why}");
            assert_eq!(
                std::fs::read(&path).unwrap(),
                emptied,
                "left for the operator"
            );
        }
        // A missing guard is a new one (a first start, a server joining a group, or deleted on
        // purpose); so is an emptied one on a store never guarded.
        std::fs::remove_file(&path).unwrap();
        Guard::attach(&store, &path, true).await.unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), whole);
        std::fs::write(&path, b"idforge-guard 1\n").unwrap();
        std::fs::create_dir(dir.path().join("fresh")).unwrap();
        let fresh = sqlite(&dir.path().join("fresh")).await;
        Guard::attach(&fresh, &path, true).await.unwrap();
    }

    async fn sqlx_set(store: &Store, sql: &str) {
        let Store::Sql(s) = store else { unreachable!() };
        s.execute_raw(sql).await.unwrap();
    }
}
