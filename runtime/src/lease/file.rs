//! A worker lease kept in a file, so that an instance restarted while the lease server is out of
//! reach still starts (Leaf's "weak dependency" on ZooKeeper).
//!
//! The file holds what a restart needs to go on with the same id without the server: the id and
//! its token, the holder's name, the lease's and the reservation's ends on the server's clock, the
//! server's clock minus this host's, the host's boot and its boot clock at the write, and the
//! *mark*: every id made under the lease carries a time below it. It is rewritten (temp file,
//! fsync, rename, fsync of the folder) by the renewer thread before the lease's validity moves
//! past the old mark, never on the id path. A sum over the text finds a damaged or cut file.
//!
//! Whether the reservation has certainly not ended is judged on the boot clock
//! (`CLOCK_BOOTTIME`: it counts suspended time, and nothing sets it), not the wall clock a
//! person or NTP may have stepped while the process was down: the time since the write is the
//! boot clock's, so a file from an earlier boot is never used without the server.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::state_file::{StateFile, take_lock};

const HEADER: &str = "idforge-lease v1";

/// One lease as written to, or read from, its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LeaseRecord {
    /// The service the id is leased from.
    pub(crate) service: String,
    /// The holder's name.
    pub(crate) holder: String,
    /// The worker id.
    pub(crate) id: u64,
    /// The lease's secret (renews it, even past its end: a lease kept in a file).
    pub(crate) token: String,
    /// The lease's end (Unix ms, the server's clock).
    pub(crate) lease_end_ms: u64,
    /// The reservation's end (Unix ms, the server's clock).
    pub(crate) reserved_ms: u64,
    /// The server's clock minus this host's (ms), as last measured.
    pub(crate) offset_ms: i64,
    /// When it was measured (Unix ms, this host's clock).
    pub(crate) measured_ms: u64,
    /// Every id made under the lease carries a time below this (Unix ms, this host's clock).
    pub(crate) mark_ms: u64,
    /// This host's clock at the write (Unix ms).
    pub(crate) written_ms: u64,
    /// The boot the write happened in (`/proc/sys/kernel/random/boot_id`; empty if unknown).
    pub(crate) boot_id: String,
    /// The boot clock at the write (ms since boot).
    pub(crate) boot_ms: u64,
}

/// The boot this process runs in and the boot clock now (ms), or `None` where they cannot be
/// read (then a file is never used without the server).
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn boot_now() -> Option<(String, u64)> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let id = id.trim();
    if id.is_empty() || id.len() > 64 {
        return None;
    }
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
    let ms = u64::try_from(ts.tv_sec).ok()? * 1000 + u64::try_from(ts.tv_nsec).ok()? / 1_000_000;
    Some((id.to_owned(), ms))
}

/// The boot this process runs in: Linux's boot id and `CLOCK_BOOTTIME` only. Elsewhere (macOS,
/// Windows) `None`, so a lease file is never used without the server.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn boot_now() -> Option<(String, u64)> {
    None
}

/// A 64-bit FNV-1a sum: finds a damaged or cut file (no attacker is assumed to forge one: whoever
/// can write the file can write any file of the process).
fn sum(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn bad(path: &Path, why: String) -> Error {
    Error::StateFile {
        path: path.to_path_buf(),
        source: io::Error::new(io::ErrorKind::InvalidData, why),
    }
}

impl LeaseRecord {
    /// The file's text.
    fn text(&self) -> String {
        let body = format!(
            "{HEADER}\nservice={}\nholder={}\nid={}\ntoken={}\nlease_end_ms={}\nreserved_ms={}\n\
             offset_ms={}\nmeasured_ms={}\nmark_ms={}\nwritten_ms={}\nboot_id={}\nboot_ms={}\n",
            self.service,
            self.holder,
            self.id,
            self.token,
            self.lease_end_ms,
            self.reserved_ms,
            self.offset_ms,
            self.measured_ms,
            self.mark_ms,
            self.written_ms,
            self.boot_id,
            self.boot_ms,
        );
        let sum = sum(&body);
        format!("{body}sum={sum:016x}\n")
    }

    /// Parses a file's text; `Err` says what is wrong with it.
    fn parse(text: &str) -> std::result::Result<LeaseRecord, String> {
        let (body, last) = match text.strip_suffix('\n').and_then(|t| t.rsplit_once('\n')) {
            Some((body, last)) => (format!("{body}\n"), last),
            None => return Err("cut short (no sum line)".into()),
        };
        let told = last
            .strip_prefix("sum=")
            .and_then(|s| u64::from_str_radix(s, 16).ok())
            .ok_or("cut short (no sum line)")?;
        if told != sum(&body) {
            return Err("damaged (its sum does not match)".into());
        }
        let mut lines = body.lines();
        if lines.next() != Some(HEADER) {
            return Err(format!("not an idforge lease file (no '{HEADER}' line)"));
        }
        let mut field = |key: &str| -> std::result::Result<String, String> {
            let line = lines.next().unwrap_or_default();
            line.strip_prefix(key)
                .and_then(|l| l.strip_prefix('='))
                .map(str::to_owned)
                .ok_or_else(|| format!("no {key} line"))
        };
        let number = |s: String, key: &str| s.parse::<u64>().map_err(|_| format!("bad {key}"));
        Ok(LeaseRecord {
            service: field("service")?,
            holder: field("holder")?,
            id: number(field("id")?, "id")?,
            token: field("token")?,
            lease_end_ms: number(field("lease_end_ms")?, "lease_end_ms")?,
            reserved_ms: number(field("reserved_ms")?, "reserved_ms")?,
            offset_ms: field("offset_ms")?
                .parse()
                .map_err(|_| "bad offset_ms".to_string())?,
            measured_ms: number(field("measured_ms")?, "measured_ms")?,
            mark_ms: number(field("mark_ms")?, "mark_ms")?,
            written_ms: number(field("written_ms")?, "written_ms")?,
            boot_id: field("boot_id")?,
            boot_ms: number(field("boot_ms")?, "boot_ms")?,
        })
    }

    /// The server's clock now, as the write and the boot clock since tell it (`boot`: this
    /// boot's id and boot clock), and how long ago (ms) the offset behind it was measured.
    /// `None` for a file of another boot (or a boot clock gone back).
    pub(crate) fn server_clock(&self, boot: Option<(&str, u64)>) -> Option<(i128, u64)> {
        let (boot_id, boot_ms_now) = boot?;
        if self.boot_id.is_empty() || boot_id != self.boot_id || boot_ms_now < self.boot_ms {
            return None;
        }
        let elapsed = boot_ms_now - self.boot_ms;
        let server_then = i128::from(self.written_ms) + i128::from(self.offset_ms);
        let age = elapsed.saturating_add(self.written_ms.saturating_sub(self.measured_ms));
        Some((server_then + i128::from(elapsed), age))
    }

    /// Until when (ms on this host's clock `now_ms`) the reservation has certainly not ended:
    /// its end on the server's clock, less the server's clock now ([`server_clock`]), less
    /// `margin_ms` and a drift of 1 ms in `drift_per` since the offset was measured. `None`
    /// when that is not in the future, or the file is from another boot.
    ///
    /// [`server_clock`]: Self::server_clock
    pub(crate) fn usable_until(
        &self,
        now_ms: u64,
        boot: Option<(&str, u64)>,
        margin_ms: u64,
        drift_per: u64,
    ) -> Option<u64> {
        let (server_now, age) = self.server_clock(boot)?;
        let margin = margin_ms.saturating_add(age / drift_per.max(1));
        let left = i128::from(self.reserved_ms) - server_now - i128::from(margin);
        if left <= 0 {
            return None;
        }
        // Ids carry this host's times, and the next holder's floor is the reservation's end on
        // the server's clock: never past it less the margin, however far ahead this clock is.
        let last = self.reserved_ms.checked_sub(margin)?;
        let until = now_ms.saturating_add(u64::try_from(left).ok()?).min(last);
        (until > now_ms).then_some(until)
    }
}

/// A lease file held by one generator: an exclusive lock on `<path>.lock` while it lives.
#[derive(Debug)]
pub(crate) struct LeaseFile {
    path: PathBuf,
    /// Held while the generator lives (see [`take_lock`]).
    _lock: File,
}

impl LeaseFile {
    /// Takes the file at `path` for this generator; returns it with the lease it holds (`None`
    /// when there is no file yet). A file that is damaged, cut, or not a lease file is an error
    /// (`IO`), and so is one in use by another generator.
    pub(crate) fn open(path: impl Into<PathBuf>) -> Result<(LeaseFile, Option<LeaseRecord>)> {
        let (path, lock) = take_lock(&path.into())?;
        let record = match StateFile::read_small(&path)? {
            None => None,
            Some(text) => Some(
                LeaseRecord::parse(&text)
                    .map_err(|why| bad(&path, format!("not a usable lease file: {why}")))?,
            ),
        };
        Ok((LeaseFile { path, _lock: lock }, record))
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Durably replaces the file with `record`.
    pub(crate) fn write(&self, record: &LeaseRecord) -> Result<()> {
        StateFile::write_durably(&self.path, &record.text())
    }

    /// The error for a file made for another service or holder.
    pub(crate) fn foreign(&self, record: &LeaseRecord, service: &str, holder: &str) -> Error {
        bad(
            &self.path,
            format!(
                "the lease file is service '{}' holder '{}', not '{service}' '{holder}'",
                record.service, record.holder
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> LeaseRecord {
        LeaseRecord {
            service: "orders".into(),
            holder: "web-0".into(),
            id: 3,
            token: "abc.12.f".into(),
            lease_end_ms: 10_000,
            reserved_ms: 70_000,
            offset_ms: -250,
            measured_ms: 8_000,
            mark_ms: 9_000,
            written_ms: 8_000,
            boot_id: "b1".into(),
            boot_ms: 500,
        }
    }

    #[test]
    fn a_record_round_trips_and_every_damage_is_found() {
        let r = record();
        let text = r.text();
        assert_eq!(LeaseRecord::parse(&text), Ok(r));
        // Cut anywhere, or one byte changed anywhere: refused.
        for cut in 0..text.len() {
            assert!(LeaseRecord::parse(&text[..cut]).is_err(), "cut at {cut}");
        }
        for at in 0..text.len() {
            let mut bytes = text.clone().into_bytes();
            bytes[at] ^= 0x01;
            let Ok(damaged) = String::from_utf8(bytes) else {
                continue;
            };
            assert!(LeaseRecord::parse(&damaged).is_err(), "byte {at}");
        }
        let err = LeaseRecord::parse("idforge-high-water-ms v1\n5\n").unwrap_err();
        assert!(err.contains("cut short"), "{err}");
    }

    #[test]
    fn the_reservation_is_judged_on_the_boot_clock() {
        let r = record();
        // Written at 8,000 (server 7,750), boot clock 500. 10 s later on the boot clock the
        // server reads 17,750: 52,250 ms are left of the reservation, less a 1 s margin, whatever
        // the wall clock says now.
        let huge = u64::MAX;
        assert_eq!(r.server_clock(Some(("b1", 10_500))), Some((17_750, 10_000)));
        assert_eq!(
            r.usable_until(1_000, Some(("b1", 10_500)), 1000, huge),
            Some(52_250)
        );
        // The offset measured 2 s before the write: 12 s of drift at 1 in 1000 is 12 ms more.
        let older = LeaseRecord {
            measured_ms: 6_000,
            ..r.clone()
        };
        assert_eq!(
            older.usable_until(1_000, Some(("b1", 10_500)), 1000, 1000),
            Some(52_238)
        );
        // Past it, another boot, an unknown boot, or a boot clock gone back: not usable.
        assert_eq!(
            r.usable_until(1_000, Some(("b1", 61_750)), 1000, huge),
            None
        );
        assert_eq!(
            r.usable_until(1_000, Some(("b2", 10_500)), 1000, huge),
            None
        );
        assert_eq!(r.usable_until(1_000, None, 1000, huge), None);
        assert_eq!(r.usable_until(1_000, Some(("b1", 400)), 1000, huge), None);
    }

    #[test]
    fn a_file_is_one_generators_and_written_durably() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lease");
        let (file, none) = LeaseFile::open(&path).unwrap();
        assert_eq!(none, None);
        assert!(LeaseFile::open(&path).is_err(), "locked while held");
        file.write(&record()).unwrap();
        drop(file);
        let (_file, read) = LeaseFile::open(&path).unwrap();
        assert_eq!(read, Some(record()));
        drop(_file);
        std::fs::write(&path, "garbage\n").unwrap();
        let err = LeaseFile::open(&path).unwrap_err();
        assert_eq!(err.code(), crate::ErrorCode::Io);
        assert!(err.to_string().contains("not a usable lease file"), "{err}");
    }

    #[test]
    fn this_boot_is_known_on_linux() {
        let (id, ms) = boot_now().expect("Linux tells its boot id and boot clock");
        assert!(!id.is_empty());
        let (_, later) = boot_now().unwrap();
        assert!(later >= ms);
    }
}
