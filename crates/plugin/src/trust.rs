//! Workspace trust: a workspace's `staged.toml` is committed with the repository, so whoever
//! controls the repository controls it. Its `[plugins]` would run programs as soon as
//! `staged mcp` or `staged agent` starts, and its provider endpoints (`base_url`, `headers`,
//! `api_key_env`) could send the user's API key elsewhere. Both take effect only once the user
//! ran `staged trust` in that workspace, which records the file's SHA-256 and the canonical
//! root in the user config directory. A file that changed since is untrusted again.
//!
//! The user config directory's own `staged.toml` is always trusted. The library reads the
//! workspace's file through the workspace's directory handle (never following a symlink) and
//! takes the user config directory as a parameter: only the CLI knows where it is.

use std::{
    collections::BTreeMap,
    io,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use staged_workspace::ConfinedRoot;

use crate::PluginError;

/// The configuration file's name, at the workspace root and in the user config directory.
pub const CONFIG_FILE: &str = "staged.toml";

/// The trust record's file name in the user config directory.
pub(crate) const TRUST_FILE: &str = "trusted-workspaces.json";

/// The largest `staged.toml` staged reads.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// A workspace's `staged.toml` as read once: the bytes that are hashed are the bytes that are
/// parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceConfig {
    root: PathBuf,
    text: Option<String>,
    sha256: Option<String>,
}

impl WorkspaceConfig {
    /// Reads `<root>/staged.toml` through the workspace's handle. A missing file is no
    /// configuration; a symlink, a file over 1 MiB or one that is not UTF-8 is an error.
    pub fn read(workspace: &ConfinedRoot) -> Result<WorkspaceConfig, PluginError> {
        let root = workspace.root().to_path_buf();
        let path = root.join(CONFIG_FILE);
        let fail = |err: &dyn std::fmt::Display| {
            PluginError::Trust(format!("reading {}: {err}", path.display()))
        };
        let bytes = match workspace
            .fs()
            .handle()
            .and_then(|dir| dir.read_limited(CONFIG_FILE, MAX_CONFIG_BYTES))
        {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Ok(WorkspaceConfig { root, text: None, sha256: None });
            }
            Err(err) => return Err(fail(&err)),
        };
        let sha256 = hex(&Sha256::digest(&bytes));
        let text = String::from_utf8(bytes).map_err(|_| fail(&"it is not valid UTF-8"))?;
        Ok(WorkspaceConfig { root, text: Some(text), sha256: Some(sha256) })
    }

    /// A configuration from text, for the tests.
    #[cfg(test)]
    fn from_text(root: &Path, text: Option<&str>) -> WorkspaceConfig {
        WorkspaceConfig {
            root: root.to_path_buf(),
            sha256: text.map(|t| hex(&Sha256::digest(t.as_bytes()))),
            text: text.map(str::to_owned),
        }
    }

    /// The canonical workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file's path, for messages.
    pub fn path(&self) -> PathBuf {
        self.root.join(CONFIG_FILE)
    }

    /// The file's text, when there is one.
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// The SHA-256 of its bytes, in hex.
    pub fn sha256(&self) -> Option<&str> {
        self.sha256.as_deref()
    }
}

/// Whether a workspace's `staged.toml` may take effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustStatus {
    /// The workspace has no `staged.toml`: nothing to trust.
    NoConfig,
    /// The user trusted exactly this file.
    Trusted,
    /// The user never trusted this workspace's file.
    Untrusted,
    /// The user trusted an earlier version of the file.
    Changed,
}

impl TrustStatus {
    /// Whether the file may take effect.
    pub fn is_trusted(&self) -> bool {
        matches!(self, TrustStatus::Trusted)
    }
}

/// The record of trusted workspaces, in the user config directory.
#[derive(Debug, Clone)]
pub struct TrustStore {
    dir: PathBuf,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    version: u32,
    /// Canonical root → the SHA-256 of its trusted `staged.toml`.
    workspaces: BTreeMap<String, TrustedEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
struct TrustedEntry {
    sha256: String,
}

impl TrustStore {
    /// The record kept in `dir` (the CLI passes `<user config dir>/staged`).
    pub fn new(dir: impl Into<PathBuf>) -> TrustStore {
        TrustStore { dir: dir.into() }
    }

    /// The record's path.
    pub fn path(&self) -> PathBuf {
        self.dir.join(TRUST_FILE)
    }

    /// Whether `config` may take effect.
    pub fn status(&self, config: &WorkspaceConfig) -> Result<TrustStatus, PluginError> {
        let Some(sha256) = config.sha256() else { return Ok(TrustStatus::NoConfig) };
        let file = self.load()?;
        Ok(match file.workspaces.get(&key(config.root())) {
            None => TrustStatus::Untrusted,
            Some(entry) if entry.sha256 == sha256 => TrustStatus::Trusted,
            Some(_) => TrustStatus::Changed,
        })
    }

    /// The SHA-256 recorded for `root`, if any.
    pub fn recorded(&self, root: &Path) -> Result<Option<String>, PluginError> {
        Ok(self.load()?.workspaces.remove(&key(root)).map(|entry| entry.sha256))
    }

    /// Trusts `config`'s file as it is now.
    pub fn trust(&self, config: &WorkspaceConfig) -> Result<(), PluginError> {
        let Some(sha256) = config.sha256() else {
            return Err(PluginError::Trust(format!(
                "{} does not exist: there is nothing to trust",
                config.path().display()
            )));
        };
        let mut file = self.load()?;
        file.workspaces.insert(key(config.root()), TrustedEntry { sha256: sha256.to_owned() });
        self.save(&file)
    }

    /// Forgets `root`; returns whether it was trusted.
    pub fn revoke(&self, root: &Path) -> Result<bool, PluginError> {
        let mut file = self.load()?;
        let was = file.workspaces.remove(&key(root)).is_some();
        if was {
            self.save(&file)?;
        }
        Ok(was)
    }

    fn load(&self) -> Result<TrustFile, PluginError> {
        let path = self.path();
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|err| {
                PluginError::Trust(format!("{} is not a trust record: {err}", path.display()))
            }),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(TrustFile::default()),
            Err(err) => Err(PluginError::Trust(format!("reading {}: {err}", path.display()))),
        }
    }

    fn save(&self, file: &TrustFile) -> Result<(), PluginError> {
        let path = self.path();
        let fail = |err: &dyn std::fmt::Display| {
            PluginError::Trust(format!("writing {}: {err}", path.display()))
        };
        std::fs::create_dir_all(&self.dir).map_err(|err| fail(&err))?;
        let text = serde_json::to_string_pretty(&TrustFile {
            version: 1,
            workspaces: file
                .workspaces
                .iter()
                .map(|(k, v)| (k.clone(), TrustedEntry { sha256: v.sha256.clone() }))
                .collect(),
        })
        .map_err(|err| fail(&err))?;
        let temp = self.dir.join(format!(".{TRUST_FILE}.{}.tmp", std::process::id()));
        std::fs::write(&temp, text + "\n").map_err(|err| fail(&err))?;
        std::fs::rename(&temp, &path).map_err(|err| {
            let _ = std::fs::remove_file(&temp);
            fail(&err)
        })
    }
}

/// The record's key for `root`: the path itself when it is UTF-8 (an absolute path, so it
/// begins with `/`), else `bytes:` and the hex of its exact bytes. Two roots never share a
/// key: a lossy form (`\xff` and `\xfe` both read as U+FFFD) would let a second, untrusted
/// root take the first one's trust.
fn key(root: &Path) -> String {
    match root.to_str() {
        Some(text) => text.to_owned(),
        None => format!("bytes:{}", hex(root.as_os_str().as_encoded_bytes())),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn trust_follows_the_file_content_and_can_be_revoked() {
        let config_dir = tempfile::tempdir().unwrap();
        let store = TrustStore::new(config_dir.path().join("staged"));
        let root = Path::new("/work/repo");
        let v1 = WorkspaceConfig::from_text(root, Some("[plugins.a]\ncommand = [\"a\"]\n"));
        let v2 = WorkspaceConfig::from_text(root, Some("[plugins.a]\ncommand = [\"evil\"]\n"));
        assert_eq!(store.status(&v1).unwrap(), TrustStatus::Untrusted);
        store.trust(&v1).unwrap();
        assert_eq!(store.status(&v1).unwrap(), TrustStatus::Trusted);
        assert_eq!(store.status(&v2).unwrap(), TrustStatus::Changed);
        let other = WorkspaceConfig::from_text(Path::new("/work/other"), v1.text());
        assert_eq!(store.status(&other).unwrap(), TrustStatus::Untrusted, "trust is per root");
        assert_eq!(store.recorded(root).unwrap().as_deref(), v1.sha256());
        assert!(store.revoke(root).unwrap());
        assert!(!store.revoke(root).unwrap());
        assert_eq!(store.status(&v1).unwrap(), TrustStatus::Untrusted);
        let none = WorkspaceConfig::from_text(root, None);
        assert_eq!(store.status(&none).unwrap(), TrustStatus::NoConfig);
        assert!(store.trust(&none).unwrap_err().to_string().contains("nothing to trust"));
    }

    #[test]
    fn roots_that_are_not_utf8_never_share_a_record() {
        use std::os::unix::ffi::OsStrExt;
        let config_dir = tempfile::tempdir().unwrap();
        let store = TrustStore::new(config_dir.path().join("staged"));
        let a = Path::new(std::ffi::OsStr::from_bytes(b"/work/lossy\xff"));
        let b = Path::new(std::ffi::OsStr::from_bytes(b"/work/lossy\xfe"));
        let lossy = Path::new("/work/lossy\u{fffd}");
        let text = Some("[plugins.p]\ncommand = [\"sh\", \"tools/p.sh\"]\n");
        store.trust(&WorkspaceConfig::from_text(a, text)).unwrap();
        assert!(store.status(&WorkspaceConfig::from_text(a, text)).unwrap().is_trusted());
        assert_eq!(
            store.status(&WorkspaceConfig::from_text(b, text)).unwrap(),
            TrustStatus::Untrusted
        );
        assert_eq!(
            store.status(&WorkspaceConfig::from_text(lossy, text)).unwrap(),
            TrustStatus::Untrusted
        );
        assert!(!store.revoke(b).unwrap());
        assert!(store.revoke(a).unwrap());
    }

    #[test]
    fn the_file_is_read_through_the_handle_and_a_symlink_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ws = ConfinedRoot::new(dir.path()).unwrap();
        assert_eq!(WorkspaceConfig::read(&ws).unwrap().text(), None);
        std::fs::write(dir.path().join(CONFIG_FILE), "x = 1\n").unwrap();
        let config = WorkspaceConfig::read(&ws).unwrap();
        assert_eq!(config.text(), Some("x = 1\n"));
        assert_eq!(config.sha256().unwrap().len(), 64);
        std::fs::remove_file(dir.path().join(CONFIG_FILE)).unwrap();
        let outside = tempfile::NamedTempFile::new().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join(CONFIG_FILE)).unwrap();
        assert!(WorkspaceConfig::read(&ws).is_err());
    }
}
