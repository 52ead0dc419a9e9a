//! The files an installer reads and writes: a workspace's through `staged-fs` (never through a
//! symlink, never outside the root), a client's home's only when they are regular files.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use staged_fs::{NewFileMode, RelPath, Root};

use super::InstallError;

/// A file of the workspace, read and written only through `staged-fs`.
pub(crate) struct WorkspaceFile {
    root: PathBuf,
    rel: RelPath,
}

impl WorkspaceFile {
    pub(crate) fn new(root: &Path, rel: &str) -> Result<WorkspaceFile, InstallError> {
        let rel = RelPath::new(rel).map_err(|err| InstallError::Missing(err.to_string()))?;
        Ok(WorkspaceFile { root: root.to_path_buf(), rel })
    }

    /// Its path, for messages.
    pub(crate) fn path(&self) -> PathBuf {
        self.root.join(self.rel.as_path())
    }

    fn open_root(&self) -> std::io::Result<Root> {
        Root::open(&self.root)
    }

    /// Its JSON object; `{}` when it is not there.
    pub(crate) fn read_json(&self) -> Result<Value, InstallError> {
        let read = self.open_root().and_then(|root| root.read(&self.rel));
        let bytes = match read {
            Ok(bytes) => Some(bytes),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => {
                return Err(InstallError::Unreadable { path: self.path(), why: why(&err) });
            }
        };
        parse_json(&self.path(), bytes)
    }

    /// Fails unless every folder on its way is a real folder inside the root and it is a
    /// regular file or not there.
    pub(crate) fn writable(&self) -> Result<(), InstallError> {
        let fail = |err: std::io::Error| InstallError::Write { path: self.path(), why: why(&err) };
        let root = self.open_root().map_err(fail)?;
        let Some(parent) = self.rel.parent() else { return Ok(()) };
        match root.dir(Some(&parent)) {
            Ok(dir) => match dir.entry_metadata(self.rel.file_name()).map_err(fail)? {
                Some(meta) if !meta.is_file() => Err(InstallError::Write {
                    path: self.path(),
                    why: if meta.is_symlink() {
                        "it is a symlink, which staged does not write through".to_owned()
                    } else {
                        "it is not a regular file".to_owned()
                    },
                }),
                _ => Ok(()),
            },
            // Made when written.
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(fail(err)),
        }
    }

    /// Writes `value` (atomically, keeping the file's permission bits).
    pub(crate) fn write_json(&self, value: &Value) -> Result<(), InstallError> {
        let mut text = serde_json::to_string_pretty(value)
            .map_err(|err| InstallError::Write { path: self.path(), why: err.to_string() })?;
        text.push('\n');
        self.write_text(&text)
    }

    /// Its text; `None` when it is not there.
    pub(crate) fn read_text(&self) -> Result<Option<String>, InstallError> {
        match self.open_root().and_then(|root| root.read(&self.rel)) {
            Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| InstallError::Unreadable {
                path: self.path(),
                why: "it is not UTF-8 text".to_owned(),
            }),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(InstallError::Unreadable { path: self.path(), why: why(&err) }),
        }
    }

    /// Removes it (never through a symlink); nothing when it is not there.
    pub(crate) fn remove(&self) -> Result<(), InstallError> {
        let fail = |err: std::io::Error| InstallError::Write { path: self.path(), why: why(&err) };
        let root = self.open_root().map_err(fail)?;
        let dir = match root.dir(self.rel.parent().as_ref()) {
            Ok(dir) => dir,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(err) => return Err(fail(err)),
        };
        match dir.remove_file(self.rel.file_name()) {
            Ok(()) => Ok(()),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(fail(err)),
        }
    }

    /// Writes `text` (atomically, keeping the file's permission bits).
    pub(crate) fn write_text(&self, text: &str) -> Result<(), InstallError> {
        let fail = |err: std::io::Error| InstallError::Write { path: self.path(), why: why(&err) };
        let root = self.open_root().map_err(fail)?;
        let dir = match self.rel.parent() {
            Some(parent) => root.create_dir_all(&parent).map_err(fail)?,
            None => root.handle().map_err(fail)?,
        };
        let name = self.rel.file_name();
        let mode = match dir.entry_metadata(name).map_err(fail)? {
            Some(meta) if meta.is_file() => dir.file_mode(name).map_err(fail)? & 0o777,
            Some(_) => return self.writable(),
            None => 0o644,
        };
        dir.write_replace(name, text.as_bytes(), &NewFileMode::Mode(mode)).map_err(fail)
    }
}

/// What is wrong with a workspace file, in words.
pub(super) fn why(err: &std::io::Error) -> String {
    let symlink = [rustix::io::Errno::LOOP, rustix::io::Errno::NOTDIR]
        .iter()
        .any(|errno| err.raw_os_error() == Some(errno.raw_os_error()));
    if symlink {
        return "it is a symlink (or is reached through one), which staged does not follow"
            .to_owned();
    }
    match err.kind() {
        std::io::ErrorKind::InvalidInput => "it is not a regular file".to_owned(),
        // cap-std's own refusal to leave the root (a real EACCES carries its errno).
        std::io::ErrorKind::PermissionDenied if err.raw_os_error().is_none() => {
            "it is reached through a symlink that leads outside the workspace, which staged does not follow"
                .to_owned()
        }
        _ => err.to_string(),
    }
}

/// Refuses anything at `path` that is not a regular file (a FIFO would block the read).
pub(super) fn regular_or_absent(path: &Path) -> Result<(), InstallError> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => Err(InstallError::Unreadable {
            path: path.to_path_buf(),
            why: "it is not a regular file".to_owned(),
        }),
        _ => Ok(()),
    }
}

pub(crate) fn read_json(path: &Path) -> Result<Value, InstallError> {
    regular_or_absent(path)?;
    match std::fs::read(path) {
        Ok(bytes) => parse_json(path, Some(bytes)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => parse_json(path, None),
        Err(err) => {
            Err(InstallError::Unreadable { path: path.to_path_buf(), why: err.to_string() })
        }
    }
}

/// The JSON object in `bytes` (read from `path`); `{}` for no file or blank space.
pub(crate) fn parse_json(path: &Path, bytes: Option<Vec<u8>>) -> Result<Value, InstallError> {
    match bytes {
        None => Ok(Value::Object(Map::new())),
        Some(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Ok(Value::Object(Map::new())),
        Some(bytes) => {
            let value: Value =
                serde_json::from_slice(&bytes).map_err(|err| InstallError::Unreadable {
                    path: path.to_path_buf(),
                    why: format!("it is not valid JSON ({err})"),
                })?;
            if value.is_object() {
                Ok(value)
            } else {
                Err(InstallError::Unreadable {
                    path: path.to_path_buf(),
                    why: "it is not a JSON object".to_owned(),
                })
            }
        }
    }
}

pub(crate) fn write_json(path: &Path, value: &Value) -> Result<(), InstallError> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|err| InstallError::Write { path: path.to_path_buf(), why: err.to_string() })?;
    text.push('\n');
    write_text(path, &text)
}

/// Writes `text` to `path` through a temp file and a rename, keeping the file's mode.
pub(super) fn write_text(path: &Path, text: &str) -> Result<(), InstallError> {
    use std::os::unix::fs::PermissionsExt;
    let fail = |err: std::io::Error| InstallError::Write {
        path: path.to_path_buf(),
        why: err.to_string(),
    };
    let dir = path
        .parent()
        .ok_or_else(|| InstallError::Missing(format!("{} has no folder", path.display())))?;
    std::fs::create_dir_all(dir).map_err(fail)?;
    let mode = std::fs::metadata(path).map(|m| m.permissions().mode()).unwrap_or(0o644);
    let temp = dir.join(format!(
        ".{}.staged-{}.tmp",
        path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        std::process::id()
    ));
    std::fs::write(&temp, text).map_err(fail)?;
    std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(mode)).map_err(fail)?;
    std::fs::rename(&temp, path).map_err(|err| {
        let _ = std::fs::remove_file(&temp);
        fail(err)
    })
}
