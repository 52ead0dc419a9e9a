//! The reference implementation's `ast_edit` tests and its engine's unit tests, ported through
//! our API. The behaviour they check is `docs/contract/ast-edit.md`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Fixture, details};
use serde_json::json;
use staged_ast_edit::{AstEditError, AstEditParams, Lang, Op, collect_candidates, compute_preview};
use staged_core::Tool;
use staged_journal::ConfinedRoot;

fn params(ops: &[(&str, &str)], paths: &[&str]) -> AstEditParams {
    AstEditParams {
        ops: ops.iter().map(|(p, o)| Op { pat: (*p).to_owned(), out: (*o).to_owned() }).collect(),
        paths: paths.iter().map(|p| (*p).to_owned()).collect(),
        lang: None,
        selector: None,
        strictness: None,
        limit: None,
        max_files: None,
        include_parse_errors: None,
    }
}

/// `ops` is an array of `{pat, out}` objects, both required strings; no `preview`.
#[test]
fn c_e1_uses_op_entries_as_pat_out() {
    let schema = AstEditParams::json_schema();
    let items = &schema["properties"]["ops"]["items"];
    assert_eq!(schema["properties"]["ops"]["type"], "array");
    assert_eq!(schema["properties"]["ops"]["minItems"], 1);
    assert_eq!(items["required"], json!(["pat", "out"]));
    assert_eq!(items["properties"]["pat"]["type"], "string");
    assert_eq!(items["properties"]["out"]["type"], "string");
    assert!(schema["properties"].get("preview").is_none());
    assert_eq!(schema["properties"]["paths"]["minItems"], 1);
}

/// The schema is strict-representable: every object closes `additionalProperties`,
/// and the tool says it is strict.
#[test]
fn c_e2_remains_strict_representable() {
    fn check(v: &serde_json::Value) {
        if v.get("type") == Some(&json!("object")) {
            assert_eq!(v["additionalProperties"], json!(false), "{v}");
        }
        if let Some(obj) = v.as_object() {
            obj.values().for_each(check);
        }
    }
    let fx = Fixture::new(&[]);
    check(&fx.edit.parameters());
    assert!(fx.edit.strict());
    assert!(fx.edit.deferrable());
}

/// The `-`/`+` lines carry numbered prefixes of equal length.
#[tokio::test]
async fn c_e3_renders_plus_minus_lines_with_numbered_prefixes() {
    let fx = Fixture::new(&[("a.ts", "const y = legacyWrap(x, value);\n")]);
    let res = fx
        .edit(json!({"ops": [{"pat": "legacyWrap($A, $B)", "out": "modernWrap($A, $B)"}], "paths": ["a.ts"]}))
        .await
        .unwrap();
    let text = res.text_content();
    let minus = text.lines().find(|l| l.starts_with('-')).unwrap();
    let plus = text.lines().find(|l| l.starts_with('+')).unwrap();
    let prefix = |l: &str| l.split(' ').next().unwrap().len();
    assert!(minus[1..].split(':').next().unwrap().chars().all(|c| c.is_ascii_digit()));
    assert!(plus[1..].split(':').next().unwrap().chars().all(|c| c.is_ascii_digit()));
    assert_eq!(prefix(minus), prefix(plus));
    assert_eq!(minus, "-1:11 legacyWrap(x, value)");
    assert_eq!(plus, "+1:11 modernWrap(x, value)");
}

/// The preview stages an action; apply writes the change.
#[tokio::test]
async fn c_e4_registers_a_pending_action_that_apply_writes() {
    let fx = Fixture::new(&[("a.ts", "const y = legacyWrap(x, value);\n")]);
    let res = fx
        .edit(json!({"ops": [{"pat": "legacyWrap($A, $B)", "out": "modernWrap($A, $B)"}], "paths": ["a.ts"]}))
        .await
        .unwrap();
    assert_eq!(details(&res)["applied"], false);
    assert!(fx.has_pending());
    let entry = fx.session.store().peek().unwrap().unwrap();
    assert_eq!(entry.label(), "AST Edit: 1 replacement in 1 file");
    assert_eq!(entry.source_tool_name(), "ast_edit");
    assert_eq!(fx.read("a.ts"), "const y = legacyWrap(x, value);\n", "a preview writes nothing");
    let applied = fx.apply().await;
    assert!(!applied.is_error);
    assert!(applied.text_content().contains("Applied 1 replacement in 1 file."));
    assert_eq!(details(&applied)["sourceResultDetails"]["totalReplacements"], 1);
    assert!(fx.read("a.ts").contains("modernWrap(x, value)"));
    assert!(!fx.has_pending());
}

/// A file changed after the preview makes the apply stale; nothing is written.
#[tokio::test]
async fn c_e5_fails_stale_pending_apply() {
    let fx = Fixture::new(&[("a.ts", "const y = legacyWrap(x, value);\n")]);
    fx.edit(json!({"ops": [{"pat": "legacyWrap($A, $B)", "out": "modernWrap($A, $B)"}], "paths": ["a.ts"]}))
        .await
        .unwrap();
    fx.write("a.ts", "const y = otherWrap(x, value);\n");
    let res = fx.apply().await;
    assert!(res.is_error);
    let text = res.text_content();
    assert!(text.contains("Preview is stale / no longer matches"), "{text}");
    assert!(text.contains("no replacements were applied"));
    assert!(text.contains("Preview expected 1 replacement in 1 file."), "{text}");
    assert_eq!(details(&res)["sourceResultDetails"]["totalReplacements"], 0);
    assert_eq!(fx.read("a.ts"), "const y = otherWrap(x, value);\n");
}

fn c_e6_fixture() -> Fixture {
    let body = "export const v = legacyWrap(x, value);\n";
    Fixture::new(&[
        ("packages/pkg-123/src/root.ts", body),
        ("packages/pkg-123/src/nested/child.ts", body),
        ("packages/pkg-123/src/ignore.js", body),
        ("packages/pkg-123/outside.ts", body),
        ("packages/other/src/x.js", body),
    ])
}

/// A glob from several components selects the right files, rendered as a tree.
#[tokio::test]
async fn c_e6_combines_globbing() {
    let fx = c_e6_fixture();
    let res = fx
        .edit(json!({
            "ops": [{"pat": "legacyWrap($A, $B)", "out": "modernWrap($A, $B)"}],
            "paths": ["packages/pkg-*/src/**/*.ts"]
        }))
        .await
        .unwrap();
    let text = res.text_content();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.iter().any(|l| is_heading(l, "## root.ts#")), "{text}");
    assert!(lines.iter().any(|l| is_heading(l, "### child.ts#")), "{text}");
    assert!(lines.contains(&"# packages/pkg-123/src/"), "{text}");
    assert!(lines.contains(&"## nested/"), "{text}");
    assert!(!text.contains("ignore.js") && !text.contains("outside.ts"));
    let d = details(&res);
    assert_eq!(d["totalReplacements"], 2);
    assert_eq!(
        d["fileReplacements"],
        json!([
            {"path": "packages/pkg-123/src/nested/child.ts", "count": 1},
            {"path": "packages/pkg-123/src/root.ts", "count": 1}
        ])
    );
    fx.apply().await;
    assert!(fx.read("packages/pkg-123/src/root.ts").contains("modernWrap"));
    assert!(fx.read("packages/pkg-123/src/nested/child.ts").contains("modernWrap"));
    assert!(fx.read("packages/pkg-123/src/ignore.js").contains("legacyWrap"));
    assert!(fx.read("packages/pkg-123/outside.ts").contains("legacyWrap"));
}

fn is_heading(line: &str, prefix: &str) -> bool {
    let Some(rest) = line.strip_prefix(prefix) else { return false };
    let (tag, rest) = rest.split_at(4);
    tag.chars().all(|c| c.is_ascii_digit() || ('A'..='F').contains(&c))
        && (rest == " (1 replacement)"
            || rest.starts_with(" (") && rest.ends_with(" replacements)"))
}

/// `.tla` files are TLA+.
#[tokio::test]
async fn c_e7_infers_tlaplus_from_tla_files() {
    let spec = "---- MODULE Counter ----\nEXTENDS Naturals\nVARIABLE x\nInit == x = 0\nNext == x' = x + 1\n====\n";
    let fx = Fixture::new(&[("Counter.tla", spec)]);
    let res = fx
        .edit(json!({"ops": [{"pat": "Init", "out": "Start"}], "paths": ["Counter.tla"]}))
        .await
        .unwrap();
    assert!(res.text_content().contains("Start"), "{}", res.text_content());
    let d = details(&res);
    assert_eq!(d["totalReplacements"], 1);
    assert!(d.get("parseErrors").is_none());
    fx.apply().await;
    assert!(fx.read("Counter.tla").contains("Start == x = 0"));
}

// The reference engine's unit tests.

fn display(ws: &ConfinedRoot, paths: &[&str]) -> Vec<String> {
    let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
    collect_candidates(ws, &paths).unwrap().into_iter().map(|c| c.display).collect()
}

#[test]
fn glob_star_matches_only_direct_children() {
    let fx = Fixture::new(&[("a.ts", "a;"), ("nested/b.ts", "b;")]);
    assert_eq!(display(&fx.workspace, &["*.ts"]), ["a.ts"]);
}

#[test]
fn glob_double_star_matches_recursively() {
    let fx = Fixture::new(&[("a.ts", "a;"), ("nested/b.ts", "b;")]);
    assert_eq!(display(&fx.workspace, &["**/*.ts"]), ["a.ts", "nested/b.ts"]);
}

#[test]
fn infers_single_replace_lang_for_uniform_candidates() {
    let fx = Fixture::new(&[("a.ts", "foo(1);"), ("b.ts", "foo(2);")]);
    let preview = compute_preview(
        &fx.workspace,
        &params(&[("foo($A)", "bar($A)")], &["."]).validate().unwrap(),
        None,
    )
    .unwrap();
    assert_eq!(preview.lang, Lang::TypeScript);
    assert_eq!(preview.lang.name(), "typescript");
}

#[test]
fn rejects_mixed_replace_lang_inference() {
    let fx = Fixture::new(&[("a.ts", "foo(1);"), ("b.py", "foo(2)\n")]);
    let err = compute_preview(
        &fx.workspace,
        &params(&[("foo($A)", "bar($A)")], &["."]).validate().unwrap(),
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("multiple languages"), "{err}");
    assert_eq!(
        err.to_string(),
        "`lang` is required for ast_edit when path/glob resolves to multiple languages: python, typescript"
    );
}

#[test]
fn resolves_supported_language_aliases() {
    for alias in [
        "ts",
        "jsx",
        "rs",
        "kotlin",
        "bash",
        "c",
        "cpp",
        "tla",
        "pluscal",
        "emacs-lisp",
        "elisp",
        "el",
        "f90",
        "TS",
        "Rust",
        "c#",
        "c++",
        "golang",
        "kt",
        "yml",
        "sh",
        "zsh",
        "tf",
        "pcal",
        "mts",
        "cts",
        "mjs",
        "cjs",
        "py",
        "pyi",
    ] {
        assert!(Lang::parse(alias).is_ok(), "{alias}");
    }
    let err = Lang::parse("brainfuck").unwrap_err();
    assert!(matches!(err, AstEditError::UnsupportedLanguage { .. }));
    assert!(err.to_string().starts_with("Unsupported language 'brainfuck'. Supported: "), "{err}");
    // Every language of the reference's list is compiled in (see LANGUAGES.md).
    for alias in ["dockerfile", "just", "svelte", "vue", "astro", "clojure", "protobuf", "proto"] {
        assert!(Lang::parse(alias).is_ok(), "{alias}");
    }
}

#[test]
fn applies_non_overlapping_edits() {
    let fx = Fixture::new(&[("a.ts", "const answer = 41;")]);
    let preview = compute_preview(
        &fx.workspace,
        &params(&[("answer", "value"), ("41", "42")], &["a.ts"]).validate().unwrap(),
        None,
    )
    .unwrap();
    assert_eq!(preview.files[0].updated(), Some("const value = 42;"));
}

/// Our deviation: the reference refused `bar` inside `foo($X)` as an overlap. It lies inside
/// the capture `$X`, so it is rewritten there (see `tests/nesting.rs`); only two different
/// rewrites of the same code (or crossing ranges) are refused.
#[test]
fn rejects_overlapping_edits() {
    let fx = Fixture::new(&[("b.ts", "const b = foo(bar);\n")]);
    let preview = compute_preview(
        &fx.workspace,
        &params(&[("bar", "baz"), ("foo($X)", "qux($X)")], &["b.ts"]).validate().unwrap(),
        None,
    )
    .unwrap();
    assert_eq!(preview.files[0].updated(), Some("const b = qux(baz);\n"));
    assert_eq!(preview.total_replacements(), 2);
    let err = compute_preview(
        &fx.workspace,
        &params(&[("foo($X)", "qux($X)"), ("foo(bar)", "zed()")], &["b.ts"]).validate().unwrap(),
        None,
    )
    .unwrap_err();
    assert!(
        err.to_string().starts_with(
            "Overlapping replacements detected; refine pattern to avoid ambiguous edits"
        )
    );
    assert!(err.to_string().ends_with("\n- b.ts:1:11\n- b.ts:1:11"), "{err}");
}

#[test]
fn dedupes_byte_identical_edits() {
    let res = staged_ast_edit::apply_edits(
        "abcdef",
        &[staged_ast_edit::RawEdit::new(1, 4, "x"), staged_ast_edit::RawEdit::new(1, 4, "x")],
    )
    .unwrap();
    assert_eq!(res, "axef");
}

#[tokio::test]
async fn ast_edit_dedupes_identical_matches_across_rules() {
    let fx = Fixture::new(&[("b.ts", "const b = foo(bar);")]);
    let res = fx
        .edit(json!({"ops": [{"pat": "foo($X)", "out": "qux($X)"}, {"pat": "foo(bar)", "out": "qux(bar)"}], "paths": ["b.ts"]}))
        .await
        .unwrap();
    assert_eq!(details(&res)["totalReplacements"], 1);
    fx.apply().await;
    assert_eq!(fx.read("b.ts"), "const b = qux(bar);");
}

/// Our deviation: the reference's overlap here (`bar` inside `foo($X)`) failed the apply; ours
/// composes it, since `bar` lies inside the capture `$X` (see `tests/nesting.rs`), and the
/// apply writes both files or neither.
#[tokio::test]
async fn ast_edit_does_not_partially_write_when_apply_fails() {
    let fx = Fixture::new(&[("a.ts", "const a = bar;\n"), ("b.ts", "const b = foo(bar);\n")]);
    let res = fx
        .edit(json!({"ops": [{"pat": "bar", "out": "baz"}, {"pat": "foo($X)", "out": "qux($X)"}], "paths": ["."]}))
        .await
        .unwrap();
    assert_eq!(details(&res)["totalReplacements"], 3);
    // One file changes after the preview: the apply writes neither.
    fx.write("a.ts", "const a = bar; // edited\n");
    let res = fx.apply().await;
    assert!(res.is_error, "{}", res.text_content());
    assert_eq!(fx.read("a.ts"), "const a = bar; // edited\n");
    assert_eq!(fx.read("b.ts"), "const b = foo(bar);\n");
}
