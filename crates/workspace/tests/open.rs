//! `WorkspaceSession`: tool order, root finding, and a preview staged by one session being
//! rehydrated and applied by another (as a second process would).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use staged_core::{CancelToken, ResolveOptions, Tool};
use staged_protocol::ResolveParams;
use staged_workspace::{WorkspaceSession, find_root};

fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(fut)
}

#[test]
fn tools_are_listed_with_resolve_last() {
    let dir = tempfile::tempdir().unwrap();
    let ws = WorkspaceSession::open(dir.path()).unwrap();
    let names: Vec<String> = ws.tools().iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(names, ["ast_grep", "ast_edit", "edit", "write", "apply_patch", "resolve"]);
    assert!(dir.path().join(".staged/staged.db").exists());
}

#[test]
fn the_root_is_the_nearest_ancestor_with_state_or_git() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("a/b/c");
    std::fs::create_dir_all(&nested).unwrap();
    assert_eq!(find_root(&nested), nested, "no marker: the start itself");
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    assert_eq!(find_root(&nested), dir.path());
    std::fs::create_dir_all(dir.path().join("a/.staged")).unwrap();
    assert_eq!(find_root(&nested), dir.path().join("a"));
}

#[test]
fn a_preview_staged_by_one_session_applies_from_another() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.rs"), "fn main() { old_call(1); }\n").unwrap();
    let first = WorkspaceSession::open(dir.path()).unwrap();
    let staged = block_on(first.ast_edit_tool().execute(
        json!({"ops": [{"pat": "old_call($A)", "out": "new_call($A)"}], "paths": ["a.rs"]}),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(staged.details.as_ref().unwrap()["totalReplacements"], 1);
    drop(first);

    let second = WorkspaceSession::open(dir.path()).unwrap();
    let head = second.store().peek().unwrap().unwrap();
    assert_eq!(head.label(), "AST Edit: 1 replacement in 1 file");
    assert_eq!(head.source_tool_name(), "ast_edit");
    let res = block_on(second.session().resolve(
        ResolveParams::apply("ok"),
        ResolveOptions::default(),
        &CancelToken::new(),
    ))
    .unwrap();
    assert_eq!(res.text_content(), "Applied 1 replacement in 1 file.");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.rs")).unwrap(),
        "fn main() { new_call(1); }\n"
    );
    assert!(second.store().is_empty().unwrap());
}

#[test]
fn a_root_that_is_not_a_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file.txt");
    std::fs::write(&file, "x").unwrap();
    let err = WorkspaceSession::open(&file).unwrap_err().to_string();
    assert!(err.contains("file.txt"), "{err}");
}
