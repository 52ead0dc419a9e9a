//! Printing a run's events: streamed text, tool calls, each preview's diff and the resolve
//! blocks for a person on the terminal, or one JSON object per event with `--json`.

use std::io::Write;

use serde::Deserialize as _;
use serde_json::Value;
use staged_agent::{AgentEvent, PlanDetails};
use staged_protocol::{ResolveDetails, ResolveParams, preview_diff};
use staged_render::{escape_text, render_resolve_call, render_resolve_result};

use crate::output::Output;

/// At most this many lines of a tool's text are shown to a person.
const RESULT_LINES: usize = 12;

pub(crate) struct Printer {
    out: Output,
    /// Whether streamed text left the cursor mid-line.
    mid_line: bool,
    /// The `resolve` call whose call line is shown already (when it was made, so that it
    /// comes before any question to the person, not after the answer).
    call_shown: Option<String>,
}

impl Printer {
    pub(crate) fn new(out: Output) -> Self {
        Self { out, mid_line: false, call_shown: None }
    }

    /// Prints one event. A closed stdout is not an error worth stopping the run for: the run
    /// goes on and the transcript keeps everything.
    pub(crate) fn event(&mut self, event: &AgentEvent) {
        if self.out.json {
            if let Ok(value) = serde_json::to_value(event) {
                let _ = self.out.json_line(&value);
            }
            return;
        }
        let _ = self.human(event);
    }

    fn line(&mut self, text: &str) -> std::io::Result<()> {
        if self.mid_line {
            self.mid_line = false;
            self.out.write("\n")?;
        }
        self.out.line(text)
    }

    /// A line staged styled itself, printed as it is.
    fn styled_line(&mut self, text: &str) -> std::io::Result<()> {
        if self.mid_line {
            self.mid_line = false;
            self.out.write("\n")?;
        }
        self.out.styled_line(text)
    }

    fn note(&mut self, text: &str) -> std::io::Result<()> {
        let text = escape_text(text);
        let text = if self.out.render.color {
            format!("\x1b[2m· {text}\x1b[0m")
        } else {
            format!("· {text}")
        };
        self.styled_line(&text)
    }

    fn human(&mut self, event: &AgentEvent) -> std::io::Result<()> {
        match event {
            AgentEvent::RunStart { model, plan, .. } => {
                let mode = if *plan { " (plan mode)" } else { "" };
                self.note(&format!("{model}{mode}"))
            }
            AgentEvent::MessageDelta { text, .. } => {
                self.mid_line = !text.ends_with('\n');
                self.out.write(text)
            }
            AgentEvent::TurnEnd { .. } => {
                if self.mid_line {
                    self.mid_line = false;
                    self.out.write("\n")?;
                }
                Ok(())
            }
            AgentEvent::ReminderInjected { pending_id, .. } => {
                self.note(&format!("reminder: resolve the pending preview {pending_id}"))
            }
            AgentEvent::ToolChoiceForced { escalation, .. } => self
                .note(&format!("the model did not resolve; forcing `resolve` ({escalation} of 3)")),
            AgentEvent::ToolChoiceRejected { message, .. } => self.note(&format!(
                "the provider refused a forced tool_choice; retrying with auto ({message})"
            )),
            AgentEvent::CallsSkipped { calls, .. } if calls.is_empty() => self.note(
                "the model answered with text only while a preview is pending; it must resolve it first",
            ),
            AgentEvent::CallsSkipped { calls, .. } => {
                let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
                self.note(&format!(
                    "skipped {} (resolve the pending preview first)",
                    names.join(", ")
                ))
            }
            AgentEvent::ToolCall { id, name, arguments, .. } if name == "resolve" => {
                // Shown now, before `--approve human` asks the person.
                // Arguments `resolve` refuses name no action: its result says why.
                let Ok(params) = ResolveParams::deserialize(arguments) else { return Ok(()) };
                self.call_shown = Some(id.clone());
                let call = render_resolve_call(params.action, &params.reason, &self.out.render);
                self.styled_line(&call)
            }
            AgentEvent::ToolCall { name, arguments, .. } if name != "resolve" => {
                let width = self.out.render.width.unwrap_or(100).saturating_sub(4).max(20);
                let args = compact(arguments, width.saturating_sub(name.len()));
                self.line(&format!("→ {name} {args}"))
            }
            AgentEvent::ToolResult { is_error, text, details, .. } => {
                let diff = details.as_ref().and_then(preview_diff);
                if let (false, Some(diff)) = (*is_error, diff) {
                    let summary = text.lines().next().unwrap_or_default().to_owned();
                    self.line(&format!("  {summary}"))?;
                    return self.out.diff(diff);
                }
                let marker = if *is_error { "✗ " } else { "" };
                let lines: Vec<&str> = text.lines().collect();
                for line in lines.iter().take(RESULT_LINES) {
                    self.line(&format!("  {marker}{line}"))?;
                }
                if lines.len() > RESULT_LINES {
                    self.line(&format!("  … {} more lines", lines.len() - RESULT_LINES))?;
                }
                Ok(())
            }
            AgentEvent::Resolve { id, action, reason, is_error, text, details, .. } => {
                if let Some(action) = action.filter(|_| self.call_shown.as_ref() != Some(id)) {
                    let call = render_resolve_call(action, reason, &self.out.render);
                    self.styled_line(&call)?;
                }
                self.call_shown = None;
                if let Some(request) = plan_refinement(details.as_ref()).filter(|_| !*is_error) {
                    // The person did not approve the plan: nothing was accepted, so there is
                    // no `Accept` block, and the model's text is what it reads next.
                    return if request.is_empty() {
                        self.note("plan not approved; the model revises it")
                    } else {
                        self.note(&format!(
                            "plan not approved; the model revises it (you asked for: {request})"
                        ))
                    };
                }
                let block = render_resolve_result(details.as_ref(), *is_error, &self.out.render);
                self.styled_line(&block)?;
                self.line(text)
            }
            AgentEvent::PlanApproved { path, .. } => {
                self.note(&format!("plan approved ({path}); implementing"))
            }
            AgentEvent::Abort { .. } | AgentEvent::RunEnd { .. } => {
                if self.mid_line {
                    self.mid_line = false;
                    self.out.write("\n")?;
                }
                std::io::stdout().flush()
            }
            AgentEvent::ToolCall { .. }
            | AgentEvent::TurnStart { .. }
            | AgentEvent::ThinkingDelta { .. } => Ok(()),
        }
    }
}

/// What the person asked to change in a plan they did not approve, read from a plan-mode
/// `resolve` result (its details, or the source result's within them); `None` for any other
/// result, an approved plan's included.
fn plan_refinement(details: Option<&Value>) -> Option<String> {
    let details = details?;
    let source = ResolveDetails::deserialize(details)
        .ok()
        .and_then(|d| d.source_result_details)
        .filter(Value::is_object);
    let plan = PlanDetails::deserialize(source.as_ref().unwrap_or(details)).ok()?;
    if plan.approved {
        return None;
    }
    Some(plan.refinement.unwrap_or_default().trim().to_owned())
}

/// Arguments on one line, cut to `width` characters.
fn compact(arguments: &Value, width: usize) -> String {
    let text = arguments.to_string();
    if text.chars().count() <= width {
        return text;
    }
    let mut res: String = text.chars().take(width.saturating_sub(1)).collect();
    res.push('…');
    res
}
