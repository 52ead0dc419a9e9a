//! `staged doctor`: whether the installed hooks and MCP servers will work, one line per check
//! (`ok`, `warn`, `FAIL`, and `note` for how the gate reads a client's permissions), and
//! whether the `staged-hook` beside this `staged` is of its build.
//!
//! `--json` prints the same as one object: `{"ok", "build": {"staged", "stagedHook"},
//! "clients": [{"client", "installed", "install", "checks", "note"}]}`.

use std::{
    io::Read,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::Duration,
};

use serde::Serialize;
use staged_hooks::{Client, install};

use crate::{
    args::GlobalArgs,
    cmd::hook::{homes, hook_binary, staged_binary},
    context,
    exit::Exit,
    output::Output,
};

/// This build's identity, which both binaries print after their name (`--version`): the
/// crate's version and the build id `build.rs` computes from the sources.
pub(crate) const BUILD: &str =
    concat!(env!("CARGO_PKG_VERSION"), " (build ", env!("STAGED_BUILD_ID"), ")");

/// How long `staged-hook --version` may take to answer.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) fn run(global: &GlobalArgs, out: &Output) -> anyhow::Result<Exit> {
    let root = context::workspace_root(global)?;
    let homes = homes();
    let build = build_report();
    if !out.json {
        print_build(out, &build)?;
    }
    let mut clients = Vec::new();
    for (client, name) in [
        (Client::ClaudeCode, "Claude Code"),
        (Client::Codex, "Codex"),
        (Client::QwenCode, "Qwen Code"),
        (Client::GeminiCli, "Gemini CLI"),
        (Client::OpenCode, "opencode"),
        (Client::Cursor, "Cursor"),
        (Client::Copilot, "Copilot CLI"),
        (Client::Cline, "Cline"),
    ] {
        let install = format!("staged hook install {}", client.name());
        let report = match install::doctor(client, &root, &homes) {
            None => ClientReport {
                client: client.name(),
                installed: false,
                install,
                checks: Vec::new(),
                note: None,
            },
            Some(checks) => ClientReport {
                client: client.name(),
                installed: true,
                install,
                checks: checks
                    .into_iter()
                    .map(|c| CheckLine::new(c.what, c.result, c.warning))
                    .collect(),
                note: Some(staged_hooks::permission_doctor_line_for(client, &root, &homes)),
            },
        };
        if !out.json {
            print_client(out, name, &report)?;
        }
        clients.push(report);
    }
    let any = clients.iter().any(|c| c.installed);
    let failed = build.staged_hook.as_ref().is_some_and(|h| h.status == Status::Fail)
        || clients.iter().flat_map(|c| &c.checks).any(|c| c.status == Status::Fail);
    let ok = any && !failed;
    if out.json {
        out.json_line(&Report { ok, build, clients })?;
    } else if !any {
        out.line("FAIL no client has staged's hooks installed here")?;
    }
    Ok(if ok { Exit::Success } else { Exit::ToolError })
}

/// `doctor --json`.
#[derive(Debug, Serialize)]
struct Report {
    /// Whether every check passed (warnings aside) and some client has the hooks: exit 0.
    ok: bool,
    build: BuildReport,
    clients: Vec<ClientReport>,
}

/// The builds of this `staged` and of the `staged-hook` beside it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct BuildReport {
    staged: Binary,
    /// `None` when no `staged-hook` is beside `staged` (the hooks then run `staged` itself).
    staged_hook: Option<HookBinary>,
}

/// A binary and the build it is.
#[derive(Debug, Serialize)]
struct Binary {
    path: PathBuf,
    build: &'static str,
}

/// The `staged-hook` beside `staged`: the build it says it is, and whether that is `staged`'s.
#[derive(Debug, Serialize)]
struct HookBinary {
    path: PathBuf,
    /// What follows its name in `--version`; `None` when it does not say.
    build: Option<String>,
    status: Status,
    why: Option<String>,
}

/// One client's checks; none, and `installed: false`, when staged's hooks are not installed
/// for it (`install` installs them).
#[derive(Debug, Serialize)]
struct ClientReport {
    client: &'static str,
    installed: bool,
    install: String,
    checks: Vec<CheckLine>,
    /// How the gate reads the client's permissions.
    note: Option<String>,
}

/// One check's line.
#[derive(Debug, Serialize)]
struct CheckLine {
    status: Status,
    what: String,
    why: Option<String>,
}

impl CheckLine {
    /// The line of a check of `what` that came out as `result`, `warning` when a failure is
    /// only a warning.
    fn new(what: String, result: Result<(), String>, warning: bool) -> CheckLine {
        match result {
            Ok(()) => CheckLine { status: Status::Ok, what, why: None },
            Err(why) => CheckLine {
                status: if warning { Status::Warn } else { Status::Fail },
                what,
                why: Some(why),
            },
        }
    }
}

/// A check's outcome: `fail` makes `doctor` exit 1, `warn` does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    /// The line's first word.
    fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok  ",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        }
    }
}

fn print_client(out: &Output, name: &str, report: &ClientReport) -> std::io::Result<()> {
    if !report.installed {
        return out.line(&format!(
            "--   {name}: staged's hooks are not installed (`{}`)",
            report.install
        ));
    }
    for check in &report.checks {
        match &check.why {
            None => out.line(&format!("{} {}", check.status.word(), check.what))?,
            Some(why) => out.line(&format!("{} {}: {why}", check.status.word(), check.what))?,
        }
    }
    match &report.note {
        Some(note) => out.line(&format!("note {note}")),
        None => Ok(()),
    }
}

fn print_build(out: &Output, build: &BuildReport) -> std::io::Result<()> {
    let Some(hook) = &build.staged_hook else { return Ok(()) };
    let what = format!("staged-hook is this staged's build ({})", hook.path.display());
    match &hook.why {
        None => out.line(&format!("{} {what}: {BUILD}", hook.status.word())),
        Some(why) => out.line(&format!("{} {what}: {why}", hook.status.word())),
    }
}

/// This `staged`'s build, and whether the `staged-hook` beside it, which `staged hook install`
/// writes into the clients' hooks ([`hook_binary`]), is of the same build.
fn build_report() -> BuildReport {
    let staged = staged_binary().unwrap_or_default();
    let beside = hook_binary(&staged);
    let staged_hook = (beside != staged).then(|| hook_report(&staged, beside));
    BuildReport { staged: Binary { path: staged, build: BUILD }, staged_hook }
}

fn hook_report(staged: &Path, path: PathBuf) -> HookBinary {
    let fix = "`staged hook install` writes it into the clients' hooks, which would then run \
               other code than this staged; reinstall: `cargo install --path crates/cli \
               --locked --force` in staged's source installs staged and staged-hook from one \
               build";
    let (build, why) = match build_of(&path) {
        Ok(build) if build == BUILD => (Some(build), None),
        Ok(build) => {
            let older =
                if build.contains("(build ") { "" } else { ", an older build without a build id" };
            let why = format!(
                "it is {build}{older}, and this staged ({}) is {BUILD}; {fix}",
                staged.display()
            );
            (Some(build), Some(why))
        }
        Err(err) => (None, Some(format!("{err}; {fix}"))),
    };
    let status = if why.is_some() { Status::Fail } else { Status::Ok };
    HookBinary { path, build, status, why }
}

/// The build `binary` says it is: what follows `staged-hook ` in what `binary --version`
/// prints.
fn build_of(binary: &Path) -> Result<String, String> {
    let mut child = Command::new(binary)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|err| format!("it does not start ({err})"))?;
    let stdout = child.stdout.take().ok_or("its output could not be read")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.take(4096).read_to_string(&mut text);
        let _ = tx.send(text);
    });
    let Ok(text) = rx.recv_timeout(VERSION_TIMEOUT) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!(
            "it did not answer `--version` within {} s",
            VERSION_TIMEOUT.as_secs()
        ));
    };
    let status = child.wait().map_err(|err| format!("it could not be waited for ({err})"))?;
    if !status.success() {
        return Err(format!("`staged-hook --version` failed ({status})"));
    }
    let text = text.trim();
    match text.strip_prefix("staged-hook ") {
        Some(build) => Ok(build.to_owned()),
        None => Err(format!(
            "`staged-hook --version` printed {text:?}, not `staged-hook <version> (build <id>)`"
        )),
    }
}
