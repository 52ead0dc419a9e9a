//! The `staged` command line: argument parsing, exit codes, and presentation.
//!
//! The binary is thin (`main.rs` calls [`main_with_args`]); everything here is testable
//! in-process. Only this crate writes to stdout and stderr.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod demo;
mod exit;
mod output;

use std::{ffi::OsString, process::ExitCode};

use clap::Parser;

use crate::{args::Command, exit::Exit};

/// Parses `args`, runs the command, prints, and maps the outcome to an exit code:
/// 0 success, 1 a tool result that is an error, 2 usage or input errors. A closed stdout
/// (e.g. `staged ... | head`) is success.
pub fn main_with_args<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match args::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { Exit::Usage } else { Exit::Success };
            let _ = err.print();
            return code.into();
        }
    };
    let out = output::Output::new(&cli.global);
    let res = match cli.command {
        Command::Demo(demo) => demo::run(&demo, &out),
    };
    match res {
        Ok(code) => code.into(),
        Err(err) if exit::is_broken_pipe(&err) => Exit::Success.into(),
        Err(err) => {
            eprintln!("error: {err:#}");
            Exit::Usage.into()
        }
    }
}
