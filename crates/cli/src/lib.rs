//! The `staged` command line: argument parsing, exit codes, and presentation.
//!
//! The binary is thin (`main.rs` calls [`main_with_args`]); everything here is testable
//! in-process. Only this crate writes to stdout and stderr.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod cmd;
mod config;
mod context;
mod demo;
mod diff;
mod exit;
mod mcp;
mod output;
mod pick;
mod progress;
mod review;
mod ui;

use std::{ffi::OsString, process::ExitCode};

use clap::Parser;

use crate::{
    args::{Command, HookOnlyCommand},
    exit::Exit,
};

/// Parses `args`, runs the command, prints, and maps the outcome to an exit code:
/// 0 success (no matches included), 1 a tool result that is an error (a stale preview,
/// nothing to apply), 2 usage or input errors. A closed stdout (`staged ... | head`) is success.
pub fn main_with_args<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    raise_open_file_limit();
    let cli = match args::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { Exit::Usage } else { Exit::Success };
            let _ = err.print();
            return code.into();
        }
    };
    let out = output::Output::new(&cli.global);
    let res = match &cli.command {
        Command::AstEdit(args) => cmd::ast_edit::run(&cli.global, args, &out),
        Command::AstGrep(args) => cmd::ast_grep::run(&cli.global, args, &out),
        Command::Edit(args) => cmd::text_edit::edit(&cli.global, args, &out),
        Command::Write(args) => cmd::text_edit::write(&cli.global, args, &out),
        Command::Patch(args) => cmd::text_edit::patch(&cli.global, args, &out),
        Command::Resolve(args) => cmd::resolve::run(&cli.global, args, &out),
        Command::Pending => cmd::pending::run(&cli.global, &out),
        Command::Show(args) => cmd::show::run(&cli.global, args, &out),
        Command::Review => review::run(&cli.global, &out),
        Command::Ui(args) => ui::run(&cli.global, args),
        Command::Log(args) => cmd::log::run(&cli.global, args, &out),
        Command::Session(args) => cmd::session::run(&cli.global, args, &out),
        Command::Undo(args) => cmd::undo::run(&cli.global, args, &out),
        Command::Redo(args) => cmd::undo::redo(&cli.global, args, &out),
        Command::Mcp(args) => mcp::run(&cli.global, args),
        Command::Demo(args) => demo::run(args, &out),
        Command::Agent(args) => cmd::agent::run(&cli.global, args, &out),
        Command::Tools => cmd::tools::run(&cli.global, &out),
        Command::Tool(args) => cmd::tool::run(&cli.global, args, &out),
        Command::Trust(args) => cmd::trust::run(&cli.global, args, &out),
        Command::Hook(args) => cmd::hook::run(&cli.global, args, &out),
        Command::ShellRun(args) => cmd::shell_run::run(&cli.global, args),
        Command::Doctor => cmd::doctor::run(&cli.global, &out),
    };
    finish(res)
}

/// `staged-hook`'s entry point: [`main_with_args`] for its two commands, `hook <client>` and
/// `shell-run`, whose code is all this binary links (no ast tools, agent or UI).
pub fn hook_main_with_args<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    raise_open_file_limit();
    let cli = match args::HookCli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { Exit::Usage } else { Exit::Success };
            let _ = err.print();
            return code.into();
        }
    };
    let res = match &cli.command {
        HookOnlyCommand::Hook(args) => cmd::hook::run_client(&cli.global, args),
        HookOnlyCommand::ShellRun(args) => cmd::shell_run::run(&cli.global, args),
    };
    finish(res)
}

/// The exit code of a command's outcome, its error printed on one line.
fn finish(res: anyhow::Result<Exit>) -> ExitCode {
    match res {
        Ok(code) => code.into(),
        Err(err) if exit::is_broken_pipe(&err) => Exit::Success.into(),
        Err(err) => {
            eprintln!("error: {}", staged_render::escape_line(&one_line(&format!("{err:#}"))));
            Exit::Usage.into()
        }
    }
}

/// Errors are printed on one line: a multi-line message's lines, blank ones dropped, joined
/// with spaces.
fn one_line(message: &str) -> String {
    let mut lines = message.lines();
    let first = lines.next().unwrap_or_default().to_owned();
    let rest: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
    if rest.is_empty() { first } else { format!("{first} {}", rest.join(" ")) }
}

/// Raises the soft limit on open files to the hard one. The usual soft limit (1,024 on Linux,
/// 256 on macOS) is far below what the system allows, and a search or an apply over thousands
/// of files opens many at once on several threads. The journal holds no descriptor per file
/// (`staged_journal::commit`), so this is headroom, not a need: nothing is said when it fails.
fn raise_open_file_limit() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    /// macOS refuses a soft limit above `OPEN_MAX` (10,240) even when the hard one is
    /// unlimited.
    const FALLBACK: u64 = 10_240;
    let limit = getrlimit(Resource::Nofile);
    if limit.current.is_none() || limit.current == limit.maximum {
        return;
    }
    let raised = Rlimit { current: limit.maximum, maximum: limit.maximum };
    if setrlimit(Resource::Nofile, raised).is_err() {
        let current = limit.current.unwrap_or(0);
        let fallback = limit.maximum.map_or(FALLBACK, |max| max.min(FALLBACK));
        if fallback > current {
            let _ = setrlimit(
                Resource::Nofile,
                Rlimit { current: Some(fallback), maximum: limit.maximum },
            );
        }
    }
}
