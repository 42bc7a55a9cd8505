//! Reference sections of the documentation made from the code's own declarations (the server's
//! settings, its commands), so a table in a Markdown file cannot drift from what the server does.
//!
//! A generated section sits between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` in
//! its file. The tests that own a section call [`check_section`]: it fails when the text there
//! differs from what the code makes now, and with `IDFORGE_BLESS=1` in the environment rewrites
//! it instead (then review and commit the diff).

use std::path::Path;

/// Checks (or, with `IDFORGE_BLESS=1`, rewrites) the whole of FILE (relative to the repository
/// root) against CONTENT, for a file made entirely from the code.
pub fn check_file(file: &str, content: &str) -> Result<(), String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    if text == content {
        return Ok(());
    }
    if blessing() {
        return std::fs::write(&path, content).map_err(|e| format!("{file}: {e}"));
    }
    Err(drifted(file))
}

/// Whether the tests rewrite what drifted (`IDFORGE_BLESS=1`) instead of failing.
fn blessing() -> bool {
    std::env::var_os("IDFORGE_BLESS").is_some_and(|v| v == "1")
}

/// The message for a file that differs from what the code makes.
fn drifted(what: &str) -> String {
    format!(
        "{what} differs from what the code declares: run the test again with IDFORGE_BLESS=1, \
         review the diff and commit it"
    )
}

/// Checks (or, with `IDFORGE_BLESS=1`, rewrites) the section NAME of FILE (relative to the
/// repository root) against CONTENT. The error says which file and section drifted.
pub fn check_section(file: &str, name: &str, content: &str) -> Result<(), String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(file);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{file}: {e}"))?;
    let (open, close) = (
        format!("<!-- generated:{name} -->\n"),
        format!("<!-- /generated:{name} -->"),
    );
    let start = text
        .find(&open)
        .ok_or_else(|| format!("{file} has no line {}", open.trim_end()))?
        + open.len();
    let end = text[start..]
        .find(&close)
        .ok_or_else(|| format!("{file} has no line {close}"))?
        + start;
    let body = if content.ends_with('\n') {
        content.to_owned()
    } else {
        format!("{content}\n")
    };
    if text[start..end] == body {
        return Ok(());
    }
    if blessing() {
        let new = format!("{}{body}{}", &text[..start], &text[end..]);
        return std::fs::write(&path, new).map_err(|e| format!("{file}: {e}"));
    }
    Err(drifted(&format!("{file}, section {name},")))
}
