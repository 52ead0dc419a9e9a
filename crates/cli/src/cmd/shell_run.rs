//! `staged shell-run --client C --session S [--call ID] --mode gate|record -- COMMAND`: the
//! wrapper the hooks put in place of a client's shell call (`docs/contract/shell.md`).
//!
//! It makes the run's folder in `.staged/shell/` (and opens nothing else before the command:
//! the workspace's store is opened while the command runs, once its shell has started),
//! starts `$SHELL -c COMMAND` with this process's stdin, stdout and stderr in a child that,
//! between `fork` and `exec`, enters a private user and mount namespace with an overlay over
//! the workspace (`staged_shell::isolate`); once that ends, it hands the run to
//! `staged_hooks::finish` (record or stage what the command wrote),
//! prints what the model must know on stderr, and exits with the command's own exit code
//! (128 + the signal that ended it). The finished run's folder, renamed as going by then, is
//! deleted by a child that outlives it, off the call's time. When a process the command left
//! running still holds the run's lock (`Run::settle`), the run outlives the wrapper: what was
//! written so far is harvested (`staged_hooks::outlive`) and the run is kept for the session's
//! next hook calls.
//!
//! Where the namespace is refused, or `STAGED_SHELL_ISOLATION=off`, nothing is isolated: in
//! gate mode the command is not run at all (a gate never fails open); in record mode a
//! snapshot of the workspace is kept in the run folder (`staged_shell::snapshot`), the command
//! runs as it would without staged, and `staged_hooks::finish` records what changed since, with
//! the entry's caveat (only when no snapshot can be taken does it run unrecorded, and stderr
//! says so).

use std::{
    os::unix::process::{CommandExt, ExitStatusExt},
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::Context;
use staged_journal::ConfinedRoot;
use staged_shell::{Run, RunInfo};
use staged_workspace::{WorkspaceSession, WorkspaceSessionBuilder};

use crate::{
    args::{GlobalArgs, HookModeArg, ShellRunArgs},
    context,
    exit::Exit,
};

/// The error a child that could not enter the namespace fails its start with (it never ran
/// the command), with `unisolated` in the run folder saying why.
const UNISOLATED_ERRNO: i32 = 1;
const UNISOLATED_FILE: &str = "unisolated";

pub(crate) fn run(global: &GlobalArgs, args: &ShellRunArgs) -> anyhow::Result<Exit> {
    // This process forks twice after work that may run on threads (the command's child, the
    // clean-up after answering), each only while it has one thread: none may outlive its work.
    staged_journal::no_lasting_threads();
    let root = context::workspace_root(global)?;
    let root = root.canonicalize().unwrap_or(root);
    let script = args.command.join(" ");
    let mode = match args.mode {
        HookModeArg::Gate => "gate",
        HookModeArg::Record => "record",
    };
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let cwd = cwd.canonicalize().unwrap_or(cwd);
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
    // Only the run's folder before the command: the store is opened once it is done. Made
    // through the confined root (`.staged` is never followed through a symlink).
    let workspace = ConfinedRoot::new(&root)
        .with_context(|| format!("opening the workspace {}", root.display()))?;
    recover_first(&workspace)?;
    workspace
        .state_subdir(staged_shell::RUNS_DIR, true)
        .context("making the command's run folder in .staged/shell")?;
    let run = Run::create(&workspace.state_dir(), info.clone())
        .context("making the command's run folder in .staged/shell")?;
    // The command's processes inherit the run's lock: a sweep after this wrapper is killed
    // waits for them.
    let lock = run.inheritable_lock().context("sharing the run's lock")?;
    // The workspace opened while an isolated command runs (`isolated`).
    let mut early = None;
    let attempt = match isolation_wanted() {
        Ok(true) => isolated(&root, &run, &script, &info.cwd, &mut early),
        Ok(false) => Err(Spawn::Unisolated(format!(
            "isolation is turned off: {}=off",
            staged_shell::snapshot::ISOLATION_ENV
        ))),
        Err(why) => {
            let _ = run.remove();
            eprintln!("staged: {why}; nothing was run.");
            return Ok(Exit::Code(2));
        }
    };
    // A run of the snapshot fallback has no upper layer to harvest from: it is compared with
    // its snapshot once, when its shell ends, whatever it left running.
    let by_snapshot = matches!(attempt, Err(Spawn::Unisolated(_)));
    let status = match attempt {
        Ok(status) => status,
        Err(Spawn::Unisolated(why)) if mode == "gate" => {
            let _ = run.remove();
            return Ok(unisolated(mode, &why, &script, &info.cwd));
        }
        Err(Spawn::Unisolated(why)) => {
            match snapshotted(&workspace, &run, &why, &script, &info.cwd) {
                Some(status) => status,
                None => {
                    let _ = run.remove();
                    return Ok(unisolated(mode, &why, &script, &info.cwd));
                }
            }
        }
        Err(Spawn::Failed(err)) => {
            let _ = run.remove();
            eprintln!("staged: the shell could not be run: {err}");
            return Ok(Exit::Code(127));
        }
    };
    drop(lock);
    let code = status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    let mut run = run;
    // A process the command left running (`cmd &`) still holds the run's lock: the run
    // outlives this wrapper, harvested now and at the session's next hook calls.
    let alone = run.settle().unwrap_or(true);
    if !alone && !by_snapshot {
        let finished = match Early::take(early, &root) {
            Ok(ws) => staged_hooks::outlive(&ws, run),
            Err(err) => staged_hooks::Finished {
                message: Some(format!(
                    "staged could not record what this command wrote yet (the workspace {} could not be opened: {err}); it tries again at this session's next tool call or prompt.",
                    root.display()
                )),
                notes: Vec::new(),
            },
        };
        tell(&finished);
        return Ok(Exit::Code(u8::try_from(code).unwrap_or(1)));
    }
    // The finished run's folder is deleted after this process answered (see the end), and
    // so are the blocks its commits free (the journal's own files, each file a text change
    // replaces): on a filesystem mounted `discard` each waits for the disk like an `fsync`.
    run.remove_later();
    staged_journal::free_later();
    // Its call returned before it ended (a Codex `exec_command` that yielded): the model is
    // told at its next chance too, since no one may read this process's output any more.
    let returned = run.is_outliving();
    let finished = match Early::take(early, &root) {
        Ok(ws) => {
            let finished = staged_hooks::finish(&ws, run);
            if returned && let Some(text) = &finished.message {
                staged_hooks::tell_session(&ws, &info.client, &info.session, text);
            }
            prune_kept(&ws, false);
            finished
        }
        Err(err) => staged_hooks::unfinished(
            run,
            &format!("the workspace {} could not be opened: {err}", root.display()),
        ),
    };
    tell(&finished);
    delete_after_answering(&workspace);
    Ok(Exit::Code(u8::try_from(code).unwrap_or(1)))
}

/// Prints what finishing a run says: its notes, then its message for the model.
fn tell(finished: &staged_hooks::Finished) {
    for note in &finished.notes {
        eprintln!("{}", staged_render::escape_line(note));
    }
    if let Some(message) = &finished.message {
        eprintln!("{message}");
    }
}

/// Deletes the finished run's folder (renamed `gone-<id>` by now, so any sweep deletes it
/// if this does not), and what this process's commits left to free in the journal folder
/// (`staged_journal::free_later`; recovery deletes it if this does not), in a child of its own
/// that outlives this process, so the shell call
/// returns without waiting for the filesystem: each `rmdir` of a run's folders waits 1 to 4
/// ms on a busy ext4, a fifth of what the wrapper added to a one-file command. This process's
/// standard descriptors are `/dev/null` before the child is made (the client waits for the
/// command's output to end), and the child closes every descriptor and leaves the process
/// group. Forked only while this process has one thread (so the child
/// may allocate); otherwise, or when `fork` fails, the folder is deleted here.
fn delete_after_answering(workspace: &ConfinedRoot) {
    let state_dir = workspace.state_dir();
    // The root opened again by its path: in the child, every descriptor of this process is
    // closed by then.
    let delete = || {
        staged_shell::delete_gone(&state_dir);
        if let Ok(again) = ConfinedRoot::new(workspace.root()) {
            staged_journal::delete_freed(&again);
        }
    };
    let one_thread =
        std::fs::read_dir("/proc/self/task").is_ok_and(|tasks| tasks.flatten().count() == 1);
    // The client reads the command's output until every copy of its pipes is closed: this
    // process lets go of them before the child is made, so a child that waits for a CPU on a
    // busy machine does not hold the call open.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    let null = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null");
    let (true, Ok(null)) = (one_thread, null) else {
        delete();
        return;
    };
    for fd in 0..=2 {
        // SAFETY: `dup2` of a descriptor this process owns onto its standard ones.
        #[allow(unsafe_code)]
        unsafe {
            libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&null), fd);
        }
    }
    if std::os::fd::AsRawFd::as_raw_fd(&null) <= 2 {
        // It took the place of a standard descriptor that was closed: it is that one now.
        std::mem::forget(null);
    } else {
        drop(null);
    }
    // SAFETY: this process has one thread (checked just above: no thread can hold a lock the
    // child would wait on), and the child only closes descriptors, deletes files and exits
    // with `_exit`, never returning into this process's code.
    #[allow(unsafe_code)]
    unsafe {
        match libc::fork() {
            0 => {
                libc::setsid();
                #[cfg(target_os = "linux")]
                let closed = libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) == 0;
                #[cfg(not(target_os = "linux"))]
                let closed = false;
                if !closed {
                    for fd in 0..1024 {
                        libc::close(fd);
                    }
                }
                delete();
                libc::_exit(0);
            }
            -1 => delete(),
            _ => {}
        }
    }
}

/// Finishes or rolls back an interrupted commit of the journal before the command reads or
/// writes the tree (the command's lower layer is the tree as it is: a half-renamed commit
/// would be what it reads, and what its writes are compared with). Only when the journal
/// folder holds a journal (one listing): otherwise nothing is opened, and the command starts
/// at once. Opening the workspace recovers; its store is closed again before the command
/// (no thread of it outlives this, so the fork below stays safe).
///
/// # Errors
/// When the workspace cannot be opened to recover: then the command is not run (in either
/// mode: its writes would be compared with a half-written tree).
fn recover_first(workspace: &ConfinedRoot) -> anyhow::Result<()> {
    if !staged_journal::needs_recovery(workspace) {
        return Ok(());
    }
    let ws = WorkspaceSessionBuilder::lean().open(workspace.root()).map_err(|err| {
        anyhow::anyhow!(
            "staged could not recover an interrupted apply in {} before running the command, so nothing was run: {err}",
            workspace.root().display()
        )
    })?;
    context::report_recovery(ws.recovery());
    Ok(())
}

/// Deletes the kept bytes of `.staged/shell/kept/` that no log entry left and no pending
/// preview names any more (`staged_session::prune_kept`), kept at least an hour ago, or
/// `STAGED_KEPT_GRACE_SECONDS` ago when that is set. Unless `always`, only when the kept
/// folder was not pruned within that time (two `stat`s otherwise). What fails is left for
/// the next time: pruning never blocks a command.
pub(crate) fn prune_kept(ws: &WorkspaceSession, always: bool) {
    let grace = std::env::var("STAGED_KEPT_GRACE_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(staged_journal::KEPT_GRACE, std::time::Duration::from_secs);
    if !always && !staged_journal::kept_due(ws.workspace(), grace) {
        return;
    }
    let _ = staged_session::prune_kept(ws.workspace(), ws.store().as_ref(), grace);
}

/// Why the command was not run isolated.
enum Spawn {
    /// The namespace or a mount was refused: why.
    Unisolated(String),
    /// The shell could not be started.
    Failed(std::io::Error),
}

/// The workspace, opened while the command runs (its store's open is then off the call's
/// time: this process would otherwise only wait for the command), with what its state folder
/// and database were once it was open.
struct Early {
    ws: WorkspaceSession,
    ids: Option<[(u64, u64); 2]>,
}

impl Early {
    /// Opens the workspace at `root`; `None` when it cannot be (it is tried again once the
    /// command is done, as it was before the command ran).
    fn open(root: &Path) -> Option<Early> {
        let ws = WorkspaceSessionBuilder::lean().open(root).ok()?;
        Some(Early { ws, ids: state_ids(root) })
    }

    /// The workspace to finish the run in: the one opened while the command ran when the
    /// command left its state folder and database as they were, else opened now. (A command
    /// that deleted or replaced `.staged/staged.db` must not have its writes logged in a
    /// database no longer there.)
    fn take(
        early: Option<Early>,
        root: &Path,
    ) -> Result<WorkspaceSession, staged_workspace::OpenError> {
        match early {
            Some(early) if early.ids.is_some() && early.ids == state_ids(root) => Ok(early.ws),
            _ => WorkspaceSessionBuilder::lean().open(root),
        }
    }
}

/// The device and inode of the workspace's `.staged/` and of its database (`staged.db`, the
/// store's file), without following a symlink put in their place.
fn state_ids(root: &Path) -> Option<[(u64, u64); 2]> {
    use std::os::unix::fs::MetadataExt;
    let state = root.join(".staged");
    let id = |path: &Path| std::fs::symlink_metadata(path).ok().map(|m| (m.dev(), m.ino()));
    Some([id(&state)?, id(&state.join("staged.db"))?])
}

/// Runs `script` in a child that enters the run's namespace between `fork` and `exec` (no
/// second start of this binary) and then is `$SHELL -c script`, with this process's stdin,
/// stdout and stderr, and waits for it; while it runs, opens the workspace into `early`.
fn isolated(
    root: &Path,
    run: &Run,
    script: &str,
    cwd: &Path,
    early: &mut Option<Early>,
) -> Result<std::process::ExitStatus, Spawn> {
    let isolation = staged_shell::isolate::Isolation::new(root, &run.upper(), &run.work(), cwd)
        .map_err(|why| Spawn::Unisolated(why.to_string()))?;
    let why_file = run.dir().join(UNISOLATED_FILE);
    let mut command = Command::new(shell());
    command.arg("-c").arg(script).current_dir(cwd);
    // SAFETY: the closure runs in the child between `fork` and `exec`. This process starts no
    // thread before it (the store is opened once the child has started its shell), and
    // `Isolation::enter` makes system calls only; the text of a refusal is written only on
    // that failure path, after which the child exits without running anything.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || {
            isolation.enter().map_err(|why| {
                let _ = std::fs::write(&why_file, why.to_string());
                std::io::Error::from_raw_os_error(UNISOLATED_ERRNO)
            })
        });
    }
    // `spawn` returns once the child has started the shell (or failed to).
    match command.spawn().and_then(|mut child| {
        *early = Early::open(root);
        child.wait()
    }) {
        Ok(status) => Ok(status),
        Err(err) => match std::fs::read_to_string(run.dir().join(UNISOLATED_FILE)) {
            Ok(why) => Err(Spawn::Unisolated(why)),
            Err(_) => Err(Spawn::Failed(err)),
        },
    }
}

/// Whether to isolate commands, as `STAGED_SHELL_ISOLATION` says: `auto` (or unset) where
/// the system allows, `off` never (record mode compares snapshots, gate mode refuses).
///
/// # Errors
/// Any other value, named.
fn isolation_wanted() -> Result<bool, String> {
    let name = staged_shell::snapshot::ISOLATION_ENV;
    match std::env::var(name) {
        Err(std::env::VarError::NotPresent) => Ok(true),
        Ok(value) if value == "auto" || value.is_empty() => Ok(true),
        Ok(value) if value == "off" => Ok(false),
        Ok(value) => Err(format!(
            "{name} is {value:?}, but staged knows only \"auto\" (isolate where the system allows) and \"off\" (never isolate)"
        )),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(format!("{name} is not UTF-8, but staged knows only \"auto\" and \"off\""))
        }
    }
}

/// Record mode without isolation (`why`): a snapshot of the workspace is taken and kept in
/// the run folder, then the command runs as it would without staged (holding the run's lock,
/// as an isolated one does); `None`, having run nothing, when the snapshot could not be taken
/// (the command then runs unrecorded).
fn snapshotted(
    workspace: &ConfinedRoot,
    run: &Run,
    why: &str,
    script: &str,
    cwd: &Path,
) -> Option<std::process::ExitStatus> {
    let taken = staged_shell::snapshot::Snapshot::take(workspace)
        .and_then(|snapshot| snapshot.save(run.dir()).map_err(|err| err.to_string()));
    if let Err(err) = taken {
        eprintln!("staged: the workspace's snapshot could not be taken: {err}");
        return None;
    }
    eprintln!(
        "staged: cannot isolate shell commands here ({why}); this command's writes are recorded by comparing the tree before and after it."
    );
    match Command::new(shell()).arg("-c").arg(script).current_dir(cwd).status() {
        Ok(status) => Some(status),
        Err(err) => {
            eprintln!("staged: the shell could not be run: {err}");
            Some(std::process::ExitStatus::from_raw(127 << 8))
        }
    }
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
