//! The URL sqlx is given for an SQLite file, from the file's path: one spelling per platform,
//! whatever the user wrote (`sqlite://C:\dir\ids.db`, `sqlite:C:/dir/ids.db`, a relative path),
//! used by the `sqlite:` segment source and the server's `--data-dir`.

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};

/// What of a path is escaped: sqlx reads the path up to `?` and percent-decodes it, so `%`, `?`
/// and `#` are written as escapes (and so is every byte that is not printable ASCII), and the
/// file opened is the one named, whatever the name holds.
const ESCAPED: &AsciiSet = &CONTROLS.add(b'%').add(b'?').add(b'#').add(b' ');

/// The sqlx URL (no query) of the SQLite file at `path`, a path as the platform reads it;
/// `windows` is `cfg!(windows)` outside tests. Windows' paths (`C:\data`, `data\x`) go as
/// `sqlite:C:/data`: after `sqlite://` sqlx's URL parsing takes them for a host name ("invalid
/// domain character"), and SQLite on Windows takes `/` for `\`. A `file:`-style `/C:/data` loses
/// its first `/` there. Elsewhere `\` is an ordinary byte of a name and the URL is
/// `sqlite://path`.
pub fn sqlite_url(path: &str, windows: bool) -> String {
    if windows {
        let slashed = path.replace('\\', "/");
        let bytes = slashed.as_bytes();
        let drive_after_slash = bytes.len() >= 3
            && bytes[0] == b'/'
            && bytes[1].is_ascii_alphabetic()
            && bytes[2] == b':';
        let slashed = if drive_after_slash {
            &slashed[1..]
        } else {
            &slashed[..]
        };
        format!("sqlite:{}", utf8_percent_encode(slashed, ESCAPED))
    } else {
        format!("sqlite://{}", utf8_percent_encode(path, ESCAPED))
    }
}

#[cfg(all(test, feature = "sql"))]
mod tests {
    use super::*;
    use std::path::Path;
    use std::str::FromStr;

    #[test]
    fn the_url_names_the_file_whatever_its_path_holds() {
        for dir in [
            "idforge-data",
            "/tmp/a%41b",
            "/tmp/q?mode=ro",
            "/tmp/h#x",
            "./s p/é 1",
            "a%2Fb",
            // Windows' spellings (the test's Linux reads them as plain names, as sqlx does).
            "C:\\Users\\me\\idforge data",
            ".\\data",
        ] {
            let path = format!("{dir}/idforge.db");
            let url = sqlite_url(&path, false);
            let opts = sqlx::sqlite::SqliteConnectOptions::from_str(&url).unwrap();
            assert_eq!(opts.get_filename(), Path::new(&path), "{url}");
        }
    }

    #[test]
    fn windows_paths_go_as_sqlite_colon_with_slashes() {
        for (path, file) in [
            (
                "C:\\Users\\me\\idforge data\\idforge.db",
                "C:/Users/me/idforge data/idforge.db",
            ),
            ("data dir\\idforge.db", "data dir/idforge.db"),
            (".\\d%41?#\\idforge.db", "./d%41?#/idforge.db"),
            ("/C:/dir/leaf.db", "C:/dir/leaf.db"),
            ("C:\\tmp\\x/leaf.db", "C:/tmp/x/leaf.db"),
        ] {
            let url = sqlite_url(path, true);
            assert!(
                url.starts_with("sqlite:") && !url.starts_with("sqlite://"),
                "{url}"
            );
            let opts = sqlx::sqlite::SqliteConnectOptions::from_str(&url).unwrap();
            assert_eq!(opts.get_filename(), Path::new(file), "{url}");
            // The server and the SQL source open it through sqlx's Any driver, which parses a
            // URL first.
            sqlx::any::AnyConnectOptions::from_str(&url).unwrap();
        }
    }
}
