//! What the guard file holds: its marks, the header and one checksummed line per mark, and
//! reading a whole file back (a torn last line dropped; with salvage, the whole lines found past
//! a damaged one, and what was dropped: [`Fix`]).

use crc::{CRC_32_ISCSI, Crc};

use std::collections::HashMap;

/// The first line of every guard file.
pub(super) const HEADER: &str = "idforge-guard 1\n";
const CRC: Crc<u32> = Crc::<u32>::new(&CRC_32_ISCSI);

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
    pub(super) fn apply(&mut self, mark: Mark) {
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

    pub(super) fn lines(&self) -> String {
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

/// One line of the log.
pub(super) fn line(mark: &Mark) -> String {
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
pub(super) struct Parsed {
    pub(super) marks: Marks,
    /// The length of the header and the lines read before a torn last line (0: not even a
    /// whole header).
    pub(super) good: usize,
    pub(super) fixes: Vec<Fix>,
}

/// The marks of a whole file; `Err((line, why))` when a line other than a torn tail is bad
/// (with `salvage`: only when the file is not a guard file at all).
pub(super) fn parse(raw: &[u8], salvage: bool) -> Result<Parsed, (usize, &'static str)> {
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
pub(super) const SALVAGE_TRIES: usize = 64;

/// The whole line at the end of `l` that follows the remains of a failed append, and how many
/// bytes come before it. (A false match needs a CRC-32C to agree by chance.)
///
/// Only places that start a line (`I `, `T `, `C `, `D `) are tried, from the end: names are
/// escaped, so such a pair occurs in a line only at its start and after a name ending in one of
/// those letters, and the whole line wanted is found within a try or two. At most
/// [`SALVAGE_TRIES`] are made, so a long damaged line costs a bounded number of passes over it.
pub(super) fn whole_line_after(l: &[u8]) -> Option<(usize, Mark)> {
    (1..l.len().saturating_sub(1))
        .rev()
        .filter(|&at| b"ITCD".contains(&l[at]) && l[at + 1] == b' ')
        .take(SALVAGE_TRIES)
        .find_map(|skip| parse_line(&l[skip..]).map(|m| (skip, m)))
}

/// Whether `b` can be what a failed append left: the start of a line as [`line`] writes it,
/// cut before its newline (the kind, then up to three fields: a number, an escaped name, at
/// most 8 hex digits).
pub(super) fn partial_line(b: &[u8]) -> bool {
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
    pub(super) static LINES_PARSED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

pub(super) fn parse_line(l: &[u8]) -> Option<Mark> {
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

pub(super) fn escape(name: &str) -> String {
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

pub(super) fn unescape(text: &str) -> Option<String> {
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
