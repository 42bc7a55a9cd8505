//! Runs the shared layout-text vectors in `core/testdata/layout_text.json`: preset names and
//! specs that parse (with their display form), and texts refused with one exact message.

use idforge_core::Error;
use idforge_core::snowflake::{Layout, Order};
use serde::Deserialize;

mod common;
use common::load;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[allow(dead_code)]
    description: String,
    valid: Vec<Valid>,
    invalid: Vec<Invalid>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Valid {
    text: String,
    epoch_ms: u64,
    tick_ms: u64,
    time_bits: u32,
    node_bits: u32,
    seq_bits: u32,
    order: String,
    unsigned: bool,
    display: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Invalid {
    text: String,
    message: String,
}

#[test]
fn layout_texts() {
    let file: File = load("layout_text.json");
    for v in &file.valid {
        let order: Order = v.order.parse().unwrap();
        let want = Layout::new(
            v.epoch_ms,
            v.tick_ms,
            v.time_bits,
            v.node_bits,
            v.seq_bits,
            order,
            v.unsigned,
        )
        .unwrap();
        let got: Layout = v
            .text
            .parse()
            .unwrap_or_else(|e| panic!("{:?}: {e}", v.text));
        assert_eq!(got, want, "{:?}", v.text);
        assert_eq!(got.to_string(), v.display, "{:?}", v.text);
        assert_eq!(v.display.parse::<Layout>(), Ok(want), "{:?}", v.display);
        assert_eq!(got.spec().to_string().parse::<Layout>(), Ok(want));
    }
    for v in &file.invalid {
        match Layout::parse(&v.text) {
            Err(Error::InvalidLayout(message)) => assert_eq!(message, v.message, "{:?}", v.text),
            other => panic!("{:?}: expected INVALID_LAYOUT, got {other:?}", v.text),
        }
    }
}
