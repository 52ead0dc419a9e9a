//! `staged hook claude-code|codex|qwen-code|gemini-cli|opencode|cursor|copilot|cline`, the hooks the clients run (one event on stdin, the reply on
//! stdout, notes on stderr, exit 0 so the client reads the reply) and `staged hook install`.
//!
//! A gate call does its work in a child (this process forked before it read anything, or, where
//! it cannot be forked safely, this binary again as `hook <client> --work`) that the hook
//! supervises with almost no memory of its own: whatever ends the child (a signal, memory
//! running out, a timeout) is a refusal, never a silent pass.

use std::{
    io::{Read, Write},
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::Context;
use staged_hooks::{Client, Mode, install};

use crate::{
    args::{GlobalArgs, HookArgs, HookClientArg, HookCommand, HookModeArg, HookRunArgs},
    context,
    exit::Exit,
    output::Output,
};

pub(crate) fn run(global: &GlobalArgs, args: &HookArgs, out: &Output) -> anyhow::Result<Exit> {
    match &args.command {
        HookCommand::Install(install) => {
            let staged = if install.on_path { PathBuf::from("staged") } else { staged_binary()? };
            let target = install::Target {
                client: client(install.client),
                mode: mode(install.mode),
                hook: hook_binary(&staged),
                staged,
                root: context::workspace_root(global)?,
                codex_home: codex_home(),
                local: install.local,
                claude_config: claude_config(),
                approve_human: install.approve == crate::args::ApproveArg::Human,
                qwen_home: qwen_home(),
                qwen_approvals: qwen_approvals(),
                cline_mcp_settings: cline_mcp_settings(),
            };
            let lines = install::install(&target, install.uninstall)?;
            for line in lines {
                out.line(&line)?;
            }
            Ok(Exit::Success)
        }
        _ => run_client(global, args),
    }
}

/// `hook <client>`: one hook call (`staged-hook`'s `hook`, which has no `install`).
pub(crate) fn run_client(global: &GlobalArgs, args: &HookArgs) -> anyhow::Result<Exit> {
    match &args.command {
        HookCommand::ClaudeCode(run) => hook(global, Client::ClaudeCode, run),
        HookCommand::Codex(run) => hook(global, Client::Codex, run),
        HookCommand::QwenCode(run) => hook(global, Client::QwenCode, run),
        HookCommand::GeminiCli(run) => hook(global, Client::GeminiCli, run),
        HookCommand::Opencode(run) => hook(global, Client::OpenCode, run),
        HookCommand::Cursor(run) => hook(global, Client::Cursor, run),
        HookCommand::Copilot(run) => hook(global, Client::Copilot, run),
        HookCommand::Cline(run) => hook(global, Client::Cline, run),
        HookCommand::Install(_) => {
            anyhow::bail!("staged-hook only runs hooks: install them with `staged hook install`")
        }
    }
}

/// One hook call. With `--in`, outside every workspace named the hook passes: it reads the
/// event (so the client's write never fails) and answers nothing. A gate call's work runs in
/// a child this process supervises; record mode, which lets every edit through anyway, works
/// in this process.
fn hook(global: &GlobalArgs, client: Client, run: &HookRunArgs) -> anyhow::Result<Exit> {
    let mode = mode(run.mode);
    let mut root = global.workspace.clone();
    if !run.only_in.is_empty() {
        match installed_root(&run.only_in) {
            Some(found) => root = Some(found),
            None => {
                let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
                return Ok(Exit::Success);
            }
        }
    }
    if run.work {
        if let Err(err) = staged_hooks::limit_memory(run.max_memory.saturating_mul(1 << 20)) {
            eprintln!("staged: the work's memory could not be bounded: {err}");
        }
        return serve(root.as_deref(), client, mode, true);
    }
    match mode {
        Mode::Gate => {
            Ok(supervise(root.as_deref(), client, run.max_memory, Duration::from_secs(run.timeout)))
        }
        Mode::Record => serve(root.as_deref(), client, mode, false),
    }
}

/// The workspace of `roots` the current folder is in (the innermost), if any.
fn installed_root(roots: &[PathBuf]) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    let cwd = cwd.canonicalize().unwrap_or(cwd);
    roots
        .iter()
        .filter(|root| {
            let canonical = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
            cwd.starts_with(&canonical)
        })
        .max_by_key(|root| root.components().count())
        .cloned()
}

/// One hook call's work: the reply on stdout, notes on stderr, exit 0. In gate mode nothing
/// fails open: an unreadable stdin or a panic is a deny, and a reply that cannot be written
/// exits 2, which both clients take as a block. As a supervised child (`report`), it first
/// prints the event's name on a line of its own, for the supervisor.
fn serve(root: Option<&Path>, client: Client, mode: Mode, report: bool) -> anyhow::Result<Exit> {
    let mut input = Vec::new();
    let read = std::io::stdin().take(staged_hooks::MAX_EVENT_BYTES + 1).read_to_end(&mut input);
    let mut stdout = std::io::stdout().lock();
    if report {
        let name = staged_hooks::event_name(client, &input).unwrap_or_default();
        let name = if name.is_empty() || name.contains(char::is_whitespace) { "-" } else { &name };
        if writeln!(stdout, "{name}").and_then(|()| stdout.flush()).is_err() {
            return Ok(Exit::Usage);
        }
    }
    let outcome = match (read, std::env::current_dir()) {
        (Err(err), _) => staged_hooks::unreadable(mode, &format!("stdin could not be read: {err}")),
        (_, Err(err)) => {
            staged_hooks::unreadable(mode, &format!("the current folder is unknown: {err}"))
        }
        (Ok(_), Ok(_)) if input.len() as u64 > staged_hooks::MAX_EVENT_BYTES => {
            staged_hooks::too_big(mode)
        }
        (Ok(_), Ok(cwd)) => {
            let homes = homes();
            std::panic::catch_unwind(|| {
                staged_hooks::handle_for(client, mode, &input, root, &cwd, &homes)
            })
            .unwrap_or_else(|_| staged_hooks::unreadable(mode, "staged failed while handling it"))
        }
    };
    drop(input);
    for note in &outcome.notes {
        eprintln!("{note}");
    }
    let reply = match outcome.reply.answer_for(client) {
        Ok(Some(reply)) => reply,
        Ok(None) => return Ok(Exit::Success),
        Err(why) => {
            eprintln!("staged: {why}; the tool call is blocked");
            return Ok(Exit::Usage);
        }
    };
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

/// The most a child may print (its name line and one reply).
const MAX_REPLY_BYTES: u64 = 16 << 20;

/// A gate call: does the work in a child, a fork of this process ([`fork_worker`]) or this
/// binary again as `hook <client> --work` (stdin handed straight to it, so this process holds
/// none of the event), with its memory bounded to `max_memory` MiB,
/// and passes on its reply. When the child dies (a
/// signal, an abort when memory runs out, the kernel's OOM killer), exits without a whole
/// reply, or takes longer than `timeout` (`--timeout`, 45 s by default: below both clients'
/// hook timeouts, Claude Code's, after which it runs the tool, 60 s in its older documentation
/// and 600 s now, and Codex's 600 s), the call is refused: a deny for a
/// `PreToolUse` the child named, nothing (and a note) for a `Stop`, and otherwise exit 2 with
/// the reason on stderr, which both clients take as a block.
fn supervise(root: Option<&Path>, client: Client, max_memory: u64, timeout: Duration) -> Exit {
    let failure = match run_child(root, client, max_memory, timeout) {
        Ok(reply) => {
            let mut stdout = std::io::stdout().lock();
            return match stdout.write_all(&reply).and_then(|()| stdout.flush()) {
                Ok(()) => Exit::Success,
                Err(err) => {
                    eprintln!(
                        "staged: the hook's reply could not be written ({err}); the tool call is blocked"
                    );
                    Exit::Usage
                }
            };
        }
        Err(failure) => failure,
    };
    match failure.event.as_deref() {
        Some("PreToolUse") => {
            let reply = staged_hooks::Reply::Deny(format!(
                "staged could not finish staging this edit ({}), so it refuses the tool call; nothing was written.",
                failure.why
            ));
            eprintln!("staged: the hook's work failed: {}", failure.why);
            let mut stdout = std::io::stdout().lock();
            let json = match reply.answer_for(client) {
                Ok(json) => json,
                Err(why) => {
                    eprintln!("staged: {why}; the tool call is blocked");
                    return Exit::Usage;
                }
            };
            let printed = json.map(|json| writeln!(stdout, "{json}").and_then(|()| stdout.flush()));
            if let Some(Err(err)) = printed {
                eprintln!(
                    "staged: the hook's reply could not be written ({err}); the tool call is blocked"
                );
                return Exit::Usage;
            }
            Exit::Success
        }
        Some(event) if event != "-" => {
            eprintln!(
                "staged: the hook's work for {event} failed ({}); nothing was done",
                failure.why
            );
            Exit::Success
        }
        _ => {
            eprintln!(
                "staged could not finish this hook call ({}), so the tool call is blocked; nothing was written.",
                failure.why
            );
            Exit::Usage
        }
    }
}

/// Why a child gave no reply, and the event it named before it failed.
struct ChildFailure {
    event: Option<String>,
    why: String,
}

/// A gate call's worker: its process, and the pipe it prints its name line and reply on.
struct Worker {
    pid: rustix::process::Pid,
    out: std::fs::File,
}

/// Runs the child and returns its reply (what it printed after its name line), or why there
/// is none.
fn run_child(
    root: Option<&Path>,
    client: Client,
    max_memory: u64,
    timeout: Duration,
) -> Result<Vec<u8>, ChildFailure> {
    let fail = |why: String| ChildFailure { event: None, why };
    let worker = match fork_worker(root, client, max_memory) {
        Some(forked) => forked.map_err(fail)?,
        None => exec_worker(root, client, max_memory).map_err(fail)?,
    };
    let Worker { pid, out: stdout } = worker;
    let started = Instant::now();
    let mut out = Vec::new();
    let read = read_within(stdout, &mut out, timeout);
    let status = match read {
        Err(ReadFailure::TimedOut) => {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
            Err(format!("it took longer than {} s (--timeout)", timeout.as_secs()))
        }
        _ => wait_within(pid, timeout.saturating_sub(started.elapsed()), timeout),
    };
    let read = match read {
        Err(ReadFailure::Io(err)) => Err(err),
        _ => Ok(()),
    };
    let (event, reply) = match out.iter().position(|b| *b == b'\n') {
        Some(end) => (Some(String::from_utf8_lossy(&out[..end]).into_owned()), &out[end + 1..]),
        None => (None, &out[..0]),
    };
    let failed = |why: String| ChildFailure { event: event.clone(), why };
    let status = status.map_err(failed)?;
    if !status.success() {
        return Err(failed(describe(status, max_memory)));
    }
    if let Err(err) = read {
        return Err(failed(format!("its worker's reply could not be read: {err}")));
    }
    if out.len() as u64 > MAX_REPLY_BYTES {
        return Err(failed("its worker's reply was too long".to_owned()));
    }
    if event.is_none() {
        return Err(failed("its worker exited without an answer".to_owned()));
    }
    let text = std::str::from_utf8(reply).unwrap_or_default();
    let whole = text.trim().is_empty()
        || (text.ends_with('\n') && serde_json::from_str::<serde_json::Value>(text).is_ok());
    if !whole {
        return Err(failed("its worker's reply was cut short".to_owned()));
    }
    Ok(reply.to_vec())
}

/// Why the worker's output was not read to its end.
enum ReadFailure {
    /// The worker's pipe stayed open past the call's timeout.
    TimedOut,
    Io(std::io::Error),
}

/// Reads the worker's pipe `from` into `out` until its end (the worker exited, or closed its
/// output), at most `MAX_REPLY_BYTES + 1` bytes of it, and for at most `timeout`. It reads in
/// this thread, waiting on the pipe with `poll` for the time left: the supervisor starts no
/// thread of its own (a thread's start, and the allocator's arena for it, was a tenth of a
/// millisecond of every gate call).
fn read_within(
    mut from: std::fs::File,
    out: &mut Vec<u8>,
    timeout: Duration,
) -> Result<(), ReadFailure> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let started = Instant::now();
    let mut chunk = [0u8; 8192];
    loop {
        let left = timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(ReadFailure::TimedOut);
        }
        let limit = Timespec::try_from(left).ok();
        let mut fds = [PollFd::new(&from, PollFlags::IN)];
        match poll(&mut fds, limit.as_ref()) {
            Ok(0) => continue,
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(err) => return Err(ReadFailure::Io(err.into())),
        }
        if fds[0].revents().is_empty() {
            continue;
        }
        match from.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => {
                out.extend_from_slice(&chunk[..n]);
                if out.len() as u64 > MAX_REPLY_BYTES {
                    return Ok(());
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(ReadFailure::Io(err)),
        }
    }
}

/// The worker as a copy of this process (`fork`, no `exec`): it starts with the binary already
/// loaded and linked, which is most of a second start's cost (bench/RESULTS.md, "Hook latency
/// per client"). It inherits stdin and stderr, its stdout is the pipe this process reads, and
/// it does the work as `hook <client> --work` would, then exits. `None` where a fork is not
/// safe, which [`exec_worker`] then starts instead: on a system other than Linux, or when
/// this process has more than one thread (a copy of a process keeps only the thread that
/// forked, so a lock another thread held would stay locked in it for good). The supervisor
/// has started none when it gets here (no runtime, no reader yet), and `threads_of_this`
/// checks that rather than trusting it.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn fork_worker(
    root: Option<&Path>,
    client: Client,
    max_memory: u64,
) -> Option<Result<Worker, String>> {
    use std::os::fd::AsRawFd;
    if threads_of_this() != Some(1) {
        return None;
    }
    let (read, write) = match std::io::pipe() {
        Ok(pipe) => pipe,
        Err(err) => return Some(Err(format!("its worker could not be started: {err}"))),
    };
    // Nothing this process prints is buffered yet (it printed nothing), so the copy prints
    // nothing of it twice.
    // SAFETY: this process has one thread (checked just above), so the copy holds every lock
    // in the state this thread left it (none is held across this call), and glibc's `fork`
    // runs the allocator's own fork handlers. The copy only leaves this block through
    // `std::process::exit`, never back into the supervisor's code.
    let pid = unsafe {
        let pid = libc::fork();
        if pid == 0 {
            drop(read);
            let code = if libc::dup2(write.as_raw_fd(), libc::STDOUT_FILENO) == -1 {
                2
            } else {
                drop(write);
                // Nothing unwinds out of the copy into the supervisor's code: a panic even
                // in reporting one is exit 101.
                std::panic::catch_unwind(|| forked_work(root, client, max_memory)).unwrap_or(101)
            };
            std::process::exit(code);
        }
        pid
    };
    let failed = std::io::Error::last_os_error();
    drop(write);
    match (pid > 0).then(|| rustix::process::Pid::from_raw(pid)).flatten() {
        Some(pid) => {
            Some(Ok(Worker { pid, out: std::fs::File::from(std::os::fd::OwnedFd::from(read)) }))
        }
        None => Some(Err(format!("its worker could not be started: {failed}"))),
    }
}

#[cfg(not(target_os = "linux"))]
fn fork_worker(
    _root: Option<&Path>,
    _client: Client,
    _max_memory: u64,
) -> Option<Result<Worker, String>> {
    None
}

/// What the forked worker does, as `hook <client> --work` would: its memory bounded, the work,
/// and the exit code (a panic outside the work's own catch is exit 101, as a panicking
/// process's).
#[cfg(target_os = "linux")]
fn forked_work(root: Option<&Path>, client: Client, max_memory: u64) -> i32 {
    if let Err(err) = staged_hooks::limit_memory(max_memory.saturating_mul(1 << 20)) {
        eprintln!("staged: the work's memory could not be bounded: {err}");
    }
    let served = std::panic::catch_unwind(|| serve(root, client, Mode::Gate, true));
    match served {
        Ok(Ok(exit)) => exit.code(),
        Ok(Err(err)) => {
            eprintln!("error: {}", staged_render::escape_line(&format!("{err:#}")));
            2
        }
        Err(_) => 101,
    }
}

/// How many threads this process has (`/proc/self/stat`), where that can be read.
#[cfg(target_os = "linux")]
fn threads_of_this() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command's name (which may hold spaces and parentheses) start with
    // the state (field 3); the thread count is field 20.
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(17)?.parse().ok()
}

/// The worker as a second start of this binary, `hook <client> --work` (stdin handed straight
/// to it), where it cannot be forked.
fn exec_worker(root: Option<&Path>, client: Client, max_memory: u64) -> Result<Worker, String> {
    // `/proc/self/exe` still runs this binary when its file was replaced or deleted since.
    let exe = if cfg!(target_os = "linux") && Path::new("/proc/self/exe").exists() {
        PathBuf::from("/proc/self/exe")
    } else {
        std::env::current_exe().map_err(|err| format!("staged could not find itself: {err}"))?
    };
    let mut command = Command::new(exe);
    if let Some(root) = root {
        command.arg("--workspace").arg(root);
    }
    command.args(["hook", client.name(), "--work", "--max-memory", &max_memory.to_string()]);
    let mut child = command
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|err| format!("its worker could not be started: {err}"))?;
    let pid = i32::try_from(child.id()).ok().and_then(rustix::process::Pid::from_raw);
    // (Dropping a `Child` neither waits for nor kills it: `wait_within` waits by its pid.)
    match (child.stdout.take(), pid) {
        (Some(stdout), Some(pid)) => {
            Ok(Worker { pid, out: std::fs::File::from(std::os::fd::OwnedFd::from(stdout)) })
        }
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            Err("its worker's output could not be read".to_owned())
        }
    }
}

/// Waits for the worker `pid` to end, at most `timeout` (what is left of the call's `whole`
/// `--timeout` once its output was read), then kills it. On Linux the kernel
/// wakes the wait as the worker ends (its pidfd, polled for the time left), so the reply is
/// passed on at once; elsewhere, or on a kernel without pidfds, the worker is looked at again
/// after a pause that grows from 0.1 to 5 ms. Either way the status is only ever taken from
/// a `waitpid` that does not block.
fn wait_within(
    pid: rustix::process::Pid,
    timeout: Duration,
    whole: Duration,
) -> Result<std::process::ExitStatus, String> {
    use rustix::process::{Signal, WaitOptions, kill_process, waitpid};
    use std::os::unix::process::ExitStatusExt;
    let started = Instant::now();
    let exit_fd = exit_fd(pid);
    let mut pause = Duration::from_micros(100);
    let kill = || {
        let _ = kill_process(pid, Signal::KILL);
        let _ = waitpid(Some(pid), WaitOptions::empty());
    };
    loop {
        match waitpid(Some(pid), WaitOptions::NOHANG) {
            Ok(Some((_, status))) => {
                return Ok(std::process::ExitStatus::from_raw(status.as_raw()));
            }
            Ok(None) => {
                let left = timeout.saturating_sub(started.elapsed());
                if left.is_zero() {
                    kill();
                    return Err(format!("it took longer than {} s (--timeout)", whole.as_secs()));
                }
                if !wait_for_exit(exit_fd.as_ref(), left) {
                    std::thread::sleep(pause.min(left));
                    pause = (pause * 2).min(Duration::from_millis(5));
                }
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => {
                kill();
                return Err(format!("its worker could not be waited for: {err}"));
            }
        }
    }
}

/// A descriptor that becomes readable when the process `pid` ends (a pidfd), where the kernel has them.
#[cfg(target_os = "linux")]
fn exit_fd(pid: rustix::process::Pid) -> Option<std::os::fd::OwnedFd> {
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
}

#[cfg(not(target_os = "linux"))]
fn exit_fd(_pid: rustix::process::Pid) -> Option<std::os::fd::OwnedFd> {
    None
}

/// Waits until `fd` says its process ended, at most `left`; `false` when it cannot wait on
/// it (no descriptor, or the poll failed other than by a signal), so the caller pauses.
fn wait_for_exit(fd: Option<&std::os::fd::OwnedFd>, left: Duration) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let Some(fd) = fd else { return false };
    let Ok(limit) = Timespec::try_from(left) else { return false };
    let mut fds = [PollFd::new(fd, PollFlags::IN)];
    match poll(&mut fds, Some(&limit)) {
        Ok(_) | Err(rustix::io::Errno::INTR) => true,
        Err(_) => false,
    }
}

/// How a child that did not succeed ended, in words.
fn describe(status: std::process::ExitStatus, max_memory: u64) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("its worker exited with code {code} without an answer"),
        (None, Some(signal)) => {
            let name = match signal {
                6 => {
                    let inherited = staged_hooks::memory_limit().map_or(u64::MAX, |b| b >> 20);
                    format!(
                        " (SIGABRT), as when the work needs more than the {} MiB of memory it may take",
                        max_memory.min(inherited)
                    )
                }
                9 => " (SIGKILL), as when the system runs out of memory".to_owned(),
                7 | 11 => " (it crashed)".to_owned(),
                15 => " (SIGTERM)".to_owned(),
                _ => String::new(),
            };
            format!("its worker was killed by signal {signal}{name}")
        }
        (None, None) => "its worker ended without a status".to_owned(),
    }
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
        HookClientArg::QwenCode => Client::QwenCode,
        HookClientArg::GeminiCli => Client::GeminiCli,
        HookClientArg::Opencode => Client::OpenCode,
        HookClientArg::Cursor => Client::Cursor,
        HookClientArg::Copilot => Client::Copilot,
        HookClientArg::Cline => Client::Cline,
    }
}

/// This binary, by its absolute path: what the installed hooks run.
pub(crate) fn staged_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("finding the staged binary")?;
    Ok(exe.canonicalize().unwrap_or(exe))
}

/// The binary the installed hooks run: `staged-hook` beside `staged` (absolute) when it is an
/// executable file there, else `staged` itself. A `staged` named by its name alone (`--on-path`:
/// settings committed for other machines, which may have `staged` without `staged-hook`) keeps
/// its name. Either way a hook that cannot run blocks the edit (the commands' fail-safe).
pub(crate) fn hook_binary(staged: &Path) -> PathBuf {
    let beside = staged.with_file_name(HOOK_BINARY);
    if staged.is_absolute() && install::executable(&beside).is_ok() {
        beside
    } else {
        staged.to_path_buf()
    }
}

/// The file name of the hooks-only binary built beside `staged` (`src/hook_main.rs`).
const HOOK_BINARY: &str = if cfg!(windows) { "staged-hook.exe" } else { "staged-hook" };

/// `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`.
fn claude_config() -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir).join(".claude.json")),
        None => dirs::home_dir().map(|home| home.join(".claude.json")),
    }
}

/// `COPILOT_HOME`, else `~/.copilot`.
fn copilot_home() -> Option<PathBuf> {
    std::env::var_os("COPILOT_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|home| home.join(".copilot")))
}

/// Cline's MCP settings: `CLINE_MCP_SETTINGS_PATH`, else
/// `$CLINE_DATA_DIR/settings/cline_mcp_settings.json`, else `~/.cline/data/settings/...`.
fn cline_mcp_settings() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("CLINE_MCP_SETTINGS_PATH").or_else(|| {
        var("CLINE_DATA_DIR")
            .or_else(|| dirs::home_dir().map(|home| home.join(".cline").join("data")))
            .map(|dir| dir.join("settings").join("cline_mcp_settings.json"))
    })
}

/// `CODEX_HOME`, else `~/.codex`.
fn codex_home() -> Option<PathBuf> {
    std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|home| home.join(".codex")))
}

/// Every client's home, as its environment says.
pub(crate) fn homes() -> install::ClientHomes {
    install::ClientHomes {
        codex_home: codex_home(),
        claude_config: claude_config(),
        qwen_home: qwen_home(),
        qwen_approvals: qwen_approvals(),
        gemini_home: gemini_home(),
        copilot_home: copilot_home(),
        cline_mcp_settings: cline_mcp_settings(),
        staged: staged_binary().ok(),
    }
}

/// `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`.
fn gemini_home() -> Option<PathBuf> {
    std::env::var_os("GEMINI_CLI_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(dirs::home_dir)
        .map(|home| home.join(".gemini"))
}

/// `QWEN_CODE_MCP_APPROVALS_PATH`, when set.
fn qwen_approvals() -> Option<PathBuf> {
    std::env::var_os("QWEN_CODE_MCP_APPROVALS_PATH").filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// `QWEN_HOME`, else `~/.qwen`.
fn qwen_home() -> Option<PathBuf> {
    std::env::var_os("QWEN_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|home| home.join(".qwen")))
}
