//! The `--layout` argument: a preset name or a strict `key=value` spec, and the `layouts`
//! listing.
//!
//! A spec names every field of a [`Layout`]:
//! `epoch=1288834974657,tick=1,time=41,node=10,seq=12[,order=time_seq_node][,unsigned]`
//! (`epoch` in Unix milliseconds, `tick` in milliseconds, widths in bits; `order` defaults to
//! `time_node_seq`). Unknown, repeated or missing keys and bad numbers are errors, with the code
//! `INVALID_LAYOUT`.

use std::fmt;
use std::io::Write;

use idforge::{ErrorCode, Layout, Order};
use serde_json::{Value, json};

use crate::error::CliError;
use crate::time_arg::format_ms;

/// A layout given on the command line, with the name it is shown under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutArg {
    layout: Layout,
}

impl LayoutArg {
    /// Wraps a layout.
    pub fn new(layout: Layout) -> LayoutArg {
        LayoutArg { layout }
    }

    /// The layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The preset's name when the layout is a preset, else its canonical spec.
    pub fn label(&self) -> String {
        preset_name(&self.layout).map_or_else(|| spec(&self.layout), str::to_owned)
    }
}

/// The label (preset name or spec).
impl fmt::Display for LayoutArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

fn invalid(message: impl Into<String>) -> CliError {
    CliError::new(
        ErrorCode::InvalidLayout,
        format!("invalid layout: {}", message.into()),
    )
}

/// Parses a preset name (case-insensitive, `-` for `_`) or a spec (anything with `=` or `,`).
pub fn parse_layout(s: &str) -> Result<LayoutArg, CliError> {
    if s.contains(['=', ',']) {
        return parse_spec(s).map(LayoutArg::new);
    }
    Layout::preset_named(s).map(LayoutArg::new).ok_or_else(|| {
        let names: Vec<&str> = Layout::PRESETS.iter().map(|(n, _)| *n).collect();
        invalid(format!(
            "unknown layout {s:?} (presets: {}; or a spec such as {})",
            names.join(", "),
            spec(&Layout::TWITTER)
        ))
    })
}

/// Parses a `key=value,...` spec strictly (see the module documentation).
pub fn parse_spec(s: &str) -> Result<Layout, CliError> {
    let mut epoch = None;
    let mut tick = None;
    let mut time = None;
    let mut node = None;
    let mut seq = None;
    let mut order = None;
    let mut unsigned = None;

    fn set<T>(slot: &mut Option<T>, key: &str, value: T) -> Result<(), CliError> {
        if slot.replace(value).is_some() {
            return Err(invalid(format!("key {key:?} given twice")));
        }
        Ok(())
    }
    fn number(key: &str, value: &str) -> Result<u64, CliError> {
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid(format!("{key}={value:?} is not a number")));
        }
        value
            .parse()
            .map_err(|_| invalid(format!("{key}={value} is too large")))
    }
    fn bits(key: &str, value: &str) -> Result<u32, CliError> {
        let n = number(key, value)?;
        u32::try_from(n)
            .ok()
            .filter(|&n| n <= 64)
            .ok_or_else(|| invalid(format!("{key}={value}: at most 64 bits")))
    }

    for part in s.split(',') {
        match part.split_once('=') {
            Some(("epoch", v)) => set(&mut epoch, "epoch", number("epoch", v)?)?,
            Some(("tick", v)) => set(&mut tick, "tick", number("tick", v)?)?,
            Some(("time", v)) => set(&mut time, "time", bits("time", v)?)?,
            Some(("node", v)) => set(&mut node, "node", bits("node", v)?)?,
            Some(("seq", v)) => set(&mut seq, "seq", bits("seq", v)?)?,
            Some(("order", v)) => {
                let o = match v {
                    "time_node_seq" => Order::TimeNodeSeq,
                    "time_seq_node" => Order::TimeSeqNode,
                    _ => {
                        return Err(invalid(format!(
                            "order={v:?}: expected time_node_seq or time_seq_node"
                        )));
                    }
                };
                set(&mut order, "order", o)?;
            }
            Some((key, _)) => return Err(invalid(format!("unknown key {key:?}"))),
            None if part == "unsigned" => set(&mut unsigned, "unsigned", true)?,
            None if part.is_empty() => return Err(invalid("empty field in the spec")),
            None => return Err(invalid(format!("unknown field {part:?}"))),
        }
    }

    let missing = |key: &str| invalid(format!("missing key {key:?}"));
    let layout = Layout::new(
        epoch.ok_or_else(|| missing("epoch"))?,
        tick.ok_or_else(|| missing("tick"))?,
        time.ok_or_else(|| missing("time"))?,
        node.ok_or_else(|| missing("node"))?,
        seq.ok_or_else(|| missing("seq"))?,
        order.unwrap_or(Order::TimeNodeSeq),
        unsigned.unwrap_or(false),
    )?;
    Ok(layout)
}

/// The name of the preset equal to `layout`, if any.
pub fn preset_name(layout: &Layout) -> Option<&'static str> {
    Layout::PRESETS
        .iter()
        .find(|(_, l)| l == layout)
        .map(|(n, _)| *n)
}

/// The spec keyword of an order.
pub fn order_name(order: Order) -> &'static str {
    match order {
        Order::TimeNodeSeq => "time_node_seq",
        Order::TimeSeqNode => "time_seq_node",
    }
}

/// The canonical spec of a layout, which [`parse_spec`] reads back to the same layout.
pub fn spec(layout: &Layout) -> String {
    let mut s = format!(
        "epoch={},tick={},time={},node={},seq={}",
        layout.epoch_ms(),
        layout.tick_ms(),
        layout.time_bits(),
        layout.node_bits(),
        layout.seq_bits()
    );
    if layout.order() != Order::TimeNodeSeq {
        s.push_str(",order=");
        s.push_str(order_name(layout.order()));
    }
    if layout.is_unsigned() {
        s.push_str(",unsigned");
    }
    s
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
        "order": order_name(layout.order()),
        "unsigned": layout.is_unsigned(),
        "total_bits": layout.total_bits(),
        "max_node": layout.max_node(),
        "max_seq": layout.max_seq(),
        "last_time": format_ms(layout.max_time_ms()),
        "spec": spec(layout),
    })
}

/// Writes the presets: a table, or one JSON array.
pub fn write_presets(out: &mut dyn Write, as_json: bool) -> Result<(), CliError> {
    if as_json {
        let all: Vec<Value> = Layout::PRESETS
            .iter()
            .map(|(name, layout)| to_json(name, layout))
            .collect();
        writeln!(out, "{}", Value::Array(all))?;
        return Ok(());
    }
    let header = [
        "NAME",
        "EPOCH",
        "TICK_MS",
        "TIME",
        "NODE",
        "SEQ",
        "ORDER",
        "BITS",
        "LAST TIME",
    ];
    let rows: Vec<[String; 9]> = Layout::PRESETS
        .iter()
        .map(|(name, l)| {
            [
                (*name).to_owned(),
                format_ms(l.epoch_ms()),
                l.tick_ms().to_string(),
                l.time_bits().to_string(),
                l.node_bits().to_string(),
                l.seq_bits().to_string(),
                order_name(l.order()).to_owned(),
                format!(
                    "{}{}",
                    l.total_bits(),
                    if l.is_unsigned() { " unsigned" } else { "" }
                ),
                format_ms(l.max_time_ms()),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut text = String::new();
        for (i, cell) in cells.enumerate() {
            if i + 1 == widths.len() {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            }
        }
        text
    };
    writeln!(out, "{}", line(&mut header.iter().copied()))?;
    for row in &rows {
        writeln!(out, "{}", line(&mut row.iter().map(String::as_str)))?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "Any other layout: --layout {} [,order=time_seq_node] [,unsigned]",
        spec(&Layout::TWITTER)
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_by_name() {
        assert_eq!(parse_layout("twitter").unwrap().layout(), Layout::TWITTER);
        assert_eq!(parse_layout("JS-Safe").unwrap().layout(), Layout::JS_SAFE);
        assert_eq!(parse_layout("sonyflake").unwrap().label(), "sonyflake");
        let err = parse_layout("snowflake").unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidLayout);
        assert!(err.message().contains("twitter"), "{err}");
    }

    #[test]
    fn specs_are_parsed_strictly() {
        let twitter = parse_layout("epoch=1288834974657,tick=1,time=41,node=10,seq=12").unwrap();
        assert_eq!(twitter.layout(), Layout::TWITTER);
        assert_eq!(twitter.label(), "twitter");
        let sony = "epoch=1409529600000,tick=10,time=39,node=16,seq=8,order=time_seq_node";
        assert_eq!(parse_spec(sony).unwrap(), Layout::SONYFLAKE);
        let discord = "unsigned,seq=12,node=10,time=42,tick=1,epoch=1420070400000";
        assert_eq!(parse_spec(discord).unwrap(), Layout::DISCORD);
        for (name, layout) in Layout::PRESETS {
            assert_eq!(parse_spec(&spec(&layout)).unwrap(), layout, "{name}");
        }
        let custom = parse_layout("epoch=0,tick=5,time=40,node=3,seq=20").unwrap();
        assert_eq!(custom.label(), "epoch=0,tick=5,time=40,node=3,seq=20");

        for bad in [
            "epoch=1,tick=1,time=41,node=10",
            "epoch=1,tick=1,time=41,node=10,seq=12,",
            "epoch=1,tick=1,time=41,node=10,seq=12,color=red",
            "epoch=1,tick=1,time=41,node=10,seq=12,epoch=2",
            "epoch=x,tick=1,time=41,node=10,seq=12",
            "epoch=-1,tick=1,time=41,node=10,seq=12",
            "epoch=,tick=1,time=41,node=10,seq=12",
            "epoch=1,tick=1,time=41,node=10,seq=+12",
            "epoch=1,tick=1,time=41,node=10,seq=4294967296",
            "epoch=99999999999999999999,tick=1,time=41,node=10,seq=12",
            "epoch=1,tick=1,time=41,node=10,seq=12,order=random",
            "epoch=1,tick=1,time=41,node=10,seq=12,signed",
            "epoch=1,tick=1,time=41,node=10,seq=12,unsigned,unsigned",
            "epoch=1, tick=1,time=41,node=10,seq=12",
            "epoch=1,tick=1,time=42,node=10,seq=12",
            "epoch=1,tick=0,time=41,node=10,seq=12",
            "twitter,unsigned",
        ] {
            let err = parse_layout(bad).unwrap_err();
            assert_eq!(err.code(), ErrorCode::InvalidLayout, "{bad}: {err}");
            assert!(err.message().starts_with("invalid layout: "), "{err}");
        }
    }

    #[test]
    fn listing_names_every_preset() {
        let mut text = Vec::new();
        write_presets(&mut text, false).unwrap();
        let text = String::from_utf8(text).unwrap();
        for (name, _) in Layout::PRESETS {
            assert!(text.lines().any(|l| l.starts_with(name)), "{name}");
        }
        assert!(text.contains("2010-11-04T01:42:54.657Z"), "{text}");
        let mut json = Vec::new();
        write_presets(&mut json, true).unwrap();
        let v: Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(v.as_array().map(Vec::len), Some(Layout::PRESETS.len()));
        assert_eq!(v[0]["name"], "twitter");
        assert_eq!(v[0]["epoch_ms"], 1_288_834_974_657u64);
    }
}
