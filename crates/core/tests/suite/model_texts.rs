//! Snapshots of every model-facing text of the runtime, so a change to one is reviewed.

use staged_core::{
    CancelToken, RESOLVE_DESCRIPTION, RESOLVE_REMINDER, ResolveGate, ResolveParams, ResolveTool,
    SKIPPED_CALL_TEXT, ToolCallRef, ToolChoiceDirective, TurnOutcome,
};

use super::harness::{block_on, counting_action, failing_action, session};

#[test]
fn resolve_description() {
    insta::assert_snapshot!("resolve_description", RESOLVE_DESCRIPTION);
}

#[test]
fn resolve_schema() {
    insta::assert_json_snapshot!("resolve_schema", ResolveTool::schema());
}

#[test]
fn reminder_and_skip_texts() {
    insta::assert_snapshot!("resolve_reminder", RESOLVE_REMINDER);
    insta::assert_snapshot!("skipped_call", SKIPPED_CALL_TEXT);
}

#[test]
fn gate_abort_text() {
    let session = session();
    session.push_pending_action(counting_action("x", "t", Default::default())).unwrap();
    let mut gate = ResolveGate::new(None);
    let calls = [ToolCallRef::new("p", "read")];
    let err = loop {
        let directive: Option<ToolChoiceDirective> =
            session.next_tool_choice_directive(&["resolve", "read"]).unwrap();
        let plan = gate.begin_turn(directive);
        match gate.end_turn(&plan, &calls) {
            Ok(TurnOutcome::Escalate { .. }) => continue,
            Ok(TurnOutcome::Proceed) => panic!("a detour must not proceed"),
            Err(err) => break err,
        }
    };
    insta::assert_snapshot!("gate_abort", err.to_string());
}

#[test]
fn resolve_result_texts() {
    let s = session();
    let cancel = CancelToken::new();
    let mut texts = Vec::new();
    texts.push(
        block_on(s.resolve(ResolveParams::apply("r"), &cancel)).unwrap_err().message().to_owned(),
    );
    texts.push(block_on(s.resolve(ResolveParams::discard("r"), &cancel)).unwrap().text_content());
    s.push_pending_action(failing_action("Flaky")).unwrap();
    texts.push(
        block_on(s.resolve(ResolveParams::apply("r"), &cancel)).unwrap_err().message().to_owned(),
    );
    texts.push(
        block_on(s.resolve(ResolveParams::discard("wrong files"), &cancel)).unwrap().text_content(),
    );
    let cancelled = CancelToken::new();
    cancelled.cancel();
    texts.push(
        block_on(s.resolve(ResolveParams::apply("r"), &cancelled))
            .unwrap_err()
            .message()
            .to_owned(),
    );
    insta::assert_snapshot!("resolve_results", texts.join("\n"));
}
