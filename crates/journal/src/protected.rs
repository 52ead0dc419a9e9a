//! The paths no tool stages an edit of: git's folder and the coding agents' control files.
//!
//! A model that could edit `.git/config` (`core.fsmonitor` runs a command at the next
//! `git status`), `.claude/settings.json` (its own permissions) or `staged.toml` (the commands
//! staged's custom tools run) could grant itself what its client refuses it. So `edit`,
//! `write`, `apply_patch` and `ast_edit`, in every front end (the MCP server, `staged agent`,
//! the CLI and the clients' hooks), refuse to stage a change of these paths: a person edits
//! them directly. [`PROTECTED_PATHS`] is the one table (`docs/contract/hooks.md#protected-paths`);
//! a client staged learns to gate later adds its own rows.
//!
//! A row ending in `/` is a folder: any path with that run of components anywhere (so a nested
//! repository's `sub/.git/config` too, and a file named like the folder). A row without `/` is
//! a file name, anywhere. Names compare ignoring ASCII case, as a case-insensitive filesystem
//! would open them.

use std::path::{Component, Path};

use staged_fs::RelPath;

use crate::{ConfinedRoot, JournalError};

/// One protected path: the pattern and whose it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Protected {
    /// `.git/` (a folder, anywhere) or `staged.toml` (a file name, anywhere).
    pub pattern: &'static str,
    /// What it is, for the refusal.
    pub what: &'static str,
}

/// The protected paths (`docs/contract/hooks.md#protected-paths`).
pub const PROTECTED_PATHS: &[Protected] = &[
    Protected { pattern: ".git/", what: "git's own folder, whose config and hooks run commands" },
    Protected { pattern: ".staged/", what: "staged's state folder" },
    Protected { pattern: ".claude/", what: "Claude Code's settings, permissions and hooks" },
    Protected { pattern: ".mcp.json", what: "the MCP servers Claude Code starts" },
    Protected { pattern: ".codex/", what: "Codex's configuration and hooks" },
    Protected { pattern: ".cursor/", what: "Cursor's rules, hooks and MCP servers" },
    Protected { pattern: ".gemini/", what: "Gemini CLI's settings" },
    Protected { pattern: ".qwen/", what: "Qwen Code's settings" },
    Protected { pattern: ".opencode/", what: "opencode's configuration" },
    Protected { pattern: "opencode.json", what: "opencode's configuration" },
    Protected { pattern: "opencode.jsonc", what: "opencode's configuration" },
    Protected { pattern: ".cline/", what: "Cline's rules and hooks" },
    Protected { pattern: ".github/hooks/", what: "the hooks of GitHub's coding agents" },
    Protected { pattern: ".github/mcp.json", what: "the MCP servers Copilot CLI starts" },
    Protected { pattern: "staged.toml", what: "staged's custom tools, which run commands" },
];

/// The row of [`PROTECTED_PATHS`] that `path` (relative to the workspace root) falls under.
pub(crate) fn protected_path(path: &Path) -> Option<&'static Protected> {
    let names: Vec<&str> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_str().unwrap_or("")),
            _ => None,
        })
        .collect();
    PROTECTED_PATHS.iter().find(|row| match row.pattern.strip_suffix('/') {
        Some(folder) => {
            let parts: Vec<&str> = folder.split('/').collect();
            names.windows(parts.len()).any(|run| {
                run.iter().zip(&parts).all(|(name, part)| name.eq_ignore_ascii_case(part))
            })
        }
        // A file: its name, or the run of names that ends the path (`.github/mcp.json`).
        None => {
            let parts: Vec<&str> = row.pattern.split('/').collect();
            names.len() >= parts.len()
                && names[names.len() - parts.len()..]
                    .iter()
                    .zip(&parts)
                    .all(|(name, part)| name.eq_ignore_ascii_case(part))
        }
    })
}

impl ConfinedRoot {
    /// Refuses a change of `rel` (which `given` named) when it, or the path as given before
    /// symlinks were resolved, is a protected path ([`PROTECTED_PATHS`]).
    ///
    /// # Errors
    /// [`JournalError::ProtectedPath`].
    pub fn check_writable(&self, rel: &RelPath, given: &str) -> Result<(), JournalError> {
        let lexical = self
            .lexical(given)
            .ok()
            .and_then(|path| path.strip_prefix(self.root()).ok().map(Path::to_path_buf));
        let row =
            protected_path(rel.as_path()).or_else(|| lexical.as_deref().and_then(protected_path));
        match row {
            Some(row) => Err(JournalError::ProtectedPath {
                path: rel.display(),
                pattern: row.pattern,
                what: row.what,
            }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn every_row_is_refused_anywhere_and_in_any_case() {
        for (path, pattern) in [
            (".git/config", ".git/"),
            ("vendor/lib/.git/hooks/pre-commit", ".git/"),
            (".git", ".git/"),
            (".GIT/config", ".git/"),
            (".staged/x", ".staged/"),
            (".claude/settings.json", ".claude/"),
            (".Claude/settings.local.json", ".claude/"),
            (".mcp.json", ".mcp.json"),
            ("pkg/.mcp.json", ".mcp.json"),
            (".codex/config.toml", ".codex/"),
            (".cursor/hooks.json", ".cursor/"),
            (".gemini/settings.json", ".gemini/"),
            (".qwen/settings.json", ".qwen/"),
            (".opencode/x", ".opencode/"),
            ("opencode.json", "opencode.json"),
            ("opencode.jsonc", "opencode.jsonc"),
            (".cline/x", ".cline/"),
            (".github/hooks/h.json", ".github/hooks/"),
            (".github/mcp.json", ".github/mcp.json"),
            ("pkg/.GitHub/MCP.json", ".github/mcp.json"),
            ("staged.toml", "staged.toml"),
            ("tools/Staged.toml", "staged.toml"),
        ] {
            assert_eq!(protected_path(Path::new(path)).map(|r| r.pattern), Some(pattern), "{path}");
        }
        for path in [
            ".gitignore",
            ".github/workflows/ci.yml",
            "src/git/config.ts",
            "hooks/.github",
            "src/claude.ts",
            "mcp.json",
            "github/mcp.json",
            ".github/mcp.json.bak",
            "staged.toml.md",
        ] {
            assert_eq!(protected_path(Path::new(path)), None, "{path}");
        }
    }

    #[test]
    fn a_symlink_either_way_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join("conf")).unwrap();
        std::os::unix::fs::symlink(".git", dir.path().join("g")).unwrap();
        std::os::unix::fs::symlink("conf", dir.path().join(".claude")).unwrap();
        let ws = ConfinedRoot::new(dir.path()).unwrap();
        // `g/config` is `.git/config` once resolved; `.claude/x` resolves to `conf/x`.
        let err = ws.check_writable(&RelPath::new(".git/config").unwrap(), "g/config").unwrap_err();
        assert!(matches!(err, JournalError::ProtectedPath { pattern: ".git/", .. }), "{err}");
        let err = ws.check_writable(&RelPath::new("conf/x").unwrap(), ".claude/x").unwrap_err();
        assert!(matches!(err, JournalError::ProtectedPath { pattern: ".claude/", .. }), "{err}");
        assert!(ws.check_writable(&RelPath::new("src/a.ts").unwrap(), "src/a.ts").is_ok());
    }
}
