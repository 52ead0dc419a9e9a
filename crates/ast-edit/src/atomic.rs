//! Writing one file safely: a temp file in the same directory, fsync, rename over the target,
//! fsync the directory. The file keeps its permissions. A crash leaves the old file or the new
//! one, never a mix (at worst a stray temp file, which `recover` or the next write ignores).

use std::{
    fs::{File, OpenOptions},
    io::Write,
    path::{Path, PathBuf},
};

use crate::AstEditError;

/// The temp file used to replace `target`: `.<name>.staged-<id>.tmp` beside it.
pub(crate) fn temp_path(target: &Path, id: &str) -> PathBuf {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    target.with_file_name(format!(".{name}.staged-{id}.tmp"))
}

/// Writes `contents` to a fresh `temp`, with `target`'s permissions, and fsyncs it.
pub(crate) fn write_temp(target: &Path, temp: &Path, contents: &[u8]) -> Result<(), AstEditError> {
    let fail = |err: std::io::Error| AstEditError::Write {
        path: target.to_path_buf(),
        message: err.to_string(),
    };
    let _ = std::fs::remove_file(temp);
    let mut file = OpenOptions::new().write(true).create_new(true).open(temp).map_err(fail)?;
    file.write_all(contents).map_err(fail)?;
    if let Ok(meta) = std::fs::metadata(target) {
        file.set_permissions(meta.permissions()).map_err(fail)?;
    }
    file.sync_all().map_err(fail)?;
    Ok(())
}

/// Fsyncs a directory so that renames in it are durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), AstEditError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|err| AstEditError::Write { path: dir.to_path_buf(), message: err.to_string() })
}

/// Renames `temp` over `target`.
pub(crate) fn replace(temp: &Path, target: &Path) -> Result<(), AstEditError> {
    std::fs::rename(temp, target)
        .map_err(|err| AstEditError::Write { path: target.to_path_buf(), message: err.to_string() })
}

/// Replaces `target` with `contents` atomically, keeping its permissions.
///
/// # Errors
/// [`AstEditError::Write`] naming the file; the target is then unchanged.
pub fn write_atomic(target: &Path, contents: &[u8]) -> Result<(), AstEditError> {
    let temp = temp_path(target, &unique_id());
    if let Err(err) = write_temp(target, &temp, contents) {
        let _ = std::fs::remove_file(&temp);
        return Err(err);
    }
    if let Err(err) = replace(&temp, target) {
        let _ = std::fs::remove_file(&temp);
        return Err(err);
    }
    match target.parent() {
        Some(dir) => sync_dir(dir),
        None => Ok(()),
    }
}

/// A process-unique id: pid, time and a counter.
pub(crate) fn unique_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{nanos}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}
