//! Reference sections of the documentation made from the code's own declarations (the server's
//! settings, its commands), so a table in a Markdown file cannot drift from what the server does.
//!
//! A generated section sits between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` in
//! its file. The tests that own a section call [`check_section`]: it fails when the text there
//! differs from what the code makes now, and with `IDFORGE_BLESS=1` in the environment rewrites
//! it instead (then review and commit the diff).

use std::path::Path;

/// Why a generated section or file does not match the code.
#[derive(Debug, thiserror::Error)]
pub enum DocError {
    /// The file could not be read or written.
    #[error("{file}: {source}")]
    Io {
        /// The file (relative to the repository root).
        file: String,
        /// Why.
        source: std::io::Error,
    },
    /// The section's opening or closing line is missing.
    #[error("{file} has no line {line}")]
    NoMarker {
        /// The file.
        file: String,
        /// The line looked for.
        line: String,
    },
    /// The text differs from what the code makes.
    #[error(
        "{what} differs from what the code declares: run the test again with IDFORGE_BLESS=1, \
         review the diff and commit it"
    )]
    Drifted {
        /// The file (and section).
        what: String,
    },
}

/// Checks (or, with `IDFORGE_BLESS=1`, rewrites) the whole of FILE (relative to the repository
/// root) against CONTENT, for a file made entirely from the code.
pub fn check_file(file: &str, content: &str) -> Result<(), DocError> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    if text == content {
        return Ok(());
    }
    if blessing() {
        return std::fs::write(&path, content).map_err(|source| io(file, source));
    }
    Err(DocError::Drifted { what: file.into() })
}

/// Whether the tests rewrite what drifted (`IDFORGE_BLESS=1`) instead of failing.
fn blessing() -> bool {
    std::env::var_os("IDFORGE_BLESS").is_some_and(|v| v == "1")
}

fn io(file: &str, source: std::io::Error) -> DocError {
    DocError::Io {
        file: file.into(),
        source,
    }
}

/// Checks (or, with `IDFORGE_BLESS=1`, rewrites) the section NAME of FILE (relative to the
/// repository root) against CONTENT. The error says which file and section drifted.
pub fn check_section(file: &str, name: &str, content: &str) -> Result<(), DocError> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(file);
    let text = std::fs::read_to_string(&path).map_err(|source| io(file, source))?;
    let no_marker = |line: &str| DocError::NoMarker {
        file: file.into(),
        line: line.into(),
    };
    let (open, close) = (
        format!("<!-- generated:{name} -->\n"),
        format!("<!-- /generated:{name} -->"),
    );
    let start = text.find(&open).ok_or_else(|| no_marker(open.trim_end()))? + open.len();
    let end = text[start..]
        .find(&close)
        .ok_or_else(|| no_marker(&close))?
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
        return std::fs::write(&path, new).map_err(|source| io(file, source));
    }
    Err(DocError::Drifted {
        what: format!("{file}, section {name},"),
    })
}
