//! `idforge compose`: snowflake ids from a time (and optionally a node and sequence).

use std::io::Write;

use serde_json::{Map, Value, json};

use crate::cli::ComposeArgs;
use crate::error::CliError;
use crate::time_arg::format_ms;

/// Runs `compose`: `min <id>` and `max <id>` lines for the tick of `--time` (every id of that
/// tick lies between them), or the one id of `--node` and `--seq` in that tick; `--json` prints
/// one object instead (ids as strings).
pub fn run(out: &mut dyn Write, args: &ComposeArgs) -> Result<(), CliError> {
    let layout = args.layout.layout();
    let tick = layout.tick_of(args.time)?;
    let tick_ms = layout.epoch_ms() + tick * layout.tick_ms();
    let mut fields = Map::new();
    fields.insert("layout".into(), json!(args.layout.label()));
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
