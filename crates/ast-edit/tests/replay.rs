//! An apply replays its preview's edits without searching again when its walk finds every
//! file as the preview's did, and searches again (or is stale) otherwise: the outcome is
//! always the one a fresh search would give.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{sync::Arc, time::Duration};

use common::Fixture;
use serde_json::{Value, json};
use staged_ast_edit::AstEditAction;
use staged_core::{CancelToken, PendingAction};
use staged_journal::ConfinedRoot;

fn rename(paths: &[&str]) -> Value {
    json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": paths})
}

/// Files whose change time is more than a second old, so that a walk can vouch for them.
async fn settled(files: &[(&str, &str)]) -> Fixture {
    let fx = Fixture::new(files);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    fx
}

fn payload(fx: &Fixture) -> Value {
    fx.session.store().peek().unwrap().unwrap().action.payload().unwrap()
}

#[tokio::test]
async fn a_preview_of_files_nobody_changed_records_its_edits_and_applies_them() {
    let fx = settled(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(foo(2)); baz();\n"), ("c.ts", "x;\n")])
        .await;
    fx.edit(rename(&["."])).await.unwrap();
    let replay = &payload(&fx)["replay"];
    assert_eq!(replay["lang"], "typescript");
    assert_eq!(replay["filesSearched"], 3);
    assert_eq!(replay["edits"], json!([[[0, 6, 1, "bar(1)"]], [[0, 11, 2, "bar(bar(2))"]]]));
    let res = fx.apply().await;
    assert_eq!(res.text_content(), "Applied 3 replacements in 2 files.");
    assert_eq!(fx.read("a.ts"), "bar(1);\n");
    assert_eq!(fx.read("b.ts"), "bar(bar(2)); baz();\n");
}

#[tokio::test]
async fn files_changed_just_before_the_preview_prove_nothing_and_the_apply_searches_again() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n")]);
    fx.edit(rename(&["."])).await.unwrap();
    assert_eq!(payload(&fx).get("replay"), None);
    assert_eq!(fx.apply().await.text_content(), "Applied 1 replacement in 1 file.");
    assert_eq!(fx.read("a.ts"), "bar(1);\n");
}

#[tokio::test]
async fn an_untouched_file_that_starts_matching_makes_the_preview_stale() {
    let fx = settled(&[("a.ts", "foo(1);\n"), ("b.ts", "baz(1);\n")]).await;
    fx.edit(rename(&["."])).await.unwrap();
    assert!(payload(&fx).get("replay").is_some());
    fx.write("b.ts", "foo(2);\n");
    let res = fx.apply().await;
    assert!(res.is_error);
    assert!(
        res.text_content().contains("Why: the recomputed edits differ"),
        "{}",
        res.text_content()
    );
    assert_eq!(fx.read("a.ts"), "foo(1);\n");
}

#[tokio::test]
async fn a_touched_file_that_changed_makes_the_preview_stale() {
    let fx = settled(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2);\n")]).await;
    fx.edit(rename(&["."])).await.unwrap();
    fx.write("b.ts", "foo(3);\n");
    let res = fx.apply().await;
    assert!(res.is_error);
    assert!(
        res.text_content().contains("Why: b.ts changed since the preview"),
        "{}",
        res.text_content()
    );
    assert_eq!(fx.read("a.ts"), "foo(1);\n");
}

#[tokio::test]
async fn a_new_file_that_matches_makes_the_preview_stale_and_a_deleted_one_does_not() {
    let fx = settled(&[("a.ts", "foo(1);\n"), ("b.ts", "baz(1);\n")]).await;
    fx.edit(rename(&["."])).await.unwrap();
    fx.write("new.ts", "foo(9);\n");
    assert!(fx.apply().await.is_error);
    assert_eq!(fx.read("a.ts"), "foo(1);\n");

    std::fs::remove_file(fx.root().join("new.ts")).unwrap();
    fx.edit(rename(&["."])).await.unwrap();
    std::fs::remove_file(fx.root().join("b.ts")).unwrap();
    assert_eq!(fx.apply().await.text_content(), "Applied 1 replacement in 1 file.");
    assert_eq!(fx.read("a.ts"), "bar(1);\n");
}

#[tokio::test]
async fn recorded_edits_that_do_not_fit_the_file_are_searched_for_again() {
    let fx = settled(&[("a.ts", "foo(1);\n")]).await;
    fx.edit(rename(&["."])).await.unwrap();
    let workspace = ConfinedRoot::new(fx.root()).unwrap();
    let mut broken = payload(&fx);
    broken["replay"]["edits"] = json!([[[0, 600, 1, "bar(1)"]]]);
    let action = AstEditAction::from_payload(workspace.clone(), &broken).unwrap();
    let action: Arc<dyn PendingAction> = Arc::new(action);
    let res = action.apply("ok", None, &CancelToken::new()).await.unwrap();
    assert_eq!(res.text_content(), "Applied 1 replacement in 1 file.");
    assert_eq!(fx.read("a.ts"), "bar(1);\n");

    // Edits other than the previewed ones are not what the preview promised. (The first
    // preview, applied from its payload, is still pending: one pending preview per file.)
    fx.session
        .resolve(
            staged_protocol::ResolveParams::discard("applied from its payload"),
            staged_core::ResolveOptions::default(),
            &CancelToken::new(),
        )
        .await
        .unwrap();
    fx.write("a.ts", "foo(1);\n");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    fx.edit(rename(&["."])).await.unwrap();
    let mut other = payload(&fx);
    other["replay"]["edits"] = json!([[[0, 6, 1, "evil()"]]]);
    let action: Arc<dyn PendingAction> =
        Arc::new(AstEditAction::from_payload(workspace.clone(), &other).unwrap());
    let res = action.apply("ok", None, &CancelToken::new()).await.unwrap();
    assert!(res.is_error, "{}", res.text_content());
    assert_eq!(fx.read("a.ts"), "foo(1);\n");

    // A replay for another number of files is not a payload.
    other["replay"]["edits"] = json!([]);
    assert!(AstEditAction::from_payload(workspace, &other).is_err());
}

#[tokio::test]
async fn a_payload_without_a_replay_still_applies() {
    let fx = settled(&[("a.ts", "foo(1);\n")]).await;
    fx.edit(rename(&["."])).await.unwrap();
    let mut old = payload(&fx);
    old["version"] = json!(1);
    old.as_object_mut().unwrap().remove("replay");
    let action = AstEditAction::from_payload(ConfinedRoot::new(fx.root()).unwrap(), &old).unwrap();
    let action: Arc<dyn PendingAction> = Arc::new(action);
    let res = action.apply("ok", None, &CancelToken::new()).await.unwrap();
    assert_eq!(res.text_content(), "Applied 1 replacement in 1 file.");
    assert_eq!(fx.read("a.ts"), "bar(1);\n");
}
