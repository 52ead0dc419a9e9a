//! `ResolveGate`: the loop-side state machine that nudges the model to resolve a pending
//! preview before it does anything else (`docs/contract/agent-loop.md`).
//!
//! The gate is pure: the agent loop feeds it the session's directive before each model call
//! and the model's tool calls after it, and follows what it says. It injects the reminder once
//! per new head, never touches `tool_choice` while the model complies, skips every call of a
//! non-compliant turn, forces `resolve` on the next turn, and gives up after three forced turns.

use staged_core::{RESOLVE_REMINDER, RESOLVE_TOOL_NAME};
use staged_protocol::{ToolChoice, ToolResult};

/// The synthetic result of a call skipped because `resolve` was required.
pub const SKIPPED_CALL_TEXT: &str = "Tool call was not executed because the assistant ended its turn: Not executed: call the `resolve` tool to resolve the pending action before using other tools.";

/// How many forced turns the gate allows before it aborts.
const MAX_FORCED_TURNS: u32 = 3;

/// A hidden message the loop adds to the context (a `developer`-role message on the wire).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReminderMessage {
    /// Always `resolve-reminder` for the resolve reminder.
    pub custom_type: String,
    /// The text.
    pub content: String,
    /// Whether a UI shows it; the reminder is hidden.
    pub display: bool,
    /// The tool that staged the pending action.
    pub source_tool_name: String,
}

impl ReminderMessage {
    /// The resolve reminder for a preview staged by `source_tool_name`.
    pub fn resolve(source_tool_name: &str) -> Self {
        Self {
            custom_type: "resolve-reminder".to_owned(),
            content: RESOLVE_REMINDER.to_owned(),
            display: false,
            source_tool_name: source_tool_name.to_owned(),
        }
    }
}

/// A non-forcing requirement to call a tool, identified by the pending head it is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SoftToolRequirement {
    /// The pending head's id; a new id means a new reminder.
    pub id: String,
    /// The required tool: `resolve`.
    pub tool_name: String,
    /// The messages to inject once.
    pub reminder: Vec<ReminderMessage>,
}

/// What the session wants for the next model call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoiceDirective {
    /// A forced choice from the hard queue.
    Hard(ToolChoice),
    /// A soft requirement for the pending head.
    Soft(SoftToolRequirement),
}

/// What the loop does for one logical turn, before calling the model. A re-sample of the same
/// turn (e.g. after a malformed reply) reuses the plan instead of asking the session again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnPlan {
    /// Messages to add to the context before the call.
    pub inject: Vec<ReminderMessage>,
    /// The `tool_choice` to send; `None` leaves the request's default untouched.
    pub tool_choice: Option<ToolChoice>,
    /// The tool the soft requirement asks for, if one is pending.
    pub required_tool: Option<String>,
}

/// One tool call of the model's reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallRef {
    /// The call id.
    pub id: String,
    /// The called tool's name.
    pub name: String,
}

impl ToolCallRef {
    /// A call of `name` with id `id`.
    pub fn new(id: impl Into<String>, name: impl Into<String>) -> Self {
        Self { id: id.into(), name: name.into() }
    }
}

/// What the loop does with the model's reply.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnOutcome {
    /// Run the calls as usual (or end the run when there are none).
    Proceed,
    /// Run none of the calls; give each its synthetic error result, and take another turn,
    /// which will be forced to the required tool.
    Escalate {
        /// `(call id, result)` for every skipped call, in order.
        skipped: Vec<(String, ToolResult)>,
    },
}

/// The gate gave up: the model ignored the requirement through every forced turn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Soft tool requirement '{tool_name}' was not satisfied after {forced_turns} forced turns; aborting to avoid an unbounded force loop."
)]
pub struct GateAbort {
    /// The required tool.
    pub tool_name: String,
    /// How many forced turns were tried.
    pub forced_turns: u32,
}

/// The loop-side state of the soft `resolve` requirement, for one agent run.
#[derive(Debug, Clone, Default)]
pub struct ResolveGate {
    config_tool_choice: Option<ToolChoice>,
    soft_requirement_id: Option<String>,
    escalations: u32,
    forced: Option<ToolChoice>,
}

impl ResolveGate {
    /// A gate for a run whose requests carry `config_tool_choice` by default.
    pub fn new(config_tool_choice: Option<ToolChoice>) -> Self {
        Self { config_tool_choice, ..Self::default() }
    }

    /// Plans one logical turn from the session's directive.
    pub fn begin_turn(&mut self, directive: Option<ToolChoiceDirective>) -> TurnPlan {
        let (hard, soft) = match directive {
            Some(ToolChoiceDirective::Hard(choice)) => (Some(choice), None),
            Some(ToolChoiceDirective::Soft(requirement)) => (None, Some(requirement)),
            None => (None, None),
        };
        let mut inject = Vec::new();
        match &soft {
            Some(requirement) => {
                if self.soft_requirement_id.as_deref() != Some(requirement.id.as_str()) {
                    self.soft_requirement_id = Some(requirement.id.clone());
                    self.escalations = 0;
                    inject.clone_from(&requirement.reminder);
                }
            }
            None => {
                self.soft_requirement_id = None;
                self.escalations = 0;
                self.forced = None;
            }
        }
        let tool_choice =
            hard.or_else(|| self.forced.take()).or_else(|| self.config_tool_choice.clone());
        TurnPlan { inject, tool_choice, required_tool: soft.map(|s| s.tool_name) }
    }

    /// Judges the model's reply to a turn planned by [`ResolveGate::begin_turn`].
    ///
    /// A turn complies only when it makes at least one call and every call is the required
    /// tool. A non-compliant turn is escalated, or aborted after three forced turns.
    pub fn end_turn(
        &mut self,
        plan: &TurnPlan,
        calls: &[ToolCallRef],
    ) -> Result<TurnOutcome, GateAbort> {
        let Some(required) = plan.required_tool.as_deref() else {
            return Ok(TurnOutcome::Proceed);
        };
        if !self.gate_active(required) {
            return Ok(TurnOutcome::Proceed);
        }
        let complies = !calls.is_empty() && calls.iter().all(|call| call.name == required);
        if complies {
            return Ok(TurnOutcome::Proceed);
        }
        if self.escalations >= MAX_FORCED_TURNS {
            return Err(GateAbort {
                tool_name: required.to_owned(),
                forced_turns: self.escalations,
            });
        }
        let skipped = calls
            .iter()
            .map(|call| (call.id.clone(), ToolResult::error(skipped_call_text(required))))
            .collect();
        self.forced = Some(ToolChoice::tool(required));
        self.escalations += 1;
        Ok(TurnOutcome::Escalate { skipped })
    }

    /// How many forced turns were used for the current requirement.
    pub fn escalations(&self) -> u32 {
        self.escalations
    }

    /// Whether the run's static tool choice lets the requirement be enforced: `none`, or a
    /// force of another tool, blocks it.
    fn gate_active(&self, required: &str) -> bool {
        match &self.config_tool_choice {
            None | Some(ToolChoice::Auto | ToolChoice::Required) => true,
            Some(ToolChoice::None) => false,
            Some(ToolChoice::Tool { name }) => name == required,
        }
    }
}

fn skipped_call_text(required: &str) -> String {
    if required == RESOLVE_TOOL_NAME {
        return SKIPPED_CALL_TEXT.to_owned();
    }
    format!(
        "Tool call was not executed because the assistant ended its turn: Not executed: call the `{required}` tool to resolve the pending action before using other tools."
    )
}
