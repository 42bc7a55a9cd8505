//! `idforge decode`: the fields of a snowflake, ObjectId, flake-128, UUIDv7 or ULID.

use std::io::Write;

use clap::Args;
use idforge::Layout;
use idforge::text::id::describe;

use crate::cli::generate::IdTextFormat;
use crate::error::CliError;
use crate::text::id::{IdType, to_json};
use crate::text::layout::parse_layout;

/// Arguments of `decode`.
#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// The id: decimal (snowflake), 24 hex (ObjectId), base62, 32 hex or UUID (flake-128, or
    /// UUIDv7 when its version bits say so), 26 base32 (ULID).
    #[arg(allow_negative_numbers = true)]
    pub id: String,
    /// The snowflake layout: a preset name or a spec (see `idforge layouts`).
    #[arg(long, value_name = "NAME|SPEC", default_value = "twitter", value_parser = parse_layout)]
    pub layout: Layout,
    /// The id's type, instead of detecting it.
    #[arg(long = "type", value_enum, value_name = "TYPE")]
    pub kind: Option<IdType>,
    /// Read the id as a snowflake written in this form (only its one text: base32 in either
    /// case, no leading zero in decimal).
    #[arg(long, value_enum, value_name = "FORM", conflicts_with = "kind")]
    pub form: Option<IdTextFormat>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Runs `decode`: `key value` lines, or one JSON object (ids as strings).
pub fn run(out: &mut dyn Write, args: &DecodeArgs) -> Result<(), CliError> {
    let fields = describe(
        &args.id,
        args.kind.map(Into::into),
        args.form.map(Into::into),
        &args.layout,
    )?;
    if args.json {
        writeln!(out, "{}", to_json(&fields))?;
    } else {
        for f in fields {
            writeln!(out, "{:<10}{}", f.key, f.value)?;
        }
    }
    Ok(())
}
