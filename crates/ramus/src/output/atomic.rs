//! Atomic file output: a file is written under a temporary name in its own folder and
//! renamed over the target, so that a reader (or a crash, a full disk, a SIGKILL) never
//! sees a half-written file — only the old one or the new one.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Writes `bytes` to `path` atomically: to `.<name>.tmp-<pid>` in the same folder, flushed
/// to disk, then renamed over `path`. On any failure the temporary file is removed and
/// `path` is left as it was.
pub fn write_atomic(path: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
    let path = path.as_ref();
    let tmp = temporary_name(path)?;
    let result = (|| -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        // Make the rename itself durable (best effort: not every file system allows
        // opening a directory).
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        Error::io("writing", path, e)
    })
}

/// The temporary name [`write_atomic`] uses for `path`.
fn temporary_name(path: &Path) -> Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| {
        Error::io("writing", path, std::io::Error::new(std::io::ErrorKind::InvalidInput, "the path names no file"))
    })?;
    let mut tmp = std::ffi::OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".tmp-{}", std::process::id()));
    Ok(path.with_file_name(tmp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("ramus-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.txt");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"second");
        let names: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "only the target remains: {names:?}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_write_names_the_path_and_keeps_nothing() {
        let path = Path::new("/nonexistent-ramus-dir/x.txt");
        let e = write_atomic(path, b"x").unwrap_err();
        assert!(e.to_string().contains("/nonexistent-ramus-dir/x.txt"), "{e}");
    }
}
