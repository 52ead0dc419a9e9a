//! The names a custom tool may not take (a built-in's, or one that folds to another's), and
//! the [`LoadError`] of a tool that did not load.

/// The tool names staged's front ends use themselves (`ast_grep`, `ast_edit`, `edit`, `write`,
/// `apply_patch` and `resolve` here; `pending` in `staged mcp`; `read` and `find` in `staged
/// agent`): a custom tool may take none of them, nor a name equal to one once case, `-` and
/// `_` are ignored ([`fold_tool_name`]). This list is the one place the check looks.
pub(crate) const BUILTIN_TOOL_NAMES: &[&str] =
    &["ast_grep", "ast_edit", "edit", "write", "apply_patch", "resolve", "pending", "read", "find"];

/// A tool name as compared with the others: lowercase, without `-` and `_`. `Resolve`,
/// `AST_EDIT` and `ast-edit` fold to a built-in's name, and are refused.
pub(crate) fn fold_tool_name(name: &str) -> String {
    name.chars().filter(|c| *c != '-' && *c != '_').flat_map(char::to_lowercase).collect()
}

/// A custom tool that could not be loaded. Load errors are collected and shown, never fatal:
/// the session opens with the tools that did load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {message}")]
pub struct LoadError {
    /// Where the tool came from, e.g. `custom tool` or `plugin "rename"`.
    pub origin: String,
    /// What went wrong, e.g. `Tool name "ast_edit" conflicts with existing tool`.
    pub message: String,
}

impl LoadError {
    /// A load error from `origin`.
    pub fn new(origin: impl Into<String>, message: impl Into<String>) -> Self {
        Self { origin: origin.into(), message: message.into() }
    }

    /// `Tool name "<name>" conflicts with existing tool`.
    pub(crate) fn conflict(origin: impl Into<String>, name: &str) -> Self {
        Self::new(origin, format!("Tool name \"{name}\" conflicts with existing tool"))
    }

    /// `Tool name "<name>" conflicts with existing tool "<other>" (...)`, for a name that is
    /// another's once case, `-` and `_` are ignored.
    pub(crate) fn look_alike(origin: impl Into<String>, name: &str, other: &str) -> Self {
        Self::new(
            origin,
            format!(
                "Tool name \"{name}\" conflicts with existing tool \"{other}\" (tool names are compared ignoring case, \"-\" and \"_\", so that a model cannot mistake one for the other)"
            ),
        )
    }

    /// `Failed to load tool: <message>`.
    pub fn failed(origin: impl Into<String>, message: impl std::fmt::Display) -> Self {
        Self::new(origin, format!("Failed to load tool: {message}"))
    }
}
