//! `AgentEvent`: what a run reports as it goes. The CLI prints them for a person, or one JSON
//! object per line with `--json`, and the transcript keeps them. They are a wire format
//! (`type` tag, camelCase fields), so they derive `Serialize` here.

use serde::Serialize;
use staged_protocol::{ResolveAction, ToolChoice};

/// One thing that happened during a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum AgentEvent {
    /// The run started.
    RunStart {
        /// `provider/model`.
        model: String,
        /// Whether the run starts in plan mode.
        plan: bool,
        /// The names of the tools the model sees, `resolve` last.
        tools: Vec<String>,
    },
    /// A model call is about to be made.
    TurnStart {
        /// The turn number, from 1.
        turn: u32,
        /// The `tool_choice` sent, if any.
        tool_choice: Option<ToolChoice>,
    },
    /// The resolve reminder was added to the context (once per pending head).
    ReminderInjected {
        /// The turn.
        turn: u32,
        /// The pending head the reminder is for.
        pending_id: String,
        /// The reminder text.
        text: String,
    },
    /// This turn forces a tool because the model did not comply last turn.
    ToolChoiceForced {
        /// The turn.
        turn: u32,
        /// The forced choice.
        tool_choice: ToolChoice,
        /// How many forced turns this requirement has used, this one included.
        escalation: u32,
    },
    /// The provider rejected a forced `tool_choice` (HTTP 400); the turn is retried once with
    /// `auto`, and later forced turns are sent as `auto`.
    ToolChoiceRejected {
        /// The turn.
        turn: u32,
        /// The provider's message.
        message: String,
    },
    /// Streamed text.
    MessageDelta {
        /// The turn.
        turn: u32,
        /// The new text.
        text: String,
    },
    /// Streamed thinking or reasoning summary.
    ThinkingDelta {
        /// The turn.
        turn: u32,
        /// The new text.
        text: String,
    },
    /// The model's reply is complete.
    TurnEnd {
        /// The turn.
        turn: u32,
        /// The reply's text.
        text: String,
        /// How many tools it called.
        tool_calls: usize,
        /// The provider's stop reason.
        stop_reason: Option<String>,
    },
    /// A tool call the model made, about to run.
    ToolCall {
        /// The turn.
        turn: u32,
        /// The call id.
        id: String,
        /// The tool.
        name: String,
        /// The arguments (JSON, or the raw text when it is not JSON).
        arguments: serde_json::Value,
    },
    /// A tool call's result.
    ToolResult {
        /// The turn.
        turn: u32,
        /// The call id.
        id: String,
        /// The tool.
        name: String,
        /// Whether it is an error.
        is_error: bool,
        /// What the model sees.
        text: String,
        /// The tool's details (for `ast_edit`, the preview and its diff).
        details: Option<serde_json::Value>,
    },
    /// The turn did not comply with the pending requirement: none of its calls ran.
    CallsSkipped {
        /// The turn.
        turn: u32,
        /// The skipped calls' ids and names.
        calls: Vec<SkippedCall>,
        /// The synthetic error result each call got.
        text: String,
    },
    /// A `resolve` call finished.
    Resolve {
        /// The turn.
        turn: u32,
        /// The call id.
        id: String,
        /// `apply` or `discard`.
        action: Option<ResolveAction>,
        /// The model's reason.
        reason: String,
        /// Whether the result is an error (`Failed`).
        is_error: bool,
        /// The resolved action's label.
        label: Option<String>,
        /// What the model sees.
        text: String,
        /// The result's details.
        details: Option<serde_json::Value>,
    },
    /// The person approved the plan; the run switched to implementing.
    PlanApproved {
        /// The turn.
        turn: u32,
        /// The plan file.
        path: String,
    },
    /// The gate gave up: the model ignored `resolve` through every forced turn.
    Abort {
        /// The turn.
        turn: u32,
        /// The gate's error text.
        message: String,
    },
    /// The run ended.
    RunEnd {
        /// How it ended.
        outcome: String,
        /// Turns taken.
        turns: u32,
        /// What went wrong, when something did.
        message: Option<String>,
    },
}

/// A call that was not run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedCall {
    /// The call id.
    pub id: String,
    /// The tool.
    pub name: String,
}
