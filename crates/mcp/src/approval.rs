//! Human approval of `resolve apply` (`--approve human`), through MCP elicitation.
//!
//! The person sees the head's label, the agent's reason and a summary of the diff, and
//! answers with a yes/no form. Clients on protocol `2026-07-28` or later get the question as
//! an input-required result (a multi-round-trip request) and retry the call with the answer;
//! older clients get a server-to-client `elicitation/create` request during the call. A
//! client that declared no elicitation capability gets an error result telling the person to
//! resolve from a terminal. Nothing is applied unless the person accepts, and then only the
//! preview they were shown: the server applies it with `Session::resolve`, its id as
//! `ResolveOptions::expected`, so a preview staged while the person was deciding is never
//! applied in its place.

use std::collections::BTreeMap;

use rmcp::{
    RoleServer,
    model::{
        CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
        ElicitationSchema, InputRequest, InputRequiredResult, ProtocolVersion,
    },
    service::RequestContext,
};
use serde::Serialize;
use serde_json::Value;
use staged_core::PendingEntry;
use staged_protocol::{ToolResult, preview_diff};

/// The key of the approval question in an input-required result.
pub(crate) const APPROVAL_INPUT_KEY: &str = "staged_approve_apply";

/// At most this many diff lines are shown in the question.
const DIFF_LINES_SHOWN: usize = 60;

/// What asking the person produced.
#[derive(Debug)]
pub(crate) enum Ask {
    /// The person accepted: apply exactly the preview they were asked about.
    Approved,
    /// Stop here with this (error) result; nothing was applied.
    Stop(ToolResult),
    /// Return this to the client, which asks the person and retries the call with the answer.
    InputRequired(InputRequiredResult),
}

/// Asks the person whether to apply `head`.
pub(crate) async fn ask_to_apply(
    head: &PendingEntry,
    reason: &str,
    state_dir: &std::path::Path,
    request: &CallToolRequestParams,
    ctx: &RequestContext<RoleServer>,
) -> Ask {
    if !supports_form_elicitation(ctx) {
        return Ask::Stop(no_elicitation_result(head));
    }
    let page = crate::page::running_page(state_dir).await;
    let params = match question(head, reason, page) {
        Ok(params) => params,
        Err(err) => {
            return Ask::Stop(stop_result(
                head,
                format!(
                    "Could not build the approval question: {err}. Nothing was applied; `{}` is still pending.",
                    head.label()
                ),
            ));
        }
    };
    let multi_round = ctx.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    if multi_round {
        let answer = request.input_responses.as_ref().and_then(|map| map.get(APPROVAL_INPUT_KEY));
        return match answer {
            None => {
                let mut requests = BTreeMap::new();
                requests.insert(
                    APPROVAL_INPUT_KEY.to_owned(),
                    InputRequest::Elicitation(ElicitRequest::new(params)),
                );
                Ask::InputRequired(InputRequiredResult::new(
                    Some(requests),
                    Some(head.id.as_str().to_owned()),
                ))
            }
            Some(_) if request.request_state.as_deref() != Some(head.id.as_str()) => {
                Ask::Stop(stop_result(head, changed_text()))
            }
            Some(answer) => match serde_json::from_value::<ElicitResult>(answer.clone()) {
                Ok(answer) => interpret(head, &answer),
                Err(err) => Ask::Stop(stop_result(
                    head,
                    format!(
                        "The approval answer could not be read ({err}). Nothing was applied; `{}` is still pending.",
                        head.label()
                    ),
                )),
            },
        };
    }
    match ctx.peer.create_elicitation(params).await {
        Ok(answer) => interpret(head, &answer),
        Err(err) => Ask::Stop(stop_result(
            head,
            format!(
                "Could not ask the person for approval ({err}). Nothing was applied; `{}` is still pending. Resolve it on the review page `staged ui`, in `staged review`, or with `staged resolve apply --reason \"...\"`.",
                head.label()
            ),
        )),
    }
}

/// The error text when the stack's head changed while the person was deciding.
fn changed_text() -> String {
    "The pending stack changed while waiting for approval; nothing was applied. Call `resolve` again to review the current head.".to_owned()
}

fn supports_form_elicitation(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities()
        .and_then(|caps| caps.elicitation)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
}

fn interpret(head: &PendingEntry, answer: &ElicitResult) -> Ask {
    let label = head.label();
    match answer.action {
        ElicitationAction::Accept => {
            let content = answer.content.as_ref();
            let refused =
                content.and_then(|c| c.get(APPROVE_FIELD)).and_then(Value::as_bool) == Some(false);
            let reason = content
                .and_then(|c| c.get(REASON_FIELD))
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|r| !r.is_empty());
            if refused { Ask::Stop(declined_result(head, reason)) } else { Ask::Approved }
        }
        // Claude Code sends a declined form without its content: the person's words travel
        // only in an accepted form whose `approve` is false.
        ElicitationAction::Decline => Ask::Stop(declined_result(head, None)),
        // Cancel, and any action a later protocol adds, leaves the preview pending.
        _ => Ask::Stop(stop_result(
            head,
            format!(
                "The person dismissed the approval request without deciding. Nothing was applied; `{label}` is still pending."
            ),
        )),
    }
}

fn declined_result(head: &PendingEntry, reason: Option<&str>) -> ToolResult {
    let said = match reason {
        Some(reason) => format!(": \"{reason}\""),
        None => String::new(),
    };
    stop_result(
        head,
        format!(
            "The person declined to apply `{}`{said}. Nothing was applied; the preview is still pending. Discard it with `resolve` (action \"discard\") or ask the person what to change.",
            head.label()
        ),
    )
}

fn no_elicitation_result(head: &PendingEntry) -> ToolResult {
    stop_result(
        head,
        format!(
            "This server requires a person to approve every `resolve apply` (--approve human), but this MCP client does not support elicitation, so it cannot ask. Nothing was applied; `{}` is still pending. Ask the person to resolve it in the workspace: on the review page `staged ui`, in `staged review`, or with `staged resolve apply --reason \"...\"` (or `staged resolve discard --reason \"...\"`).",
            head.label()
        ),
    )
}

fn stop_result(head: &PendingEntry, text: String) -> ToolResult {
    ToolResult::error(text).with_details_of(&Stopped {
        applied: false,
        approved: false,
        label: head.label(),
        pending_id: head.id.as_str(),
    })
}

/// The details of an approval that stopped before anything was applied.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Stopped<'a> {
    applied: bool,
    approved: bool,
    label: &'a str,
    pending_id: &'a str,
}

/// The form's decision field: `true` applies.
const APPROVE_FIELD: &str = "approve";
/// The form's reason field, told to the model when the person declines.
const REASON_FIELD: &str = "reason";

fn question(
    head: &PendingEntry,
    reason: &str,
    page: Option<u16>,
) -> Result<ElicitRequestParams, &'static str> {
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: approval_message(head, reason, page),
        requested_schema: approval_form()?,
    })
}

/// The form: a box to tick to apply (ticked at first), and a reason for the agent.
fn approval_form() -> Result<ElicitationSchema, &'static str> {
    ElicitationSchema::builder()
        .required_bool_property(APPROVE_FIELD, |field| {
            field
                .title("Apply this change")
                .description("Write the staged change to the files.")
                .with_default(true)
        })
        .optional_string_with(REASON_FIELD, |field| {
            field.title("Reason").description(
                "Why not (or what to change): the agent is told. To refuse with a reason, untick the box and submit.",
            )
        })
        .build()
}

/// The question shown to the person: label, reason, touched files, the (truncated) diff, and
/// where to see the whole preview: its link on the review page `page` when one is running
/// (`crate::page`), else how to start one.
pub(crate) fn approval_message(head: &PendingEntry, reason: &str, page: Option<u16>) -> String {
    let mut res =
        format!("The agent wants to apply a staged change.\n\n{}\nReason: {reason}", head.label());
    let details = head.action.details();
    let files = head.action.files();
    if !files.is_empty() {
        res.push_str("\n\nFiles:");
        for file in files {
            res.push_str(&format!("\n  {}: {}", file.path, file.summary));
        }
    }
    if let Some(diff) = details.and_then(preview_diff) {
        let lines: Vec<&str> = diff.lines().collect();
        res.push_str("\n\nDiff:\n");
        res.push_str(&lines.iter().take(DIFF_LINES_SHOWN).copied().collect::<Vec<_>>().join("\n"));
        if lines.len() > DIFF_LINES_SHOWN {
            res.push_str(&format!(
                "\n… {} more diff lines (see `staged review`)",
                lines.len() - DIFF_LINES_SHOWN
            ));
        }
    }
    match page {
        Some(port) => res.push_str(&format!(
            "\n\nSee it on the review page: {} (in the browser that opened the address `staged ui` printed).",
            crate::page::preview_link(port, head.id.as_str())
        )),
        None => res.push_str(
            "\n\nTo see it on a review page, run `staged ui` in the workspace (no page is running now).",
        ),
    }
    res
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The form is the JSON Schema it was written as before it was typed, byte for byte.
    #[test]
    fn the_form_is_the_schema_it_always_was() {
        let before = serde_json::json!({
            "type": "object",
            "properties": {
                APPROVE_FIELD: {
                    "type": "boolean",
                    "title": "Apply this change",
                    "description": "Write the staged change to the files.",
                    "default": true
                },
                REASON_FIELD: {
                    "type": "string",
                    "title": "Reason",
                    "description": "Why not (or what to change): the agent is told. To refuse with a reason, untick the box and submit."
                }
            },
            "required": [APPROVE_FIELD]
        });
        let Value::Object(before) = before else { unreachable!() };
        let before = ElicitationSchema::from_json_schema(before).unwrap();
        let form = approval_form().unwrap();
        assert_eq!(serde_json::to_string(&form).unwrap(), serde_json::to_string(&before).unwrap());
    }
}
