//! Plan mode (`docs/contract/agent-loop.md#plan-mode`): the model writes a plan under
//! `.staged/plans/` and calls `resolve` with `action: "apply"` and `extra.title`; the standing
//! handler turns the title into a slug and a file, and asks the person to approve or refine it.
//!
//! The title rules (`docs/contract/agent-loop.md#plan-titles`): `normalize_plan_title`
//! sanitises, `resolve_plan_title` falls back from the supplied title to the plan's first H1,
//! the file name's stem and `plan`, and the file is looked up as `<slug>-plan.md`, then the
//! plan last written, then the newest `*plan.md`. Nothing is renamed.

use std::{
    fmt,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, MutexGuard},
};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use staged_core::{ActionError, CancelToken, PendingAction, ToolError};
use staged_fs::{DirHandle, NewFileMode};
use staged_journal::ConfinedRoot;
use staged_protocol::{JsonObject, ToolResult};

use crate::{PlanDecision, PlanReview, Supervisor};

/// Where plans live, relative to the workspace root.
pub(crate) const PLANS_DIR: &str = ".staged/plans";

/// The plans folder's name inside the state folder.
const PLANS_DIR_NAME: &str = "plans";
/// The standing handler's source tool name.
pub(crate) const PLAN_SOURCE_TOOL: &str = "plan_approval";
/// The standing handler's label: a discard reads `Discarded: Plan ready for approval. Reason: ...`.
pub(crate) const PLAN_LABEL: &str = "Plan ready for approval";

/// Why a title cannot name a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PlanTitleError {
    /// Empty or blank.
    #[error("Plan title is required and must not be empty.")]
    Empty,
    /// Contains `/`, `\` or `..`.
    #[error("Plan title must not contain path separators or '..'.")]
    PathSeparators,
    /// Nothing usable was left after sanitising.
    #[error(
        "Plan title must contain at least one letter, number, underscore, or hyphen after sanitization."
    )]
    EmptyAfterSanitization,
}

/// Sanitises a plan title: trim, refuse paths, drop `.md`, whitespace runs to `-`, keep only
/// `[A-Za-z0-9_-]`, collapse `--`, trim hyphens.
///
/// ```
/// use staged_agent::normalize_plan_title;
/// assert_eq!(normalize_plan_title("plan: v1.0 (draft)").unwrap(), "plan-v10-draft");
/// assert_eq!(normalize_plan_title("My  Improvement Plan.md").unwrap(), "My-Improvement-Plan");
/// ```
pub fn normalize_plan_title(title: &str) -> Result<String, PlanTitleError> {
    let title = title.trim();
    if title.is_empty() {
        return Err(PlanTitleError::Empty);
    }
    if title.contains(['/', '\\']) || title.contains("..") {
        return Err(PlanTitleError::PathSeparators);
    }
    let title = title.strip_suffix(".md").unwrap_or(title);
    let mut res = String::with_capacity(title.len());
    for word in title.split_whitespace() {
        if !res.is_empty() {
            res.push('-');
        }
        res.extend(word.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-'));
    }
    while res.contains("--") {
        res = res.replace("--", "-");
    }
    let res = res.trim_matches('-');
    if res.is_empty() {
        return Err(PlanTitleError::EmptyAfterSanitization);
    }
    Ok(res.to_owned())
}

/// The title a plan approval uses: the supplied title when it is a usable string, else the
/// plan's first `# ` heading, else the plan file's stem, else `plan` (a model may send
/// `extra: {"title": {}}`).
pub(crate) fn resolve_plan_title(
    supplied: Option<&Value>,
    plan_text: Option<&str>,
    plan_file: Option<&Path>,
) -> String {
    let supplied = supplied.and_then(Value::as_str);
    let heading = plan_text.and_then(|text| {
        text.lines()
            .find_map(|line| line.strip_prefix("# ").map(str::trim).filter(|h| !h.is_empty()))
    });
    let stem = plan_file.and_then(|p| p.file_stem()).map(|s| s.to_string_lossy().into_owned());
    [supplied, heading, stem.as_deref()]
        .into_iter()
        .flatten()
        .find_map(|candidate| normalize_plan_title(candidate).ok())
        .unwrap_or_else(|| "plan".to_owned())
}

/// The slug of a title: a trailing `-plan` is dropped, since the file adds it back.
pub(crate) fn plan_slug(title: &str) -> &str {
    title.strip_suffix("-plan").filter(|s| !s.is_empty()).unwrap_or(title)
}

/// The plan-mode state of one run, shared by the loop, the standing handler and the `write`
/// tool.
#[derive(Clone)]
pub struct PlanMode {
    root: PathBuf,
    workspace: ConfinedRoot,
    supervisor: Arc<dyn Supervisor>,
    state: Arc<Mutex<PlanState>>,
}

#[derive(Debug, Default)]
struct PlanState {
    active: bool,
    last_written: Option<PathBuf>,
    approved: Option<PathBuf>,
}

impl fmt::Debug for PlanMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlanMode").field("root", &self.root).field("state", &*self.lock()).finish()
    }
}

impl PlanMode {
    /// Plan mode, active, for `workspace`; `supervisor` approves or refines.
    ///
    /// Plan files live in `.staged/plans/`, which is opened through the workspace's handles:
    /// a `plans` folder or plan file that is a symlink is never followed.
    pub fn new(workspace: ConfinedRoot, supervisor: Arc<dyn Supervisor>) -> Self {
        let state = PlanState { active: true, ..PlanState::default() };
        Self {
            root: workspace.root().to_path_buf(),
            workspace,
            supervisor,
            state: Arc::new(Mutex::new(state)),
        }
    }

    /// The plans folder's handle, when it exists (or was created).
    fn plans(&self, create: bool) -> Option<DirHandle> {
        self.workspace.state_subdir(PLANS_DIR_NAME, create).ok().flatten()
    }

    /// Whether `path` (a file in the plans folder) is a regular file.
    fn is_plan_file(&self, path: &Path) -> bool {
        let Some(name) = path.file_name() else { return false };
        self.plans(false)
            .and_then(|dir| dir.entry_metadata(name).ok().flatten())
            .is_some_and(|meta| meta.is_file())
    }

    /// The text of `path`, a file in the plans folder.
    fn read_plan(&self, path: &Path) -> std::io::Result<String> {
        let name = path.file_name().ok_or_else(|| std::io::Error::other("not a plan file"))?;
        let dir = self.plans(false).ok_or_else(|| std::io::Error::other("no plans folder"))?;
        String::from_utf8(dir.read(name)?).map_err(std::io::Error::other)
    }

    /// Writes the plan file `name` (a single file name) and returns its path.
    pub(crate) fn write_plan(&self, name: &str, content: &str) -> std::io::Result<PathBuf> {
        // Why the folder cannot be used, named from the root (the model needs no absolute
        // path): `.staged/plans is a symlink, and staged never follows one out of its own
        // folder`.
        let dir = match self.workspace.state_subdir(PLANS_DIR_NAME, true) {
            Ok(Some(dir)) => dir,
            Ok(None) => return Err(std::io::Error::other(format!("cannot create {PLANS_DIR}"))),
            Err(staged_journal::JournalError::StateDir { path, message }) => {
                let shown = self.display(&path);
                return Err(std::io::Error::other(format!("{shown} {}", state_reason(&message))));
            }
            Err(err) => return Err(std::io::Error::other(err.to_string())),
        };
        dir.write_replace(name, content.as_bytes(), &NewFileMode::Mode(0o644))?;
        Ok(self.plans_dir().join(name))
    }

    fn lock(&self) -> MutexGuard<'_, PlanState> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether the run is still planning.
    pub fn is_active(&self) -> bool {
        self.lock().active
    }

    /// The approved plan, once the person approved one.
    pub fn approved(&self) -> Option<PathBuf> {
        self.lock().approved.clone()
    }

    /// `<root>/.staged/plans`.
    pub(crate) fn plans_dir(&self) -> PathBuf {
        self.root.join(PLANS_DIR)
    }

    /// A path as shown to the model: relative to the root, with `/`.
    pub fn display(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
    }

    pub(crate) fn record_written(&self, path: PathBuf) {
        self.lock().last_written = Some(path);
    }

    /// The standing handler's action: `resolve apply` asks the person about the plan.
    pub(crate) fn approval_action(&self) -> PlanApproval {
        PlanApproval { plan: self.clone() }
    }

    /// `*plan.md` files under the plans folder, newest first.
    fn listed_plans(&self) -> Vec<PathBuf> {
        let Some(dir) = self.plans(false) else { return Vec::new() };
        let Ok(names) = dir.names() else { return Vec::new() };
        let mut plans: Vec<(std::time::SystemTime, PathBuf)> = names
            .into_iter()
            .filter(|name| name.to_string_lossy().ends_with("plan.md"))
            .filter_map(|name| {
                let meta = dir.entry_metadata(&name).ok().flatten().filter(|m| m.is_file())?;
                Some((meta.modified().ok()?.into_std(), self.plans_dir().join(name)))
            })
            .collect();
        plans.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        plans.into_iter().map(|(_, p)| p).collect()
    }

    /// Finds the plan for `extra.title`: returns `(title, file)`, or the "Plan file not
    /// found" error (`docs/contract/agent-loop.md#approving-a-plan`).
    fn locate(&self, supplied: Option<&Value>) -> Result<(String, PathBuf), ToolError> {
        let state_path = self.lock().last_written.clone().filter(|p| self.is_plan_file(p));
        let context_file = state_path.clone().or_else(|| self.listed_plans().into_iter().next());
        let context_text = context_file.as_deref().and_then(|p| self.read_plan(p).ok());
        let title = resolve_plan_title(supplied, context_text.as_deref(), context_file.as_deref());
        let slug = plan_slug(&title).to_owned();
        let target = self.plans_dir().join(format!("{slug}-plan.md"));
        let found = Some(target.clone())
            .filter(|p| self.is_plan_file(p))
            .or(state_path)
            .or_else(|| self.listed_plans().into_iter().next());
        match found {
            Some(file) => Ok((slug, file)),
            None => {
                let target = self.display(&target);
                Err(ToolError::new(format!(
                    "Plan file not found at {target}. Write the finalized plan to {target} before requesting approval."
                )))
            }
        }
    }
}

/// The standing handler's pending action: never consumed, it runs on every `resolve` that
/// finds no preview pending.
#[derive(Debug, Clone)]
pub(crate) struct PlanApproval {
    plan: PlanMode,
}

#[async_trait::async_trait]
impl PendingAction for PlanApproval {
    fn label(&self) -> &str {
        PLAN_LABEL
    }

    fn source_tool_name(&self) -> &str {
        PLAN_SOURCE_TOOL
    }

    async fn apply(
        &self,
        _reason: &str,
        extra: Option<&JsonObject>,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ActionError> {
        if !self.plan.is_active() {
            return Err(ToolError::new("Plan mode is not active.").into());
        }
        let (title, file) = self.plan.locate(extra.and_then(|e| e.get("title")))?;
        let shown = self.plan.display(&file);
        let content = self
            .plan
            .read_plan(&file)
            .map_err(|err| ToolError::new(format!("Cannot read the plan {shown}: {err}")))?;
        let review = PlanReview { path: &shown, title: &title, content: &content };
        let decision = tokio::select! {
            () = cancel.cancelled() => return Err(ActionError::Cancelled),
            decision = self.plan.supervisor.review_plan(review) => decision,
        };
        let details = |approved: bool, refinement: Option<String>| {
            PlanDetails {
                plan_file_path: shown.clone(),
                title: title.clone(),
                plan_exists: true,
                approved,
                refinement,
            }
            .to_value()
        };
        match decision {
            PlanDecision::Approve => {
                let mut state = self.plan.lock();
                state.active = false;
                state.approved = Some(file.clone());
                drop(state);
                Ok(ToolResult::text(format!(
                    "Plan approved at {shown}. Plan mode exited; proceed with the implementation."
                ))
                .with_details(details(true, None)))
            }
            PlanDecision::Refine(request) => {
                let mut text = "Plan refinement requested. Update the plan file, then call `resolve { action: \"apply\" }` again when ready.".to_owned();
                if !request.trim().is_empty() {
                    text.push_str(&format!("\n\nThe person asked for: {}", request.trim()));
                }
                Ok(ToolResult::text(text)
                    .with_details(details(false, Some(request.trim().to_owned()))))
            }
        }
    }
}

/// The details of a plan approval's result: the plan, and what the person decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanDetails {
    /// The plan's path, relative to the workspace root.
    pub plan_file_path: String,
    /// Its title (slug).
    pub title: String,
    /// Always `true`: a plan that cannot be found is an error.
    pub plan_exists: bool,
    /// Whether the person approved it.
    pub approved: bool,
    /// What the person asked to change (possibly empty), when they did not approve it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refinement: Option<String>,
}

impl PlanDetails {
    /// The details as JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A state folder refusal as the rest of a sentence about the folder: `it is a symlink, ...`
/// reads `is a symlink, ...`; anything else `cannot be used: <why>`.
fn state_reason(message: &str) -> String {
    match message.strip_prefix("it ") {
        Some(rest) => rest.to_owned(),
        None => format!("cannot be used: {message}"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    #[test]
    fn normalize_plan_title_follows_the_reference() {
        let ok = [
            ("words-counter", "words-counter"),
            ("auth.md", "auth"),
            ("My Improvement Plan", "My-Improvement-Plan"),
            ("My   Improvement    Plan", "My-Improvement-Plan"),
            ("plan: v1.0 (draft)", "plan-v10-draft"),
            ("!!! plan !!!", "plan"),
            ("  snake_case-ok  ", "snake_case-ok"),
        ];
        for (input, expected) in ok {
            assert_eq!(normalize_plan_title(input).unwrap(), expected, "{input:?}");
        }
        let errors = [
            ("", "Plan title is required and must not be empty."),
            ("   ", "Plan title is required and must not be empty."),
            ("plans/auth", "Plan title must not contain path separators or '..'."),
            ("..\\auth", "Plan title must not contain path separators or '..'."),
            ("a..b", "Plan title must not contain path separators or '..'."),
            (
                "!!! ???",
                "Plan title must contain at least one letter, number, underscore, or hyphen after sanitization.",
            ),
        ];
        for (input, message) in errors {
            assert_eq!(normalize_plan_title(input).unwrap_err().to_string(), message, "{input:?}");
        }
    }

    #[test]
    fn resolve_plan_title_falls_back_in_the_reference_order() {
        let plan = "intro\n## Not this\n# Code Review: nettools Updated Issues\n# Second\n";
        let file = Path::new("/w/.staged/plans/PLAN.md");
        type Case<'a> = (Option<Value>, Option<&'a str>, Option<&'a Path>, &'a str);
        let cases: [Case<'_>; 8] = [
            (Some(json!("auth-plan")), Some(plan), Some(file), "auth-plan"),
            // A grammar-constrained model sent `{"title": {}}`
            // (`docs/contract/agent-loop.md#plan-titles`).
            (Some(json!({})), Some(plan), Some(file), "Code-Review-nettools-Updated-Issues"),
            (None, Some(plan), Some(file), "Code-Review-nettools-Updated-Issues"),
            (Some(json!("   ")), Some(plan), None, "Code-Review-nettools-Updated-Issues"),
            (Some(json!("../etc")), Some(plan), None, "Code-Review-nettools-Updated-Issues"),
            (None, Some("no heading"), Some(file), "PLAN"),
            (None, None, None, "plan"),
            (Some(json!("???")), Some("# !!!"), None, "plan"),
        ];
        for (supplied, text, path, expected) in cases {
            assert_eq!(resolve_plan_title(supplied.as_ref(), text, path), expected, "{supplied:?}");
        }
        assert_eq!(plan_slug("auth-plan"), "auth");
        assert_eq!(plan_slug("auth"), "auth");
        assert_eq!(plan_slug("-plan"), "-plan");
    }
}
