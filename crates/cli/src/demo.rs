//! `staged demo`: the stage-then-resolve cycle on two in-memory previews, printed the way a
//! person or a script sees it (the gate's reminder, the forced turn, the resolve blocks).

use std::sync::{Arc, Mutex};

use anyhow::Context;
use staged_agent::{Directives, ResolveGate, ToolCallRef, TurnOutcome};
use staged_core::{
    CancelToken, CustomToolApi, FnPendingAction, InMemoryStore, ResolveOptions, Session,
};
use staged_protocol::{ResolveAction, ResolveParams, ToolResult};
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
    events.push(serde_json::json!({
        "step": "gate",
        "pending": session.store().list()?.iter().map(|e| serde_json::json!({"id": e.id.as_str(), "label": e.label()})).collect::<Vec<_>>(),
        "reminder": reminder,
        "skipped": skipped,
        "forcedToolChoice": forced,
    }));

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
        events.push(serde_json::json!({"step": "resolve", "action": action, "result": result}));
    }
    let written = written.lock().map_err(|_| anyhow::anyhow!("log poisoned"))?.clone();
    events.push(
        serde_json::json!({"step": "done", "applied": written, "pending": session.store().len()?}),
    );

    if out.json {
        for event in &events {
            out.json_line(event).context("writing JSON")?;
        }
        return Ok(Exit::Success);
    }
    out.line("Two previews are staged; nothing has been written.")?;
    out.line(&format!(
        "The model calls `read` instead of resolving. The gate injects:\n{reminder}"
    ))?;
    if let Some(text) = events[0]["skipped"][0].as_str() {
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
