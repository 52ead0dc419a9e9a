//! The configuration files a command reads: `staged.toml` in the user config directory
//! (always trusted) and at the workspace root (trusted only after `staged trust`; see
//! `staged_plugin::trust`), and which plugins and provider settings they give.
//!
//! This is the one place that knows where the user config directory is
//! (`$XDG_CONFIG_HOME/staged`, else `~/.config/staged` on Linux).

use std::path::{Path, PathBuf};

use anyhow::Context;
use staged_agent::ProvidersConfig;
use staged_plugin::{
    CONFIG_FILE, ConfigOrigin, PluginsConfig, TrustStatus, TrustStore, WorkspaceConfig,
};
use staged_workspace::ConfinedRoot;

/// staged's folder in the user config directory, if the platform has one.
pub(crate) fn user_dir() -> Option<PathBuf> {
    dirs::config_dir().map(|dir| dir.join("staged"))
}

/// The trust record, in the user config directory.
pub(crate) fn trust_store() -> anyhow::Result<TrustStore> {
    let dir = user_dir().context("no user config directory (set XDG_CONFIG_HOME or HOME)")?;
    Ok(TrustStore::new(dir))
}

/// Both `staged.toml` files of a run, read once.
pub(crate) struct Files {
    user: Option<(PathBuf, String)>,
    workspace: WorkspaceConfig,
    trust: TrustStatus,
    /// Set when the trust record could not be read (the workspace is then untrusted).
    trust_error: Option<String>,
}

impl Files {
    /// Reads the user's `staged.toml` and the workspace's (through its handle), and whether
    /// the user trusted the latter.
    pub(crate) fn read(root: &Path) -> anyhow::Result<Files> {
        let user = match user_dir().map(|dir| dir.join(CONFIG_FILE)) {
            Some(path) if path.is_file() => {
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("reading {}", path.display()))?;
                Some((path, text))
            }
            _ => None,
        };
        let workspace = ConfinedRoot::new(root).map_err(|err| anyhow::anyhow!("{err}"))?;
        let workspace =
            WorkspaceConfig::read(&workspace).map_err(|err| anyhow::anyhow!("{err}"))?;
        let (trust, trust_error) = match trust_store()
            .and_then(|store| store.status(&workspace).map_err(|err| anyhow::anyhow!("{err}")))
        {
            Ok(status) => (status, None),
            Err(err) if workspace.text().is_none() => {
                (TrustStatus::NoConfig, Some(err.to_string()))
            }
            Err(err) => (TrustStatus::Untrusted, Some(err.to_string())),
        };
        Ok(Files { user, workspace, trust, trust_error })
    }

    /// The workspace's file and trust state.
    pub(crate) fn workspace(&self) -> &WorkspaceConfig {
        &self.workspace
    }

    /// Whether the user trusted the workspace's file.
    pub(crate) fn trust(&self) -> &TrustStatus {
        &self.trust
    }

    /// The plugins to use: the user's, then the workspace's when trusted. Problems (a bad
    /// table, an untrusted workspace that declares plugins) are returned as one-line
    /// warnings, never errors: the command goes on without those plugins.
    pub(crate) fn plugins(&self) -> (PluginsConfig, Vec<String>) {
        let mut res = PluginsConfig::new();
        let mut warnings = Vec::new();
        if let Some((path, text)) = &self.user {
            match PluginsConfig::parse(&path.display().to_string(), ConfigOrigin::User, text) {
                Ok(plugins) => res.extend(plugins),
                Err(err) => warnings.push(format!("{err}; its plugins were not started")),
            }
        }
        if let Some(text) = self.workspace.text() {
            let path = self.workspace.path().display().to_string();
            match PluginsConfig::parse(&path, ConfigOrigin::Workspace, text) {
                Ok(plugins) if plugins.is_empty() => {}
                Ok(plugins) if self.trust.is_trusted() => res.extend(plugins),
                Ok(plugins) => warnings.push(self.untrusted_warning(&plugins)),
                Err(err) if self.trust.is_trusted() => {
                    warnings.push(format!("{err}; its plugins were not started"));
                }
                Err(_) => {}
            }
        }
        (res, warnings)
    }

    fn untrusted_warning(&self, plugins: &PluginsConfig) -> String {
        let names: Vec<String> = plugins.iter().map(|p| format!("\"{}\"", p.name)).collect();
        let why = match (&self.trust, &self.trust_error) {
            (_, Some(err)) => format!("the trust record could not be read ({err})"),
            (TrustStatus::Changed, None) => "it changed since you trusted it".to_owned(),
            _ => "this workspace is not trusted".to_owned(),
        };
        format!(
            "plugin{} {} in {} not started: {why}; read the file, then run `staged trust` to allow it",
            if names.len() == 1 { "" } else { "s" },
            names.join(", "),
            self.workspace.path().display(),
        )
    }

    /// The providers: built in, then the user's file, then the workspace's (whose endpoint
    /// settings are refused unless the user trusted it).
    pub(crate) fn providers(&self) -> anyhow::Result<ProvidersConfig> {
        let mut config = ProvidersConfig::builtin();
        if let Some((path, text)) = &self.user {
            config.apply_toml(&path.display().to_string(), text)?;
        }
        if let Some(text) = self.workspace.text() {
            let origin = self.workspace.path().display().to_string();
            if self.trust.is_trusted() {
                config.apply_toml(&origin, text)?;
            } else {
                config.apply_untrusted_toml(&origin, text)?;
            }
        }
        Ok(config)
    }
}
