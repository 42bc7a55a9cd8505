//! `idforge gen`: fresh ids, one per line.

use std::io::Write;

use clap::{Subcommand, ValueEnum};
use std::path::PathBuf;

use idforge::text::{self, TextForm};
use idforge::{
    Flake128, Flake128s, Layout, ObjectId, ObjectIds, Snowflake, TimeOrdered, TimeOrderedId, Ulid,
    Uuid7, WorkerId,
};

use crate::cli::{parse_count, parse_node};
use crate::error::CliError;
use crate::text::layout::parse_layout;

/// Where `gen snowflake` leases its node id from (`IDF.WORKER`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LeaseArgs {
    /// Lease the node id from the idforge server at this URL
    /// (`idforge://[user:pass@]host:port`, with the lease URL's parameters) instead of --node.
    #[arg(
        long,
        value_name = "URL",
        requires = "service",
        conflicts_with = "node"
    )]
    pub lease: Option<String>,
    /// The service to lease a node id of (with --lease).
    #[arg(long, value_name = "NAME", requires = "lease")]
    pub service: Option<String>,
    /// This instance's stable name: it gets the same node id on every run (sticky ids).
    #[arg(long, value_name = "NAME", requires = "lease")]
    pub holder: Option<String>,
    /// Keep the lease in this file, so that a run while the server is out of reach goes on
    /// with the same node id (needs --holder).
    #[arg(long, value_name = "PATH", requires = "holder")]
    pub lease_file: Option<PathBuf>,
}

/// The kinds of id `gen` makes.
#[derive(Debug, Subcommand)]
pub enum GenKind {
    /// 64-bit snowflake ids, in decimal (or --format base32, base62).
    Snowflake {
        /// A preset (twitter, discord, instagram, sonyflake, baidu, js_safe) or a spec
        /// epoch=MS,tick=MS,time=BITS,node=BITS,seq=BITS (then optionally ,order=time_seq_node
        /// and ,unsigned).
        #[arg(long, value_name = "NAME|SPEC", default_value = "twitter", value_parser = parse_layout)]
        layout: Layout,
        /// The node (worker, machine) id; must fit the layout.
        #[arg(long, value_name = "N", default_value = "0", allow_negative_numbers = true, value_parser = parse_node)]
        node: u64,
        /// Lease the node id from this idforge server instead of --node.
        #[command(flatten)]
        lease: LeaseArgs,
        /// How many ids (1 to 10000000).
        #[arg(long, value_name = "N", default_value = "1", allow_negative_numbers = true, value_parser = parse_count)]
        count: u64,
        /// Start each tick's sequence at a random value below half its range instead of 0, so
        /// that `id % n` spreads evenly over shards at low rates (a tick then holds at least
        /// half its sequence range).
        #[arg(long)]
        random_start: bool,
        /// How to write each id: decimal, base32 (13 Crockford characters, TSID's form) or
        /// base62 (11 characters); both short forms sort like the ids.
        #[arg(long, value_enum, default_value_t = IdTextFormat::Decimal)]
        format: IdTextFormat,
    },
    /// MongoDB ObjectIds, as 24 lower-case hex characters.
    Objectid {
        /// How many ids (1 to 10000000).
        #[arg(long, value_name = "N", default_value = "1", allow_negative_numbers = true, value_parser = parse_count)]
        count: u64,
    },
    /// 128-bit flake ids (time | random 48-bit worker | sequence).
    Flake128 {
        /// How many ids (1 to 10000000).
        #[arg(long, value_name = "N", default_value = "1", allow_negative_numbers = true, value_parser = parse_count)]
        count: u64,
        /// How to write each id.
        #[arg(long, value_enum, default_value_t = Flake128Format::Base62)]
        format: Flake128Format,
    },
    /// Version 7 UUIDs (RFC 9562), increasing.
    Uuid7 {
        /// How many ids (1 to 10000000).
        #[arg(long, value_name = "N", default_value = "1", allow_negative_numbers = true, value_parser = parse_count)]
        count: u64,
        /// How to write each id.
        #[arg(long, value_enum, default_value_t = Uuid7Format::Uuid)]
        format: Uuid7Format,
        /// Keep a high-water time in this file, so that the ids of the next run are greater
        /// even if the clock went back meanwhile.
        #[arg(long, value_name = "PATH")]
        state_file: Option<PathBuf>,
    },
    /// ULIDs (26 characters of Crockford base32), increasing.
    Ulid {
        /// How many ids (1 to 10000000).
        #[arg(long, value_name = "N", default_value = "1", allow_negative_numbers = true, value_parser = parse_count)]
        count: u64,
        /// Keep a high-water time in this file, so that the ids of the next run are greater
        /// even if the clock went back meanwhile.
        #[arg(long, value_name = "PATH")]
        state_file: Option<PathBuf>,
    },
}

/// The text forms of a 64-bit id (`idforge::text`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IdTextFormat {
    /// Digits (JSON-safe as a string).
    Decimal,
    /// 13 Crockford base32 characters, upper case.
    Base32,
    /// 11 characters of 0-9A-Za-z.
    Base62,
}

impl From<IdTextFormat> for TextForm {
    fn from(format: IdTextFormat) -> TextForm {
        match format {
            IdTextFormat::Decimal => TextForm::Decimal,
            IdTextFormat::Base32 => TextForm::Base32,
            IdTextFormat::Base62 => TextForm::Base62,
        }
    }
}

/// The text forms of a UUIDv7.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Uuid7Format {
    /// 8-4-4-4-12 lower-case hex.
    Uuid,
    /// 32 lower-case hex characters.
    Hex,
    /// The same 128 bits as a 26-character ULID.
    Ulid,
}

/// The text forms of a flake-128 id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Flake128Format {
    /// 22 characters of `0-9A-Za-z`; sorts like the number.
    Base62,
    /// 32 lower-case hex characters.
    Hex,
    /// The number in decimal.
    Decimal,
    /// The 16 big-endian bytes as 8-4-4-4-12 hex.
    Uuid,
}

/// Snowflake ids taken per [`Snowflake::next_many`] call.
const BATCH: usize = 4096;

/// Writes `count` snowflake ids of `layout` for `node`, in decimal, increasing.
pub fn snowflakes(
    out: &mut dyn Write,
    layout: Layout,
    node: u64,
    lease: LeaseArgs,
    count: u64,
    random_start: bool,
    format: IdTextFormat,
) -> Result<(), CliError> {
    let mut builder = Snowflake::builder(layout)
        .node(node)
        .random_start(random_start);
    if let (Some(url), Some(service)) = (lease.lease, lease.service) {
        builder = builder.lease(url, service);
        if let Some(name) = lease.holder {
            builder = builder.lease_holder(name);
        }
        if let Some(path) = lease.lease_file {
            builder = builder.lease_file(path);
        }
    }
    let ids = builder.build()?;
    let mut batch = vec![0u64; usize::try_from(count).map_or(BATCH, |n| n.min(BATCH))];
    let form = TextForm::from(format);
    let mut line = [0u8; text::MAX_LEN + 1];
    let mut left = count;
    while left > 0 {
        let n = usize::try_from(left).map_or(batch.len(), |left| left.min(batch.len()));
        let batch = &mut batch[..n];
        ids.next_many(batch)?;
        for &id in batch.iter() {
            out.write_all(text_line(id, form, &mut line))?;
        }
        left -= n as u64;
    }
    Ok(())
}

/// `id` in `form` followed by a newline, in `buf`.
fn text_line(id: u64, form: TextForm, buf: &mut [u8; text::MAX_LEN + 1]) -> &[u8] {
    let mut written = [0u8; text::MAX_LEN];
    let id_text = text::format(id, form, &mut written);
    let len = id_text.len();
    buf[..len].copy_from_slice(id_text.as_bytes());
    buf[len] = b'\n';
    &buf[..=len]
}

/// Writes `count` ObjectIds as 24 lower-case hex characters.
pub fn object_ids(out: &mut dyn Write, count: u64) -> Result<(), CliError> {
    let ids = ObjectIds::new()?;
    let mut line = [b'\n'; ObjectId::HEX_LEN + 1];
    for _ in 0..count {
        let id = ids.next()?;
        let mut hex = [0u8; ObjectId::HEX_LEN];
        id.to_hex(&mut hex);
        line[..ObjectId::HEX_LEN].copy_from_slice(&hex);
        out.write_all(&line)?;
    }
    Ok(())
}

/// Writes `count` time-ordered 128-bit ids, each through `write` and a newline.
fn time_ordered<T: TimeOrderedId>(
    out: &mut dyn Write,
    count: u64,
    state_file: Option<PathBuf>,
    write: impl Fn(&mut dyn Write, T) -> std::io::Result<()>,
) -> Result<(), CliError> {
    let ids: TimeOrdered<T> = match state_file {
        Some(path) => TimeOrdered::with_state_file(path)?,
        None => TimeOrdered::new()?,
    };
    for _ in 0..count {
        write(out, ids.next()?)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Writes `count` UUIDv7s in `format`.
pub fn uuid7s(
    out: &mut dyn Write,
    count: u64,
    format: Uuid7Format,
    state_file: Option<PathBuf>,
) -> Result<(), CliError> {
    time_ordered::<Uuid7>(out, count, state_file, |out, id| match format {
        Uuid7Format::Uuid => write!(out, "{id}"),
        Uuid7Format::Hex => write!(out, "{:032x}", id.as_u128()),
        Uuid7Format::Ulid => write!(out, "{}", Ulid::from(id)),
    })
}

/// Writes `count` ULIDs.
pub fn ulids(out: &mut dyn Write, count: u64, state_file: Option<PathBuf>) -> Result<(), CliError> {
    time_ordered::<Ulid>(out, count, state_file, |out, id| write!(out, "{id}"))
}

/// Writes `count` flake-128 ids (random worker) in `format`.
pub fn flakes(out: &mut dyn Write, count: u64, format: Flake128Format) -> Result<(), CliError> {
    let ids = Flake128s::new(WorkerId::Random)?;
    for _ in 0..count {
        let id = ids.next()?;
        write_flake(out, id, format)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Writes one flake-128 id in `format` (no newline).
pub fn write_flake(
    out: &mut dyn Write,
    id: Flake128,
    format: Flake128Format,
) -> std::io::Result<()> {
    match format {
        Flake128Format::Base62 => {
            let mut buf = [0u8; Flake128::BASE62_LEN];
            out.write_all(id.to_base62(&mut buf).as_bytes())
        }
        Flake128Format::Hex => {
            let mut buf = [0u8; Flake128::HEX_LEN];
            out.write_all(id.to_hex(&mut buf).as_bytes())
        }
        Flake128Format::Decimal => write!(out, "{}", id.as_u128()),
        Flake128Format::Uuid => out.write_all(idforge::text::id::uuid_text(id).as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_lines() {
        let mut buf = [0u8; text::MAX_LEN + 1];
        assert_eq!(text_line(0, TextForm::Decimal, &mut buf), b"0\n");
        assert_eq!(
            text_line(u64::MAX, TextForm::Decimal, &mut buf),
            b"18446744073709551615\n"
        );
        assert_eq!(
            text_line(u64::MAX, TextForm::Base32, &mut buf),
            b"FZZZZZZZZZZZZ\n"
        );
        assert_eq!(
            text_line(u64::MAX, TextForm::Base62, &mut buf),
            b"LygHa16AHYF\n"
        );
    }

    #[test]
    fn flake_formats() {
        let id = Flake128::from_u128(0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10);
        let text = |format| {
            let mut out = Vec::new();
            write_flake(&mut out, id, format).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            text(Flake128Format::Hex),
            "0102030405060708090a0b0c0d0e0f10"
        );
        assert_eq!(
            text(Flake128Format::Uuid),
            "01020304-0506-0708-090a-0b0c0d0e0f10"
        );
        assert_eq!(
            text(Flake128Format::Decimal),
            "1339673755198158349044581307228491536"
        );
        assert_eq!(text(Flake128Format::Base62).len(), 22);
    }

    #[test]
    fn ids_are_written_in_order() {
        let mut out = Vec::new();
        snowflakes(
            &mut out,
            Layout::TWITTER,
            3,
            LeaseArgs::default(),
            10_000,
            true,
            IdTextFormat::Decimal,
        )
        .unwrap();
        let ids: Vec<u64> = std::str::from_utf8(&out)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        assert_eq!(ids.len(), 10_000);
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        // The short forms: lines sort like the ids, and read back.
        for format in [IdTextFormat::Base32, IdTextFormat::Base62] {
            let mut out = Vec::new();
            let args = LeaseArgs::default();
            snowflakes(&mut out, Layout::TWITTER, 3, args, 1_000, false, format).unwrap();
            let lines: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().collect();
            assert_eq!(lines.len(), 1_000);
            assert!(lines.windows(2).all(|w| w[0] < w[1]), "{format:?}");
            for line in lines {
                text::id_from_text(line, format.into()).unwrap();
            }
        }
        let mut out = Vec::new();
        object_ids(&mut out, 3).unwrap();
        assert_eq!(out.len(), 3 * 25);
        for format in [Uuid7Format::Uuid, Uuid7Format::Hex, Uuid7Format::Ulid] {
            let mut out = Vec::new();
            uuid7s(&mut out, 1_000, format, None).unwrap();
            let lines: Vec<Uuid7> = std::str::from_utf8(&out)
                .unwrap()
                .lines()
                .map(|l| match format {
                    Uuid7Format::Ulid => Uuid7::parse_ulid_text(l).unwrap(),
                    _ => l.parse().unwrap(),
                })
                .collect();
            assert_eq!(lines.len(), 1_000);
            assert!(lines.windows(2).all(|w| w[0] < w[1]), "{format:?}");
        }
        let mut out = Vec::new();
        ulids(&mut out, 100, None).unwrap();
        let ulids: Vec<Ulid> = std::str::from_utf8(&out)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        assert!(ulids.windows(2).all(|w| w[0] < w[1]));
    }
}
