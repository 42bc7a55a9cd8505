//! PEM files read with a bound. A TLS setting names a file, and a wrong path (a log, a device)
//! must not be read whole: every TLS file of idforge (the sources' here, the server's listener,
//! the etcd store's) is read through [`read_bounded`].

use std::io::Read;
use std::path::Path;

/// The bytes of the file at `path`, reading at most `max` bytes of it: an I/O error, or one of
/// kind `InvalidData` when the file holds more than `max` bytes.
pub fn read_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(max.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than {max} bytes"),
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use std::io::{ErrorKind, Write};

    use super::read_bounded;

    #[test]
    fn reads_up_to_the_bound_and_refuses_past_it() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(b"0123456789").unwrap();
        assert_eq!(read_bounded(file.path(), 10).unwrap(), b"0123456789");
        let e = read_bounded(file.path(), 9).unwrap_err();
        assert_eq!(
            (e.kind(), e.to_string()),
            (ErrorKind::InvalidData, "larger than 9 bytes".into())
        );
        let gone = file.path().with_extension("gone");
        assert_eq!(
            read_bounded(&gone, 10).unwrap_err().kind(),
            ErrorKind::NotFound
        );
    }
}
