//! Exit codes, defined in one place.

use std::process::ExitCode;

/// How a `staged` invocation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// The command did what was asked (no matches counts as success).
    Success,
    /// The command ran, and its tool result is an error (a stale preview, nothing to apply).
    ToolError,
    /// Bad usage or bad input; nothing was changed.
    Usage,
    /// A command's own exit code, passed on (`staged shell-run`).
    Code(u8),
}

impl Exit {
    /// The exit code, as a number.
    pub(crate) fn code(self) -> i32 {
        match self {
            Exit::Success => 0,
            Exit::ToolError => 1,
            Exit::Usage => 2,
            Exit::Code(code) => i32::from(code),
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        match exit {
            Exit::Success => ExitCode::SUCCESS,
            Exit::ToolError => ExitCode::from(1),
            Exit::Usage => ExitCode::from(2),
            Exit::Code(code) => ExitCode::from(code),
        }
    }
}

/// Whether `err` is a write to a closed pipe, which is not an error for a CLI (`| head`).
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
