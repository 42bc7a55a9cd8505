//! A small tmpfs for full-disk tests: mounted as root, unmounted on drop.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs of a fixed size at a temporary directory.
pub struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size` (as `mount -o size=` takes it, e.g. `2m`); `None`, with a
    /// message, where that cannot be done (not root, no mount command).
    pub fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("skipped: cannot mount a tmpfs here (needs root)");
            return None;
        }
        Some(Tmpfs { dir })
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills what is left of it with a file (written until ENOSPC); returns the file's path.
    pub fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.path().join("filler");
        let mut file = std::fs::File::create(&path).unwrap();
        let block = vec![0u8; 4096];
        while file.write_all(&block).is_ok() {}
        // The last pages too: a write of less than a block may still fit.
        while file.write_all(&block[..64]).is_ok() {}
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}
