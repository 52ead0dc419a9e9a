//! `staged hook install opencode`: the plugin `.opencode/plugins/staged.js` (from `plugin.js`,
//! with the `staged` binary and the mode filled in) that runs `staged hook opencode` for every
//! edit and blocks when staged cannot run, and the MCP server in the project's `opencode.json`
//! (`mcp.staged`, a `local` server), merged into what is there. opencode allows an MCP tool by
//! default, so `resolve` needs no approval; where its permission config would have asked before
//! an edit, the preview is one only a person may apply (`clients/opencode.rs`).

use std::path::Path;

use serde_json::Value;

use super::{
    InstallError, SERVER, Target,
    doctor::{Check, executable, mcp_command_check, on_path},
    entries::{OpencodeServer, entry_json},
    files::WorkspaceFile,
    object_at,
};
use crate::event::Mode;

/// The plugin, relative to the root.
const PLUGIN: &str = ".opencode/plugins/staged.js";

/// opencode's project config, relative to the root.
const CONFIG: &str = "opencode.json";

/// The plugin's source; `@STAGED@` and `@MODE@` are JSON strings.
const PLUGIN_SOURCE: &str = include_str!("plugin.js");

/// The first line of every plugin staged writes.
const MARK: &str = "// staged's plugin for opencode, written by `staged hook install opencode`.";

/// The plugin that runs `staged` in `mode`.
pub(crate) fn plugin_text(staged: &Path, mode: Mode) -> String {
    let quote = |s: &str| Value::String(s.to_owned()).to_string();
    PLUGIN_SOURCE.replacen("@STAGED@", &quote(&staged.to_string_lossy()), 1).replacen(
        "@MODE@",
        &quote(mode.name()),
        1,
    )
}

/// The binary and mode of a plugin staged wrote, read back.
fn parse_plugin(text: &str) -> Option<(String, Mode)> {
    if !text.starts_with(MARK) {
        return None;
    }
    let value = |name: &str| -> Option<String> {
        let line = text.lines().find_map(|l| l.strip_prefix(&format!("const {name} = ")))?;
        serde_json::from_str::<String>(line.strip_suffix(';')?).ok()
    };
    let mode = match value("MODE")?.as_str() {
        "gate" => Mode::Gate,
        "record" => Mode::Record,
        _ => return None,
    };
    Some((value("STAGED")?, mode))
}

pub(super) fn install(target: &Target, uninstall: bool) -> Result<Vec<String>, InstallError> {
    let plugin = WorkspaceFile::new(&target.root, PLUGIN)?;
    let config_file = WorkspaceFile::new(&target.root, CONFIG)?;
    let mut config = config_file.read_json()?;
    let existing = plugin.read_text()?;
    if let Some(text) = &existing
        && parse_plugin(text).is_none()
    {
        return Err(InstallError::Unreadable {
            path: plugin.path(),
            why: "it is not a plugin staged wrote, so staged leaves it alone".to_owned(),
        });
    }
    plugin.writable()?;
    config_file.writable()?;
    let (plugin_path, config_path) = (plugin.path(), config_file.path());
    let mut lines = Vec::new();
    if uninstall {
        if let Some(servers) = config.get_mut("mcp").and_then(Value::as_object_mut) {
            servers.remove(SERVER);
        }
        config_file.write_json(&config)?;
        plugin.remove()?;
        lines.push(format!("removed staged's plugin {}", plugin_path.display()));
        lines.push(format!("removed the staged MCP server from {}", config_path.display()));
        return Ok(lines);
    }
    let staged = target.staged.to_string_lossy();
    let server =
        entry_json(OpencodeServer { command: [&staged, "mcp"], enabled: true, kind: "local" })?;
    object_at(&mut config, &["mcp"], &config_path)?.insert(SERVER.to_owned(), server);
    config_file.write_json(&config)?;
    plugin.write_text(&plugin_text(&target.hook, target.mode))?;
    lines.push(format!(
        "{} mode: a plugin for edit, write and apply_patch in {}",
        target.mode.name(),
        plugin_path.display()
    ));
    if target.mode == Mode::Gate {
        lines.push(format!(
            "it runs {}; when that cannot run, the plugin blocks the edit and says why",
            target.hook.display()
        ));
    }
    lines.push(format!(
        "the staged MCP server in {} (its tools reach the model as staged_resolve, ...)",
        config_path.display()
    ));
    Ok(lines)
}

/// What `staged doctor` checks for opencode; `None` when staged's plugin is not installed.
pub(super) fn doctor(root: &Path) -> Option<Vec<Check>> {
    let plugin = WorkspaceFile::new(root, PLUGIN).ok()?;
    let text = plugin.read_text().ok()??;
    let mut checks = Vec::new();
    let parsed = parse_plugin(&text);
    checks.push(Check::new(
        format!("opencode: staged's plugin in {}", plugin.path().display()),
        parsed.as_ref().map(|_| ()).ok_or_else(|| {
            "it is not one staged wrote: run `staged hook install opencode`".to_owned()
        }),
    ));
    if let Some((binary, _)) = &parsed {
        let result =
            if binary.contains('/') { executable(Path::new(binary)) } else { on_path(binary) };
        checks.push(Check::new(format!("opencode: the plugin runs {binary}"), result));
    }
    let config_file = WorkspaceFile::new(root, CONFIG).ok()?;
    let server = config_file.read_json().ok().and_then(|c| c.get("mcp")?.get(SERVER).cloned());
    checks.push(Check::new(
        format!("opencode: the staged MCP server in {}", config_file.path().display()),
        match &server {
            Some(server) if server.get("enabled").and_then(Value::as_bool) == Some(false) => {
                Err("it is disabled (\"enabled\": false)".to_owned())
            }
            Some(_) => Ok(()),
            None => Err("it is not there: run `staged hook install opencode`".to_owned()),
        },
    ));
    if let Some(server) = server {
        let command: Vec<String> = server
            .get("command")
            .and_then(Value::as_array)
            .map(|c| c.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        if let Some((first, rest)) = command.split_first() {
            checks.push(mcp_command_check("opencode", first, rest, root));
        }
    }
    Some(checks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_is_read_back() {
        let text = plugin_text(Path::new("/opt/my \"tools\"/staged"), Mode::Record);
        assert_eq!(
            parse_plugin(&text),
            Some(("/opt/my \"tools\"/staged".to_owned(), Mode::Record))
        );
        assert!(text.contains("const STAGED = \"/opt/my \\\"tools\\\"/staged\";"));
        assert_eq!(parse_plugin("export const Mine = async () => ({});"), None);
    }
}
