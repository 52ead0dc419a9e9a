//! The soft `resolve` requirement driven through a small agent loop
//! (`docs/contract/agent-loop.md`), and the abort after three forced turns.

use std::{
    collections::VecDeque,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use crate::{ResolveGate, SKIPPED_CALL_TEXT, ToolCallRef, TurnOutcome};

use staged_core::{CancelToken, FnPendingAction, RESOLVE_REMINDER, ResolveOptions};
use staged_gate::DirectiveOptions;
use staged_protocol::{ResolveParams, ToolChoice, ToolResult};

use super::harness::{LoopSession, block_on, session};

/// What the scripted model answers.
enum Reply {
    Calls(Vec<(&'static str, &'static str)>),
    Text,
    /// A malformed reply (e.g. a Harmony leak); the loop re-samples the same turn.
    Leaked,
}

#[derive(Debug, PartialEq)]
enum Message {
    Reminder(String),
    Assistant(Vec<String>),
    ToolResult { call_id: String, is_error: bool, text: String },
}

#[derive(Default)]
struct Run {
    tool_choices: Vec<Option<ToolChoice>>,
    messages: Vec<Message>,
    resolve_runs: usize,
    peek_runs: usize,
    error: Option<String>,
}

fn run_loop(session: &Arc<LoopSession>, replies: Vec<Reply>) -> Run {
    let mut replies: VecDeque<Reply> = replies.into();
    let mut gate = ResolveGate::new(None);
    let mut run = Run::default();
    let active = ["resolve", "peek"];
    'turns: loop {
        let directive = session.next_tool_choice_directive(&active).unwrap();
        let plan = gate.begin_turn(directive);
        for reminder in &plan.inject {
            run.messages.push(Message::Reminder(reminder.content.clone()));
        }
        let calls = loop {
            run.tool_choices.push(plan.tool_choice.clone());
            match replies.pop_front().expect("the model ran out of replies") {
                Reply::Leaked => continue,
                Reply::Text => break Vec::new(),
                Reply::Calls(calls) => {
                    break calls
                        .into_iter()
                        .map(|(id, name)| ToolCallRef::new(id, name))
                        .collect::<Vec<_>>();
                }
            }
        };
        session.with_tool_choice_queue(|q| q.mark_served());
        run.messages.push(Message::Assistant(calls.iter().map(|c| c.name.clone()).collect()));
        match gate.end_turn(&plan, &calls) {
            Err(abort) => {
                run.error = Some(abort.to_string());
                break 'turns;
            }
            Ok(TurnOutcome::Escalate { skipped }) => {
                for (call_id, result) in skipped {
                    run.messages.push(Message::ToolResult {
                        call_id,
                        is_error: result.is_error,
                        text: result.text_content(),
                    });
                }
            }
            Ok(TurnOutcome::Proceed) => {
                if calls.is_empty() {
                    break 'turns;
                }
                for call in calls {
                    let result = match call.name.as_str() {
                        "resolve" => {
                            run.resolve_runs += 1;
                            block_on(session.resolve(
                                ResolveParams::apply("ok"),
                                ResolveOptions::default(),
                                &CancelToken::new(),
                            ))
                            .unwrap_or_else(|e| e.to_result())
                        }
                        _ => {
                            run.peek_runs += 1;
                            ToolResult::text("peeked")
                        }
                    };
                    run.messages.push(Message::ToolResult {
                        call_id: call.id,
                        is_error: result.is_error,
                        text: result.text_content(),
                    });
                }
            }
        }
    }
    run
}

fn staged_session() -> Arc<LoopSession> {
    let session = session();
    session
        .push_pending_action(Arc::new(
            FnPendingAction::new("AST Edit: 1 replacement in 1 file", |_| async {
                Ok(ToolResult::text("Applied"))
            })
            .with_source_tool_name("ast_edit"),
        ))
        .unwrap();
    session
}

fn reminders(run: &Run) -> usize {
    run.messages
        .iter()
        .filter(|m| matches!(m, Message::Reminder(t) if t == RESOLVE_REMINDER))
        .count()
}

#[test]
fn never_forces_tool_choice_when_the_model_complies_with_the_reminder() {
    let run = run_loop(&staged_session(), vec![Reply::Calls(vec![("r1", "resolve")]), Reply::Text]);
    assert_eq!(run.resolve_runs, 1);
    assert_eq!(run.tool_choices, [None, None]);
    assert_eq!(reminders(&run), 1);
    assert_eq!(run.messages[0], Message::Reminder(RESOLVE_REMINDER.to_owned()));
}

#[test]
fn skips_a_detour_batch_and_force_escalates_resolve_on_the_next_turn() {
    let run = run_loop(
        &staged_session(),
        vec![
            Reply::Calls(vec![("p1", "peek"), ("r0", "resolve")]),
            Reply::Calls(vec![("r1", "resolve")]),
            Reply::Text,
        ],
    );
    assert_eq!(run.peek_runs, 0);
    assert_eq!(run.resolve_runs, 1);
    assert_eq!(run.tool_choices[0], None);
    assert_eq!(run.tool_choices[1], Some(ToolChoice::tool("resolve")));
    assert_eq!(run.tool_choices[2], None, "the force lasts one turn");
    // Every skipped call still has a paired result with the exact synthetic text.
    for id in ["p1", "r0"] {
        assert!(run.messages.contains(&Message::ToolResult {
            call_id: id.to_owned(),
            is_error: true,
            text: SKIPPED_CALL_TEXT.to_owned()
        }));
    }
    assert_eq!(reminders(&run), 1);
}

#[test]
fn does_not_yield_while_the_requirement_is_unmet_and_escalates_after_a_bare_text_turn() {
    let run = run_loop(
        &staged_session(),
        vec![Reply::Text, Reply::Calls(vec![("r1", "resolve")]), Reply::Text],
    );
    assert_eq!(run.resolve_runs, 1);
    assert!(run.tool_choices.len() >= 2);
    assert_eq!(run.tool_choices[1], Some(ToolChoice::tool("resolve")));
}

#[test]
fn leaves_tool_choice_untouched_when_no_requirement_is_pending() {
    let run = run_loop(&session(), vec![Reply::Text]);
    assert_eq!(run.tool_choices, [None]);
    assert_eq!(reminders(&run), 0);
}

#[test]
fn reuses_the_fetched_hard_tool_choice_across_a_retry_instead_of_re_consuming_it() {
    let session = session();
    session.with_tool_choice_queue(|q| {
        q.push_sequence(
            vec![ToolChoice::tool("peek"), ToolChoice::tool("resolve")],
            DirectiveOptions { label: Some("forces".into()), ..Default::default() },
        );
    });
    let mut gate = ResolveGate::new(None);
    let plan = gate.begin_turn(session.next_tool_choice_directive(&["peek", "resolve"]).unwrap());
    // The loop re-samples the same logical turn with the same plan.
    let retry = plan.clone();
    assert_eq!(plan.tool_choice, Some(ToolChoice::tool("peek")));
    assert_eq!(retry.tool_choice, plan.tool_choice);
    // The second choice was not consumed by the retry.
    assert_eq!(session.with_tool_choice_queue(|q| q.inspect()), ["forces"]);
    let run =
        run_loop(&session, vec![Reply::Leaked, Reply::Calls(vec![("p1", "peek")]), Reply::Text]);
    assert_eq!(run.tool_choices[0], run.tool_choices[1], "the retry reused the directive");
    assert_eq!(run.tool_choices[0], Some(ToolChoice::tool("resolve")));
    assert_eq!(session.with_tool_choice_queue(|q| q.inspect()), Vec::<String>::new());
}

#[test]
fn aborts_after_three_forced_turns() {
    let run = run_loop(
        &staged_session(),
        vec![
            Reply::Calls(vec![("p1", "peek")]),
            Reply::Calls(vec![("p2", "peek")]),
            Reply::Calls(vec![("p3", "peek")]),
            Reply::Calls(vec![("p4", "peek")]),
        ],
    );
    assert_eq!(run.tool_choices.len(), 4);
    assert_eq!(
        run.tool_choices[1..],
        [
            Some(ToolChoice::tool("resolve")),
            Some(ToolChoice::tool("resolve")),
            Some(ToolChoice::tool("resolve"))
        ]
    );
    assert_eq!(run.peek_runs, 0);
    assert_eq!(
        run.error.as_deref(),
        Some(
            "Soft tool requirement 'resolve' was not satisfied after 3 forced turns; aborting to avoid an unbounded force loop."
        )
    );
}

#[test]
fn injects_the_reminder_again_when_the_next_preview_becomes_the_head() {
    let session = staged_session();
    session
        .push_pending_action(Arc::new(FnPendingAction::new("Second", |_| async {
            Ok(ToolResult::text("ok"))
        })))
        .unwrap();
    let run = run_loop(
        &session,
        vec![
            Reply::Calls(vec![("r1", "resolve")]),
            Reply::Calls(vec![("r2", "resolve")]),
            Reply::Text,
        ],
    );
    assert_eq!(run.resolve_runs, 2);
    assert_eq!(reminders(&run), 2);
    assert_eq!(run.tool_choices, [None, None, None]);
}

#[test]
fn a_failed_resolve_keeps_the_id_so_no_new_reminder_and_the_next_detour_escalates() {
    let session = session();
    let attempts = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&attempts);
    session
        .push_pending_action(Arc::new(FnPendingAction::new("Flaky", move |_| {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            async move {
                if n == 0 {
                    Err(staged_core::ActionError::other("busy"))
                } else {
                    Ok(ToolResult::text("ok"))
                }
            }
        })))
        .unwrap();
    let run = run_loop(
        &session,
        vec![
            Reply::Calls(vec![("r1", "resolve")]),
            Reply::Calls(vec![("p1", "peek")]),
            Reply::Calls(vec![("r2", "resolve")]),
            Reply::Text,
        ],
    );
    assert_eq!(reminders(&run), 1);
    assert_eq!(run.tool_choices, [None, None, Some(ToolChoice::tool("resolve")), None]);
    assert!(run.messages.contains(&Message::ToolResult {
        call_id: "r1".into(),
        is_error: true,
        text: "Apply failed: busy".into()
    }));
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
}

#[test]
fn a_static_tool_choice_of_none_blocks_the_gate() {
    let mut gate = ResolveGate::new(Some(ToolChoice::None));
    let session = staged_session();
    let plan = gate.begin_turn(session.next_tool_choice_directive(&["resolve"]).unwrap());
    assert_eq!(plan.tool_choice, Some(ToolChoice::None));
    assert_eq!(gate.end_turn(&plan, &[]).unwrap(), TurnOutcome::Proceed);
}
