//! Shared test helpers: a temporary workspace with files, a session, and tool calls.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::{path::Path, sync::Arc};

use serde_json::Value;
use staged_ast_edit::{AstEditTool, AstGrepTool};
use staged_core::{CancelToken, InMemoryStore, ResolveOptions, Session, Tool};
use staged_journal::ConfinedRoot;
use staged_protocol::{ResolveParams, ToolResult};

/// A temp dir with files, its workspace, a session and the two tools.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub workspace: ConfinedRoot,
    pub session: Arc<Session>,
    pub edit: AstEditTool,
    pub grep: AstGrepTool,
}

impl Fixture {
    pub fn new(files: &[(&str, &str)]) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            write(dir.path(), path, text);
        }
        let workspace = ConfinedRoot::new(dir.path()).unwrap();
        let session = Arc::new(Session::new(Arc::new(InMemoryStore::new())));
        let edit = AstEditTool::new(Arc::clone(&session), workspace.clone());
        let grep = AstGrepTool::new(Arc::clone(&session), workspace.clone());
        Fixture { dir, workspace, session, edit, grep }
    }

    pub fn root(&self) -> &Path {
        self.workspace.root()
    }

    pub fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.root().join(path)).unwrap()
    }

    pub fn write(&self, path: &str, text: &str) {
        write(self.root(), path, text);
    }

    pub async fn edit(&self, args: Value) -> Result<ToolResult, staged_core::ToolError> {
        self.edit.execute(args, &CancelToken::new()).await
    }

    pub async fn grep(&self, args: Value) -> Result<ToolResult, staged_core::ToolError> {
        self.grep.execute(args, &CancelToken::new()).await
    }

    pub fn has_pending(&self) -> bool {
        !self.session.store().is_empty().unwrap()
    }

    pub async fn apply(&self) -> ToolResult {
        self.session
            .resolve(
                ResolveParams::apply("looks right"),
                ResolveOptions::default(),
                &CancelToken::new(),
            )
            .await
            .unwrap()
    }
}

pub fn write(root: &Path, path: &str, text: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
}

pub fn details(res: &ToolResult) -> &Value {
    res.details.as_ref().unwrap()
}

/// The text of a result with the 4-hex tags replaced by `XXXX`.
pub fn redact_tags(text: &str) -> String {
    let mut res = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(idx) = rest.find('#') {
        res.push_str(&rest[..=idx]);
        rest = &rest[idx + 1..];
        let tag: String = rest.chars().take(4).collect();
        if tag.len() == 4
            && tag.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_lowercase())
            && rest[4..].starts_with(' ')
        {
            res.push_str("XXXX");
            rest = &rest[4..];
        }
    }
    res.push_str(rest);
    res
}
