//! `idforge compose`: snowflake ids from a time (and optionally a node and sequence).

use std::io::Write;

use clap::Args;
use idforge::Layout;
use serde_json::{Map, Value, json};

use crate::cli::{parse_node, parse_seq};
use crate::error::CliError;
use crate::text::layout::parse_layout;
use crate::text::time::format_ms;

/// Arguments of `compose`.
#[derive(Debug, Args)]
pub struct ComposeArgs {
    /// RFC 3339 (2024-01-01T00:00:00Z, fractions and +hh:mm offsets allowed) or Unix ms.
    #[arg(long, value_name = "T", allow_negative_numbers = true, value_parser = time_arg)]
    pub time: u64,
    /// The snowflake layout: a preset name or a spec (see `idforge layouts`).
    #[arg(long, value_name = "NAME|SPEC", default_value = "twitter", value_parser = parse_layout)]
    pub layout: Layout,
    /// With --seq: print the one id of this node.
    #[arg(long, value_name = "N", requires = "seq", allow_negative_numbers = true, value_parser = parse_node)]
    pub node: Option<u64>,
    /// With --node: print the one id of this sequence number.
    #[arg(long, value_name = "S", requires = "node", allow_negative_numbers = true, value_parser = parse_seq)]
    pub seq: Option<u64>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Runs `compose`: `min <id>` and `max <id>` lines for the tick of `--time` (every id of that
/// tick lies between them), or the one id of `--node` and `--seq` in that tick; `--json` prints
/// one object instead (ids as strings).
pub fn run(out: &mut dyn Write, args: &ComposeArgs) -> Result<(), CliError> {
    let layout = args.layout;
    let tick = layout.tick_of(args.time)?;
    let tick_ms = layout.epoch_ms() + tick * layout.tick_ms();
    let mut fields = Map::new();
    fields.insert("layout".into(), json!(args.layout.to_string()));
    fields.insert("time".into(), json!(format_ms(tick_ms)));
    fields.insert("time_ms".into(), json!(tick_ms));
    fields.insert("tick".into(), json!(tick));
    match (args.node, args.seq) {
        (Some(node), Some(seq)) => {
            let id = layout.compose(tick, node, seq)?;
            if !args.json {
                writeln!(out, "{id}")?;
                return Ok(());
            }
            fields.insert("node".into(), json!(node));
            fields.insert("sequence".into(), json!(seq));
            fields.insert("id".into(), json!(id.to_string()));
        }
        _ => {
            let (min, max) = layout.bounds_at(args.time)?;
            if !args.json {
                writeln!(out, "min {min}")?;
                writeln!(out, "max {max}")?;
                return Ok(());
            }
            fields.insert("min".into(), json!(min.to_string()));
            fields.insert("max".into(), json!(max.to_string()));
        }
    }
    writeln!(out, "{}", Value::Object(fields))?;
    Ok(())
}

/// `--time`: the runtime's reading, as the command line's error (one line with its code).
fn time_arg(s: &str) -> Result<u64, CliError> {
    Ok(crate::text::time::parse_time(s)?)
}
