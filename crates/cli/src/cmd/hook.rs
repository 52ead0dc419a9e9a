//! `staged hook claude-code|codex`, the hooks the clients run (one event on stdin, the reply on
//! stdout, notes on stderr, always exit 0 so the client reads the reply), `staged hook install`,
//! and `staged doctor`.

use std::{
    io::{Read, Write},
    path::PathBuf,
};

use anyhow::Context;
use staged_hooks::{Client, Mode, install};

use crate::{
    args::{GlobalArgs, HookArgs, HookClientArg, HookCommand, HookModeArg},
    context,
    exit::Exit,
    output::Output,
};

pub(crate) fn run(global: &GlobalArgs, args: &HookArgs, out: &Output) -> anyhow::Result<Exit> {
    match &args.command {
        HookCommand::ClaudeCode(run) => serve(global, Client::ClaudeCode, mode(run.mode)),
        HookCommand::Codex(run) => serve(global, Client::Codex, mode(run.mode)),
        HookCommand::Install(install) => {
            let target = install::Target {
                client: client(install.client),
                mode: mode(install.mode),
                staged: staged_binary()?,
                root: context::workspace_root(global)?,
                codex_home: codex_home(),
            };
            let lines = install::install(&target, install.uninstall)?;
            for line in lines {
                out.line(&line)?;
            }
            Ok(Exit::Success)
        }
    }
}

/// One hook call: the reply on stdout, notes on stderr, exit 0. In gate mode nothing fails
/// open: an unreadable stdin or a panic is a deny, and a reply that cannot be written exits 2,
/// which both clients take as a block.
fn serve(global: &GlobalArgs, client: Client, mode: Mode) -> anyhow::Result<Exit> {
    let mut input = Vec::new();
    let read = std::io::stdin().take(staged_hooks::MAX_EVENT_BYTES + 1).read_to_end(&mut input);
    let outcome = match (read, std::env::current_dir()) {
        (Err(err), _) => staged_hooks::unreadable(mode, &format!("stdin could not be read: {err}")),
        (_, Err(err)) => {
            staged_hooks::unreadable(mode, &format!("the current folder is unknown: {err}"))
        }
        (Ok(_), Ok(_)) if input.len() as u64 > staged_hooks::MAX_EVENT_BYTES => {
            staged_hooks::too_big(mode)
        }
        (Ok(_), Ok(cwd)) => {
            let root = global.workspace.as_deref();
            let codex_home = codex_home();
            std::panic::catch_unwind(|| {
                staged_hooks::handle_in(client, mode, &input, root, &cwd, codex_home.as_deref())
            })
            .unwrap_or_else(|_| staged_hooks::unreadable(mode, "staged failed while handling it"))
        }
    };
    for note in &outcome.notes {
        eprintln!("{note}");
    }
    let Some(reply) = outcome.reply.to_json() else { return Ok(Exit::Success) };
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{reply}").and_then(|()| stdout.flush()) {
        Ok(()) => Ok(Exit::Success),
        Err(err) => {
            eprintln!(
                "staged: the hook's reply could not be written ({err}); the tool call is blocked"
            );
            Ok(Exit::Usage)
        }
    }
}

pub(crate) fn doctor(global: &GlobalArgs, out: &Output) -> anyhow::Result<Exit> {
    let root = context::workspace_root(global)?;
    let homes = install::ClientHomes { codex_home: codex_home(), claude_config: claude_config() };
    let mut failed = false;
    let mut any = false;
    for (client, name, install_line) in [
        (Client::ClaudeCode, "Claude Code", "staged hook install claude-code"),
        (Client::Codex, "Codex", "staged hook install codex"),
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
                let reading = staged_hooks::permission_doctor_line(
                    client,
                    &root,
                    homes.codex_home.as_deref(),
                );
                out.line(&format!("note {reading}"))?;
            }
        }
    }
    if !any {
        out.line("FAIL no client has staged's hooks installed here")?;
    }
    Ok(if failed || !any { Exit::ToolError } else { Exit::Success })
}

fn mode(arg: HookModeArg) -> Mode {
    match arg {
        HookModeArg::Gate => Mode::Gate,
        HookModeArg::Record => Mode::Record,
    }
}

fn client(arg: HookClientArg) -> Client {
    match arg {
        HookClientArg::ClaudeCode => Client::ClaudeCode,
        HookClientArg::Codex => Client::Codex,
    }
}

/// This binary, by its absolute path: what the installed hooks run.
fn staged_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("finding the staged binary")?;
    Ok(exe.canonicalize().unwrap_or(exe))
}

/// `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`.
fn claude_config() -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir).join(".claude.json")),
        None => dirs::home_dir().map(|home| home.join(".claude.json")),
    }
}

/// `CODEX_HOME`, else `~/.codex`.
fn codex_home() -> Option<PathBuf> {
    std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|home| home.join(".codex")))
}
