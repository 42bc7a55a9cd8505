//! `--layout` and `LAYOUT` arguments, read by the core's one parser ([`Layout::parse`]: a preset
//! name or a strict `key=value` spec), and a layout's fields as JSON.

use idforge::Layout;
use serde_json::{Value, json};

use crate::error::CliError;
use crate::text::time::format_ms;

/// Parses a preset name or a spec; a bad one is `INVALID_LAYOUT` with the core's message.
pub fn parse_layout(s: &str) -> Result<Layout, CliError> {
    Layout::parse(s).map_err(CliError::from)
}

/// A layout's fields as a JSON object (64-bit quantities as numbers).
pub fn to_json(name: &str, layout: &Layout) -> Value {
    json!({
        "name": name,
        "epoch_ms": layout.epoch_ms(),
        "epoch": format_ms(layout.epoch_ms()),
        "tick_ms": layout.tick_ms(),
        "time_bits": layout.time_bits(),
        "node_bits": layout.node_bits(),
        "seq_bits": layout.seq_bits(),
        "order": layout.order().name(),
        "unsigned": layout.is_unsigned(),
        "total_bits": layout.total_bits(),
        "max_node": layout.max_node(),
        "max_seq": layout.max_seq(),
        "last_time": format_ms(layout.max_time_ms()),
        "spec": layout.spec().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use idforge::ErrorCode;

    #[test]
    fn names_and_specs_are_the_cores() {
        assert_eq!(parse_layout("JS-Safe").unwrap(), Layout::JS_SAFE);
        let sony = "epoch=1409529600000,tick=10,time=39,node=16,seq=8,order=time_seq_node";
        assert_eq!(parse_layout(sony).unwrap(), Layout::SONYFLAKE);
        let err = parse_layout("snowflake").unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidLayout);
        assert!(err.message().starts_with("invalid layout: "), "{err}");
        assert!(err.message().contains("twitter"), "{err}");
        assert_eq!(
            to_json("twitter", &Layout::TWITTER)["spec"],
            Layout::TWITTER.spec().to_string()
        );
    }
}
