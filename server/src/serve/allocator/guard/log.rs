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

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crc::{CRC_32_ISCSI, Crc};

const HEADER: &str = "idforge-guard 1\n";
const CRC: Crc<u32> = Crc::<u32>::new(&CRC_32_ISCSI);
/// The log is rewritten from the live marks once it is this many times their size.
const COMPACT_RATIO: u64 = 4;
/// ... and at least this big.
const COMPACT_MIN: u64 = 256 * 1024;

/// One fact the guard keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// The store's identity.
    Identity(String),
    /// A tag's persisted `max_id`: the store must hold at least this.
    Tag(String, i64),
    /// A snowflake clock's persisted time (Unix ms): the store must hold at least this.
    Clock(String, i64),
    /// A tag an administrator dropped: no longer checked.
    Dropped(String),
    /// A snowflake clock brought back at a clean stop to the last tick an id was made in: the
    /// store must hold at least this from now on (recorded before the store is written).
    ClockBack(String, i64),
}

/// What the guard holds: the store's identity and a lower bound for every mark.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marks {
    /// The identity of the store the marks were written to.
    pub identity: Option<String>,
    /// Tag -> the least `max_id` the store must hold.
    pub tags: HashMap<String, i64>,
    /// Clock -> the least time the store must hold.
    pub clocks: HashMap<String, i64>,
}

impl Marks {
    fn apply(&mut self, mark: Mark) {
        match mark {
            Mark::Identity(id) => self.identity = Some(id),
            Mark::Tag(tag, v) => {
                self.tags.insert(tag, v);
            }
            Mark::Clock(name, v) => {
                let at = self.clocks.entry(name).or_insert(v);
                *at = (*at).max(v);
            }
            Mark::Dropped(tag) => {
                self.tags.remove(&tag);
            }
            Mark::ClockBack(name, v) => {
                self.clocks.insert(name, v);
            }
        }
    }

    fn lines(&self) -> String {
        let mut text = String::from(HEADER);
        if let Some(id) = &self.identity {
            text.push_str(&line(&Mark::Identity(id.clone())));
        }
        let mut tags: Vec<_> = self.tags.iter().collect();
        tags.sort();
        for (tag, v) in tags {
            text.push_str(&line(&Mark::Tag(tag.clone(), *v)));
        }
        let mut clocks: Vec<_> = self.clocks.iter().collect();
        clocks.sort();
        for (name, v) in clocks {
            text.push_str(&line(&Mark::Clock(name.clone(), *v)));
        }
        text
    }
}

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

/// Something the reader dropped or cut from the file, for the operator to hear about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fix {
    /// A last line without its newline: an append that never completed (nothing relied on
    /// it). A bad last line with its newline is [`Fix::Fragment`] or [`Fix::Lost`].
    TornTail {
        /// Where it began.
        offset: u64,
        /// Its length.
        bytes: u64,
        /// Whether it was cut off the file (else, with damage before it, it goes when the
        /// file is rewritten).
        cut: bool,
    },
    /// A line (not a torn tail) that holds the remains of an append that failed before a
    /// later one succeeded (a file written before failed appends were cut off): the start of a
    /// line, then a whole line, which was kept.
    Fragment {
        /// The 1-based line number.
        line: usize,
        /// The bytes dropped before the whole line.
        bytes: usize,
    },
    /// A line (not a torn tail) that cannot be read, or bytes before a whole line that no
    /// failed append leaves (a line whose newline rotted, say): whatever mark they held is
    /// lost (a whole line after them was kept).
    Lost {
        /// The 1-based line number.
        line: usize,
        /// How many bytes cannot be read.
        bytes: usize,
    },
}

impl std::fmt::Display for Fix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fix::TornTail { offset, bytes, cut } => write!(
                f,
                "{} a torn last line of {bytes} bytes at offset {offset} (an append that never \
                 completed; nothing relied on it)",
                if *cut { "cut" } else { "dropped" }
            ),
            Fix::Fragment { line, bytes } => write!(
                f,
                "line {line}: dropped {bytes} bytes left by a failed append, kept the whole \
                 line after them"
            ),
            Fix::Lost { line, bytes } => write!(
                f,
                "line {line}: {bytes} bytes that cannot be read; the mark they held is lost"
            ),
        }
    }
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
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive)
            .map_err(|_| LogError::Locked(path.to_owned()))?;
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
                .and_then(|()| Err(io::Error::from(rustix::io::Errno::NOSPC))),
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
            return Err(io::Error::from(rustix::io::Errno::IO));
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
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            File::open(dir)?.sync_all()?;
        }
        self.file = Some(OpenOptions::new().append(true).open(&self.path)?);
        Ok(())
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

/// One line of the log.
fn line(mark: &Mark) -> String {
    let body = match mark {
        Mark::Identity(id) => format!("I 0 {}", escape(id)),
        Mark::Tag(tag, v) => format!("T {v} {}", escape(tag)),
        Mark::Clock(name, v) => format!("C {v} {}", escape(name)),
        Mark::Dropped(tag) => format!("D 0 {}", escape(tag)),
        Mark::ClockBack(name, v) => format!("B {v} {}", escape(name)),
    };
    format!("{body} {:08x}\n", CRC.checksum(body.as_bytes()))
}

/// A file read.
struct Parsed {
    marks: Marks,
    /// The length of the header and the lines read before a torn last line (0: not even a
    /// whole header).
    good: usize,
    fixes: Vec<Fix>,
}

/// The marks of a whole file; `Err((line, why))` when a line other than a torn tail is bad
/// (with `salvage`: only when the file is not a guard file at all).
fn parse(raw: &[u8], salvage: bool) -> Result<Parsed, (usize, &'static str)> {
    let mut parsed = Parsed {
        marks: Marks::default(),
        good: 0,
        fixes: Vec::new(),
    };
    if !raw.starts_with(HEADER.as_bytes()) {
        // A file that ends inside the header (0 bytes included) holds nothing.
        if HEADER.as_bytes().starts_with(raw) {
            return Ok(parsed);
        }
        return Err((1, "not an idforge guard file"));
    }
    let mut at = HEADER.len();
    parsed.good = at;
    let lines: Vec<&[u8]> = raw[at..].split_inclusive(|&b| b == b'\n').collect();
    for (i, l) in lines.iter().enumerate() {
        let number = i + 2;
        match parse_line(l) {
            Some(mark) => {
                parsed.marks.apply(mark);
                parsed.good = at + l.len();
            }
            // A crash can only leave part of the last line, without its newline: every append
            // is whole lines. A bad last line that ends in one was written whole: damage.
            None if i + 1 == lines.len() && !l.ends_with(b"\n") => {
                parsed.fixes.push(Fix::TornTail {
                    offset: at as u64,
                    bytes: l.len() as u64,
                    cut: false,
                })
            }
            None if !salvage => return Err((number, "bad checksum or format")),
            None => match whole_line_after(l) {
                Some((skip, mark)) => {
                    parsed.marks.apply(mark);
                    // Bytes that are no start of a line were not left by a failed append: a
                    // line whose newline rotted away, say, whose mark is lost.
                    parsed.fixes.push(if partial_line(&l[..skip]) {
                        Fix::Fragment {
                            line: number,
                            bytes: skip,
                        }
                    } else {
                        Fix::Lost {
                            line: number,
                            bytes: skip,
                        }
                    });
                }
                None => parsed.fixes.push(Fix::Lost {
                    line: number,
                    bytes: l.len(),
                }),
            },
        }
        at += l.len();
    }
    Ok(parsed)
}

/// How many places in a damaged line [`whole_line_after`] tries (from its end) before giving up.
const SALVAGE_TRIES: usize = 64;

/// The whole line at the end of `l` that follows the remains of a failed append, and how many
/// bytes come before it. (A false match needs a CRC-32C to agree by chance.)
///
/// Only places that start a line (`I `, `T `, `C `, `D `) are tried, from the end: names are
/// escaped, so such a pair occurs in a line only at its start and after a name ending in one of
/// those letters, and the whole line wanted is found within a try or two. At most
/// [`SALVAGE_TRIES`] are made, so a long damaged line costs a bounded number of passes over it.
fn whole_line_after(l: &[u8]) -> Option<(usize, Mark)> {
    (1..l.len().saturating_sub(1))
        .rev()
        .filter(|&at| b"ITCD".contains(&l[at]) && l[at + 1] == b' ')
        .take(SALVAGE_TRIES)
        .find_map(|skip| parse_line(&l[skip..]).map(|m| (skip, m)))
}

/// Whether `b` can be what a failed append left: the start of a line as [`line`] writes it,
/// cut before its newline (the kind, then up to three fields: a number, an escaped name, at
/// most 8 hex digits).
fn partial_line(b: &[u8]) -> bool {
    let Some((kind, rest)) = b.split_first() else {
        return false;
    };
    if !b"ITCD".contains(kind) {
        return false;
    }
    let Some(rest) = rest.strip_prefix(b" ") else {
        return rest.is_empty();
    };
    let mut fields = rest.split(|&c| c == b' ');
    let value = fields.next().unwrap_or_default();
    let name = fields.next().unwrap_or_default();
    let crc = fields.next().unwrap_or_default();
    fields.next().is_none()
        && value.iter().all(|c| c.is_ascii_digit() || *c == b'-')
        && name
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || b"_-.:%".contains(c))
        && crc.len() <= 8
        && crc.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
thread_local! {
    /// How many times this thread parsed a line (tests bound the salvage's work with it).
    static LINES_PARSED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn parse_line(l: &[u8]) -> Option<Mark> {
    #[cfg(test)]
    LINES_PARSED.with(|n| n.set(n.get() + 1));
    let l = std::str::from_utf8(l.strip_suffix(b"\n")?).ok()?;
    let (body, crc) = l.rsplit_once(' ')?;
    if u32::from_str_radix(crc, 16).ok()? != CRC.checksum(body.as_bytes()) || crc.len() != 8 {
        return None;
    }
    let mut parts = body.splitn(3, ' ');
    let (kind, value, name) = (parts.next()?, parts.next()?, parts.next()?);
    let value: i64 = value.parse().ok()?;
    let name = unescape(name)?;
    Some(match kind {
        "I" => Mark::Identity(name),
        "T" => Mark::Tag(name, value),
        "C" => Mark::Clock(name, value),
        "D" => Mark::Dropped(name),
        "B" => Mark::ClockBack(name, value),
        _ => return None,
    })
}

fn escape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"_-.:".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.is_empty() {
        out.push('%');
    }
    out
}

fn unescape(text: &str) -> Option<String> {
    if text == "%" {
        return Some(String::new());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks_of(log: &Log) -> Vec<(String, i64)> {
        let mut v: Vec<_> = log
            .marks()
            .tags
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn marks_survive_reopening_and_a_torn_tail_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g");
        {
            let mut log = Log::open(&path).unwrap();
            log.append(&[
                Mark::Identity("abc".into()),
                Mark::Tag("orders".into(), 1001),
                Mark::Tag("odd name/ü".into(), 7),
                Mark::Clock("ids".into(), 50),
                Mark::Clock("ids".into(), 40),
                Mark::Clock("back".into(), 90),
                Mark::ClockBack("back".into(), 60),
            ])
            .unwrap();
            log.append(&[Mark::Tag("gone".into(), 3), Mark::Dropped("gone".into())])
                .unwrap();
        }
        // A crash in the middle of an append.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"T 99999 orders 1234")
            .unwrap();
        let log = Log::open(&path).unwrap();
        assert!(
            matches!(
                log.fixes(),
                [Fix::TornTail {
                    bytes: 19,
                    cut: true,
                    ..
                }]
            ),
            "{:?}",
            log.fixes()
        );
        assert!(
            log.fixes()[0]
                .to_string()
                .starts_with("cut a torn last line of 19 bytes")
        );
        assert_eq!(log.marks().identity.as_deref(), Some("abc"));
        assert_eq!(
            marks_of(&log),
            [("odd name/ü".to_string(), 7), ("orders".to_string(), 1001)]
        );
        assert_eq!(log.marks().clocks["ids"], 50);
        assert_eq!(
            log.marks().clocks["back"],
            60,
            "a clean stop brought it back"
        );
        drop(log);
        assert!(
            !std::fs::read_to_string(&path).unwrap().contains("99999"),
            "torn tail truncated"
        );
    }

    #[test]
    fn a_damaged_line_in_the_middle_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g");
        {
            let mut log = Log::open(&path).unwrap();
            log.append(&[Mark::Tag("a".into(), 10), Mark::Tag("b".into(), 20)])
                .unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replacen("T 10 a", "T 19 a", 1)).unwrap();
        let err = Log::open(&path).unwrap_err();
        assert!(matches!(err, LogError::Damaged { line: 2, .. }), "{err}");
        std::fs::write(&path, "hello\n").unwrap();
        assert!(matches!(
            Log::open(&path).unwrap_err(),
            LogError::Damaged { line: 1, .. }
        ));
    }

    fn open_with(path: &Path, marks: &[Mark]) -> Log {
        let mut log = Log::open(path).unwrap();
        log.append(marks).unwrap();
        log
    }

    #[test]
    fn a_failed_append_leaves_the_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g");
        // Torn inside the line, and whole but not fsynced.
        for fail_after in [9, usize::MAX] {
            let mut log = open_with(
                &path,
                &[Mark::Identity("abc".into()), Mark::Tag("a".into(), 10)],
            );
            let before = std::fs::read(&path).unwrap();
            log.faults.fail_after = Some(fail_after);
            let err = log
                .append(&[Mark::Tag("a".into(), 99), Mark::Tag("b".into(), 99)])
                .unwrap_err();
            assert!(err.to_string().contains("No space left"), "{err}");
            assert_eq!(std::fs::read(&path).unwrap(), before, "cut back");
            assert_eq!(log.marks().tags["a"], 10, "a failed append is not taken");
            // Later appends follow the last whole line, so the file reads again.
            log.append(&[Mark::Tag("a".into(), 20)]).unwrap();
            drop(log);
            let log = Log::open(&path).unwrap();
            assert_eq!(log.marks().tags["a"], 20);
            assert!(!log.marks().tags.contains_key("b"));
            assert!(log.fixes().is_empty(), "{:?}", log.fixes());
            drop(log);
            std::fs::remove_file(&path).unwrap();
        }
    }

    #[test]
    fn a_cut_that_failed_is_made_before_the_next_append() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g");
        let mut log = open_with(&path, &[Mark::Identity("abc".into())]);
        let before = std::fs::metadata(&path).unwrap().len();
        log.faults.fail_after = Some(7);
        log.faults.fail_cut = true;
        assert!(log.append(&[Mark::Tag("a".into(), 99)]).is_err());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), before + 7);
        // A crash now leaves a torn tail, which the next open cuts.
        let crashed = parse(&std::fs::read(&path).unwrap(), false).unwrap();
        assert_eq!(
            crashed.fixes,
            [Fix::TornTail {
                offset: before,
                bytes: 7,
                cut: false
            }]
        );
        // The cut keeps failing: so does every append.
        assert!(log.append(&[Mark::Tag("a".into(), 5)]).is_err());
        log.faults.fail_cut = false;
        log.append(&[Mark::Tag("a".into(), 5)]).unwrap();
        drop(log);
        let log = Log::open(&path).unwrap();
        assert_eq!(log.marks().tags["a"], 5);
        assert!(log.fixes().is_empty());
    }

    /// A real full disk: a tmpfs of 64 KB filled up. Appends fail with part of a line written
    /// (a write that fills the last page of the file, then ENOSPC); once space is back the
    /// file must read whole, with every acknowledged mark.
    #[test]
    fn a_full_disk_leaves_a_guard_that_reads_once_space_is_back() {
        struct Mounted(tempfile::TempDir);
        impl Drop for Mounted {
            fn drop(&mut self) {
                let _ = rustix::mount::unmount(self.0.path(), rustix::mount::UnmountFlags::DETACH);
            }
        }
        let dir = tempfile::tempdir().unwrap();
        // The mount call, not the mount command: a child process would hold a copy of the
        // other tests' guard locks from its fork until its exec.
        let size = c"size=64k";
        if let Err(e) = rustix::mount::mount(
            "tmpfs",
            dir.path(),
            "tmpfs",
            rustix::mount::MountFlags::empty(),
            size,
        ) {
            eprintln!("skipped: cannot mount a tmpfs here (needs root): {e}");
            return;
        }
        let fs = Mounted(dir);
        let path = fs.0.path().join("g");
        let mut log = open_with(&path, &[Mark::Identity("abc".into())]);
        let filler_path = fs.0.path().join("filler");
        let mut filler = File::create(&filler_path).unwrap();
        while filler.write_all(&[0u8; 64]).is_ok() {}
        let mut acknowledged = HashMap::new();
        let mut failed = 0;
        for round in 0..2000i64 {
            let marks: Vec<Mark> = (0..3)
                .map(|t| Mark::Tag(format!("tag-with-a-long-name-{t}"), round * 10 + t))
                .collect();
            if log.append(&marks).is_ok() {
                for m in marks {
                    if let Mark::Tag(t, v) = m {
                        acknowledged.insert(t, v);
                    }
                }
            } else {
                failed += 1;
                if failed == 20 {
                    // Space is back.
                    drop(filler);
                    std::fs::remove_file(&filler_path).unwrap();
                    break;
                }
            }
        }
        assert_eq!(failed, 20, "the disk never filled: the test proves nothing");
        log.append(&[Mark::Tag("after".into(), 1)]).unwrap();
        acknowledged.insert("after".into(), 1);
        drop(log);
        let log = Log::open(&path).unwrap();
        assert_eq!(log.marks().tags, acknowledged);
        assert!(log.fixes().is_empty(), "{:?}", log.fixes());
    }

    #[test]
    fn a_file_with_the_remains_of_a_failed_append_is_refused_and_salvaged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g");
        drop(open_with(
            &path,
            &[Mark::Identity("abc".into()), Mark::Tag("a".into(), 10)],
        ));
        // What a failed append left before failed appends were cut off: part of a line, then
        // the next append's lines right after it.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("T 500 b");
        text.push_str(&line(&Mark::Tag("a".into(), 20)));
        text.push_str(&line(&Mark::Tag("c".into(), 30)));
        std::fs::write(&path, &text).unwrap();
        let err = Log::open(&path).unwrap_err();
        assert!(matches!(err, LogError::Damaged { line: 4, .. }), "{err}");
        assert!(err.to_string().contains("idforge store repair"), "{err}");
        let log = Log::open_salvaging(&path).unwrap();
        assert_eq!(log.fixes(), [Fix::Fragment { line: 4, bytes: 7 }]);
        assert_eq!(log.marks().tags["a"], 20);
        assert_eq!(log.marks().tags["c"], 30);
        assert!(!log.marks().tags.contains_key("b"));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            text,
            "left as it is"
        );
        drop(log);
        // A line that holds no whole line is lost, and said so.
        std::fs::write(&path, text.replace("T 500 bT 20 a", "T 500 bT 21 a")).unwrap();
        let mut log = Log::open_salvaging(&path).unwrap();
        assert!(
            matches!(log.fixes(), [Fix::Lost { line: 4, .. }]),
            "{:?}",
            log.fixes()
        );
        assert_eq!(log.marks().tags["a"], 10);
        // The next write replaces the file whole.
        log.append(&[Mark::Tag("d".into(), 1)]).unwrap();
        drop(log);
        let log = Log::open(&path).unwrap();
        assert_eq!(log.marks().tags.len(), 3);
        assert!(log.fixes().is_empty());
    }

    /// A crash leaves only a last line without its newline; a bad last line with one was
    /// written whole, so it is damage, as in the middle: refused, and never cut (before, it was
    /// taken for a torn tail and cut, and the newest mark was lost without a word).
    #[test]
    fn a_bad_last_line_with_its_newline_is_damage_not_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g");
        drop(open_with(
            &path,
            &[
                Mark::Identity("abc".into()),
                Mark::Tag("a".into(), 10),
                Mark::Tag("b".into(), 20),
            ],
        ));
        let whole = std::fs::read_to_string(&path).unwrap();
        // Bit-rot in the last line; and the remains of a failed append glued to it.
        let rotted = whole.replacen("T 20 b", "T 29 b", 1);
        let at = whole[..whole.len() - 1].rfind('\n').unwrap() + 1;
        let glued = format!("{}T 500 c{}", &whole[..at], &whole[at..]);
        for (text, fix) in [
            (&rotted, Fix::Lost { line: 4, bytes: 16 }),
            (&glued, Fix::Fragment { line: 4, bytes: 7 }),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = Log::open(&path).unwrap_err();
            assert!(matches!(err, LogError::Damaged { line: 4, .. }), "{err}");
            assert_eq!(&std::fs::read_to_string(&path).unwrap(), text, "not cut");
            let log = Log::open_salvaging(&path).unwrap();
            assert_eq!(log.fixes(), std::slice::from_ref(&fix));
            assert_eq!(log.found(), Found::Written);
            assert_eq!(log.marks().tags["a"], 10);
            assert_eq!(
                log.marks().tags.get("b").copied(),
                matches!(fix, Fix::Fragment { .. }).then_some(20),
                "the whole line after the remains is kept"
            );
            drop(log);
            assert_eq!(&std::fs::read_to_string(&path).unwrap(), text, "not cut");
        }
    }

    /// Bytes before a whole line that are no start of a line were not left by a failed append
    /// (before, they were dropped as such, and the mark of a line whose newline rotted was lost
    /// without a word).
    #[test]
    fn a_line_whose_newline_rotted_is_lost_not_taken_for_remains() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g");
        drop(open_with(
            &path,
            &[
                Mark::Identity("abc".into()),
                Mark::Tag("a".into(), 10),
                Mark::Tag("b".into(), 20),
                Mark::Tag("c".into(), 30),
            ],
        ));
        let whole = std::fs::read_to_string(&path).unwrap();
        let a = line(&Mark::Tag("a".into(), 10));
        let rotted = whole.replacen(&a, &format!("{}x", a.trim_end()), 1);
        std::fs::write(&path, &rotted).unwrap();
        let log = Log::open_salvaging(&path).unwrap();
        assert_eq!(
            log.fixes(),
            [Fix::Lost {
                line: 3,
                bytes: a.len()
            }]
        );
        assert!(!log.marks().tags.contains_key("a"));
        assert_eq!(log.marks().tags["b"], 20);
        // What failed appends leave is still told from that.
        for remains in [
            "T",
            "T ",
            "T 5",
            "T 500 ",
            "C 17 ids",
            "T 500 b%2",
            "D 0 x 0badf0",
        ] {
            assert!(partial_line(remains.as_bytes()), "{remains:?}");
        }
        for rot in ["x", "T 5 b 0badf00d1", "T 5 b 0badf00d ", "t 5", "T 5 b/"] {
            assert!(!partial_line(rot.as_bytes()), "{rot:?}");
        }
    }

    /// A long damaged line is read in a bounded number of passes (before, every byte was a
    /// start tried, each a pass over the rest: quadratic in the line's length).
    #[test]
    fn a_long_damaged_line_is_salvaged_in_bounded_passes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g");
        drop(open_with(&path, &[Mark::Identity("abc".into())]));
        let mut text = std::fs::read_to_string(&path).unwrap();
        // Every other byte starts a line kind, and the end looks like a checksum: each try
        // reads the whole rest.
        text.push_str(&"T ".repeat(1 << 16));
        text.push_str("0badf00d\n");
        text.push_str(&line(&Mark::Tag("a".into(), 10)));
        std::fs::write(&path, &text).unwrap();
        LINES_PARSED.with(|n| n.set(0));
        let log = Log::open_salvaging(&path).unwrap();
        let parsed = LINES_PARSED.with(|n| n.get());
        assert!(parsed <= 3 + SALVAGE_TRIES, "{parsed} lines parsed");
        assert_eq!(
            log.fixes(),
            [Fix::Lost {
                line: 3,
                bytes: (1 << 17) + 9
            }]
        );
        assert_eq!(log.marks().tags["a"], 10);
    }

    #[test]
    fn guards_in_one_folder_rewrite_through_temp_files_of_their_own() {
        let a = tmp_path(Path::new("/var/lib/idforge/x.a"));
        let b = tmp_path(Path::new("/var/lib/idforge/x.b"));
        assert_eq!(a, Path::new("/var/lib/idforge/x.a.tmp"));
        assert_ne!(a, b);
        assert_eq!(
            tmp_path(Path::new("idforge.guard")),
            Path::new("idforge.guard.tmp")
        );
    }

    #[test]
    fn an_emptied_or_cut_file_is_told_from_a_missing_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g");
        let log = Log::open(&path).unwrap();
        assert_eq!(log.found(), Found::Missing);
        assert!(
            !path.exists(),
            "written whole on the first write, not before"
        );
        drop(log);
        drop(open_with(&path, &[Mark::Identity("abc".into())]));
        assert_eq!(Log::open(&path).unwrap().found(), Found::Written);
        for (text, bytes) in [
            ("", 0),
            ("idforge-gu", 10),
            (HEADER, 16),
            (
                "idforge-guard 1
T 5",
                19,
            ),
        ] {
            std::fs::write(&path, text).unwrap();
            let log = Log::open(&path).unwrap();
            assert_eq!(log.found(), Found::NoIdentity { bytes }, "{text:?}");
            assert!(log.marks().identity.is_none());
        }
    }

    #[test]
    fn one_process_per_guard() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g");
        let _held = Log::open(&path).unwrap();
        assert!(matches!(Log::open(&path), Err(LogError::Locked(_))));
    }

    #[test]
    fn the_log_compacts_and_keeps_every_mark() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g");
        let mut log = Log::open(&path).unwrap();
        for round in 0..2000 {
            let marks: Vec<Mark> = (0..10)
                .map(|t| Mark::Tag(format!("t{t}"), round * 10 + t))
                .collect();
            log.append(&marks).unwrap();
        }
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size <= COMPACT_MIN + 4096, "compacted: {size} bytes");
        drop(log);
        let log = Log::open(&path).unwrap();
        assert_eq!(log.marks().tags.len(), 10);
        assert_eq!(log.marks().tags["t3"], 1999 * 10 + 3);
    }
}
