//! Codex's codec: its events have Claude Code's format (and `permission_mode` is
//! `bypassPermissions` when its approval policy is `never`, else `default`); its edits are
//! the `apply_patch` tool (the patch in `command` or `input`) and a shell call (`Bash`,
//! `shell`, `exec_command`, `local_shell`) whose command runs a patch; it reads Claude Code's
//! answers.

use serde_json::Value;

use crate::{
    clients::{
        ToolEdit, claude_code,
        wire::{ClaudeOutput, Decision, Specific, to_json},
    },
    event::{EventName, HookEvent, Reply},
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

/// Claude Code's answer, but for a rewrite: Codex 0.171 takes `updatedInput` only with
/// `permissionDecision: "allow"` (it refuses the answer otherwise: "PreToolUse hook returned
/// updatedInput without permissionDecision:allow"), and only with a string `command`. staged
/// rewrites a Codex shell call only where its approval policy is `never`
/// (`bypassPermissions`), so that allow grants nothing Codex would not.
///
/// # Errors
/// Why the answer could not be written.
pub(crate) fn answer(reply: &Reply) -> Result<Option<Value>, String> {
    match reply {
        Reply::Rewrite(input) => to_json(Specific {
            hook_specific_output: ClaudeOutput {
                permission_decision: Some(Decision::Allow),
                permission_decision_reason: Some(REWRITE_REASON),
                updated_input: Some(input),
                ..ClaudeOutput::of(&EventName::PreToolUse)
            },
        })
        .map(Some),
        other => claude_code::answer(other),
    }
}

/// Why a rewritten shell call is allowed.
const REWRITE_REASON: &str =
    "staged runs this command under staged shell-run, which records or stages what it writes";

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
