//! `staged shell-run --client C --session S [--call ID] --mode gate|record -- COMMAND`: the
//! wrapper the hooks put in place of a client's shell call (`docs/contract/shell.md`).
//!
//! It makes the run's folder in `.staged/shell/`, runs itself again as `--inner`, which enters
//! a private user and mount namespace with an overlay over the workspace
//! (`staged_shell::isolate`) and then becomes `$SHELL -c COMMAND`, with this process's stdin,
//! stdout and stderr; once that ends, it hands the run to `staged_hooks::finish` (record or
//! stage what the command wrote), prints what the model must know on stderr, and exits with
//! the command's own exit code (128 + the signal that ended it).
//!
//! Where the namespace is refused, nothing is isolated: in gate mode the command is not run
//! at all (a gate never fails open), in record mode it runs as it would without staged, and
//! stderr says its writes were not recorded.

use std::{
    os::unix::process::{CommandExt, ExitStatusExt},
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::Context;
use staged_shell::{Run, RunInfo};
use staged_workspace::WorkspaceSession;

use crate::{
    args::{GlobalArgs, HookModeArg, ShellRunArgs},
    context,
    exit::Exit,
};

/// The exit code of an inner run that could not enter the namespace (it never ran the
/// command), with `unisolated` in the run folder saying why.
const UNISOLATED_EXIT: i32 = 125;
const UNISOLATED_FILE: &str = "unisolated";

pub(crate) fn run(global: &GlobalArgs, args: &ShellRunArgs) -> anyhow::Result<Exit> {
    let root = context::workspace_root(global)?;
    let root = root.canonicalize().unwrap_or(root);
    let script = args.command.join(" ");
    if let Some(dir) = &args.inner {
        return inner(&root, dir, &script);
    }
    let mode = match args.mode {
        HookModeArg::Gate => "gate",
        HookModeArg::Record => "record",
    };
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let cwd = cwd.canonicalize().unwrap_or(cwd);
    let ws = WorkspaceSession::open(&root)
        .with_context(|| format!("opening the workspace {}", root.display()))?;
    let info = RunInfo {
        client: args.client.clone(),
        session: args.session.clone(),
        call: args.call.clone(),
        mode: mode.to_owned(),
        command: script.clone(),
        // Outside the workspace too: the command runs where it was asked to (its writes
        // there are not the workspace's, and are not isolated).
        cwd: cwd.clone(),
    };
    let run = Run::create(&ws.workspace().state_dir(), info.clone())
        .context("making the command's run folder in .staged/shell")?;
    let exe = std::env::current_exe().context("finding the staged binary")?;
    // The command's processes inherit the run's lock: a sweep after this wrapper is killed
    // waits for them.
    let lock = run.inheritable_lock().context("sharing the run's lock")?;
    let status = Command::new(&exe)
        .arg("--workspace")
        .arg(&root)
        .args(["shell-run", "--client", &args.client, "--session", &args.session])
        .args(["--mode", mode, "--inner"])
        .arg(run.dir())
        .arg("--")
        .arg(&script)
        .current_dir(&info.cwd)
        .status()
        .context("running the command")?;
    drop(lock);
    let code = status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    if code == UNISOLATED_EXIT
        && let Ok(why) = std::fs::read_to_string(run.dir().join(UNISOLATED_FILE))
    {
        let _ = run.remove();
        return Ok(unisolated(mode, &why, &script, &info.cwd));
    }
    let finished = staged_hooks::finish(&ws, run);
    for note in &finished.notes {
        eprintln!("{}", staged_render::escape_line(note));
    }
    if let Some(message) = finished.message {
        eprintln!("{message}");
    }
    Ok(Exit::Code(u8::try_from(code).unwrap_or(1)))
}

/// The wrapper's child: enters the namespace, then becomes the shell running `script`.
fn inner(root: &Path, dir: &Path, script: &str) -> anyhow::Result<Exit> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| root.to_path_buf());
    if let Err(why) =
        staged_shell::isolate::enter(root, &dir.join("upper"), &dir.join("work"), &cwd)
    {
        let _ = std::fs::write(dir.join(UNISOLATED_FILE), why.to_string());
        return Ok(Exit::Code(UNISOLATED_EXIT as u8));
    }
    let err = Command::new(shell()).arg("-c").arg(script).exec();
    eprintln!("staged: the shell could not be run: {err}");
    Ok(Exit::Code(127))
}

/// The shell commands run in: `$SHELL`, else `/bin/sh`.
fn shell() -> PathBuf {
    std::env::var_os("SHELL")
        .filter(|s| !s.is_empty())
        .map_or_else(|| PathBuf::from("/bin/sh"), PathBuf::from)
}

/// No namespace: gate mode refuses to run the command; record mode runs it unrecorded.
fn unisolated(mode: &str, why: &str, script: &str, cwd: &Path) -> Exit {
    if mode == "gate" {
        eprintln!(
            "staged cannot isolate shell commands here ({why}), so in gate mode it did not run this one: nothing was run and nothing was written. A person can run it, or staged's hooks can be installed in record mode."
        );
        return Exit::Code(1);
    }
    eprintln!("staged: cannot isolate shell commands here ({why}); this command runs unrecorded.");
    match Command::new(shell()).arg("-c").arg(script).current_dir(cwd).status() {
        Ok(status) => Exit::Code(
            u8::try_from(status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
                .unwrap_or(1),
        ),
        Err(err) => {
            eprintln!("staged: the shell could not be run: {err}");
            Exit::Code(127)
        }
    }
}
