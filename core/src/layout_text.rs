//! The text forms of a [`Layout`] and an [`Order`], the one parser every binding and the CLI use.
//!
//! A layout is written as a preset name (`twitter`, `sonyflake`, …; case-insensitive, `-` for
//! `_`) or as a strict spec naming every field:
//! `epoch=1288834974657,tick=1,time=41,node=10,seq=12[,order=time_seq_node][,unsigned]`
//! (`epoch` in Unix milliseconds, `tick` in milliseconds, widths in bits; `order` defaults to
//! `time_node_seq`). Unknown, repeated or missing keys, signs, spaces and bad numbers are
//! [`Error::InvalidLayout`]. [`Display`](fmt::Display) writes a preset's name, or else the
//! canonical spec ([`Layout::spec`]), and parsing either gives the same layout back.
//!
//! Messages are `&'static str` (the core does not allocate), so each key has its own texts.

use core::fmt;
use core::str::FromStr;

use crate::error::Error;
use crate::snowflake::{Layout, Order};

/// The message for a name that is no preset (it lists them; a test keeps the list in step).
const UNKNOWN_NAME: &str = "no preset has this name (presets: twitter, discord, instagram, \
     sonyflake, baidu, js_safe; or a spec such as epoch=1288834974657,tick=1,time=41,node=10,seq=12)";

/// The message for an order keyword that is not one.
const BAD_ORDER: &str = "order must be time_node_seq or time_seq_node";

/// The messages of one numeric key.
struct Key {
    name: &'static str,
    twice: &'static str,
    not_number: &'static str,
    too_large: &'static str,
    missing: &'static str,
}

macro_rules! key {
    ($name:literal, $max:literal) => {
        Key {
            name: $name,
            twice: concat!("key \"", $name, "\" given twice"),
            not_number: concat!($name, "= is not a decimal number"),
            too_large: concat!($name, "= is too large (at most ", $max, ")"),
            missing: concat!("missing key \"", $name, "\""),
        }
    };
}

/// The numeric keys, in spec order: `epoch` and `tick` (u64), then the three widths.
const KEYS: [Key; 5] = [
    key!("epoch", "18446744073709551615"),
    key!("tick", "18446744073709551615"),
    key!("time", "64"),
    key!("node", "64"),
    key!("seq", "64"),
];

impl Order {
    /// The spec keyword: `time_node_seq` or `time_seq_node`.
    pub const fn name(self) -> &'static str {
        match self {
            Order::TimeNodeSeq => "time_node_seq",
            Order::TimeSeqNode => "time_seq_node",
        }
    }
}

/// The spec keyword.
impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `time_node_seq` or `time_seq_node` (exactly); anything else is `INVALID_LAYOUT`.
impl FromStr for Order {
    type Err = Error;

    fn from_str(s: &str) -> Result<Order, Error> {
        match s {
            "time_node_seq" => Ok(Order::TimeNodeSeq),
            "time_seq_node" => Ok(Order::TimeSeqNode),
            _ => Err(Error::InvalidLayout(BAD_ORDER)),
        }
    }
}

/// A layout written as its full spec (see [`Layout::spec`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec(Layout);

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = &self.0;
        write!(
            f,
            "epoch={},tick={},time={},node={},seq={}",
            l.epoch_ms(),
            l.tick_ms(),
            l.time_bits(),
            l.node_bits(),
            l.seq_bits()
        )?;
        if l.order() != Order::TimeNodeSeq {
            write!(f, ",order={}", l.order())?;
        }
        if l.is_unsigned() {
            f.write_str(",unsigned")?;
        }
        Ok(())
    }
}

impl Layout {
    /// The canonical spec, for display: `epoch=…,tick=…,time=…,node=…,seq=…`, then
    /// `,order=time_seq_node` and `,unsigned` when they apply. Parsing it gives this layout.
    pub const fn spec(self) -> Spec {
        Spec(self)
    }

    /// The name of the preset equal to this layout, if any.
    pub fn preset_name(&self) -> Option<&'static str> {
        Self::PRESETS
            .iter()
            .find(|(_, l)| l == self)
            .map(|(n, _)| *n)
    }

    /// The preset called `name` (case-insensitive, `-` for `_`), or `INVALID_LAYOUT` with the
    /// one message every binding gives for an unknown name (it lists the presets).
    pub fn named(name: &str) -> Result<Layout, Error> {
        Layout::preset_named(name).ok_or(Error::InvalidLayout(UNKNOWN_NAME))
    }

    /// Parses a preset name or a spec (see the [module docs](self)); same as [`str::parse`].
    pub fn parse(s: &str) -> Result<Layout, Error> {
        if s.contains(['=', ',']) {
            return parse_spec(s);
        }
        Layout::named(s)
    }
}

/// The preset's name, or else the canonical spec.
impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.preset_name() {
            Some(name) => f.write_str(name),
            None => self.spec().fmt(f),
        }
    }
}

/// A preset name or a spec; see [`Layout::parse`].
impl FromStr for Layout {
    type Err = Error;

    fn from_str(s: &str) -> Result<Layout, Error> {
        Layout::parse(s)
    }
}

fn invalid(message: &'static str) -> Error {
    Error::InvalidLayout(message)
}

/// Decimal digits only (no sign, no space, not empty), into a `u64`.
fn number(key: &Key, value: &str) -> Result<u64, Error> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid(key.not_number));
    }
    value.parse().map_err(|_| invalid(key.too_large))
}

fn parse_spec(s: &str) -> Result<Layout, Error> {
    let mut numbers: [Option<u64>; 5] = [None; 5];
    let mut order = None;
    let mut unsigned = false;
    for part in s.split(',') {
        match part.split_once('=') {
            Some(("order", v)) => {
                if order.replace(v.parse::<Order>()?).is_some() {
                    return Err(invalid("key \"order\" given twice"));
                }
            }
            Some((name, v)) => {
                let i = KEYS.iter().position(|k| k.name == name).ok_or(invalid(
                    "unknown key (keys: epoch, tick, time, node, seq, order, unsigned)",
                ))?;
                let key = &KEYS[i];
                let n = number(key, v)?;
                if i >= 2 && n > 64 {
                    return Err(invalid(key.too_large));
                }
                if numbers[i].replace(n).is_some() {
                    return Err(invalid(key.twice));
                }
            }
            None if part == "unsigned" => {
                if unsigned {
                    return Err(invalid("\"unsigned\" given twice"));
                }
                unsigned = true;
            }
            None if part.is_empty() => return Err(invalid("empty field in the spec")),
            None => {
                return Err(invalid(
                    "unknown field (a spec has key=value fields and \"unsigned\")",
                ));
            }
        }
    }
    let mut values = [0u64; 5];
    for (i, key) in KEYS.iter().enumerate() {
        values[i] = numbers[i].ok_or(invalid(key.missing))?;
    }
    let [epoch, tick, time, node, seq] = values;
    // The widths were checked to be at most 64 above.
    Layout::new(
        epoch,
        tick,
        time as u32,
        node as u32,
        seq as u32,
        order.unwrap_or(Order::TimeNodeSeq),
        unsigned,
    )
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::format;
    use std::string::ToString;

    use super::*;

    #[test]
    fn the_unknown_name_message_lists_every_preset() {
        let names: std::vec::Vec<&str> = Layout::PRESETS.iter().map(|(n, _)| *n).collect();
        let expected = format!(
            "no preset has this name (presets: {}; or a spec such as {})",
            names.join(", "),
            Layout::TWITTER.spec()
        );
        assert_eq!(UNKNOWN_NAME, expected);
    }

    #[test]
    fn every_preset_reads_back_by_name_and_by_spec() {
        for (name, layout) in Layout::PRESETS {
            assert_eq!(layout.to_string(), name);
            assert_eq!(name.parse::<Layout>(), Ok(layout));
            assert_eq!(layout.spec().to_string().parse::<Layout>(), Ok(layout));
        }
        let custom = Layout::new(0, 5, 40, 3, 20, Order::TimeSeqNode, true).unwrap();
        assert_eq!(
            custom.to_string(),
            "epoch=0,tick=5,time=40,node=3,seq=20,order=time_seq_node,unsigned"
        );
        assert_eq!(custom.to_string().parse::<Layout>(), Ok(custom));
    }

    #[test]
    fn long_texts_are_refused_in_one_pass() {
        // A megabyte of fields stops at the second one; a megabyte name is no preset.
        let fields = "epoch=1,".repeat(1 << 17);
        assert_eq!(
            Layout::parse(&fields),
            Err(Error::InvalidLayout(KEYS[0].twice))
        );
        let name = "t".repeat(1 << 20);
        assert_eq!(
            Layout::parse(&name),
            Err(Error::InvalidLayout(UNKNOWN_NAME))
        );
        let digits = format!(
            "epoch={},tick=1,time=41,node=10,seq=12",
            "9".repeat(1 << 20)
        );
        assert_eq!(
            Layout::parse(&digits),
            Err(Error::InvalidLayout(KEYS[0].too_large))
        );
    }

    #[test]
    fn orders_read_back() {
        for o in [Order::TimeNodeSeq, Order::TimeSeqNode] {
            assert_eq!(o.to_string().parse::<Order>(), Ok(o));
        }
        assert_eq!(
            "TIME_NODE_SEQ".parse::<Order>(),
            Err(Error::InvalidLayout(BAD_ORDER))
        );
    }
}
