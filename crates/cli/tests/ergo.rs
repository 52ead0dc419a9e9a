//! Ids, flags, undo and messages the way a person works (issue 24, items 4 to 6), through the
//! real binary: short ids wherever an id is taken, ast-grep's `-p`/`-r`/`-l`, help that tells
//! the truth about paths, no `.staged` after a usage error, `parseErrorsTotal` always, an undo
//! that walks back and a redo that walks forward, and resolve output that names the preview
//! and says the reason once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

use pretty_assertions::assert_eq;
use serde_json::json;

use common::{code, json, pending_ids, read, staged, stderr, stdout, workspace};

/// Stages `foo($A)` → `to($A)` in `path` and returns the new id.
fn stage(dir: &Path, to: &str, path: &str) -> String {
    let out = staged(dir, &["--json", "ast-edit", "--op", "foo($A)", &format!("{to}($A)"), path]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    json(&out)["details"]["pendingId"].as_str().unwrap().to_owned()
}

/// The header line of `staged show ID`: the id it shows.
fn shown(dir: &Path, id: &str) -> String {
    let out = staged(dir, &["show", id]);
    assert_eq!(code(&out), 0, "show {id}: {}", stderr(&out));
    stdout(&out).split_whitespace().next().unwrap().to_owned()
}

#[test]
fn a_short_id_names_a_preview_wherever_an_id_is_taken() {
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2);\n")]);
    let first = stage(ws.path(), "bar", "a.ts");
    let second = stage(ws.path(), "baz", "b.ts");
    assert_eq!(
        [first.as_str(), second.as_str()],
        ["pending-action:ast_edit:0", "pending-action:ast_edit:1"]
    );
    // `show`: the number, tool and number, the whole id, `newest`.
    assert_eq!(shown(ws.path(), "0"), first);
    assert_eq!(shown(ws.path(), "ast_edit:0"), first);
    assert_eq!(shown(ws.path(), &first), first);
    assert_eq!(shown(ws.path(), "newest"), second);
    let none = staged(ws.path(), &["show", "7"]);
    assert_eq!(code(&none), 2);
    assert_eq!(stderr(&none), "error: no pending preview has id `7` (see `staged pending`)\n");
    // `resolve --id`: a short id that is not the newest changes nothing (exit 1).
    let guarded = staged(ws.path(), &["resolve", "apply", "--id", "0", "--reason", "first"]);
    assert_eq!(code(&guarded), 1, "{}", stdout(&guarded));
    assert_eq!(pending_ids(ws.path()), [second.clone(), first.clone()]);
    let unknown = staged(ws.path(), &["resolve", "apply", "--id", "ast_edit:9", "--reason", "x"]);
    assert_eq!(code(&unknown), 1, "{}", stdout(&unknown));
    assert!(
        stdout(&unknown).contains("No pending preview has id `ast_edit:9`"),
        "{}",
        stdout(&unknown)
    );
    assert_eq!(pending_ids(ws.path()).len(), 2);
    let applied = staged(ws.path(), &["resolve", "apply", "--id", "1", "--reason", "baz it"]);
    assert_eq!(code(&applied), 0, "{}", stdout(&applied));
    assert_eq!(read(ws.path(), "b.ts"), "baz(2);\n");
    let applied = staged(ws.path(), &["resolve", "apply", "--id", "newest", "--reason", "bar it"]);
    assert_eq!(code(&applied), 0, "{}", stdout(&applied));
    assert_eq!(read(ws.path(), "a.ts"), "bar(1);\n");
    // `log show` and `undo`: a number alone is an entry number; `ast_edit:1` names a preview.
    let entry = staged(ws.path(), &["log", "show", "ast_edit:1"]);
    assert_eq!(code(&entry), 0, "{}", stderr(&entry));
    assert!(stdout(&entry).contains(&second), "{}", stdout(&entry));
    assert!(stdout(&entry).contains("baz it"), "{}", stdout(&entry));
    let newest = staged(ws.path(), &["log", "show", "newest"]);
    assert_eq!(code(&newest), 0, "{}", stderr(&newest));
    assert!(stdout(&newest).contains("bar it"), "{}", stdout(&newest));
    let undone = staged(ws.path(), &["undo", "ast_edit:1", "--yes"]);
    assert_eq!(code(&undone), 0, "{}", stdout(&undone));
    assert_eq!(read(ws.path(), "b.ts"), "foo(2);\n");
    assert_eq!(read(ws.path(), "a.ts"), "bar(1);\n");
}

#[test]
fn an_ambiguous_short_id_is_an_input_error_listing_the_candidates() {
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2);\n")]);
    stage(ws.path(), "bar", "a.ts");
    stage(ws.path(), "baz", "b.ts");
    // staged numbers previews once for every tool; a database written by something else may
    // still hold two ids that end alike.
    let conn = rusqlite::Connection::open(ws.path().join(".staged/staged.db")).unwrap();
    conn.execute(
        "UPDATE pending SET id = 'pending-action:edit:1' WHERE id = 'pending-action:ast_edit:0'",
        [],
    )
    .unwrap();
    drop(conn);
    for args in [&["show", "1"][..], &["resolve", "discard", "--id", "1", "--reason", "x"]] {
        let out = staged(ws.path(), args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stdout(&out));
        assert_eq!(
            stderr(&out),
            "error: `1` names 2 previews: `pending-action:ast_edit:1`, `pending-action:edit:1`; give the whole id\n",
            "{args:?}"
        );
    }
    assert_eq!(pending_ids(ws.path()).len(), 2);
    assert_eq!(shown(ws.path(), "edit:1"), "pending-action:edit:1");
    assert_eq!(shown(ws.path(), "ast_edit:1"), "pending-action:ast_edit:1");
}

#[test]
fn ast_greps_short_flags_work_with_staged_in_front() {
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("b.js", "foo(2);\n")]);
    let found = staged(ws.path(), &["ast-grep", "-p", "foo($A)", "-l", "ts", "."]);
    assert_eq!(code(&found), 0, "{}", stderr(&found));
    assert!(stdout(&found).contains("a.ts"), "{}", stdout(&found));
    assert!(!stdout(&found).contains("b.js"), "{}", stdout(&found));
    assert!(!ws.path().join(".staged").exists(), "a search stages nothing");
    // `-p -r -l` on ast-edit is `--op PAT OUT --lang`.
    let edited = staged(ws.path(), &["ast-edit", "-p", "foo($A)", "-r", "bar($A)", "-l", "ts"]);
    assert_eq!(code(&edited), 0, "{}", stderr(&edited));
    assert!(stdout(&edited).contains("+bar(1);"), "{}", stdout(&edited));
    assert!(!stdout(&edited).contains("b.js"), "{}", stdout(&edited));
    let out = staged(ws.path(), &["resolve", "discard", "--reason", "only a check"]);
    assert_eq!(code(&out), 0);
    // ast-grep's own rewrite command, `staged` in front: staged as a preview, nothing written.
    let rewrite =
        staged(ws.path(), &["ast-grep", "-p", "foo($A)", "-r", "baz($A)", "-l", "js", "."]);
    assert_eq!(code(&rewrite), 0, "{}", stderr(&rewrite));
    assert!(stdout(&rewrite).contains("+baz(2);"), "{}", stdout(&rewrite));
    assert!(stdout(&rewrite).contains("staged resolve apply --id"), "{}", stdout(&rewrite));
    assert_eq!(read(ws.path(), "b.js"), "foo(2);\n");
    assert_eq!(pending_ids(ws.path()).len(), 1);
    // `--op` stays, for several rewrites; `-p` without `-r` is a usage error.
    let two = staged(
        ws.path(),
        &["ast-edit", "--op", "foo($A)", "x($A)", "--op", "y($A)", "z($A)", "a.ts"],
    );
    assert_eq!(code(&two), 0, "{}", stderr(&two));
    let half = staged(ws.path(), &["ast-edit", "-p", "foo($A)", "a.ts"]);
    assert_eq!(code(&half), 2);
    assert!(stderr(&half).contains("--rewrite"), "{}", stderr(&half));
}

#[test]
fn ast_edit_paths_are_relative_to_the_current_directory_as_the_help_says() {
    let ws = workspace(&[("src/a.ts", "foo(1);\n"), ("a.ts", "foo(0);\n")]);
    for command in ["ast-edit", "ast-grep"] {
        let help = staged(ws.path(), &[command, "--help"]);
        let text = stdout(&help);
        assert!(text.contains("relative to the current directory"), "{command}: {text}");
        assert!(!text.contains("relative to the workspace root"), "{command}: {text}");
    }
    // From `src`, `a.ts` is `src/a.ts`, not the root's `a.ts`.
    let sub = ws.path().join("src");
    let out = staged(&sub, &["--json", "ast-edit", "-p", "foo($A)", "-r", "bar($A)", "a.ts"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        json(&out)["details"]["fileReplacements"],
        json!([{"path": "src/a.ts", "count": 1}])
    );
    // No path: the current directory.
    let out = staged(&sub, &["resolve", "discard", "--reason", "again"]);
    assert_eq!(code(&out), 0);
    let out = staged(&sub, &["--json", "ast-edit", "-p", "foo($A)", "-r", "bar($A)"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        json(&out)["details"]["fileReplacements"],
        json!([{"path": "src/a.ts", "count": 1}])
    );
}

#[test]
fn a_usage_error_leaves_no_state_folder() {
    let ws = workspace(&[("a.txt", "foo(1);\n"), ("b.ts", "foo(1);\n")]);
    let cases: [&[&str]; 5] = [
        // The issue's case: no language can be inferred, and none is given.
        &["ast-edit", "--op", "foo($A)", "bar($A)", "a.txt"],
        &["ast-edit", "--op", "foo($A)", "bar($A)", "missing.ts"],
        &["ast-edit", "--op", "foo($A", "bar($A)", "b.ts"],
        &["ast-edit", "--op", "foo($A)", "bar($A)", "-l", "nosuchlang", "b.ts"],
        &["edit", "missing.ts", "--old", "a", "--new", "b"],
    ];
    for args in cases {
        let out = staged(ws.path(), args);
        assert_eq!(code(&out), 2, "{args:?}: {}{}", stdout(&out), stderr(&out));
        assert!(!ws.path().join(".staged").exists(), "{args:?} created .staged");
    }
    // Nothing to stage is not staging either.
    let out = staged(ws.path(), &["ast-edit", "--op", "nomatch($A)", "bar($A)", "b.ts"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!ws.path().join(".staged").exists());
    // The first preview creates it.
    stage(ws.path(), "bar", "b.ts");
    assert_eq!(pending_ids(ws.path()).len(), 1);
}

#[test]
fn parse_errors_total_is_always_present() {
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("bad.ts", "foo(2);\nfunction ( {\n")]);
    let out = staged(ws.path(), &["--json", "ast-edit", "--op", "foo($A)", "bar($A)", "a.ts"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(json(&out)["details"]["parseErrorsTotal"], json!(0));
    let out = staged(ws.path(), &["--json", "ast-edit", "--op", "nomatch($A)", "x($A)", "a.ts"]);
    assert_eq!(json(&out)["details"]["parseErrorsTotal"], json!(0), "{}", stdout(&out));
    let out = staged(ws.path(), &["--json", "ast-edit", "--op", "foo($A)", "bar($A)", "bad.ts"]);
    assert_eq!(json(&out)["details"]["parseErrorsTotal"], json!(1), "{}", stdout(&out));
}

#[test]
fn undo_walks_back_and_redo_walks_forward() {
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2);\n")]);
    let state = |ws: &Path| (read(ws, "a.ts"), read(ws, "b.ts"));
    let s = |a: &str, b: &str| (format!("{a}(1);\n"), format!("{b}(2);\n"));
    stage(ws.path(), "bar", "a.ts");
    assert_eq!(code(&staged(ws.path(), &["resolve", "apply", "--reason", "a"])), 0);
    stage(ws.path(), "baz", "b.ts");
    assert_eq!(code(&staged(ws.path(), &["resolve", "apply", "--reason", "b"])), 0);
    assert_eq!(state(ws.path()), s("bar", "baz"));
    let step = |args: &[&str]| {
        let out = staged(ws.path(), args);
        assert_eq!(code(&out), 0, "{args:?}: {}{}", stdout(&out), stderr(&out));
    };
    // Bare undo, twice: the newest apply, then the one before.
    step(&["undo", "--yes"]);
    assert_eq!(state(ws.path()), s("bar", "foo"));
    step(&["undo", "--yes"]);
    assert_eq!(state(ws.path()), s("foo", "foo"));
    let none = staged(ws.path(), &["undo", "--yes"]);
    assert_eq!(code(&none), 1);
    assert_eq!(
        stdout(&none),
        "Nothing to undo: the log has no applied entry that is not reverted already.\n"
    );
    // Redo walks forward again: the newest undo first.
    step(&["redo", "--yes"]);
    assert_eq!(state(ws.path()), s("bar", "foo"));
    step(&["redo", "--yes"]);
    assert_eq!(state(ws.path()), s("bar", "baz"));
    let none = staged(ws.path(), &["redo", "--yes"]);
    assert_eq!(code(&none), 1);
    assert!(stdout(&none).starts_with("Nothing to redo"), "{}", stdout(&none));
    // A new apply after an undo ends what redo can walk through, as in an editor.
    step(&["undo", "--yes"]);
    assert_eq!(state(ws.path()), s("bar", "foo"));
    stage(ws.path(), "qux", "b.ts");
    step(&["resolve", "apply", "--reason", "c"]);
    assert_eq!(state(ws.path()), s("bar", "qux"));
    let none = staged(ws.path(), &["redo", "--yes"]);
    assert_eq!(code(&none), 1, "{}", stdout(&none));
    assert_eq!(state(ws.path()), s("bar", "qux"));
    // `undo ENTRY` still reverts any entry (entry 2 is the apply of `baz`, already reverted).
    let again = staged(ws.path(), &["undo", "2", "--yes"]);
    assert_eq!(code(&again), 1, "{}", stdout(&again));
    assert!(stdout(&again).contains("already reverted by entry 3"), "{}", stdout(&again));
    step(&["undo", "8", "--yes"]);
    assert_eq!(state(ws.path()), s("bar", "foo"));
}

#[test]
fn a_failed_resolve_names_the_preview_and_the_reason_given() {
    let ws = workspace(&[("a.ts", "foo(1);\n")]);
    stage(ws.path(), "bar", "a.ts");
    // Stale: the file changed since the preview was made.
    std::fs::write(ws.path().join("a.ts"), "foo(1); // edited\n").unwrap();
    let out = staged(ws.path(), &["resolve", "apply", "--reason", "route through bar"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with(
            "\n ✘ Failed: 1 replacement in 1 file ⟦AST Edit⟧\n\n route through bar\n\n"
        ),
        "{text}"
    );
    assert!(!text.contains("pending action"), "{text}");
    assert!(!text.contains("No reason provided"), "{text}");
    // A guard that names no pending preview, or a stack with nothing on it: the block says so.
    stage(ws.path(), "bar", "a.ts");
    let out = staged(ws.path(), &["resolve", "apply", "--id", "ast_edit:9", "--reason", "guarded"]);
    assert_eq!(code(&out), 1);
    assert!(
        stdout(&out).starts_with("\n ✘ Failed: ast_edit:9 (not pending)\n\n guarded\n"),
        "{}",
        stdout(&out)
    );
    let out = staged(ws.path(), &["resolve", "discard", "--reason", "drop it"]);
    assert_eq!(code(&out), 0);
    let out = staged(ws.path(), &["resolve", "apply", "--reason", "nothing here"]);
    assert_eq!(code(&out), 1);
    assert!(
        stdout(&out).starts_with("\n ✘ Failed: nothing pending\n\n nothing here\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_resolve_says_the_reason_once() {
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2);\n")]);
    for (action, verb) in [("discard", "✘ Discard"), ("apply", "✓ Accept")] {
        stage(ws.path(), "bar", "a.ts");
        let reason = format!("the one reason to {action}");
        let out = staged(ws.path(), &["resolve", action, "--reason", &reason]);
        assert_eq!(code(&out), 0, "{}", stdout(&out));
        let text = stdout(&out);
        assert!(text.contains(&format!(" {verb}: 1 replacement in 1 file ⟦AST Edit⟧")), "{text}");
        assert_eq!(text.matches(&reason).count(), 1, "{text}");
        // A model still reads the contract's text, reason included.
        let logged = staged(ws.path(), &["--json", "log", "-n", "1"]);
        assert!(stdout(&logged).contains(&reason), "{}", stdout(&logged));
    }
    // Over `--json` the text is the contract's, untouched.
    stage(ws.path(), "baz", "b.ts");
    let out = staged(ws.path(), &["--json", "resolve", "discard", "--reason", "not now"]);
    assert_eq!(
        json(&out)["text"],
        json!("Discarded: AST Edit: 1 replacement in 1 file. Reason: not now")
    );
}

fn hostile_plugin_home() -> tempfile::TempDir {
    let script: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plugins/hostile.py");
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("staged")).unwrap();
    let command =
        serde_json::to_string(&["python3".to_owned(), script.display().to_string()]).unwrap();
    std::fs::write(
        home.path().join("staged/staged.toml"),
        format!("[plugins.hostile]\ncommand = {command}\ntimeout_ms = 30000\n"),
    )
    .unwrap();
    home
}

fn run_in(dir: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(common::staged_bin())
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", home)
        .env_remove("COLUMNS")
        .output()
        .unwrap()
}

#[test]
fn staged_tool_says_how_to_resolve_and_staged_tools_names_every_source() {
    let ws = workspace(&[]);
    let home = hostile_plugin_home();
    let out = run_in(
        ws.path(),
        home.path(),
        &["tool", "stage", "--args", r#"{"label": "Rename: x to y"}"#],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let id = pending_ids(ws.path()).remove(0);
    assert_eq!(
        stdout(&out),
        format!(
            "staged\n\nStaged {id}: Rename: x to y. Nothing is written yet.\n  apply:   staged resolve apply --id {id} --reason \"<why>\"\n  discard: staged resolve discard --id {id} --reason \"<why>\"\n"
        )
    );
    // A tool that stages nothing prints no such lines.
    let out = run_in(
        ws.path(),
        home.path(),
        &["tool", "ast_grep", "--args", r#"{"pattern": "x", "lang": "ts", "paths": ["."]}"#],
    );
    assert!(!stdout(&out).contains("staged resolve"), "{}", stdout(&out));
    let out = run_in(ws.path(), home.path(), &["tools"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let row = |name: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name}: {text}"))
            .to_owned()
    };
    assert!(row("ast_edit").contains("  built-in  "), "{text}");
    assert!(row("pending").contains("  mcp  "), "{text}");
    assert!(row("stage").contains("  plugin hostile  "), "{text}");
    assert!(row("resolve").contains("  hidden  "), "{text}");
    let out = run_in(ws.path(), home.path(), &["--json", "tools"]);
    let value = json(&out);
    let stage = value["tools"].as_array().unwrap().iter().find(|t| t["name"] == "stage").unwrap();
    assert_eq!((&stage["source"], &stage["plugin"]), (&json!("plugin"), &json!("hostile")));
    let pending =
        value["tools"].as_array().unwrap().iter().find(|t| t["name"] == "pending").unwrap();
    assert_eq!((&pending["source"], &pending["readOnly"]), (&json!("mcp"), &json!(true)));
}

#[test]
fn the_http_server_says_its_generated_token_changes_on_every_start() {
    use std::io::{BufRead, BufReader};
    let ws = workspace(&[]);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = Command::new(common::staged_bin())
        .args(["mcp", "--http", &format!("127.0.0.1:{port}")])
        .current_dir(ws.path())
        .env_remove("STAGED_MCP_TOKEN")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    while let Ok(line) = rx.recv_timeout(std::time::Duration::from_secs(30)) {
        let done = line.contains("for example");
        seen.push(line);
        if done {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let token_line = seen
        .iter()
        .find(|l| l.contains("the token is in"))
        .unwrap_or_else(|| panic!("{}", seen.join("\n")));
    assert!(
        token_line.ends_with(
            "(readable only by you, removed when the server stops). It changes on every start: for a client setup that lasts, pass --token-file FILE or set STAGED_MCP_TOKEN"
        ),
        "{token_line}"
    );
}
