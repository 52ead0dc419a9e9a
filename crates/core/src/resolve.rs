//! The hidden `resolve` tool, `run_resolve_invocation` (the runner shared by pending actions
//! and standing handlers), and `ResolveRoutes`, through which an agent loop adds its own
//! dispatch targets around the pending stack.

use std::sync::Arc;

use staged_protocol::{ResolveAction, ResolveDetails, ResolveParams, ToolResult};

use crate::{
    ActionError, CancelToken, PendingAction, ResolveOptions, Retirement, Session, Tool, ToolError,
};

/// The tool's name.
pub const RESOLVE_TOOL_NAME: &str = "resolve";

/// The model-facing description (`docs/contract/resolve.md#the-resolve-tool`).
pub const RESOLVE_DESCRIPTION: &str = include_str!("prompts/resolve.md");

/// The reminder an agent loop injects once per new pending head, and the MCP server appends to
/// results while something is pending.
pub const RESOLVE_REMINDER: &str = "<system-reminder>\nThis is a preview. Call the `resolve` tool to apply or discard these changes.\n</system-reminder>";

/// The longest `reason` `resolve` takes, in characters: a reason says why in a sentence or a
/// paragraph, and it is stored in the log and shown in tables.
pub const MAX_REASON_CHARS: usize = 4000;

/// The longest label of a preview, in characters (a plugin's longer label is refused when it
/// stages it): a label is a one-line summary, shown in every listing.
pub const MAX_LABEL_CHARS: usize = 200;

/// The error of a `reason` that is blank ([`BLANK_REASON_TEXT`]) or longer than
/// [`MAX_REASON_CHARS`], or `None`.
pub(crate) fn reason_too_long(reason: &str) -> Option<ToolError> {
    if reason.trim().is_empty() {
        return Some(ToolError::new(BLANK_REASON_TEXT));
    }
    let chars = reason.chars().count();
    (chars > MAX_REASON_CHARS).then(|| {
        ToolError::new(format!(
            "`reason` is {chars} characters long; a reason is at most {MAX_REASON_CHARS} characters. Nothing was applied or discarded."
        ))
    })
}

/// The error of a `resolve` whose `reason` is empty or only whitespace: nothing runs, so every
/// log entry says why (a deviation from the reference, which never reads `reason`).
pub const BLANK_REASON_TEXT: &str = "`reason` is blank: say in one short sentence why the preview is applied or discarded. Nothing was applied or discarded.";

/// The error of an `apply` with nothing to run.
pub const NO_PENDING_APPLY_TEXT: &str =
    "No pending action to resolve. Nothing to apply or discard.";

/// The success text of a `discard` with nothing to run.
pub(crate) const NOTHING_TO_DISCARD_TEXT: &str = "Nothing to discard; no pending action remains.";

/// Something `resolve` can dispatch to: a hard directive's invoker or the standing handler.
#[async_trait::async_trait]
pub trait ResolveHandler: Send + Sync {
    /// Handles the whole `resolve` call.
    async fn invoke(
        &self,
        params: &ResolveParams,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ToolError>;
}

/// The loop-owned dispatch targets around the pending stack
/// (`docs/contract/resolve.md#dispatch-order`): `resolve` runs the in-flight hard directive's
/// invoker first, then the head of the stack, then the standing handler. An agent loop
/// implements this (`staged_agent::Directives`) and attaches it with
/// [`Session::set_resolve_routes`].
pub trait ResolveRoutes: Send + Sync {
    /// The invoker of the hard directive in flight, if one waits for `resolve`.
    fn in_flight_invoker(&self) -> Option<Arc<dyn ResolveHandler>>;

    /// The mode's standing handler, run when nothing else is pending.
    fn standing_handler(&self) -> Option<Arc<dyn ResolveHandler>>;
}

/// Runs one `resolve` call against one action (`docs/contract/resolve.md`, "Apply" and
/// "Discard").
///
/// * apply: runs `apply(reason, extra, cancel)`. On success, the result's details become
///   [`ResolveDetails`] with the callback's details as `sourceResultDetails`. A [`ToolError`]
///   from the callback passes through unchanged; any other error becomes
///   `Apply failed: <message>`; a cancelled apply becomes `Aborted: <reason>`.
/// * discard: runs `reject`; a returned result wins, otherwise
///   `Discarded: <label>. Reason: <reason>`. Errors from `reject` pass through unwrapped.
///
/// Cancellation is cooperative: the token reaches `apply`, and this function waits for
/// `apply` to return, so an apply never keeps writing behind a caller's back.
pub async fn run_resolve_invocation(
    params: &ResolveParams,
    action: &dyn PendingAction,
    cancel: &CancelToken,
) -> Result<ToolResult, ToolError> {
    run_claimed_invocation(params, action, cancel, &Retirement::detached()).await
}

/// [`run_resolve_invocation`] for a claimed entry: an apply may retire it early through
/// `retirement`.
pub(crate) async fn run_claimed_invocation(
    params: &ResolveParams,
    action: &dyn PendingAction,
    cancel: &CancelToken,
    retirement: &Retirement,
) -> Result<ToolResult, ToolError> {
    let label = action.label().to_owned();
    let base = ResolveDetails {
        action: params.action,
        reason: params.reason.clone(),
        extra: params.extra.clone(),
        source_tool_name: Some(action.source_tool_name().to_owned()),
        label: Some(label.clone()),
        source_result_details: None,
    };
    let extra = params.extra.as_ref();
    match params.action {
        ResolveAction::Apply => {
            if cancel.is_cancelled() {
                return Err(ToolError::aborted(cancel.reason()).with_details(details_json(base)));
            }
            match action.apply_retiring(&params.reason, extra, cancel, retirement).await {
                Ok(result) => {
                    // A partial apply is shown under the label of what it wrote.
                    let mut base = base;
                    if let Some(label) = retirement.applied_label().filter(|_| !result.is_error) {
                        base.label = Some(label);
                    }
                    Ok(merge_details(result, base))
                }
                Err(ActionError::Tool(err)) => Err(with_base(err, base)),
                Err(ActionError::Cancelled) => {
                    Err(ToolError::aborted(cancel.reason()).with_details(details_json(base)))
                }
                Err(ActionError::Other(message)) => {
                    Err(ToolError::new(format!("Apply failed: {message}"))
                        .with_details(details_json(base)))
                }
            }
        }
        ResolveAction::Discard => match action.reject(&params.reason, extra).await {
            Ok(Some(result)) => Ok(merge_details(result, base)),
            Ok(None) => {
                let text = format!("Discarded: {label}. Reason: {}", params.reason);
                Ok(ToolResult::text(text).with_details(details_json(base)))
            }
            Err(ActionError::Tool(err)) => Err(with_base(err, base)),
            Err(ActionError::Cancelled) => {
                Err(ToolError::aborted(cancel.reason()).with_details(details_json(base)))
            }
            Err(ActionError::Other(message)) => {
                Err(ToolError::new(message).with_details(details_json(base)))
            }
        },
    }
}

/// A passed-through tool error keeps its own details; one that has none gets the base
/// details, so that what shows the outcome can name the preview and the reason.
fn with_base(err: ToolError, base: ResolveDetails) -> ToolError {
    if err.details().is_some() { err } else { err.with_details(details_json(base)) }
}

fn merge_details(mut result: ToolResult, mut base: ResolveDetails) -> ToolResult {
    base.source_result_details = result.details.take().filter(|d| !d.is_null());
    result.details = Some(details_json(base));
    result
}

pub(crate) fn details_json(details: ResolveDetails) -> serde_json::Value {
    // Serializing a struct of strings and JSON values into a `Value` cannot fail.
    serde_json::to_value(details).unwrap_or_default()
}

/// The hidden `resolve` tool: applies or discards the newest pending action of a [`Session`].
#[derive(Debug, Clone)]
pub struct ResolveTool {
    session: Arc<Session>,
}

impl ResolveTool {
    /// The tool for `session`.
    pub fn new(session: Arc<Session>) -> Self {
        Self { session }
    }

    /// The JSON Schema of the parameters: strict, `action` an enum, `reason` required, `extra`
    /// an optional object.
    pub fn schema() -> serde_json::Value {
        crate::parameters_schema::<ResolveParams>()
    }
}

#[async_trait::async_trait]
impl Tool for ResolveTool {
    fn name(&self) -> &str {
        RESOLVE_TOOL_NAME
    }

    fn label(&self) -> &str {
        "Resolve"
    }

    fn description(&self) -> &str {
        RESOLVE_DESCRIPTION
    }

    fn parameters(&self) -> serde_json::Value {
        Self::schema()
    }

    fn hidden(&self) -> bool {
        true
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        cancel: &CancelToken,
    ) -> Result<ToolResult, ToolError> {
        let params: ResolveParams = serde_json::from_value(args)
            .map_err(|err| ToolError::new(format!("Invalid resolve arguments: {err}")))?;
        self.session.resolve(params, ResolveOptions::default(), cancel).await
    }
}
