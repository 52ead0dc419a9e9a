//! Codex's codec: its events have Claude Code's format (and `permission_mode` is
//! `bypassPermissions` when its approval policy is `never`, else `default`); its edits are
//! the `apply_patch` tool (the patch in `command` or `input`) and a shell call (`Bash`,
//! `shell`, `exec_command`, `local_shell`) whose command runs a patch; it reads Claude Code's
//! answers.

use crate::{
    clients::{ToolEdit, claude_code},
    event::HookEvent,
    gate::shell_patch_of,
    shell::ShellPatch,
};

/// The client's name for people.
pub(crate) const DISPLAY: &str = "Codex";

/// What its edit is called in a deny text.
pub(crate) const WHAT: &str = "patch";

/// Reads one event (Claude Code's format).
pub(crate) fn parse(input: &[u8]) -> Result<HookEvent, String> {
    claude_code::parse(input)
}

/// `apply_patch` is a patch; a shell call is one when its command runs a patch.
pub(crate) fn edit(event: &HookEvent) -> Option<ToolEdit> {
    match event.tool_name.as_deref()? {
        "apply_patch" => Some(ToolEdit::Patch),
        "Bash" | "shell" | "exec_command" | "local_shell"
            if shell_patch_of(event) != ShellPatch::None =>
        {
            Some(ToolEdit::ShellPatch)
        }
        _ => None,
    }
}
