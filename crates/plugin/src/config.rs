//! `[plugins.NAME]` tables of `staged.toml`: which MCP servers staged starts as plugins, how,
//! and for how long it waits on each call.
//!
//! The shape is fixed by the plugin protocol (`PROTOCOL.md`):
//!
//! ```toml
//! [plugins.rename]
//! command = ["python3", "tools/rename.py"]   # run from the workspace root
//! env = { KEY = "value" }                    # optional
//! timeout_ms = 30000                         # optional, per call
//! ```
//!
//! Other tables of the file (`[agent]`, `[providers.*]`) belong to other readers and are
//! ignored here. This module never reads files: the caller hands in each file's text, and
//! decides (see [`crate::trust`]) whether a workspace's file may add plugins at all.

use std::{collections::BTreeMap, time::Duration};

use serde::Deserialize;

use crate::PluginError;

/// How long staged waits for a plugin's answer (start-up included) unless `timeout_ms` says.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Where a plugin was declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigOrigin {
    /// The user config directory's `staged.toml`: always trusted.
    User,
    /// The workspace root's `staged.toml`: used only once the user trusted that file.
    Workspace,
}

/// One configured plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginConfig {
    /// The name of its `[plugins.NAME]` table.
    pub name: String,
    /// The program and its arguments, run from the workspace root.
    pub command: Vec<String>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
    /// How long one call (and the start-up) may take.
    pub timeout: Duration,
    /// Which file declared it.
    pub origin: ConfigOrigin,
}

impl PluginConfig {
    /// The command as one shell-like line, for messages.
    pub fn command_line(&self) -> String {
        self.command.join(" ")
    }
}

/// The plugins of a run: the user's, then the (trusted) workspace's, which replace a user
/// plugin of the same name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginsConfig {
    plugins: BTreeMap<String, PluginConfig>,
}

#[derive(Debug, Deserialize)]
struct FileToml {
    #[serde(default)]
    plugins: BTreeMap<String, PluginToml>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PluginToml {
    command: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    timeout_ms: Option<u64>,
}

impl PluginsConfig {
    /// No plugins.
    pub fn new() -> Self {
        Self::default()
    }

    /// The `[plugins]` tables of one `staged.toml` (`origin_name` names the file in errors).
    ///
    /// ```
    /// use staged_plugin::{ConfigOrigin, PluginsConfig};
    /// let text = "[plugins.rename]\ncommand = [\"python3\", \"tools/rename.py\"]\ntimeout_ms = 5000\n";
    /// let plugins = PluginsConfig::parse("staged.toml", ConfigOrigin::Workspace, text).unwrap();
    /// assert_eq!(plugins.get("rename").unwrap().command_line(), "python3 tools/rename.py");
    /// ```
    pub fn parse(
        origin_name: &str,
        origin: ConfigOrigin,
        text: &str,
    ) -> Result<PluginsConfig, PluginError> {
        let invalid =
            |message: String| PluginError::Config { origin: origin_name.to_owned(), message };
        let file: FileToml = toml::from_str(text).map_err(|err| invalid(err.to_string()))?;
        let mut res = PluginsConfig::new();
        for (name, entry) in file.plugins {
            if !is_plain_name(&name) {
                return Err(invalid(format!(
                    "plugin name \"{name}\" must be 1 to 64 letters, digits, \"_\" or \"-\""
                )));
            }
            if entry.command.first().is_none_or(|program| program.is_empty()) {
                return Err(invalid(format!(
                    "[plugins.{name}] command must name a program, e.g. [\"python3\", \"tools/{name}.py\"]"
                )));
            }
            // A user plugin runs in every workspace, from its root: a relative program path
            // would run whatever that workspace holds there, trusted or not.
            let program = &entry.command[0];
            if origin == ConfigOrigin::User && program.contains('/') && !program.starts_with('/') {
                return Err(invalid(format!(
                    "[plugins.{name}] command: a plugin of the user config runs in every workspace, so its program must be an absolute path or a name on PATH, not {program:?}"
                )));
            }
            let timeout = match entry.timeout_ms {
                None => DEFAULT_TIMEOUT,
                Some(0) => {
                    return Err(invalid(format!("[plugins.{name}] timeout_ms must be at least 1")));
                }
                Some(ms) => Duration::from_millis(ms),
            };
            res.plugins.insert(
                name.clone(),
                PluginConfig { name, command: entry.command, env: entry.env, timeout, origin },
            );
        }
        Ok(res)
    }

    /// Adds `later`'s plugins, replacing those of the same name.
    pub fn extend(&mut self, later: PluginsConfig) {
        self.plugins.extend(later.plugins);
    }

    /// The plugin named `name`.
    pub fn get(&self, name: &str) -> Option<&PluginConfig> {
        self.plugins.get(name)
    }

    /// Every plugin, by name.
    pub fn iter(&self) -> impl Iterator<Item = &PluginConfig> {
        self.plugins.values()
    }

    /// Whether no plugin is configured.
    pub fn is_empty(&self) -> bool {
        self.plugins.is_empty()
    }

    /// How many plugins are configured.
    pub fn len(&self) -> usize {
        self.plugins.len()
    }
}

/// Names of plugins and tools: what every model provider accepts as a tool name.
pub(crate) fn is_plain_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_issue_shape_parses_and_other_tables_are_ignored() {
        let text = r#"
            [agent]
            provider = "anthropic"

            [plugins.rename]
            command = ["python3", "tools/rename.py"]
            env = { KEY = "value" }
            timeout_ms = 30000

            [plugins.regex]
            command = ["node", "tools/regex.js"]
        "#;
        let config = PluginsConfig::parse("staged.toml", ConfigOrigin::Workspace, text).unwrap();
        let rename = config.get("rename").unwrap();
        assert_eq!(rename.command, ["python3", "tools/rename.py"]);
        assert_eq!(rename.env.get("KEY").map(String::as_str), Some("value"));
        assert_eq!(rename.timeout, Duration::from_millis(30_000));
        assert_eq!(config.get("regex").unwrap().timeout, DEFAULT_TIMEOUT);
        assert_eq!(config.len(), 2);
    }

    #[test]
    fn bad_tables_name_the_problem() {
        let err = |text: &str| {
            PluginsConfig::parse("staged.toml", ConfigOrigin::User, text).unwrap_err().to_string()
        };
        assert_eq!(
            err("[plugins.x]\ncommand = []"),
            "staged.toml: [plugins.x] command must name a program, e.g. [\"python3\", \"tools/x.py\"]"
        );
        assert_eq!(
            err("[plugins.x]\ncommand = [\"a\"]\ntimeout_ms = 0"),
            "staged.toml: [plugins.x] timeout_ms must be at least 1"
        );
        assert!(err("[plugins.x]\ncmd = [\"a\"]").contains("unknown field `cmd`"));
        assert!(err("[plugins.\"a b\"]\ncommand = [\"a\"]").contains("plugin name \"a b\""));
        assert!(err("[plugins.x]\ncommand = [\"./tools/x\"]").contains("must be an absolute path"));
        let ws =
            PluginsConfig::parse("w", ConfigOrigin::Workspace, "[plugins.x]\ncommand = [\"./x\"]");
        assert!(ws.is_ok(), "a workspace plugin may run the workspace's own programs");
    }

    #[test]
    fn a_later_file_replaces_a_plugin_of_the_same_name() {
        let user = PluginsConfig::parse("u", ConfigOrigin::User, "[plugins.p]\ncommand = [\"a\"]")
            .unwrap();
        let ws =
            PluginsConfig::parse("w", ConfigOrigin::Workspace, "[plugins.p]\ncommand = [\"b\"]")
                .unwrap();
        let mut all = user;
        all.extend(ws);
        assert_eq!(all.get("p").unwrap().command, ["b"]);
        assert_eq!(all.get("p").unwrap().origin, ConfigOrigin::Workspace);
    }
}
