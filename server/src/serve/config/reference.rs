//! The documentation made from the settings table: the settings and limits tables of
//! docs/server.md and the packaged `packaging/server/idforge.toml`. Tests keep the committed
//! files equal to what this makes (`IDFORGE_BLESS=1` rewrites them: see [`crate::reference`](mod@crate::reference)).

use super::{SETTINGS, Setting};

/// A Markdown table cell: pipes escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The default as the tables show it, with the bounds.
fn default_cell(s: &Setting) -> String {
    let default = match (s.default)() {
        None => "unset".to_owned(),
        Some(d) if s.described => d,
        Some(d) => format!("`{d}`"),
    };
    match (s.min, s.max) {
        (Some(lo), Some(hi)) => format!("{default} ({lo} to {hi})"),
        (Some(lo), None) => format!("{default} (at least {lo})"),
        (None, Some(hi)) => format!("{default} (at most {hi})"),
        (None, None) => default,
    }
}

/// Every setting, grouped: flag, TOML key, environment variable, default, what it does.
pub fn settings_table() -> String {
    let mut out = String::new();
    let mut group = "";
    for s in SETTINGS {
        if s.group != group {
            group = s.group;
            out.push_str(&format!(
                "\n**{group}**\n\n| flag | env | default | |\n| --- | --- | --- | --- |\n"
            ));
        }
        out.push_str(&format!(
            "| `--{} {}` | `{}` | {} | {} |\n",
            s.name(),
            cell(s.value),
            s.env,
            cell(&default_cell(s)),
            cell(&s.doc_line())
        ));
    }
    out.trim_start().to_owned()
}

/// The settings that bound what a client can make the server hold, and what happens past them.
pub fn limits_table() -> String {
    let mut out = String::from(
        "| flag | config key | env | default | past it |\n| --- | --- | --- | --- | --- |\n",
    );
    for s in SETTINGS {
        let Some(limit) = s.limit else { continue };
        out.push_str(&format!(
            "| `--{} {}` | `{}` | `{}` | {} | {} |\n",
            s.name(),
            cell(s.value),
            s.name(),
            s.env,
            cell(&default_cell(s)),
            limit
        ));
    }
    out
}

/// The packaged `idforge.toml`: every setting with its doc, the packaged ones set, the others
/// commented out at their defaults.
pub fn example_toml() -> String {
    let mut out = String::from(
        "# idforge serve --config /etc/idforge/idforge.toml\n#\n\
         # Every key is a flag of `idforge serve` without its dashes (`idforge serve --help` lists \
         them);\n# flags and IDFORGE_* environment variables win over this file. Made from the \
         server's\n# settings table (server/src/serve/config/settings.rs).\n",
    );
    let mut group = "";
    for s in SETTINGS {
        if s.group != group {
            group = s.group;
            out.push_str(&format!("\n# ---- {group} ----\n"));
        }
        out.push('\n');
        for line in wrap(&s.doc_line(), 96) {
            out.push_str(&format!("# {line}\n"));
        }
        let value = |v: String| match s.value {
            "N" | "MS" | "SECS" | "US" | "BYTES" | "PORT" | "BOOL" => v,
            _ => format!("{v:?}"),
        };
        match (s.example, s.sample, (s.default)()) {
            (Some(example), _, _) => out.push_str(&format!("{} = {example}\n", s.name())),
            (None, Some(sample), _) => out.push_str(&format!("# {} = {sample}\n", s.name())),
            (None, None, Some(d)) if !s.described => {
                out.push_str(&format!("# {} = {}\n", s.name(), value(d)))
            }
            (None, None, Some(d)) => out.push_str(&format!("# {} (default: {d})\n", s.name())),
            (None, None, None) => out.push_str(&format!("# {} (unset)\n", s.name())),
        }
    }
    out
}

/// TEXT cut into lines of at most WIDTH characters, at spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split(' ') {
        let last = lines.last_mut().expect("one line at least");
        if !last.is_empty() && last.chars().count() + 1 + word.chars().count() > width {
            lines.push(word.to_owned());
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(word);
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::{check_file, check_section};

    #[test]
    fn the_documented_settings_are_the_declared_ones() {
        check_section("docs/server.md", "settings", &settings_table()).unwrap();
        check_section("docs/server.md", "limits", &limits_table()).unwrap();
        check_file("packaging/server/idforge.toml", &example_toml()).unwrap();
    }

    #[test]
    fn every_setting_has_its_env_and_a_doc() {
        for s in SETTINGS {
            assert_eq!(
                s.env,
                format!("IDFORGE_{}", s.field.to_uppercase()),
                "{}",
                s.field
            );
            assert!(!s.doc_line().is_empty() && !s.doc_line().contains("[default"));
        }
    }

    #[test]
    fn the_example_toml_is_read_as_the_settings_it_shows() {
        let text = example_toml();
        let args: super::super::ServeArgs = toml::from_str(&text).unwrap();
        let c = args.resolve().unwrap();
        assert_eq!(
            c.data_dir.as_deref(),
            Some(std::path::Path::new("/var/lib/idforge"))
        );
        // Uncommented, every default and sample line reads back (the stripe's need --stripe,
        // the TLS files exist only on a real host).
        let all: String = text
            .lines()
            .map(|l| l.strip_prefix("# ").unwrap_or(l))
            .filter(|l| l.contains(" = ") && !l.starts_with("stripe") && !l.starts_with("tls"))
            .map(|l| format!("{l}\n"))
            .collect();
        let args: super::super::ServeArgs = toml::from_str(&all).unwrap();
        args.resolve().unwrap();
    }
}
