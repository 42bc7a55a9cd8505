//! The guard file: an append-only log of checksummed lines, fsynced before the ids it covers
//! are served, compacted when it grows.
//!
//! ```text
//! idforge-guard 1
//! I 0 9f3c…e1 2b8c01d4        the store's identity
//! T 42001 orders 1a2b3c4d     tag `orders`: the store's max_id was 42001 (ids below it served)
//! C 1767225600000 ids 5e6f…   snowflake clock `ids` persisted up to that Unix ms
//! D 0 orders 0badf00d         tag `orders` dropped by an administrator
//! ```
//!
//! Each line ends with the CRC-32C of what precedes it. A crash can tear only the last line
//! (appends are fsynced one batch at a time and a batch is written before its ids are served),
//! so a torn or unchecked last line is dropped; a bad line anywhere else means the file is
//! damaged. Names are percent-encoded outside `A-Za-z0-9_-.:`.

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
    /// A line before the last one does not check out.
    #[error(
        "guard file {path} is damaged at line {line}: {why} (see `idforge store verify`; \
         the README's \"When the store goes back\")"
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

/// An open guard file, locked for this process.
#[derive(Debug)]
pub struct Log {
    path: PathBuf,
    file: File,
    /// Held for as long as the log is open (flock; released by the kernel when we exit).
    _lock: File,
    marks: Marks,
    bytes: u64,
}

impl Log {
    /// Opens (creating when missing) and locks the guard file at `path`; drops a torn last
    /// line.
    pub fn open(path: &Path) -> Result<Log, LogError> {
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
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .append(true)
            .open(path)
            .map_err(io)?;
        let mut raw = Vec::new();
        file.read_to_end(&mut raw).map_err(io)?;
        let (marks, good) = parse(&raw).map_err(|(line, why)| LogError::Damaged {
            path: path.to_owned(),
            line,
            why,
        })?;
        let mut log = Log {
            path: path.to_owned(),
            file,
            _lock: lock,
            marks,
            bytes: good as u64,
        };
        if good == 0 {
            // New (or empty): write the header.
            log.rewrite().map_err(io)?;
        } else if good < raw.len() {
            // A torn tail from a crash: it was never acknowledged, so nothing relied on it.
            log.file.set_len(good as u64).map_err(io)?;
            log.file.seek(SeekFrom::End(0)).map_err(io)?;
            log.file.sync_data().map_err(io)?;
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

    /// Appends `marks` and waits until they are on disk.
    pub fn append(&mut self, marks: &[Mark]) -> Result<(), LogError> {
        if marks.is_empty() {
            return Ok(());
        }
        let text: String = marks.iter().map(line).collect();
        let io = |source| LogError::Io {
            path: self.path.clone(),
            source,
        };
        self.file.write_all(text.as_bytes()).map_err(io)?;
        self.file.sync_data().map_err(io)?;
        self.bytes += text.len() as u64;
        for m in marks {
            self.marks.apply(m.clone());
        }
        let live = 64 * (self.marks.tags.len() + self.marks.clocks.len() + 1) as u64;
        if self.bytes > COMPACT_MIN.max(COMPACT_RATIO * live) {
            self.rewrite().map_err(|source| LogError::Io {
                path: self.path.clone(),
                source,
            })?;
        }
        Ok(())
    }

    /// Replaces everything with `marks` (a new baseline, after a repair).
    pub fn reset(&mut self, marks: Marks) -> Result<(), LogError> {
        self.marks = marks;
        self.rewrite().map_err(|source| LogError::Io {
            path: self.path.clone(),
            source,
        })
    }

    /// Writes the live marks to a new file and renames it over the log (crash-safe: either
    /// file is whole).
    fn rewrite(&mut self) -> io::Result<()> {
        let text = self.marks.lines();
        let tmp = self.path.with_extension("guard.tmp");
        {
            let mut f = File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, &self.path)?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            File::open(dir)?.sync_all()?;
        }
        self.file = OpenOptions::new().append(true).open(&self.path)?;
        self.bytes = text.len() as u64;
        Ok(())
    }
}

fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".lock");
    path.with_file_name(name)
}

/// One line of the log.
fn line(mark: &Mark) -> String {
    let body = match mark {
        Mark::Identity(id) => format!("I 0 {}", escape(id)),
        Mark::Tag(tag, v) => format!("T {v} {}", escape(tag)),
        Mark::Clock(name, v) => format!("C {v} {}", escape(name)),
        Mark::Dropped(tag) => format!("D 0 {}", escape(tag)),
    };
    format!("{body} {:08x}\n", CRC.checksum(body.as_bytes()))
}

/// The marks of a whole file and the length of its good part; `Err((line, why))` when a line
/// other than the last is bad.
fn parse(raw: &[u8]) -> Result<(Marks, usize), (usize, &'static str)> {
    let mut marks = Marks::default();
    if raw.is_empty() {
        return Ok((marks, 0));
    }
    if !raw.starts_with(HEADER.as_bytes()) {
        // A file that ends inside the header was torn while being created.
        if HEADER.as_bytes().starts_with(raw) {
            return Ok((marks, 0));
        }
        return Err((1, "not an idforge guard file"));
    }
    let mut good = HEADER.len();
    let body = &raw[good..];
    let lines: Vec<&[u8]> = body.split_inclusive(|&b| b == b'\n').collect();
    for (i, l) in lines.iter().enumerate() {
        let last = i + 1 == lines.len();
        match parse_line(l) {
            Some(mark) => marks.apply(mark),
            // Only the last line can be torn by a crash.
            None if last => break,
            None => return Err((i + 2, "bad checksum or format")),
        }
        good += l.len();
    }
    Ok((marks, good))
}

fn parse_line(l: &[u8]) -> Option<Mark> {
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
        assert_eq!(log.marks().identity.as_deref(), Some("abc"));
        assert_eq!(
            marks_of(&log),
            [("odd name/ü".to_string(), 7), ("orders".to_string(), 1001)]
        );
        assert_eq!(log.marks().clocks["ids"], 50);
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
