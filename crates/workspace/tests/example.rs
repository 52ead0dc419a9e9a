//! The library's example host (`examples/agent_host.rs`) runs, and says what it did: two
//! previews staged (a structural rewrite, a journaled move by a custom tool), one discarded and
//! one applied, a preview staged before a restart applied after it, the log by the host's name,
//! and the undo of the move.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
#[path = "../examples/agent_host.rs"]
mod agent_host;

const EXPECTED: &str = r#"tools: ast_grep, ast_edit, edit, write, apply_patch, move_file, resolve
pending: 2
  pending-action:move_file:1 Move notes.txt to docs/notes.txt
  pending-action:ast_edit:0 AST Edit: 1 replacement in 1 file
discard: Discarded: Move notes.txt to docs/notes.txt. Reason: keep the notes at the root
apply: Applied 1 replacement in 1 file.
src/lib.rs: "fn main() {\n    new_call(1);\n}\n"
pending: 1
  pending-action:move_file:2 Move notes.txt to docs/notes.txt
apply after restart: Applied Move notes.txt to docs/notes.txt.
docs/notes.txt exists: true
log 3: applied move_file by host:example-host (notes belong in docs): Move notes.txt to docs/notes.txt
log 2: applied ast_edit by host:example-host (the new API): AST Edit: 1 replacement in 1 file
log 1: discarded move_file by host:example-host (keep the notes at the root): Move notes.txt to docs/notes.txt
undo: Undid log entry 3 (Move notes.txt to docs/notes.txt): 1 file restored.
notes.txt exists: true
"#;

#[test]
fn the_example_host_runs_the_common_path() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let out = runtime.block_on(agent_host::run(dir.path())).unwrap();
    pretty_assertions::assert_eq!(out, EXPECTED);
    assert!(!dir.path().join("docs/notes.txt").exists());
    assert_eq!(std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(), "notes\n");
}
