//! Preview and apply outcomes: validation strings, parse issues, limits, no-match, overlap at
//! preview, stale applies that write nothing, cancellation, and payload rehydration.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{Fixture, details};
use serde_json::json;
use staged_ast_edit::{AppliedDetails, AstEditAction, ListedAstEdit, PreviewDetails, StaleDetails};
use staged_core::{ActionError, CancelToken, PendingAction};
use staged_journal::ConfinedRoot;

fn rename(paths: &[&str]) -> serde_json::Value {
    json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": paths})
}

#[tokio::test]
async fn validation_messages() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n")]);
    let cases = [
        (json!({"ops": [], "paths": ["a.ts"]}), "`ops` must include at least one op entry"),
        (
            json!({"ops": [{"pat": "", "out": "x"}], "paths": ["a.ts"]}),
            "`ops[0].pat` must be a non-empty pattern",
        ),
        (
            json!({"ops": [{"pat": "a", "out": "x"}, {"pat": "a", "out": "y"}], "paths": ["a.ts"]}),
            "Duplicate rewrite pattern: a",
        ),
        (
            json!({"ops": [{"pat": "a", "out": "x"}], "paths": ["a.ts"], "limit": 0}),
            "limit must be a positive number",
        ),
        (
            json!({"ops": [{"pat": "a", "out": "x"}], "paths": ["a.ts"], "limit": -3}),
            "limit must be a positive number",
        ),
        (
            json!({"ops": [{"pat": "a", "out": "x"}], "paths": ["a.ts"], "limit": 0.5}),
            "limit must be a positive number",
        ),
        (
            json!({"ops": [{"pat": "a", "out": "x"}], "paths": ["a.ts"], "max_files": 0}),
            "max_files must be a positive number",
        ),
    ];
    for (args, message) in cases {
        assert_eq!(fx.edit(args).await.unwrap_err().message(), message);
    }
    let err = fx
        .edit(json!({"ops": [{"pat": "a", "out": "x"}], "paths": ["a.ts"], "preview": true}))
        .await
        .unwrap_err();
    assert!(err.message().contains("unknown field `preview`"), "{}", err.message());
}

#[tokio::test]
async fn unsupported_language_is_an_error_not_a_panic() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n"), ("notes.unknown", "FROM scratch\n")]);
    let err = fx
        .edit(json!({"ops": [{"pat": "a", "out": "b"}], "paths": ["a.ts"], "lang": "brainfuck"}))
        .await
        .unwrap_err();
    assert!(
        err.message().starts_with(
            "Unsupported language 'brainfuck'. Supported: astro, bash, c, c#, c++, cc,"
        ),
        "{}",
        err.message()
    );
    let err = fx
        .edit(json!({"ops": [{"pat": "a", "out": "b"}], "paths": ["notes.unknown"]}))
        .await
        .unwrap_err();
    assert_eq!(
        err.message(),
        "`lang` is required for ast_edit when language cannot be inferred from all files:\n- notes.unknown: Unable to infer language from file extension: notes.unknown. Specify `lang` explicitly."
    );
}

#[tokio::test]
async fn no_match_stages_nothing() {
    let fx = Fixture::new(&[("a.ts", "baz(1);\n")]);
    let res = fx.edit(rename(&["a.ts"])).await.unwrap();
    assert_eq!(res.text_content(), "No replacements made");
    assert!(!fx.has_pending());
    assert_eq!(details(&res)["totalReplacements"], 0);
}

#[tokio::test]
async fn binary_non_utf8_and_syntax_errors_are_parse_issues() {
    let fx = Fixture::new(&[("ok.ts", "foo(1);\n"), ("broken.ts", "foo(1) +++ ;;; {{{\n")]);
    std::fs::write(fx.root().join("bin.ts"), b"foo(1);\0\x01\x02").unwrap();
    std::fs::write(fx.root().join("latin1.ts"), b"foo(\"caf\xe9\");\n").unwrap();
    let res = fx.edit(rename(&["."])).await.unwrap();
    let d = details(&res);
    assert_eq!(d["totalReplacements"], 1);
    assert_eq!(d["filesSearched"], 4);
    assert_eq!(
        d["parseErrors"],
        json!([
            "bin.ts: binary file skipped",
            "broken.ts: parse error (syntax tree contains error nodes)",
            "latin1.ts: file is not valid UTF-8"
        ])
    );
    assert_eq!(d["parseErrorsTotal"], 3);
    let text = res.text_content();
    assert!(text.ends_with("Parse issues:\n- bin.ts: binary file skipped\n- broken.ts: parse error (syntax tree contains error nodes)\n- latin1.ts: file is not valid UTF-8\n\n1 file with parse errors was skipped (see Parse issues); pass `includeParseErrors: true` to rewrite the matches in it that hold no error."), "{text}");
    assert_eq!(d["errorFilesSkipped"], 1);
}

#[tokio::test]
async fn parse_issues_are_capped_at_twenty() {
    let files: Vec<(String, &str)> =
        (0..25).map(|i| (format!("f{i:02}.ts"), "foo(1) +++ ;;; {{{\n")).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    let fx = Fixture::new(&refs);
    let res = fx.edit(rename(&["."])).await.unwrap();
    let text = res.text_content();
    assert!(
        text.starts_with("No replacements made\nParse issues (20 / 25):\n- f00.ts: parse error"),
        "{text}"
    );
    assert_eq!(details(&res)["parseErrors"].as_array().unwrap().len(), 20);
    assert_eq!(details(&res)["parseErrorsTotal"], 25);
}

#[tokio::test]
async fn limit_and_max_files() {
    let fx = Fixture::new(&[("a.ts", "foo(1); foo(2);\n"), ("b.ts", "foo(3);\n")]);
    let mut args = rename(&["."]);
    args["limit"] = json!(1);
    let res = fx.edit(args).await.unwrap();
    assert_eq!(details(&res)["totalReplacements"], 1);
    assert_eq!(details(&res)["limitReached"], true);
    assert!(
        res.text_content().ends_with("\n\nCapped by `limit` 1: 2 more replacements in 2 files were left out; raise `limit` (or leave it out) to include them."),
        "{}",
        res.text_content()
    );
    assert_eq!(
        details(&res)["leftOut"],
        json!({"cap": "limit", "value": 1, "files": 2, "replacements": 2, "exact": true, "lift": "limit"})
    );
    assert_eq!(
        fx.session.store().peek().unwrap().unwrap().label(),
        "AST Edit: 1 replacement in 1 file (capped by `limit`: 2 more replacements left out)"
    );
    let diff = details(&res)["diff"].as_str().unwrap();
    assert!(diff.contains("-foo(1); foo(2);\n+bar(1); foo(2);\n"), "{diff}");
    let applied = fx.apply().await;
    assert_eq!(applied.text_content(), "Applied 1 replacement in 1 file.");
    assert_eq!(fx.read("a.ts"), "bar(1); foo(2);\n");
    fx.write("a.ts", "foo(1); foo(2);\n");
    let mut args = rename(&["."]);
    args["max_files"] = json!(1);
    let res = fx.edit(args).await.unwrap();
    assert_eq!(details(&res)["totalReplacements"], 2);
    assert_eq!(details(&res)["filesTouched"], 1);
    assert_eq!(details(&res)["limitReached"], true);
    assert_eq!(
        fx.session.store().peek().unwrap().unwrap().label(),
        "AST Edit: 2 replacements in 1 file (capped by `max_files`: 1 more file left out)"
    );
    assert!(
        res.text_content().ends_with("\n\nCapped by `max_files` 1: 1 more file with 1 replacement was left out; raise `max_files` to include it."),
        "{}",
        res.text_content()
    );
}

/// Caps cut in path order although files are processed in parallel, big files first and
/// without batches: the same files on every run, and never a file past the cut, not even the
/// big one that was started first.
#[tokio::test]
async fn caps_cut_in_path_order_across_many_files() {
    let mut files: Vec<(String, String)> =
        (0..600).map(|i| (format!("f{i:04}.ts"), "foo(1);\n".to_owned())).collect();
    // Over 1 MiB, so they are started before every other file; first and last in path order.
    let big = format!("{}foo(2);\n", "// padding padding padding padding padding\n".repeat(30_000));
    files.push(("a_big.ts".to_owned(), big.clone()));
    files.push(("zz_big.ts".to_owned(), big));
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let fx = Fixture::new(&refs);
    let touched = |res: &staged_protocol::ToolResult| -> Vec<String> {
        details(res)["fileReplacements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_owned())
            .collect()
    };
    let first = |n: usize| -> Vec<String> {
        let small = (0..n - 1).map(|i| format!("f{i:04}.ts"));
        std::iter::once("a_big.ts".to_owned()).chain(small).collect()
    };

    for (cap, files) in [("limit", 300), ("max_files", 550)] {
        let mut args = rename(&["."]);
        args[cap] = json!(files);
        let res = fx.edit(args).await.unwrap();
        assert_eq!(details(&res)["limitReached"], true, "{cap}");
        assert_eq!(touched(&res), first(files), "{cap}");
        fx.session.store().pop().unwrap();
    }

    let res = fx.edit(rename(&["."])).await.unwrap();
    assert_eq!(details(&res)["limitReached"], false);
    let mut all = first(601);
    all.push("zz_big.ts".to_owned());
    assert_eq!(touched(&res), all);

    let res = fx.grep(json!({"pattern": "foo($A)", "paths": ["."], "limit": 450})).await.unwrap();
    assert_eq!(details(&res)["limitReached"], true);
    let paths: Vec<&str> = details(&res)["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, first(450));
}

#[tokio::test]
async fn node_modules_only_when_named() {
    let fx = Fixture::new(&[
        ("a.ts", "foo(1);\n"),
        ("node_modules/x/i.ts", "foo(1);\n"),
        (".hidden/h.ts", "foo(1);\n"),
        ("ignored/g.ts", "foo(1);\n"),
        (".gitignore", "ignored/\n"),
    ]);
    let res = fx.edit(rename(&["."])).await.unwrap();
    assert_eq!(
        details(&res)["fileReplacements"],
        json!([{"path": ".hidden/h.ts", "count": 1}, {"path": "a.ts", "count": 1}])
    );
    fx.session.store().pop().unwrap();
    let res = fx.edit(rename(&["node_modules/**/*.ts"])).await.unwrap();
    assert_eq!(
        details(&res)["fileReplacements"],
        json!([{"path": "node_modules/x/i.ts", "count": 1}])
    );
}

#[tokio::test]
async fn stale_when_another_file_starts_matching() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n"), ("b.ts", "baz(1);\n")]);
    fx.edit(rename(&["."])).await.unwrap();
    fx.write("b.ts", "foo(2);\n");
    let res = fx.apply().await;
    assert!(res.is_error);
    assert_eq!(
        res.text_content(),
        "Preview is stale / no longer matches; no replacements were applied. Preview expected 1 replacement in 1 file. Why: the recomputed edits differ from the preview. The preview was dropped from the pending stack; to stage it again, call ast_edit with the same arguments: {\"ops\":[{\"pat\":\"foo($A)\",\"out\":\"bar($A)\"}],\"paths\":[\".\"]}"
    );
    assert_eq!(details(&res)["sourceResultDetails"]["restage"]["paths"], json!(["."]));
    // The details are the crate's typed stale details.
    let stale = StaleDetails::parse(&details(&res)["sourceResultDetails"]).unwrap();
    assert_eq!(stale.restage.ops[0].pat, "foo($A)");
    assert_eq!((stale.expected_replacements, stale.expected_files), (1, 1));
    assert_eq!(stale.cause, "the recomputed edits differ from the preview");
    assert_eq!(fx.read("a.ts"), "foo(1);\n");
    assert_eq!(fx.read("b.ts"), "foo(2);\n");
}

#[tokio::test]
async fn preview_details_read_back_as_the_typed_details() {
    let fx =
        Fixture::new(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2); foo(3);\n"), ("c.ts", "foo(((\n")]);
    let res = fx.edit(rename(&["."])).await.unwrap();
    let preview = PreviewDetails::parse(details(&res)).unwrap();
    assert_eq!(
        (preview.total_replacements, preview.files_touched, preview.files_searched),
        (3, 2, 3)
    );
    assert!(preview.pending_id.as_deref().unwrap().starts_with("pending-action:ast_edit:"));
    assert!(preview.diff.contains("+bar(1);"), "{}", preview.diff);
    assert_eq!(preview.parse_errors.len(), 1);
    assert_eq!(preview.parse_errors_total, Some(1));
    assert!(!preview.limit_reached);
    // Nothing staged: no pending id.
    let none = fx
        .edit(json!({"ops": [{"pat": "nothing($A)", "out": "x($A)"}], "paths": ["."]}))
        .await
        .unwrap();
    assert_eq!(PreviewDetails::parse(details(&none)).unwrap().pending_id, None);
}

#[tokio::test]
async fn stale_multi_file_writes_nothing() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2); foo(3);\n")]);
    fx.edit(rename(&["."])).await.unwrap();
    fx.write("b.ts", "foo(2); foo(4);\n");
    let res = fx.apply().await;
    assert!(res.is_error);
    let text = res.text_content();
    assert!(
        text.contains("Preview expected 3 replacements in 2 files. Why: b.ts changed"),
        "{text}"
    );
    assert_eq!(fx.read("a.ts"), "foo(1);\n");
    assert_eq!(fx.read("b.ts"), "foo(2); foo(4);\n");
}

#[tokio::test]
async fn cancelled_apply_writes_nothing() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n")]);
    fx.edit(rename(&["a.ts"])).await.unwrap();
    let entry = fx.session.store().peek().unwrap().unwrap();
    let cancel = CancelToken::new();
    cancel.cancel();
    let err = entry.action.apply("r", None, &cancel).await.unwrap_err();
    assert!(matches!(err, ActionError::Cancelled));
    assert_eq!(fx.read("a.ts"), "foo(1);\n");
}

#[tokio::test]
async fn payload_rehydrates_in_another_process() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2);\n")]);
    fx.edit(rename(&["."])).await.unwrap();
    let entry = fx.session.store().peek().unwrap().unwrap();
    let payload = entry.action.payload().unwrap();
    assert_eq!(payload["params"]["ops"], json!([{"pat": "foo($A)", "out": "bar($A)"}]));
    assert_eq!(payload["expected"]["files"].as_array().unwrap().len(), 2);
    // Round-trip through text, as a durable store would.
    let payload: serde_json::Value = serde_json::from_str(&payload.to_string()).unwrap();
    let action =
        AstEditAction::from_payload(ConfinedRoot::new(fx.root()).unwrap(), &payload).unwrap();
    assert_eq!(action.label(), "AST Edit: 2 replacements in 2 files");
    assert_eq!(action.source_tool_name(), "ast_edit");
    let action: Arc<dyn PendingAction> = Arc::new(action);
    let res = action.apply("ok", None, &CancelToken::new()).await.unwrap();
    assert_eq!(res.text_content(), "Applied 2 replacements in 2 files.");
    assert_eq!(fx.read("a.ts"), "bar(1);\n");
    assert_eq!(fx.read("b.ts"), "bar(2);\n");
    // Another root is refused.
    let other = tempfile::tempdir().unwrap();
    assert!(
        AstEditAction::from_payload(ConfinedRoot::new(other.path()).unwrap(), &payload).is_err()
    );
}

/// A process without the engine (`staged-hook`) reads the same preview from its payload: the
/// same label, details and files (so it refuses a new preview of them), and an apply that
/// writes nothing and says where it runs.
#[tokio::test]
async fn a_listed_payload_lists_as_the_action_and_never_applies() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2);\n")]);
    fx.edit(rename(&["."])).await.unwrap();
    let entry = fx.session.store().peek().unwrap().unwrap();
    let payload: serde_json::Value =
        serde_json::from_str(&entry.action.payload().unwrap().to_string()).unwrap();
    let workspace = ConfinedRoot::new(fx.root()).unwrap();
    let full = AstEditAction::from_payload(workspace.clone(), &payload).unwrap();
    let listed = ListedAstEdit::from_payload(&workspace, &payload).unwrap();
    assert_eq!(listed.label(), full.label());
    assert_eq!(listed.source_tool_name(), "ast_edit");
    assert_eq!(listed.details(), full.details());
    assert_eq!(listed.files(), full.files());
    assert_eq!(listed.files().len(), 2);
    assert_eq!(listed.payload(), Some(payload.clone()));
    let err = listed.apply("ok", None, &CancelToken::new()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot apply `AST Edit: 2 replacements in 2 files` here: this process reads ast_edit previews but has no ast tools to apply them; nothing was written: resolve it with `staged resolve` or staged's MCP server"
    );
    assert_eq!(fx.read("a.ts"), "foo(1);\n");
    // Another root is refused, as the full action refuses it.
    let other = tempfile::tempdir().unwrap();
    assert!(
        ListedAstEdit::from_payload(&ConfinedRoot::new(other.path()).unwrap(), &payload).is_err()
    );
}

#[cfg(unix)]
#[tokio::test]
async fn apply_keeps_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new(&[("run.sh", "greet world\n"), ("b.sh", "greet you\n")]);
    std::fs::set_permissions(fx.root().join("run.sh"), std::fs::Permissions::from_mode(0o755))
        .unwrap();
    fx.edit(json!({"ops": [{"pat": "greet $A", "out": "hello $A"}], "paths": ["."]}))
        .await
        .unwrap();
    let res = fx.apply().await;
    assert!(!res.is_error, "{}", res.text_content());
    assert_eq!(fx.read("run.sh"), "hello world\n");
    let mode = std::fs::metadata(fx.root().join("run.sh")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
    let mut left: Vec<_> = fx
        .root()
        .join(".staged/journal")
        .read_dir()
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["commit.lock", "write.lock"], "journal cleaned up, the locks kept");
}

/// With a limit, the match walk stops once it has enough matches: matches past the limit are
/// never made into edits, and the diff and the apply hold exactly the edits kept.
#[tokio::test]
async fn a_limit_stops_the_match_walk_and_the_diff_holds_only_the_edits_kept() {
    let fx = Fixture::new(&[
        ("a.ts", "foo(1);\n"),
        ("b.ts", "foo(2);\nfoo(3);\nfoo(4);\nfoo(foo(5));\n"),
    ]);
    // Without a limit, the nested call composes: six replacements.
    let res = fx.edit(rename(&["."])).await.unwrap();
    assert_eq!(details(&res)["totalReplacements"], 6);
    fx.session.store().pop().unwrap();
    let mut args = rename(&["."]);
    // b.ts is cut twice: by the limit in its own walk (3), and by the room a.ts leaves (2).
    args["limit"] = json!(3);
    let res = fx.edit(args).await.unwrap();
    assert_eq!(details(&res)["totalReplacements"], 3);
    assert_eq!(details(&res)["limitReached"], true);
    assert_eq!(
        details(&res)["diff"],
        "diff --git a/a.ts b/a.ts\n--- a/a.ts\n+++ b/a.ts\n@@ -1 +1 @@\n-foo(1);\n+bar(1);\n\
         diff --git a/b.ts b/b.ts\n--- a/b.ts\n+++ b/b.ts\n@@ -1,4 +1,4 @@\n-foo(2);\n-foo(3);\n+bar(2);\n+bar(3);\n foo(4);\n foo(foo(5));\n"
    );
    let applied = fx.apply().await;
    assert_eq!(applied.text_content(), "Applied 3 replacements in 2 files.");
    assert_eq!(fx.read("b.ts"), "bar(2);\nbar(3);\nfoo(4);\nfoo(foo(5));\n");
}

/// With several rules, the limit keeps the first edits by position, whichever rule made them.
#[tokio::test]
async fn a_limit_keeps_the_first_edits_by_position_across_rules() {
    let fx = Fixture::new(&[("a.ts", "baz(0);\nfoo(1);\nbaz(2);\nfoo(3);\nbaz(4);\n")]);
    let args = json!({
        "ops": [{"pat": "foo($A)", "out": "bar($A)"}, {"pat": "baz($A)", "out": "qux($A)"}],
        "paths": ["."],
        "limit": 3,
    });
    let res = fx.edit(args).await.unwrap();
    assert_eq!(details(&res)["totalReplacements"], 3);
    fx.apply().await;
    assert_eq!(fx.read("a.ts"), "qux(0);\nbar(1);\nqux(2);\nfoo(3);\nbaz(4);\n");
}

/// A limit that cuts one file's edits says so, though no other file is left to cut.
#[tokio::test]
async fn a_limit_that_cuts_a_single_file_is_reported() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\nfoo(2);\nfoo(3);\n")]);
    for (limit, reached) in [(2, true), (3, false), (4, false)] {
        let mut args = rename(&["a.ts"]);
        args["limit"] = json!(limit);
        let res = fx.edit(args).await.unwrap();
        assert_eq!(details(&res)["totalReplacements"], limit.min(3), "{limit}");
        assert_eq!(details(&res)["limitReached"], reached, "{limit}");
        let cut = "\n\nCapped by `limit` 2: 1 more replacement in 1 file was left out; raise `limit` (or leave it out) to include it.";
        assert_eq!(res.text_content().ends_with(cut), reached, "{}", res.text_content());
        fx.session.store().pop().unwrap();
    }
}

/// A preview keeps each file's diff but none of its contents (they are read again at apply):
/// the same edits and diff as a run that keeps everything.
#[tokio::test]
async fn a_preview_holds_no_file_contents() {
    let fx = Fixture::new(&[("a.ts", "foo(1);\nfoo(2);\n"), ("b.ts", "foo(3);\n")]);
    let params =
        staged_ast_edit::AstEditParams::from_json(rename(&["."])).unwrap().validate().unwrap();
    let lean = staged_ast_edit::compute_preview_with(
        &fx.workspace,
        &params,
        staged_ast_edit::EngineOptions::preview(),
        None,
        None,
    )
    .unwrap();
    let full = staged_ast_edit::compute_preview(&fx.workspace, &params, None).unwrap();
    assert!(lean.files.iter().all(|f| f.contents.is_none() && f.diff.is_some()));
    assert_eq!(lean.edits_digest(), full.edits_digest());
    let diffs = |p: &staged_ast_edit::EditPreview| {
        p.files.iter().map(|f| f.diff.clone()).collect::<Vec<_>>()
    };
    assert_eq!(diffs(&lean), diffs(&full));
}

/// A rewrite that copies a capture holding further matches doubles the text at every level of
/// nesting: over 40 nested arrays, 2^40 copies. The file is an issue, reported at once, and
/// left alone; the other files are rewritten as usual.
#[tokio::test]
async fn nested_rewrites_that_would_grow_a_file_without_bound_are_an_issue() {
    let deep = format!("x = {}1{};\n", "[".repeat(40), "]".repeat(40));
    let fx = Fixture::new(&[("deep.ts", deep.as_str()), ("flat.ts", "y = [2];\n")]);
    let res = fx
        .edit(json!({"ops": [{"pat": "[$A]", "out": "[$A, $A]"}], "paths": ["."]}))
        .await
        .unwrap();
    let text = res.text_content();
    assert!(
        text.contains("- deep.ts: its nested rewrites would grow it past 1048576 bytes (8 times its size, at least 1048576) at nesting level"),
        "{text}"
    );
    let preview = PreviewDetails::parse(details(&res)).unwrap();
    assert_eq!((preview.total_replacements, preview.files_touched), (1, 1));
    assert!(preview.diff.contains("+y = [2, 2];"), "{}", preview.diff);
    assert_eq!(fx.read("deep.ts"), deep);
}

#[tokio::test]
async fn details_are_the_typed_details_member_for_member() {
    // A cap, a parse issue and a skipped file: the optional members are written too.
    let fx =
        Fixture::new(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2); foo(3);\n"), ("c.ts", "foo(((\n")]);
    let res = fx
        .edit(json!({"ops": [{"pat": "foo($A)", "out": "bar($A)"}], "paths": ["."], "limit": 2}))
        .await
        .unwrap();
    let written = details(&res);
    let preview = PreviewDetails::parse(written).unwrap();
    assert!(preview.left_out.is_some() && !preview.parse_errors.is_empty(), "{written}");
    assert!(!preview.applied);
    // Read back and written again, the details are what the tool wrote, in the same order.
    assert_eq!(preview.into_value().to_string(), written.to_string());
    let applied = fx.apply().await;
    let written = &details(&applied)["sourceResultDetails"];
    let typed = AppliedDetails::parse(written).unwrap();
    assert!(typed.applied && typed.left_out.is_some(), "{written}");
    assert_eq!(typed.to_value().to_string(), written.to_string());
}
