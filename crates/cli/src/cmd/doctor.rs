//! `staged doctor`: whether the installed hooks and MCP servers will work, one line per check
//! (`ok`, `warn`, `FAIL`, and `note` for how the gate reads a client's permissions).

use staged_hooks::{Client, install};

use crate::{args::GlobalArgs, cmd::hook::homes, context, exit::Exit, output::Output};

pub(crate) fn run(global: &GlobalArgs, out: &Output) -> anyhow::Result<Exit> {
    let root = context::workspace_root(global)?;
    let homes = homes();
    let mut failed = false;
    let mut any = false;
    for (client, name, install_line) in [
        (Client::ClaudeCode, "Claude Code", "staged hook install claude-code"),
        (Client::Codex, "Codex", "staged hook install codex"),
        (Client::QwenCode, "Qwen Code", "staged hook install qwen-code"),
        (Client::GeminiCli, "Gemini CLI", "staged hook install gemini-cli"),
        (Client::OpenCode, "opencode", "staged hook install opencode"),
        (Client::Cursor, "Cursor", "staged hook install cursor"),
        (Client::Copilot, "Copilot CLI", "staged hook install copilot"),
        (Client::Cline, "Cline", "staged hook install cline"),
    ] {
        match install::doctor(client, &root, &homes) {
            None => out.line(&format!(
                "--   {name}: staged's hooks are not installed (`{install_line}`)"
            ))?,
            Some(checks) => {
                any = true;
                for check in checks {
                    match check.result {
                        Ok(()) => out.line(&format!("ok   {}", check.what))?,
                        Err(why) if check.warning => {
                            out.line(&format!("warn {}: {why}", check.what))?
                        }
                        Err(why) => {
                            failed = true;
                            out.line(&format!("FAIL {}: {why}", check.what))?;
                        }
                    }
                }
                let reading = staged_hooks::permission_doctor_line_for(client, &root, &homes);
                out.line(&format!("note {reading}"))?;
            }
        }
    }
    if !any {
        out.line("FAIL no client has staged's hooks installed here")?;
    }
    Ok(if failed || !any { Exit::ToolError } else { Exit::Success })
}
