//! `staged demo`: the stage-then-resolve cycle on two in-memory previews, printed the way a
//! person or a script sees it (the gate's reminder, the forced turn, the resolve blocks).

use std::sync::{Arc, Mutex};

use anyhow::Context;
use staged_agent::{Directives, ResolveGate, ToolCallRef, TurnOutcome};
use staged_core::{
    CancelToken, CustomToolApi, FnPendingAction, InMemoryStore, ResolveOptions, Session,
};
use staged_protocol::{ResolveAction, ResolveParams, ToolChoice, ToolResult};
use staged_render::{render_resolve_call, render_resolve_result};

use crate::{args::DemoArgs, exit::Exit, output::Output};

pub(crate) fn run(args: &DemoArgs, out: &Output) -> anyhow::Result<Exit> {
    let session = Arc::new(Session::new(Arc::new(InMemoryStore::new())));
    let api = CustomToolApi::new(Some(Arc::clone(&session)));
    // What the previews would have written, so the demo can show that nothing was.
    let written: Arc<Mutex<Vec<String>>> = Arc::default();

    for (label, source) in [
        ("Config: enable strict mode", "config_preview"),
        ("Batch rename: 3 files", "batch_rename_preview"),
    ] {
        let log = Arc::clone(&written);
        api.push_pending_action(
            FnPendingAction::new(label, move |input| {
                let log = Arc::clone(&log);
                let label = label.to_owned();
                async move {
                    log.lock()
                        .map_err(|_| staged_core::ActionError::other("log poisoned"))?
                        .push(label.clone());
                    Ok(ToolResult::text(format!("Applied {label}. Reason: {}", input.reason)))
                }
            })
            .with_source_tool_name(source),
        )
        .map_err(|e| anyhow::anyhow!(e.to_string()))?;
    }

    let active = ["read", "resolve"];
    let directives = Directives::attach(&session);
    let mut gate = ResolveGate::new(None);
    let mut events = Vec::new();

    // Turn 1: the model ignores the reminder and calls `read`.
    let plan = gate.begin_turn(directives.next_tool_choice_directive(&session, &active)?);
    let reminder = plan.inject.first().map(|m| m.content.clone()).unwrap_or_default();
    let outcome = gate.end_turn(&plan, &[ToolCallRef::new("call-1", "read")])?;
    let skipped = match &outcome {
        TurnOutcome::Escalate { skipped } => {
            skipped.iter().map(|(_, r)| r.text_content()).collect()
        }
        TurnOutcome::Proceed => Vec::new(),
    };
    let forced =
        gate.begin_turn(directives.next_tool_choice_directive(&session, &active)?).tool_choice;
    let first_skipped: Option<String> = skipped.first().cloned();
    let pending = session.store().list()?;
    events.push(DemoEvent::Gate {
        forced_tool_choice: forced,
        pending: pending
            .iter()
            .map(|e| DemoPending { id: e.id.as_str().to_owned(), label: e.label().to_owned() })
            .collect(),
        reminder: reminder.clone(),
        skipped,
    });

    // Turn 2: apply the newest preview; turn 3: discard the older; turn 4: nothing left.
    let cancel = CancelToken::new();
    let calls = [
        ResolveParams::apply(args.apply_reason.clone()),
        ResolveParams::discard(args.discard_reason.clone()),
        ResolveParams::apply(args.apply_reason.clone()),
    ];
    let mut blocks = Vec::new();
    for params in calls {
        let action = params.action;
        let reason = params.reason.clone();
        let result = futures::executor::block_on(session.resolve(
            params,
            ResolveOptions::default(),
            &cancel,
        ))
        .unwrap_or_else(|err| err.to_result());
        blocks.push((action, reason, result.clone()));
        events.push(DemoEvent::Resolve { action, result });
    }
    let written = written.lock().map_err(|_| anyhow::anyhow!("log poisoned"))?.clone();
    events.push(DemoEvent::Done { applied: written.clone(), pending: session.store().len()? });

    if out.json {
        for event in &events {
            // Through a `Value`, whose maps are sorted: the keys print in the order they
            // always have, at every depth.
            let event = serde_json::to_value(event).context("writing JSON")?;
            out.json_line(&event).context("writing JSON")?;
        }
        return Ok(Exit::Success);
    }
    out.line("Two previews are staged; nothing has been written.")?;
    out.line(&format!(
        "The model calls `read` instead of resolving. The gate injects:\n{reminder}"
    ))?;
    if let Some(text) = first_skipped {
        out.line(&format!("...skips the call:\n  {text}"))?;
    }
    out.line("...and forces `resolve` on the next turn.\n")?;
    for (action, reason, result) in blocks {
        out.styled_line(&render_resolve_call(action, &reason, &out.render))?;
        out.styled_line(&render_resolve_result(
            result.details.as_ref(),
            result.is_error,
            &out.render,
        ))?;
        out.line(&format!("  -> {}\n", result.text_content()))?;
        if action == ResolveAction::Apply && result.is_error {
            break;
        }
    }
    out.line(&format!("Applied: {written:?}. Still pending: {}.", session.store().len()?))?;
    Ok(Exit::Success)
}

/// A step of the demo, as `--json` prints it (one line each).
#[derive(serde::Serialize)]
#[serde(tag = "step", rename_all = "camelCase")]
enum DemoEvent {
    /// The gate's turn: what is pending, the reminder, the call it skipped, the forced choice.
    #[serde(rename_all = "camelCase")]
    Gate {
        forced_tool_choice: Option<ToolChoice>,
        pending: Vec<DemoPending>,
        reminder: String,
        skipped: Vec<String>,
    },
    /// A `resolve` call and its result.
    Resolve { action: ResolveAction, result: ToolResult },
    /// The end: what was written, and how many previews are left.
    Done { applied: Vec<String>, pending: usize },
}

/// A pending preview in the gate's step.
#[derive(serde::Serialize)]
struct DemoPending {
    id: String,
    label: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    /// Each typed step is the JSON the demo printed before it was typed.
    #[test]
    fn the_steps_are_the_json_they_always_were() {
        let choice = ToolChoice::Tool { name: "resolve".to_owned() };
        let gate = DemoEvent::Gate {
            forced_tool_choice: Some(choice.clone()),
            pending: vec![DemoPending { id: "p:1".to_owned(), label: "Rename".to_owned() }],
            reminder: "r".to_owned(),
            skipped: vec!["s".to_owned()],
        };
        let before = json!({
            "step": "gate",
            "pending": [{"id": "p:1", "label": "Rename"}],
            "reminder": "r",
            "skipped": ["s"],
            "forcedToolChoice": choice,
        });
        assert_eq!(serde_json::to_value(&gate).unwrap(), before);
        let result = ToolResult::text("Applied.");
        let resolve = DemoEvent::Resolve { action: ResolveAction::Apply, result: result.clone() };
        let before = json!({"step": "resolve", "action": ResolveAction::Apply, "result": result});
        assert_eq!(serde_json::to_value(&resolve).unwrap(), before);
        let done = DemoEvent::Done { applied: vec!["a".to_owned()], pending: 1 };
        let before = json!({"step": "done", "applied": ["a"], "pending": 1});
        assert_eq!(serde_json::to_value(&done).unwrap(), before);
    }
}
