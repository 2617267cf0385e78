//! Crash-safe whole-file replacement and directory syncing.
//!
//! [`write_atomic`] writes a temporary file in the target's directory, syncs
//! it, renames it over the target and syncs the directory, so after a crash
//! the target holds either the old or the new contents, never a mix.
//! Temporary files are named `.<target name>.tmp.<pid>.<n>`; a crash can
//! leave one behind, which [`remove_stale_temp_files`] deletes.

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::{IoContext, Result, StorageError};
use super::io;

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Atomically replaces (or creates) `path` with `bytes`: temp file in the same
/// directory, fsync, rename over `path`, fsync the directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    replace_file(path, bytes, true)
}

/// fsyncs a directory so that entries created, renamed or removed in it are
/// durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| io::sync_all(&d, dir)).ctx(dir)
}

/// Deletes temporary files left in `path`'s directory by interrupted
/// [`write_atomic`] calls for `path`; returns how many were removed.
///
/// Must not run concurrently with a `write_atomic` to the same path.
pub fn remove_stale_temp_files(path: &Path) -> Result<usize> {
    let (dir, name) = split(path)?;
    let prefix = format!(".{name}.tmp.");
    let mut removed = 0;
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(StorageError::io(&dir, e)),
    };
    for entry in entries {
        let entry = entry.ctx(&dir)?;
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let p = entry.path();
            fs::remove_file(&p).ctx(&p)?;
            removed += 1;
        }
    }
    if removed > 0 {
        sync_dir(&dir)?;
    }
    Ok(removed)
}

/// True if `file_name` looks like a temporary file of [`write_atomic`].
pub(crate) fn is_temp_file_name(file_name: &str) -> bool {
    file_name.starts_with('.') && file_name.contains(".tmp.")
}

/// [`write_atomic`] with the final directory sync optional, for callers that
/// sync the directory themselves after further changes.
pub(crate) fn replace_file(path: &Path, bytes: &[u8], sync_directory: bool) -> Result<()> {
    let (dir, name) = split(path)?;
    let tmp = dir.join(format!(
        ".{name}.tmp.{}.{}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| -> Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .ctx(&tmp)?;
        io::write_all(&mut f, &tmp, bytes).ctx(&tmp)?;
        io::sync_all(&f, &tmp).ctx(&tmp)?;
        fs::rename(&tmp, path).ctx(path)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    if sync_directory {
        sync_dir(&dir)?;
    }
    Ok(())
}

fn split(path: &Path) -> Result<(PathBuf, String)> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| {
            StorageError::InvalidArgument(format!("{} has no usable file name", path.display()))
        })?
        .to_owned();
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("doc.json");
        write_atomic(&target, b"one").unwrap();
        write_atomic(&target, b"two, longer").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"two, longer");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec!["doc.json".to_string()]);
    }

    #[test]
    fn stale_temp_files_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("doc.json");
        fs::write(dir.path().join(".doc.json.tmp.1.2"), b"junk").unwrap();
        fs::write(dir.path().join("other"), b"keep").unwrap();
        assert!(is_temp_file_name(".doc.json.tmp.1.2"));
        assert_eq!(remove_stale_temp_files(&target).unwrap(), 1);
        assert!(dir.path().join("other").exists());
        assert_eq!(remove_stale_temp_files(&target).unwrap(), 0);
    }

    #[test]
    fn missing_directory_is_an_io_error_with_path() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("nope").join("doc.json");
        let err = write_atomic(&target, b"x").unwrap_err();
        assert!(matches!(err, StorageError::Io { .. }));
        assert!(err.to_string().contains("nope"));
    }
}
