//! Making a rename survive a power loss.

use std::fs::File;
use std::io;
use std::path::Path;

/// Makes the rename that put a file at `path` durable. Unix: fsync of the folder, whose entry
/// the rename changed (a bare file name's folder is the current one). Windows: folders cannot
/// be opened for a flush, and NTFS keeps renames in its metadata journal, which a
/// `FlushFileBuffers` of the renamed file writes out up to and including the rename.
pub(crate) fn sync_rename(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        // FlushFileBuffers needs a handle with write access.
        File::options().append(true).open(path)?.sync_all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renamed_file_syncs_and_a_missing_folder_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, b"x").unwrap();
        std::fs::rename(&a, &b).unwrap();
        sync_rename(&b).unwrap();
        assert_eq!(std::fs::read(&b).unwrap(), b"x");
        // A missing folder is an error, not a silent success.
        assert!(sync_rename(&dir.path().join("gone").join("c")).is_err());
    }
}
