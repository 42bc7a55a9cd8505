//! `idforge store verify|repair`: compare a store with its guard, and raise a store that went
//! back above every id it may have handed out (with every server of the store stopped).

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::serve::{Config, ServeArgs};
use idforge_store::guard::{self, Finding, Fix, Log, LogError};
use idforge_store::{Store, StoreError};

/// `idforge store`.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: StoreAction,
}

/// The `idforge store` commands.
#[derive(Debug, Subcommand)]
pub enum StoreAction {
    /// Compare the store with its guard; exit status 0 when the store holds every mark, 1 when
    /// it went back or the guard file needs a repair (the findings are listed), 2 when it
    /// cannot be checked. A torn last line of the guard (without its newline: an append that
    /// never completed) is cut off, and said so; any other bad line is left for `repair`.
    Verify(StoreTarget),
    /// Raise every tag and clock the store is behind its guard to the guard's mark (re-create
    /// missing tags there), optionally every tag to at least --above + 1 and every clock to
    /// --clock-above, then take the store as the guard's new baseline (rewriting a damaged
    /// guard file whole). Stop every server of this store first.
    Repair {
        /// Which store and guard.
        #[command(flatten)]
        target: StoreTarget,
        /// Ids up to N may have been handed out (for tags the guard does not know, or a lost
        /// guard): the next id of every tag the store or the guard holds, and of every --tag,
        /// becomes at least N + 1; and, unless --clock-above says otherwise, every snowflake
        /// clock resumes after this host's clock. A tag the store lost and nothing names
        /// starts over at 1 on its first use: name it with --tag.
        #[arg(long, value_name = "N")]
        above: Option<i64>,
        /// A tag that may be missing from the store (an older copy): created (or raised) so
        /// that it continues above --above N. Repeatable.
        #[arg(long = "tag", value_name = "NAME", requires = "above")]
        tags: Vec<String>,
        /// Snowflake ids of times up to MS (Unix ms: the `time_ms` that `idforge decode ID
        /// --layout L` shows) may have been handed out: every snowflake clock the store or the
        /// guard holds, and every --clock, resumes after MS. Default with --above: this host's
        /// clock now, plus the 1 s and a tick a server's ids may run ahead of its clock.
        #[arg(long, value_name = "MS")]
        clock_above: Option<i64>,
        /// A snowflake name that may be missing from the store: created at the clock floor
        /// (--clock-above, or what --above implies). Repeatable.
        #[arg(long = "clock", value_name = "NAME")]
        clocks: Vec<String>,
        /// Where the guard lost marks (a guard file emptied or cut to its header on a store
        /// that was guarded, a line that cannot be read), take the store as it is for them.
        /// If the store is an older copy, ids it handed out before may be handed out again:
        /// prefer --above.
        #[arg(long)]
        trust_store: bool,
    },
}

/// The store and guard, named as `idforge serve` names them.
#[derive(Debug, Args)]
pub struct StoreTarget {
    /// The server's TOML config file.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The server's data dir.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// The server's store URL.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// The guard file.
    #[arg(long, value_name = "FILE")]
    pub guard: Option<String>,
}

/// Why `idforge store verify` or `repair` could not run (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum StoreCliError {
    /// The settings named no usable store or guard.
    #[error("{0}")]
    Settings(String),
    /// No guard file was named.
    #[error("no guard file: give --data-dir or --guard")]
    NoGuard,
    /// The guard file named does not exist.
    #[error("no guard file at {}", .0.display())]
    GuardMissing(PathBuf),
    /// A server holds the guard file.
    #[error("{0}; stop the server first")]
    GuardLocked(LogError),
    /// The guard file could not be read or rewritten.
    #[error("{0}")]
    Guard(LogError),
    /// The store could not be opened.
    #[error("cannot open the store: {0}")]
    Open(StoreError),
    /// The store failed a read or a write.
    #[error("{0}")]
    Store(#[from] StoreError),
    /// The report could not be written.
    #[error("{0}")]
    Write(#[from] std::io::Error),
    /// A flag's value out of range, or a flag without the one it needs.
    #[error("{0}")]
    Flag(String),
    /// The database fails its own integrity check.
    #[error(
        "the database fails its integrity check ({0}); recover or restore the file first \
         (e.g. sqlite3's .recover), then run the repair"
    )]
    Damaged(String),
    /// The store may be behind ids handed out, by an amount nothing records.
    #[error(
        "{0}; the store may be behind ids handed out, and nothing says how far. Give \
         --above N (N: the largest id a client may have received): every tag the store \
         holds continues above it, and every snowflake clock resumes after this host's \
         clock (--clock-above MS to give the time). A tag or snowflake name the store \
         lost (an older copy) is not known here and would start over on its first use: \
         name each with --tag NAME or --clock NAME. Or give --trust-store to take the \
         store as it is"
    )]
    HowFar(String),
}

impl StoreTarget {
    fn resolve(&self) -> Result<(Config, PathBuf), StoreCliError> {
        let config = ServeArgs {
            config: self.config.clone(),
            data_dir: self.data_dir.clone(),
            store: self.store.clone(),
            guard: self.guard.clone(),
            ..ServeArgs::default()
        }
        .resolve()
        .map_err(|e| StoreCliError::Settings(e.to_string()))?;
        let guard = config.guard.clone().ok_or(StoreCliError::NoGuard)?;
        if !guard.exists() {
            return Err(StoreCliError::GuardMissing(guard));
        }
        Ok((config, guard))
    }
}

/// Runs `idforge store …`; returns the exit status.
pub fn run(args: StoreArgs, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(err, "idforge: error: cannot start the runtime: {e}");
            return 1;
        }
    };
    let result = runtime.block_on(async {
        match args.action {
            StoreAction::Verify(target) => verify(&target, out).await,
            StoreAction::Repair {
                target,
                above,
                tags,
                clock_above,
                clocks,
                trust_store,
            } => {
                let floors = Floors {
                    above,
                    tags,
                    clock_above,
                    clocks,
                };
                repair(&target, &floors, trust_store, out).await
            }
        }
    });
    let _ = out.flush();
    match result {
        Ok(status) => status,
        Err(e) => {
            let _ = writeln!(err, "idforge: error: {e}");
            2
        }
    }
}

async fn open(target: &StoreTarget) -> Result<(Config, Store, Log), StoreCliError> {
    let (config, path) = target.resolve()?;
    // Taken first: a running server holds it, and must not run during a check or repair.
    // Read past damage: what the lines that cannot be read mean is decided here.
    let log = Log::open_salvaging(&path).map_err(|e| match e {
        LogError::Locked(_) => StoreCliError::GuardLocked(e),
        e => StoreCliError::Guard(e),
    })?;
    let store = Store::open(&config.store)
        .await
        .map_err(StoreCliError::Open)?;
    Ok((config, store, log))
}

async fn verify(target: &StoreTarget, out: &mut dyn Write) -> Result<u8, StoreCliError> {
    let (_, store, log) = open(target).await?;
    let marks = log.marks();
    let mut findings: Vec<Finding> = guard::lost(&store, &log).await?.into_iter().collect();
    findings.extend(guard::inspect(&store, marks).await?);
    store.close().await;
    let w = |out: &mut dyn Write, line: String| writeln!(out, "{line}");
    for fix in log.fixes() {
        w(out, format!("guard: {fix}"))?;
    }
    for f in &findings {
        w(out, format!("behind: {f}"))?;
    }
    let damaged = damaged(log.fixes());
    w(
        out,
        format!(
            "{}: {} tags and {} clocks checked against {}",
            if !findings.is_empty() {
                "WENT BACK"
            } else if damaged {
                "GUARD DAMAGED (`idforge store repair` rewrites it)"
            } else {
                "ok"
            },
            marks.tags.len(),
            marks.clocks.len(),
            log.path().display()
        ),
    )?;
    Ok(if findings.is_empty() && !damaged {
        0
    } else {
        1
    })
}

/// Whether the guard file holds lines in the middle that must be rewritten (a torn last line
/// was cut already, or goes with the rewrite).
fn damaged(fixes: &[Fix]) -> bool {
    fixes.iter().any(|f| !matches!(f, Fix::TornTail { .. }))
}

/// How far the store may be behind ids handed out, as the operator says (`repair`'s flags).
#[derive(Debug, Default)]
struct Floors {
    /// `--above N`.
    above: Option<i64>,
    /// `--tag NAME`…
    tags: Vec<String>,
    /// `--clock-above MS`.
    clock_above: Option<i64>,
    /// `--clock NAME`…
    clocks: Vec<String>,
}

/// How far (ms) a server's snowflake ids may run ahead of its clock, besides a tick of its
/// layout (the allocator's lead).
const CLOCK_LEAD_MS: i64 = 1000;

impl Floors {
    /// The least next id of every tag: N + 1.
    fn tag_floor(&self) -> Result<Option<i64>, StoreCliError> {
        match self.above {
            Some(n) if n < 0 || n == i64::MAX => {
                Err(StoreCliError::Flag(format!("--above {n} is out of range")))
            }
            n => Ok(n.map(|n| n + 1)),
        }
    }

    /// The least persisted time (Unix ms) of every clock: --clock-above, else with --above
    /// this host's clock plus `lead_ms`, how far ids may run ahead of a server's clock (every
    /// id made before the repair carries a time below it, unless a server's clock was ahead of
    /// this host's: then give --clock-above).
    fn clock_floor(&self, lead_ms: i64) -> Result<Option<i64>, StoreCliError> {
        let flag = |text: &str| StoreCliError::Flag(text.to_owned());
        match (self.clock_above, self.above) {
            (Some(ms), _) if !(0..i64::MAX / 2).contains(&ms) => Err(flag(&format!(
                "--clock-above {ms} is out of range (Unix ms)"
            ))),
            (Some(ms), _) => Ok(Some(ms)),
            (None, Some(_)) => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_err(|_| flag("this host's clock is before 1970: give --clock-above MS"))?;
                let now = i64::try_from(now.as_millis()).unwrap_or(i64::MAX / 2);
                Ok(Some(now.saturating_add(lead_ms)))
            }
            (None, None) if !self.clocks.is_empty() => {
                Err(flag("--clock NAME needs --clock-above MS (or --above N)"))
            }
            (None, None) => Ok(None),
        }
    }
}

async fn repair(
    target: &StoreTarget,
    floors: &Floors,
    trust_store: bool,
    out: &mut dyn Write,
) -> Result<u8, StoreCliError> {
    // Checked before anything is opened: a mistyped flag changes nothing.
    let floor = floors.tag_floor()?;
    floors.clock_floor(0)?;
    let (config, store, mut log) = open(target).await?;
    let tick_ms = i64::try_from(config.layout.tick_ms()).unwrap_or(i64::MAX / 2);
    let clock_floor = floors.clock_floor(CLOCK_LEAD_MS.saturating_add(tick_ms))?;
    let w = |out: &mut dyn Write, line: String| writeln!(out, "{line}");
    for fix in log.fixes() {
        w(out, format!("guard: {fix}"))?;
    }
    if let Some(why) = store.quick_check().await? {
        return Err(StoreCliError::Damaged(why));
    }
    // Marks the guard lost: only the operator knows how far the store may be behind them.
    let lost_lines = log
        .fixes()
        .iter()
        .filter(|f| matches!(f, Fix::Lost { .. }))
        .count();
    let lost = guard::lost(&store, &log).await?;
    if (lost_lines > 0 || lost.is_some()) && floor.is_none() && !trust_store {
        let what = match &lost {
            Some(f) => f.to_string(),
            None => format!("{lost_lines} lines of the guard file cannot be read"),
        };
        store.close().await;
        return Err(StoreCliError::HowFar(what));
    }
    let marks = log.marks().clone();
    if let (Some(id), None) = (&marks.identity, store.identity().await?) {
        // An empty or new database takes the guard's identity: it is this server's store now.
        store.claim_identity(id).await?;
    }
    let step = config.policy.default_step;
    let mut targets: std::collections::BTreeMap<String, i64> =
        marks.tags.iter().map(|(t, m)| (t.clone(), *m)).collect();
    let mut in_store = 0;
    if let Some(floor) = floor {
        for row in store.tags().await? {
            in_store += 1;
            targets.entry(row.tag).or_insert(floor);
        }
        for tag in &floors.tags {
            targets.entry(tag.clone()).or_insert(floor);
        }
        for m in targets.values_mut() {
            *m = (*m).max(floor);
        }
    }
    let mut raised = 0;
    for (tag, mark) in &targets {
        let before = store.raise_tag(tag, *mark, step).await?;
        if before.is_none_or(|b| b < *mark) {
            raised += 1;
            let was = before.map_or("missing".to_owned(), |b| b.to_string());
            w(out, format!("raised: tag {tag}: max_id {was} -> {mark}"))?;
        }
    }
    let before: std::collections::HashMap<String, i64> =
        store.clocks().await?.into_iter().collect();
    let mut clocks: std::collections::BTreeMap<String, i64> = marks
        .clocks
        .iter()
        .map(|(n, ms)| (n.clone(), *ms))
        .collect();
    if let Some(floor) = clock_floor {
        for name in before.keys().chain(&floors.clocks) {
            clocks.entry(name.clone()).or_insert(floor);
        }
        for ms in clocks.values_mut() {
            *ms = (*ms).max(floor);
        }
    }
    for (name, ms) in &clocks {
        let was = before.get(name).copied();
        if was.is_none_or(|v| v < *ms) {
            store.raise_clock(name, *ms).await?;
            raised += 1;
            let was = was.map_or("missing".to_owned(), |v| v.to_string());
            w(out, format!("raised: clock {name}: {was} -> {ms}"))?;
        }
    }
    let findings = guard::inspect(&store, &marks).await?;
    let other = findings
        .iter()
        .any(|f| matches!(f, Finding::OtherStore { .. }));
    // Every server of the store is stopped: no cached range can be given back any more.
    let base = guard::baseline(&store, true).await?;
    log.reset(base).map_err(StoreCliError::Guard)?;
    store.close().await;
    if other {
        w(
            out,
            "note: the store has another identity than the guard recorded; it is the guard's \
             store from now on"
                .into(),
        )?;
    }
    if lost.is_some() || !log.fixes().is_empty() {
        w(
            out,
            format!("guard: rewrote {} whole", log.path().display()),
        )?;
    }
    if let Some(floor) = floor {
        // What --above cannot reach: a tag an older copy of the store lacks, unnamed, is
        // created at 1 by its first use.
        w(
            out,
            format!(
                "note: every tag continues above {}: the {in_store} the store held, those the \
                 guard knew, and {} named with --tag; a tag the store lost and none of these \
                 names starts over at 1 on its first use (name it with --tag before serving)",
                floor - 1,
                floors.tags.len()
            ),
        )?;
    }
    w(
        out,
        format!(
            "repaired: {raised} marks raised; the guard {} now holds the store's marks",
            log.path().display()
        ),
    )?;
    Ok(0)
}
