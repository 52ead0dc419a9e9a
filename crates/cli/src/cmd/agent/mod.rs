//! `staged agent [--provider P] [--model M] [--base-url URL] [--plan] [--approve human]
//! [--max-turns N] [--json] TASK`: a codemod agent in which every change is a preview that the
//! model (or, with `--approve human`, the person) resolves with a reason.
//!
//! This is where the environment and the user config directory are read: `staged.toml` from
//! the user config directory, then from the workspace root (whose endpoint settings count only
//! once the user trusted it with `staged trust`), then the flags; the API key from the
//! variable the provider names. The plugins' tools are offered to the model beside the
//! built-in ones. The run itself is `staged_agent::Agent::run`.

mod person;
mod print;

use std::sync::Arc;

use staged_agent::{
    Agent, AgentOptions, Approval, FindTool, PlanMode, ProviderOverrides, ReadTool, RunOutcome,
    Supervisor, save_transcript,
};
use staged_core::Tool;

use crate::{
    args::{AgentArgs, ApproveArg, GlobalArgs},
    cmd::Effect,
    config::Files,
    context,
    exit::Exit,
    output::Output,
};

pub(crate) fn run(global: &GlobalArgs, args: &AgentArgs, out: &Output) -> anyhow::Result<Exit> {
    let root = context::workspace_root(global)?;
    let config = Files::read(&root)?.providers()?;
    let overrides = ProviderOverrides {
        provider: args.provider.clone(),
        model: args.model.clone(),
        base_url: args.base_url.clone(),
    };
    let provider = config.resolve(&overrides)?;
    let api_key = provider.api_key_env.as_deref().and_then(|name| std::env::var(name).ok());
    let client = staged_agent::connect(&provider, api_key.as_deref())?;
    let model = client.describe();
    let max_turns = args
        .max_turns
        .or(config.agent_defaults().max_turns)
        .unwrap_or(staged_agent::DEFAULT_MAX_TURNS);

    let runtime = context::runtime()?;
    let (mut ws, host) = context::open_with_plugins(global, &runtime, Effect::Serves)?;
    // An agent searches one tree many times: list and filter files from a warm index
    // (`STAGED_WARM_INDEX=0` walks the tree on every search instead).
    if context::warm_index_wanted()
        && let Err(err) = ws.start_warm_index()
    {
        context::warn(&format!("no warm index, every search walks the tree: {err}"));
    }
    let _closes_index = context::ClosesIndex(ws.warm_index().cloned());
    // The log records the loop's resolves as the agent's.
    ws.session().set_front_end(staged_core::FrontEnd::Agent);
    // One agent session per run: what it stages and applies is its own, and its `resolve`
    // acts on its own previews and the person's, never another agent session's
    // (docs/contract/sessions.md#identity).
    let mut person = person::TerminalPerson::new(out.clone());
    if let Some(store) = ws.sqlite() {
        let run = staged_session::process::process(std::process::id())
            .map_or_else(|| std::process::id().to_string(), |p| p.key());
        if let Ok(row) = store.open_session("agent", &run, None) {
            let _ = store.title_session(row.number, task_title(&args.task));
            store.set_scope(staged_store::SessionScope::agent(row.number));
            person = person.with_session(Arc::clone(store), row.number);
        }
    }
    let person: Arc<dyn Supervisor> = Arc::new(person);
    let mut tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(ReadTool::new(ws.workspace().clone())),
        Arc::new(FindTool::new(ws.workspace().clone())),
    ];
    tools.extend(ws.tools());
    let approval = match args.approve {
        ApproveArg::None => Approval::Model,
        ApproveArg::Human => Approval::Human,
    };
    let mut agent = Agent::new(client, ws.session().clone(), tools)
        .with_options(AgentOptions { max_turns, approval })
        .with_supervisor(Arc::clone(&person));
    if args.plan {
        agent = agent.with_plan_mode(PlanMode::new(ws.workspace().clone(), person));
    }

    let mut printer = print::Printer::new(out.clone());
    let task = args.task.clone();
    let report = context::block_on_in(&runtime, |cancel| async move {
        agent.run(&task, &mut |event| printer.event(event), &cancel).await
    });
    runtime.block_on(host.shutdown());
    let report = report?;
    match save_transcript(ws.workspace(), &args.task, &model, &report) {
        Ok(path) => {
            let shown =
                path.strip_prefix(ws.workspace().root()).unwrap_or(&path).display().to_string();
            if out.json {
                out.json_line(&TranscriptLine { path: &shown, kind: "transcript" })?;
            } else {
                eprintln!("staged: transcript saved to {shown}");
            }
        }
        Err(err) => eprintln!("staged: could not save the transcript: {err}"),
    }
    if let Some(message) = report.outcome.message() {
        eprintln!("error: {}", staged_render::escape_line(&message));
    }
    if let Some(head) = still_pending(&report.outcome, &ws) {
        eprintln!("{head}");
    }
    Ok(exit_code(&report.outcome))
}

/// For a run that stopped with a preview still pending (an abort, `--max-turns`, Ctrl-C),
/// what is pending and how a person resolves it. A failed apply's message says it already.
/// A run's title: its task's first non-blank line.
fn task_title(task: &str) -> &str {
    task.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("staged agent")
}

fn still_pending(outcome: &RunOutcome, ws: &staged_workspace::WorkspaceSession) -> Option<String> {
    if !matches!(
        outcome,
        RunOutcome::GateAborted(_) | RunOutcome::MaxTurns(_) | RunOutcome::Cancelled
    ) {
        return None;
    }
    let head = ws.store().head_summary().ok().flatten()?;
    Some(format!(
        "staged: the preview `{}` ({}) is still pending; nothing of it was written. Resolve it with `staged review`, or `staged resolve apply|discard --reason \"...\"`.",
        staged_render::escape_line(&head.label),
        staged_render::escape_line(head.id.as_str())
    ))
}

/// 0 done; 1 the gate aborted, the run was interrupted or stopped early, or a failed apply is
/// still pending; 2 the provider could not be used (unreachable, refused, failing).
fn exit_code(outcome: &RunOutcome) -> Exit {
    match outcome {
        RunOutcome::Done => Exit::Success,
        RunOutcome::GateAborted(_)
        | RunOutcome::ApplyLeftPending { .. }
        | RunOutcome::MaxTurns(_)
        | RunOutcome::Cancelled => Exit::ToolError,
        RunOutcome::Model(_) | RunOutcome::Store(_) => Exit::Usage,
    }
}

/// The line `--json` ends with when the transcript is saved: where it is. Its fields in sorted
/// order, as the line has always been printed.
#[derive(serde::Serialize)]
struct TranscriptLine<'a> {
    path: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The typed line prints the bytes `json!` printed (keys sorted).
    #[test]
    fn the_transcript_line_is_the_bytes_it_always_was() {
        let line = TranscriptLine { path: ".staged/transcripts/t.json", kind: "transcript" };
        let before =
            serde_json::json!({"type": "transcript", "path": ".staged/transcripts/t.json"});
        assert_eq!(serde_json::to_string(&line).unwrap(), before.to_string());
    }
}
