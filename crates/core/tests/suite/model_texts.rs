//! Snapshots of every model-facing text of the runtime, so a change to one is reviewed.

use staged_core::{
    CancelToken, RESOLVE_DESCRIPTION, RESOLVE_REMINDER, ResolveOptions, ResolveTool,
};
use staged_protocol::ResolveParams;

use super::harness::{block_on, failing_action, session};

#[test]
fn resolve_description() {
    insta::assert_snapshot!("resolve_description", RESOLVE_DESCRIPTION);
}

#[test]
fn resolve_schema() {
    insta::assert_json_snapshot!("resolve_schema", ResolveTool::schema());
}

#[test]
fn reminder_text() {
    insta::assert_snapshot!("resolve_reminder", RESOLVE_REMINDER);
}

#[test]
fn resolve_result_texts() {
    let s = session();
    let cancel = CancelToken::new();
    let mut texts = Vec::new();
    texts.push(
        block_on(s.resolve(ResolveParams::apply("r"), ResolveOptions::default(), &cancel))
            .unwrap_err()
            .message()
            .to_owned(),
    );
    texts.push(
        block_on(s.resolve(ResolveParams::discard("r"), ResolveOptions::default(), &cancel))
            .unwrap()
            .text_content(),
    );
    s.push_pending_action(failing_action("Flaky")).unwrap();
    texts.push(
        block_on(s.resolve(ResolveParams::apply("r"), ResolveOptions::default(), &cancel))
            .unwrap_err()
            .message()
            .to_owned(),
    );
    texts.push(
        block_on(s.resolve(
            ResolveParams::discard("wrong files"),
            ResolveOptions::default(),
            &cancel,
        ))
        .unwrap()
        .text_content(),
    );
    let cancelled = CancelToken::new();
    cancelled.cancel();
    texts.push(
        block_on(s.resolve(ResolveParams::apply("r"), ResolveOptions::default(), &cancelled))
            .unwrap_err()
            .message()
            .to_owned(),
    );
    insta::assert_snapshot!("resolve_results", texts.join("\n"));
}
