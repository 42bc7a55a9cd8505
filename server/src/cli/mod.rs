//! The `idforge` command line: its arguments (clap) and [`run`], which the binary calls.

use std::ffi::OsString;
use std::io::Write;

use clap::{Parser, Subcommand};
use idforge::ErrorCode;

use crate::error::{CliError, EXIT_OK, EXIT_USAGE};
pub mod compose;
pub mod decode;
pub mod generate;
pub mod layouts;
pub mod store;

use compose::ComposeArgs;
use decode::DecodeArgs;
use generate::GenKind;

/// The most ids one `gen` call prints.
pub const MAX_COUNT: u64 = 10_000_000;

/// Unique ids: generate, decode and compose snowflake, ObjectId and flake-128 ids.
#[derive(Debug, Parser)]
#[command(name = "idforge", version, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate ids, one per line.
    Gen {
        /// Which kind of id.
        #[command(subcommand)]
        kind: GenKind,
    },
    /// Split an id into its fields (the type is detected unless --type is given).
    Decode(DecodeArgs),
    /// The smallest and largest snowflake id of a time, or the exact id of (time, node, seq).
    Compose(ComposeArgs),
    /// Run the segment server: per-tag increasing ids over the Redis protocol (`INCR tag`).
    Serve(Box<crate::serve::ServeArgs>),
    /// Check a server's store against its guard, or repair a store that went back.
    Store(store::StoreArgs),
    /// List the preset snowflake layouts and their fields.
    Layouts {
        /// Print one JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
}

fn parse_u64(what: &str, s: &str) -> Result<u64, CliError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CliError::new(
            ErrorCode::InvalidDecimal,
            format!("{what} {s:?} is not a number"),
        ));
    }
    s.parse().map_err(|_| {
        CliError::new(
            ErrorCode::InvalidDecimal,
            format!("{what} {s} does not fit in 64 bits"),
        )
    })
}

/// Parses a `--count`: 1 to [`MAX_COUNT`].
pub fn parse_count(s: &str) -> Result<u64, CliError> {
    let n = parse_u64("count", s)?;
    if !(1..=MAX_COUNT).contains(&n) {
        return Err(CliError::invalid(format!(
            "count {n} is out of range (1 to {MAX_COUNT})"
        )));
    }
    Ok(n)
}

/// Parses a `--node` (its range is checked against the layout later).
pub fn parse_node(s: &str) -> Result<u64, CliError> {
    parse_u64("node", s)
}

/// Parses a `--seq` (its range is checked against the layout later).
pub fn parse_seq(s: &str) -> Result<u64, CliError> {
    parse_u64("sequence", s)
}

/// Runs one command.
pub fn execute(cli: Cli, out: &mut dyn Write) -> Result<(), CliError> {
    match cli.command {
        Command::Gen { kind } => match kind {
            GenKind::Snowflake {
                layout,
                node,
                lease,
                count,
                random_start,
                format,
            } => generate::snowflakes(out, layout, node, lease, count, random_start, format),
            GenKind::Objectid { count } => generate::object_ids(out, count),
            GenKind::Flake128 { count, format } => generate::flakes(out, count, format),
            GenKind::Uuid7 {
                count,
                format,
                state_file,
            } => generate::uuid7s(out, count, format, state_file),
            GenKind::Ulid { count, state_file } => generate::ulids(out, count, state_file),
        },
        Command::Decode(args) => decode::run(out, &args),
        Command::Compose(args) => compose::run(out, &args),
        Command::Layouts { json } => layouts::write_presets(out, json),
        // Handled by `run` (they own the process and their exit status).
        Command::Serve(_) | Command::Store(_) => Ok(()),
    }
}

/// Parses `args` (the program name first) and runs the command, writing results to `out` and
/// errors to `err`; returns the exit status.
///
/// A bad value prints one line `idforge: error: <message> (<CODE>)` and returns 2; clap's own
/// usage errors print clap's message and also return 2; a closed `out` (`| head -1`) ends the
/// run quietly with 0.
pub fn run<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return report_clap(&e, out, err),
    };
    let cli = match cli.command {
        Command::Serve(args) => return crate::serve::run(*args, err),
        Command::Store(args) => return store::run(args, out, err),
        command => Cli { command },
    };
    let result = execute(cli, out).and_then(|()| out.flush().map_err(CliError::from));
    match result {
        Ok(()) => EXIT_OK,
        Err(e) if e.is_broken_pipe() => EXIT_OK,
        Err(e) => report(&e, err),
    }
}

fn report(e: &CliError, err: &mut dyn Write) -> u8 {
    // Nowhere left to report a failure to write the report.
    let _ = writeln!(err, "{}", e.line());
    let _ = err.flush();
    e.exit_code()
}

fn report_clap(e: &clap::Error, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    // A value our parsers refused: the same one-line format as every other error.
    if let Some(ours) = std::error::Error::source(e).and_then(|s| s.downcast_ref::<CliError>()) {
        return report(ours, err);
    }
    let text = e.render().to_string();
    let code = u8::try_from(e.exit_code()).unwrap_or(EXIT_USAGE);
    let target: &mut dyn Write = if e.use_stderr() { err } else { out };
    let _ = target.write_all(text.as_bytes());
    let _ = target.flush();
    code
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn run_args(args: &[&str]) -> (u8, String, String) {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let mut all = vec!["idforge"];
        all.extend_from_slice(args);
        let code = run(all, &mut out, &mut err);
        (
            code,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn the_command_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn value_errors_are_one_line_with_a_code() {
        let (code, out, err) = run_args(&["gen", "snowflake", "--count", "0"]);
        assert_eq!((code, out.as_str()), (2, ""));
        assert_eq!(
            err,
            "idforge: error: count 0 is out of range (1 to 10000000) (INVALID_ARGUMENT)\n"
        );
        let (code, _, err) = run_args(&["decode", "1", "--layout", "nope"]);
        assert_eq!(code, 2);
        assert!(err.ends_with("(INVALID_LAYOUT)\n"), "{err}");
    }

    #[test]
    fn usage_errors_and_help() {
        let (code, out, err) = run_args(&["frobnicate"]);
        assert_eq!((code, out.as_str()), (2, ""));
        assert!(err.contains("frobnicate"), "{err}");
        let (code, out, _) = run_args(&["--help"]);
        assert_eq!(code, 0);
        assert!(out.contains("decode"), "{out}");
        let (code, _, err) = run_args(&["compose", "--time", "0", "--node", "1"]);
        assert_eq!(code, 2, "{err}");
    }

    #[test]
    fn gen_and_decode_in_process() {
        let (code, out, err) = run_args(&["gen", "snowflake", "--node", "9", "--count", "3"]);
        assert_eq!(code, 0, "{err}");
        let ids: Vec<u64> = out.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(ids.len(), 3);
        let (code, out, _) = run_args(&["decode", &ids[0].to_string()]);
        assert_eq!(code, 0);
        assert!(
            out.lines().any(|l| l.split_whitespace().eq(["node", "9"])),
            "{out}"
        );
    }
}
