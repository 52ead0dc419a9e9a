//! `staged trust [--show|--revoke]`: trust this workspace's `staged.toml`, so its plugins
//! start and its provider endpoint settings apply. The trust is the file's SHA-256 and the
//! canonical root, recorded in the user config directory: any change to the file untrusts it.

use serde::Serialize;
use staged_plugin::{ConfigOrigin, PluginsConfig, TrustStatus};

use crate::{
    args::{GlobalArgs, TrustArgs},
    config::{Files, trust_store},
    context,
    exit::Exit,
    output::Output,
};

pub(crate) fn run(global: &GlobalArgs, args: &TrustArgs, out: &Output) -> anyhow::Result<Exit> {
    let root = context::workspace_root(global)?;
    let files = Files::read(&root)?;
    let config = files.workspace();
    let store = trust_store()?;
    let path = config.path().display().to_string();
    if args.revoke {
        let was = store.revoke(config.root()).map_err(|err| anyhow::anyhow!("{err}"))?;
        if out.json {
            out.json_line(&Revoked { revoked: was, root: &config.root().to_string_lossy() })?;
        } else if was {
            out.line(&format!(
                "No longer trusting {path}: its plugins and provider endpoint settings are ignored."
            ))?;
        } else {
            out.line(&format!("{path} was not trusted; nothing changed."))?;
        }
        return Ok(Exit::Success);
    }
    if args.show {
        let status = match files.trust() {
            TrustStatus::NoConfig => "no-config",
            TrustStatus::Trusted => "trusted",
            TrustStatus::Untrusted => "untrusted",
            TrustStatus::Changed => "changed",
        };
        if out.json {
            out.json_line(&Shown {
                config: &path,
                root: &config.root().to_string_lossy(),
                sha256: config.sha256(),
                status,
            })?;
        } else {
            let text = match files.trust() {
                TrustStatus::NoConfig => {
                    format!("{path} does not exist: there is nothing to trust.")
                }
                TrustStatus::Trusted => {
                    format!("{path} is trusted (sha256 {}).", config.sha256().unwrap_or_default())
                }
                TrustStatus::Untrusted => format!(
                    "{path} is not trusted: its plugins are not started and its provider endpoint settings are refused. Read it, then run `staged trust`."
                ),
                TrustStatus::Changed => format!(
                    "{path} changed since you trusted it, so it is not trusted. Read it, then run `staged trust` again."
                ),
            };
            out.line(&text)?;
        }
        return Ok(Exit::Success);
    }
    let Some(text) = config.text() else {
        anyhow::bail!("{path} does not exist: there is nothing to trust");
    };
    // Refuse to record a file that does not parse: the user would trust something staged
    // then ignores.
    let plugins = PluginsConfig::parse(&path, ConfigOrigin::Workspace, text)
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    store.trust(config).map_err(|err| anyhow::anyhow!("{err}"))?;
    if out.json {
        out.json_line(&Trusted {
            config: &path,
            root: &config.root().to_string_lossy(),
            sha256: config.sha256(),
        })?;
        return Ok(Exit::Success);
    }
    out.line(&format!(
        "Trusted {path} (sha256 {}). Any change to it untrusts it again.",
        config.sha256().unwrap_or_default()
    ))?;
    for plugin in plugins.iter() {
        out.line(&format!("  plugin \"{}\" runs: {}", plugin.name, plugin.command_line()))?;
    }
    Ok(Exit::Success)
}

// The `--json` shapes, their fields in the order they are printed (by name).

/// `trust --revoke --json`.
#[derive(Serialize)]
struct Revoked<'a> {
    revoked: bool,
    root: &'a str,
}

/// `trust --show --json`.
#[derive(Serialize)]
struct Shown<'a> {
    config: &'a str,
    root: &'a str,
    sha256: Option<&'a str>,
    status: &'static str,
}

/// `trust --json`.
#[derive(Serialize)]
struct Trusted<'a> {
    config: &'a str,
    root: &'a str,
    sha256: Option<&'a str>,
}
