//! Runs the shared vectors of the 64-bit id text forms (`core/testdata/id_text.json`). Every
//! struct denies unknown fields, so a column added to the file must be checked here.

use idforge_core::id_text::{self, TextForm};
use serde::Deserialize;

mod common;
use common::{assert_err, int, load};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[allow(dead_code)]
    description: String,
    ids: Vec<Row>,
    parse: Vec<Accepted>,
    errors: Vec<Refused>,
    describe_errors: Vec<DescribeRefused>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    id: String,
    decimal: String,
    base32: String,
    base62: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Accepted {
    form: String,
    text: String,
    id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Refused {
    form: String,
    text: String,
    error: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DescribeRefused {
    kind: String,
    text: String,
    error: String,
}

fn form(name: &str) -> TextForm {
    name.parse()
        .unwrap_or_else(|e| panic!("form {name:?}: {e}"))
}

#[test]
fn id_text_vectors() {
    let file: File = load("id_text.json");
    assert!(file.ids.len() >= 10 && file.errors.len() >= 20);
    for row in &file.ids {
        let id: u64 = int(&row.id);
        for (form, text) in [
            (TextForm::Decimal, &row.decimal),
            (TextForm::Base32, &row.base32),
            (TextForm::Base62, &row.base62),
        ] {
            let mut buf = [0u8; id_text::MAX_LEN];
            assert_eq!(id_text::format(id, form, &mut buf), text, "{form} of {id}");
            assert_eq!(
                id_text::parse(text.as_bytes(), form),
                Ok(id),
                "{form} {text}"
            );
        }
    }
    for row in &file.parse {
        let got = id_text::parse(row.text.as_bytes(), form(&row.form));
        assert_eq!(got, Ok(int(&row.id)), "{} {:?}", row.form, row.text);
    }
    for row in &file.errors {
        let got = id_text::parse(row.text.as_bytes(), form(&row.form));
        assert_err(got, &row.error, &(&row.form, &row.text));
    }
    // Reading a snowflake of any kind is the decimal form's parse (the runtime's describe runs
    // these rows through detection too): each text is refused here by the same rule.
    for row in &file.describe_errors {
        assert!(
            matches!(row.kind.as_str(), "any" | "snowflake"),
            "{}",
            row.kind
        );
        let got = id_text::parse(row.text.as_bytes(), TextForm::Decimal);
        assert_err(got, &row.error, &(&row.kind, &row.text));
    }
}
