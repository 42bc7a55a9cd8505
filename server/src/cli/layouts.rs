//! `idforge layouts`: the preset layouts, as a table or one JSON array.

use std::io::Write;

use idforge::Layout;
use serde_json::Value;

use crate::error::CliError;
use crate::text::layout::to_json;
use crate::text::time::format_ms;

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
                l.order().to_string(),
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
        Layout::TWITTER.spec()
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
