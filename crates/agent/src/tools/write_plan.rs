//! `write`, plan mode's only writing tool: it writes plan files under `.staged/plans/` and
//! nowhere else, so planning can never change the code.

use serde::Serialize;
use serde_json::Value;
use staged_core::{CancelToken, Tool, ToolError};
use staged_protocol::ToolResult;

use crate::{PlanMode, tools::required_str};

/// The plan-file `write` tool.
#[derive(Debug, Clone)]
pub struct WritePlanTool {
    plan: PlanMode,
}

impl WritePlanTool {
    /// A tool writing the plan files of `plan`.
    pub fn new(plan: PlanMode) -> Self {
        Self { plan }
    }

    fn target<'a>(&self, given: &'a str) -> Result<&'a str, ToolError> {
        let prefix = format!("{}/", crate::plan::PLANS_DIR);
        let name = given.strip_prefix(&prefix).unwrap_or(given);
        let valid = !name.is_empty()
            && !name.contains(['/', '\\'])
            && !name.contains("..")
            && !name.starts_with('.')
            && name.ends_with(".md");
        if !valid {
            return Err(ToolError::new(format!(
                "Plan mode writes only plan files: give a name like `my-change-plan.md` (it goes to {}/), not `{given}`.",
                crate::plan::PLANS_DIR
            )));
        }
        Ok(name)
    }
}

#[async_trait::async_trait]
impl Tool for WritePlanTool {
    fn name(&self) -> &str {
        "write"
    }

    fn label(&self) -> &str {
        "Write plan"
    }

    fn description(&self) -> &str {
        "Write the plan file (plan mode only). `path` is a file name such as `rename-api-plan.md`; it is written to .staged/plans/. Writing the same name again replaces the plan."
    }

    fn parameters(&self) -> Value {
        staged_core::parameters_schema::<WritePlanParams>()
    }

    async fn execute(&self, args: Value, cancel: &CancelToken) -> Result<ToolResult, ToolError> {
        if cancel.is_cancelled() {
            return Err(ToolError::aborted(cancel.reason()));
        }
        let name = self.target(required_str(&args, "path")?)?;
        let content = required_str(&args, "content")?;
        let target = self.plan.write_plan(name, content).map_err(|err| {
            ToolError::new(format!("Cannot write {}/{name}: {err}", crate::plan::PLANS_DIR))
        })?;
        let shown = self.plan.display(&target);
        self.plan.record_written(target);
        Ok(ToolResult::text(format!("Wrote {shown} ({} lines).", content.lines().count()))
            .with_details_of(&WrittenPlan { path: shown }))
    }
}

/// Plan mode `write`'s details: the plan file written, relative to the workspace.
#[derive(Serialize)]
struct WrittenPlan {
    path: String,
}

/// Plan mode `write`'s arguments, as its schema declares them (`execute` reads them by key,
/// with its own error texts).
#[derive(schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct WritePlanParams {
    #[schemars(description = "plan file name, e.g. rename-api-plan.md")]
    path: String,
    #[schemars(description = "the whole plan, in Markdown")]
    content: String,
}
