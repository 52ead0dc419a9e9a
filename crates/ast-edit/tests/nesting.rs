//! Nested matches compose: a match inside a capture of another is rewritten inside it,
//! bottom-up, and counted; one inside another's text but outside its captures disappears with
//! it; only crossing ranges are an error, naming both.
//!
//! The property: for rewrites whose output does not match any op's pattern, one preview gives
//! the same text as running ast-grep's rewrite (the outermost of nested matches, as
//! `ast-grep -U` does) again and again until nothing matches.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ast_grep_config::Fixer;
use ast_grep_core::{AstGrep, Pattern};
use proptest::prelude::*;
use staged_ast_edit::{
    AstEditError, AstEditParams, EditPreview, EngineOptions, Lang, Op, compute_preview_with,
};
use staged_journal::ConfinedRoot;

/// The ops of the property: each rewrite renames its call, so no output matches a pattern.
const OPS: &[(&str, &str)] = &[
    ("f($A)", "F($A)"),
    ("g($A, $B)", "G($B, $A)"),
    ("h($A)", "H()"),
    ("k($$$ARGS)", "K([$$$ARGS])"),
];

fn preview(text: &str, ops: &[(&str, &str)]) -> Result<EditPreview, AstEditError> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.ts"), text).unwrap();
    let workspace = ConfinedRoot::new(dir.path()).unwrap();
    let params = AstEditParams {
        ops: ops.iter().map(|(p, o)| Op { pat: (*p).to_owned(), out: (*o).to_owned() }).collect(),
        paths: vec!["a.ts".to_owned()],
        lang: None,
        selector: None,
        strictness: None,
        limit: None,
        max_files: None,
        include_parse_errors: None,
    }
    .validate()?;
    compute_preview_with(&workspace, &params, EngineOptions::default(), None, None)
}

fn rewritten(preview: &EditPreview, original: &str) -> String {
    match preview.files.first() {
        Some(file) => file.updated().unwrap().to_owned(),
        None => original.to_owned(),
    }
}

/// ast-grep's own rewrite, repeated: each pass rewrites the outermost of nested matches (of
/// every op) and leaves the inner ones for the next pass, until no pattern matches.
fn ast_grep_to_fixpoint(text: &str, ops: &[(&str, &str)]) -> String {
    let lang = Lang::TypeScript;
    let rules: Vec<(Pattern, Fixer)> = ops
        .iter()
        .map(|(p, o)| (Pattern::try_new(p, lang).unwrap(), Fixer::from_str(o, &lang).unwrap()))
        .collect();
    let mut text = text.to_owned();
    for _ in 0..64 {
        let root = AstGrep::new(&text, lang);
        let mut edits: Vec<(usize, usize, String)> = Vec::new();
        for (pattern, fixer) in &rules {
            for m in root.root().find_all(pattern) {
                let edit = m.make_edit(pattern, fixer);
                let end = edit.position + edit.deleted_length;
                edits.push((edit.position, end, String::from_utf8(edit.inserted_text).unwrap()));
            }
        }
        if edits.is_empty() {
            return text;
        }
        edits.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut next = String::new();
        let mut cursor = 0;
        for (start, end, out) in edits {
            if start < cursor {
                continue; // nested in one already rewritten this pass
            }
            next.push_str(&text[cursor..start]);
            next.push_str(&out);
            cursor = end;
        }
        next.push_str(&text[cursor..]);
        text = next;
    }
    panic!("ast-grep did not reach a fixpoint: {text}");
}

#[test]
fn a_match_inside_a_capture_is_rewritten_and_counted() {
    let text = "const a = Box.new(Box.new(x));\n";
    let res = preview(text, &[("Box.new($A)", "Box.from($A)")]).unwrap();
    assert_eq!(rewritten(&res, text), "const a = Box.from(Box.from(x));\n");
    assert_eq!(res.total_replacements(), 2);
    assert_eq!(res.files[0].edits.len(), 1, "one edit stands for both");
}

#[test]
fn a_match_outside_every_capture_disappears_with_the_outer_rewrite() {
    // `h($A)` drops its argument, so the `f(1)` inside it is neither rewritten nor counted.
    let text = "h(f(1));\nf(2);\n";
    let res = preview(text, OPS).unwrap();
    assert_eq!(rewritten(&res, text), "H();\nF(2);\n");
    assert_eq!(res.total_replacements(), 2);
}

#[test]
fn two_different_rewrites_of_the_same_code_are_an_error_naming_both() {
    // A match is one syntax node, so two matches either nest or are apart, except when two
    // ops match the same node: with different rewrites that is ambiguous, and refused.
    // (Crossing ranges, which neither contains, are refused the same way; see `nesting.rs`.)
    let text = "let v = 0;\nq(1, 2, 3);\n";
    let err = preview(text, &[("q($A, 2, 3)", "r($A)"), ("q(1, $B, 3)", "s($B)")]);
    let err = err.unwrap_err().to_string();
    assert_eq!(
        err,
        "Overlapping replacements detected; refine pattern to avoid ambiguous edits\n- a.ts:2:1\n- a.ts:2:1"
    );
    // The same rewrite from two ops is one replacement.
    let res = preview(text, &[("q($A, 2, 3)", "r($A)"), ("q($A, 2, $C)", "r($A)")]).unwrap();
    assert_eq!(res.total_replacements(), 1);
}

#[test]
fn an_apply_writes_what_the_nested_preview_showed() {
    let text = "k(f(1), g(f(2), 3));\n";
    let res = preview(text, OPS).unwrap();
    assert_eq!(rewritten(&res, text), "K([F(1), G(3, F(2))]);\n");
    assert_eq!(res.total_replacements(), 4);
    let diff = res.files[0].diff.as_ref().unwrap();
    assert!(diff.contains("+K([F(1), G(3, F(2))]);"), "{diff}");
}

/// Nested calls of the ops' functions and of others, as TypeScript expressions.
fn expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        (0u8..10).prop_map(|n| n.to_string()),
        Just("x".to_owned()),
        Just("y.z".to_owned()),
    ];
    leaf.prop_recursive(5, 40, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|a| format!("f({a})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("g({a}, {b})")),
            inner.clone().prop_map(|a| format!("h({a})")),
            prop::collection::vec(inner.clone(), 0..3)
                .prop_map(|args| format!("k({})", args.join(", "))),
            inner.clone().prop_map(|a| format!("other({a})")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("[{a}, {b}]")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn one_preview_equals_ast_grep_rewriting_until_nothing_changes(
        lines in prop::collection::vec(expr(), 1..4)
    ) {
        let text: String = lines.iter().map(|l| format!("{l};\n")).collect();
        let res = preview(&text, OPS).unwrap();
        prop_assert_eq!(rewritten(&res, &text), ast_grep_to_fixpoint(&text, OPS));
    }
}

/// A TypeScript statement at `indent` spaces: a plain call, or `f(() => { ... })` whose body
/// holds further statements and blank lines (`None`), at any depth.
#[derive(Debug, Clone)]
enum Stmt {
    Plain(u8),
    Blank,
    Wrap(Vec<Stmt>),
}

fn stmt() -> impl Strategy<Value = Stmt> {
    let leaf = prop_oneof![(0u8..10).prop_map(Stmt::Plain), Just(Stmt::Blank)];
    leaf.prop_recursive(4, 32, 5, |inner| prop::collection::vec(inner, 0..5).prop_map(Stmt::Wrap))
}

fn render(stmts: &[Stmt], indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    for s in stmts {
        match s {
            Stmt::Plain(n) => out.push_str(&format!("{pad}x{n}();\n")),
            Stmt::Blank => out.push('\n'),
            Stmt::Wrap(body) => {
                out.push_str(&format!("{pad}f(() => {{\n"));
                render(body, indent + 2, out);
                out.push_str(&format!("{pad}}});\n"));
            }
        }
    }
}

/// The rewrites of the blank-line property: the capture is re-indented (the template puts it
/// on its own line, deeper or not), so ast-grep indents every line of it, blank ones included.
const REINDENT: &[(&str, &str)] =
    &[("f($A)", "g(\n  $A\n)"), ("f($A)", "g($A)"), ("f($A)", "{\n    h($A);\n}")];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A rewrite never adds whitespace to a blank line (so `git diff --check` stays clean), and
    /// otherwise equals ast-grep rewriting until nothing changes.
    #[test]
    fn a_rewrite_never_adds_whitespace_to_a_blank_line(
        stmts in prop::collection::vec(stmt(), 1..5),
        indent in 0usize..6,
        which in 0..REINDENT.len(),
    ) {
        let mut text = String::new();
        render(&stmts, indent, &mut text);
        let ops = &REINDENT[which..=which];
        let res = preview(&text, ops).unwrap();
        let ours = rewritten(&res, &text);
        for line in ours.lines() {
            prop_assert!(line.is_empty() || !line.trim().is_empty(), "whitespace-only line in {:?}", ours);
        }
        let theirs = ast_grep_to_fixpoint(&text, ops);
        let blank = |s: &str| -> String {
            s.split('\n').map(|l| if l.trim().is_empty() { "" } else { l }).collect::<Vec<_>>().join("\n")
        };
        prop_assert_eq!(&ours, &blank(&theirs));
    }
}
