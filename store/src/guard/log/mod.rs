//! The guard file: an append-only log of checksummed lines, fsynced before the ids it covers
//! are served, compacted when it grows.
//!
//! ```text
//! idforge-guard 1
//! I 0 9f3c…e1 2b8c01d4        the store's identity
//! T 42001 orders 1a2b3c4d     tag `orders`: the store's max_id was 42001 (ids below it served)
//! C 1767225600000 ids 5e6f…   snowflake clock `ids` persisted up to that Unix ms
//! D 0 orders 0badf00d         tag `orders` dropped by an administrator
//! B 1767225590000 ids 7a8b…   snowflake clock `ids` brought back to that Unix ms (a clean stop)
//! ```
//!
//! Each line ends with the CRC-32C of what precedes it. An append that fails (a full disk, an
//! I/O error, a failed fsync) is cut off again before the error is returned, and the file is
//! cut back to its last whole line before the next append when that cut failed too; so only a
//! crash can leave part of a line, and only at the end: a last line without its newline. Such
//! a torn tail is dropped (nothing relied on it: an append counts once it is fsynced). Any other
//! bad line, a bad last line that ends in its newline included (it was written whole, so it is
//! bit-rot, or the remains of a failed append glued to an acknowledged line by an older build),
//! means the file is damaged, and only `idforge store repair` ([`Log::open_salvaging`]) reads
//! past it. Names are percent-encoded outside `A-Za-z0-9_-.:`.
//!
//! The file is first written whole, with its identity, by a rename; so a guard file that
//! exists but holds no identity (0 bytes, or the header alone) was emptied or cut, and is not
//! taken for a new one (see [`super::Guard::attach`]).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

pub use super::lines::{Fix, Mark, Marks};
use super::lines::{line, parse};

/// The log is rewritten from the live marks once it is this many times their size.
const COMPACT_RATIO: u64 = 4;
/// ... and at least this big.
const COMPACT_MIN: u64 = 256 * 1024;

/// Why a guard file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// Reading, writing or locking failed.
    #[error("guard file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// A line does not check out (other than a torn tail: a last line without its newline).
    #[error(
        "guard file {path} is damaged at line {line}: {why}; with every server of the store \
         stopped, `idforge store verify` shows what can still be read and `idforge store \
         repair` rewrites the file (same --data-dir/--store/--guard; docs/server.md, \"When the \
         store goes back\")"
    )]
    Damaged {
        /// The file.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong.
        why: &'static str,
    },
    /// Another process holds the file.
    #[error("guard file {0} is in use by another idforge process (one guard per server)")]
    Locked(PathBuf),
}

/// What was found in the file on opening it, besides the marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// No file: a new guard.
    Missing,
    /// A file without the store's identity (0 bytes, part of the header, the header alone):
    /// it was emptied or cut, since a guard is first written whole, identity included.
    NoIdentity {
        /// Its size.
        bytes: u64,
    },
    /// A file with an identity.
    Written,
}

/// Failures to inject (tests only).
#[cfg(test)]
#[derive(Debug, Default)]
struct Faults {
    /// The next append writes this many bytes of its lines (and fsyncs them), then fails as a
    /// full disk does.
    fail_after: Option<usize>,
    /// Cutting a failed append off fails.
    fail_cut: bool,
}

/// An open guard file, locked for this process.
#[derive(Debug)]
pub struct Log {
    path: PathBuf,
    /// `None` until the file is first written, or while it must be rewritten whole before the
    /// next append (read past damage; or its replacement could not be reopened).
    file: Option<File>,
    /// Held for as long as the log is open (flock; released by the kernel when we exit).
    _lock: File,
    marks: Marks,
    /// The length of the file's whole, fsynced lines: where a failed append is cut back to.
    bytes: u64,
    /// A failed append may have left bytes past `bytes` (its cut failed too): cut them before
    /// the next append.
    torn: bool,
    found: Found,
    fixes: Vec<Fix>,
    #[cfg(test)]
    faults: Faults,
}

impl Log {
    /// Opens and locks the guard file at `path` (a missing file is written on the first
    /// append or [`Log::reset`]); cuts a torn last line (one without its newline) off (see
    /// [`Log::fixes`]). Any other bad line is [`LogError::Damaged`].
    pub fn open(path: &Path) -> Result<Log, LogError> {
        Log::open_as(path, false)
    }

    /// As [`Log::open`], but reads past bad lines (but a torn tail), keeping every whole line
    /// it can find in them, and reports each in [`Log::fixes`]; the file is left as it is until
    /// it is rewritten whole (the next append or [`Log::reset`]). For `idforge store
    /// verify|repair`, which decide what the lines that could not be read mean.
    pub fn open_salvaging(path: &Path) -> Result<Log, LogError> {
        Log::open_as(path, true)
    }

    fn open_as(path: &Path, salvage: bool) -> Result<Log, LogError> {
        let io = |source| LogError::Io {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(lock_path(path))
            .map_err(io)?;
        // fs4's, named: Rust 1.89's `File::try_lock` would shadow a method call.
        fs4::FileExt::try_lock(&lock).map_err(|_| LogError::Locked(path.to_owned()))?;
        let mut file = match OpenOptions::new().read(true).append(true).open(path) {
            Ok(f) => Some(f),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(e)),
        };
        let mut raw = Vec::new();
        if let Some(f) = &mut file {
            f.read_to_end(&mut raw).map_err(io)?;
        }
        let parsed = parse(&raw, salvage).map_err(|(line, why)| LogError::Damaged {
            path: path.to_owned(),
            line,
            why,
        })?;
        let found = match (&file, &parsed.marks.identity) {
            (None, _) => Found::Missing,
            (Some(_), None) => Found::NoIdentity {
                bytes: raw.len() as u64,
            },
            (Some(_), Some(_)) => Found::Written,
        };
        let damaged = parsed
            .fixes
            .iter()
            .any(|f| !matches!(f, Fix::TornTail { .. }));
        let mut log = Log {
            path: path.to_owned(),
            // Past damage, or with no whole header, the file is only ever replaced whole.
            file: file.filter(|_| !damaged && parsed.good > 0),
            _lock: lock,
            marks: parsed.marks,
            bytes: parsed.good as u64,
            torn: false,
            found,
            fixes: parsed.fixes,
            #[cfg(test)]
            faults: Faults::default(),
        };
        if let Some(f) = &mut log.file {
            if (parsed.good as u64) < raw.len() as u64 {
                // A torn tail from a crash: it was never acknowledged, so nothing relied on it.
                f.set_len(parsed.good as u64).map_err(io)?;
                f.seek(SeekFrom::End(0)).map_err(io)?;
                f.sync_data().map_err(io)?;
                for fix in &mut log.fixes {
                    if let Fix::TornTail { cut, .. } = fix {
                        *cut = true;
                    }
                }
            }
        }
        Ok(log)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the guard holds.
    pub fn marks(&self) -> &Marks {
        &self.marks
    }

    /// What the file was on opening.
    pub fn found(&self) -> Found {
        self.found
    }

    /// What opening dropped or cut from the file.
    pub fn fixes(&self) -> &[Fix] {
        &self.fixes
    }

    /// Appends `marks` and waits until they are on disk. On an error the file is as it was
    /// (the part written is cut off again) and the marks are not taken: the caller must not
    /// rely on them.
    pub fn append(&mut self, marks: &[Mark]) -> Result<(), LogError> {
        if marks.is_empty() {
            return Ok(());
        }
        let text: String = marks.iter().map(line).collect();
        self.write_lines(text.as_bytes())
            .map_err(|source| LogError::Io {
                path: self.path.clone(),
                source,
            })?;
        for m in marks {
            self.marks.apply(m.clone());
        }
        let live = 64 * (self.marks.tags.len() + self.marks.clocks.len() + 1) as u64;
        if self.bytes > COMPACT_MIN.max(COMPACT_RATIO * live) {
            // The marks are on disk already: a compaction that fails (the disk is full) costs
            // only space, and is tried again on the next append.
            if let Err(e) = self.rewrite() {
                tracing::warn!(guard = %self.path.display(), error = %e, "cannot compact the guard");
            }
        }
        Ok(())
    }

    /// Writes whole lines at the end and fsyncs them; on an error cuts the file back to its
    /// last whole line (and, when that fails too, before the next write).
    fn write_lines(&mut self, text: &[u8]) -> io::Result<()> {
        if self.file.is_none() {
            self.rewrite()?;
        }
        if self.torn {
            self.cut()?;
        }
        let Some(file) = self.file.as_mut() else {
            return Err(io::Error::other("the guard file is not open"));
        };
        #[cfg(test)]
        let written = match self.faults.fail_after.take() {
            Some(n) => file
                .write_all(&text[..n.min(text.len())])
                .and_then(|()| file.sync_data())
                .and_then(|()| Err(io::Error::from(io::ErrorKind::StorageFull))),
            None => file.write_all(text).and_then(|()| file.sync_data()),
        };
        #[cfg(not(test))]
        let written = file.write_all(text).and_then(|()| file.sync_data());
        match written {
            Ok(()) => {
                self.bytes += text.len() as u64;
                Ok(())
            }
            Err(e) => {
                // Left alone, the part written would sit between whole lines once later
                // appends succeed, and the file would read as damaged.
                self.torn = true;
                if let Err(cut) = self.cut() {
                    tracing::error!(
                        guard = %self.path.display(),
                        error = %cut,
                        "cannot cut a failed append off the guard (tried again before the next)"
                    );
                }
                Err(e)
            }
        }
    }

    /// Cuts the file back to its whole lines, durably.
    fn cut(&mut self) -> io::Result<()> {
        #[cfg(test)]
        if self.faults.fail_cut {
            return Err(io::Error::other("an injected I/O error"));
        }
        let Some(file) = self.file.as_mut() else {
            return Err(io::Error::other("the guard file is not open"));
        };
        file.set_len(self.bytes)?;
        file.sync_data()?;
        self.torn = false;
        Ok(())
    }

    /// Replaces everything with `marks` (a new baseline, after a repair).
    pub fn reset(&mut self, marks: Marks) -> Result<(), LogError> {
        self.replace_with(marks).map_err(|source| LogError::Io {
            path: self.path.clone(),
            source,
        })
    }

    /// Writes the live marks to a new file and renames it over the log.
    fn rewrite(&mut self) -> io::Result<()> {
        self.replace_with(self.marks.clone())
    }

    /// Writes `marks` to a new file and renames it over the log (crash-safe: either file is
    /// whole); they are the log's marks once the new file is in place.
    fn replace_with(&mut self, marks: Marks) -> io::Result<()> {
        let text = marks.lines();
        let tmp = tmp_path(&self.path);
        let written = (|| {
            let mut f = File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()
        })();
        if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, &self.path)) {
            // A half-written copy (a full disk) must not keep the space it took.
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        // The file is the new one from here: until it is reopened, nothing is appended to the
        // old one (which is gone).
        self.marks = marks;
        self.file = None;
        self.torn = false;
        self.bytes = text.len() as u64;
        let file = OpenOptions::new().append(true).open(&self.path)?;
        sync_rename(&self.path, &file)?;
        self.file = Some(file);
        Ok(())
    }
}

/// Makes the rename that put `file` at `path` durable. Unix: the folder's fsync (its entry is
/// what the rename changed). Windows: folders cannot be opened for a flush; NTFS keeps renames
/// in its metadata journal, which `FlushFileBuffers` of the renamed file writes out up to and
/// including the rename.
fn sync_rename(path: &Path, file: &File) -> io::Result<()> {
    #[cfg(unix)]
    {
        let _ = file;
        match path.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(dir) => File::open(dir)?.sync_all(),
            None => File::open(".")?.sync_all(),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        file.sync_all()
    }
}

fn lock_path(path: &Path) -> PathBuf {
    suffixed(path, ".lock")
}

/// Where a rewrite is written before it is renamed over the file: the whole file name plus
/// `.tmp`, so guards `x.a` and `x.b` in one folder never write to the same one.
fn tmp_path(path: &Path) -> PathBuf {
    suffixed(path, ".tmp")
}

fn suffixed(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(suffix);
    path.with_file_name(name)
}

#[cfg(test)]
mod tests;
