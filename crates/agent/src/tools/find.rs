//! `find`: the workspace's files whose paths match a glob, honouring `.gitignore`.

use serde::Serialize;
use serde_json::Value;
use staged_core::{CancelToken, Tool, ToolError, worker_failure};
use staged_journal::{ConfinedRoot, ModelAccess, STATE_DIR_NAME};
use staged_protocol::ToolResult;
use staged_workspace::compile_glob;

use crate::tools::{refuse_unknown, required_str};

/// At most this many paths are listed.
const MAX_RESULTS: usize = 500;

/// The read-only `find` tool, confined to the workspace.
#[derive(Debug, Clone)]
pub struct FindTool {
    workspace: ConfinedRoot,
}

impl FindTool {
    /// A tool listing files under `workspace`.
    pub fn new(workspace: ConfinedRoot) -> Self {
        Self { workspace }
    }
}

#[async_trait::async_trait]
impl Tool for FindTool {
    fn name(&self) -> &str {
        "find"
    }

    fn label(&self) -> &str {
        "Find"
    }

    fn description(&self) -> &str {
        "Find files by glob, relative to `path` (default: the workspace root). `*.ts` matches direct children, `**/*.ts` recurses. Honours .gitignore. Read-only."
    }

    fn parameters(&self) -> Value {
        staged_core::parameters_schema::<FindParams>()
    }

    fn read_only(&self) -> bool {
        true
    }

    async fn execute(&self, args: Value, cancel: &CancelToken) -> Result<ToolResult, ToolError> {
        if cancel.is_cancelled() {
            return Err(ToolError::aborted(cancel.reason()));
        }
        refuse_unknown(&args, &["pattern", "path"])?;
        let pattern = required_str(&args, "pattern")?.to_owned();
        let given = args.get("path").and_then(Value::as_str).unwrap_or(".").to_owned();
        let rel = self
            .workspace
            .resolve_for_model(&given, ModelAccess::Any)
            .map_err(|err| ToolError::new(err.to_string()))?;
        let is_dir = match &rel {
            None => true,
            Some(rel) => self.workspace.fs().symlink_metadata(rel).is_ok_and(|meta| meta.is_dir()),
        };
        if !is_dir {
            return Err(ToolError::new(format!("{given} is not a directory")));
        }
        let dir = match &rel {
            None => self.workspace.root().to_path_buf(),
            Some(rel) => self.workspace.root().join(rel.as_path()),
        };
        // A glob too long or too complex for globset is an input error, never a panic.
        let glob = compile_glob(&pattern).map_err(|err| err.to_tool_error())?;
        let workspace = self.workspace.clone();
        let walk_cancel = cancel.clone();
        let work = tokio::task::spawn_blocking(move || {
            let cancel = walk_cancel;
            let mut found = Vec::new();
            let walker = ignore::WalkBuilder::new(&dir)
                .hidden(false)
                .require_git(false)
                .filter_entry(|e| e.file_name() != ".git" && e.file_name() != STATE_DIR_NAME)
                .build();
            for entry in walker.flatten() {
                if cancel.is_cancelled() {
                    return Err(ToolError::aborted(cancel.reason()));
                }
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    continue;
                }
                let Ok(rel) = entry.path().strip_prefix(&dir) else { continue };
                if glob.is_match(rel) {
                    found.push(workspace.display_path(entry.path()));
                }
            }
            found.sort();
            Ok(found)
        });
        let found = tokio::select! {
            () = cancel.cancelled() => return Err(ToolError::aborted(cancel.reason())),
            res = work => res.map_err(|err| ToolError::new(worker_failure("find", err)))??,
        };
        let total = found.len();
        if total == 0 {
            return Ok(ToolResult::text("No files found").with_details_of(&FindDetails { total }));
        }
        let mut res = found.iter().take(MAX_RESULTS).cloned().collect::<Vec<_>>().join("\n");
        if total > MAX_RESULTS {
            res.push_str(&format!(
                "\n\nLimit reached ({MAX_RESULTS} of {total}); narrow the pattern."
            ));
        }
        Ok(ToolResult::text(res).with_details_of(&FindDetails { total }))
    }
}

/// `find`'s details: how many paths matched (the text shows at most [`MAX_RESULTS`]).
#[derive(Serialize)]
struct FindDetails {
    total: usize,
}

/// `find`'s arguments, as its schema declares them (`execute` reads them by key, with its own
/// error texts).
#[derive(schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct FindParams {
    #[schemars(description = "glob, e.g. **/*.rs")]
    pattern: String,
    #[serde(default)]
    #[schemars(
        with = "String",
        description = "directory to search, relative to the workspace root"
    )]
    path: Option<String>,
}
