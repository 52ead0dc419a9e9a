//! The resolve renderer (`docs/contract/rendering.md`), and snapshots of every block shape.

use serde_json::json;
use staged_protocol::ResolveAction;
use staged_render::{
    ColorChoice, RenderOptions, Symbols, color_enabled, render_resolve_call, render_resolve_result,
    resolve_intent,
};
use unicode_width::UnicodeWidthStr;

fn strip_ansi(text: &str) -> String {
    let mut res = String::new();
    let mut chars = text.chars();
    while let Some(ch) = chars.next() {
        if ch == '\x1b' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            res.push(ch);
        }
    }
    res
}

fn colored(width: usize) -> RenderOptions {
    RenderOptions { width: Some(width), color: true, symbols: Symbols::Unicode }
}

fn plain(width: usize) -> RenderOptions {
    RenderOptions { width: Some(width), color: false, symbols: Symbols::Unicode }
}

fn apply_details() -> serde_json::Value {
    json!({
        "action": "apply",
        "reason": "All replacements are correct",
        "sourceToolName": "ast_edit",
        "label": "AST Edit: 2 replacements in 1 file",
        "sourceResultDetails": {"totalReplacements": 2}
    })
}

#[test]
fn renders_a_highlighted_apply_summary() {
    let out = strip_ansi(&render_resolve_result(Some(&apply_details()), false, &colored(90)));
    assert!(out.contains("Accept: 2 replacements in 1 file"), "{out}");
    assert!(out.contains("AST Edit"));
    assert!(out.contains("All replacements are correct"));
    assert!(!out.contains("Applied 2 replacements in 1 file."));
    assert!(!out.contains("Decision"));
    assert!(!out.contains('╭'));
}

#[test]
fn keeps_the_inverse_block_color_across_the_full_line() {
    for (details, is_error) in [
        (apply_details(), false),
        (json!({"action": "discard", "reason": "no"}), false),
        (json!({}), true),
    ] {
        let out = render_resolve_result(Some(&details), is_error, &colored(90));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 5);
        for line in lines {
            assert_eq!(line.split("\x1b[39m").count(), 2, "{line:?}");
            assert!(line.starts_with("\x1b[7m"));
        }
    }
}

#[test]
fn every_line_is_exactly_the_width_even_with_wide_characters() {
    let details = json!({"action": "apply", "reason": "日本語の理由がとても長いのでここで切られるはずです", "label": "AST Edit: 変更"});
    for width in [3, 10, 25, 40, 90] {
        let out = render_resolve_result(Some(&details), false, &plain(width));
        for line in out.lines() {
            assert_eq!(UnicodeWidthStr::width(line), width, "{line:?} at width {width}");
        }
    }
}

#[test]
fn block_shapes() {
    let cases = [
        ("accept", Some(apply_details()), false, plain(60)),
        (
            "discard",
            Some(
                json!({"action": "discard", "reason": "Preview changed wrong callsites", "label": "AST Edit: 2 replacements in 1 file"}),
            ),
            false,
            plain(60),
        ),
        (
            "failed",
            Some(
                json!({"action": "apply", "reason": "ship", "label": "AST Edit: 1 replacement in 1 file"}),
            ),
            true,
            plain(60),
        ),
        // #3061: an apply error with empty details.
        ("phantom", Some(json!({})), true, plain(60)),
        ("no_details", None, true, plain(60)),
        (
            "no_badge_label",
            Some(json!({"action": "apply", "reason": "ok", "label": "Batch rename"})),
            false,
            plain(60),
        ),
        (
            "tabs_and_narrow",
            Some(
                json!({"action": "apply", "reason": "a\treason that is far too long for this", "label": "AST Edit: 12 replacements in 4 files"}),
            ),
            false,
            plain(24),
        ),
        (
            "ascii",
            Some(apply_details()),
            false,
            RenderOptions { width: Some(60), color: false, symbols: Symbols::Ascii },
        ),
        (
            "ascii_failed",
            Some(json!({"action": "apply"})),
            true,
            RenderOptions { width: Some(60), color: false, symbols: Symbols::Ascii },
        ),
    ];
    for (name, details, is_error, opts) in cases {
        let out = render_resolve_result(details.as_ref(), is_error, &opts);
        insta::assert_snapshot!(format!("result_{name}"), out.replace(' ', "·"));
    }
}

#[test]
fn colored_escapes() {
    let out = render_resolve_result(Some(&apply_details()), false, &colored(50));
    insta::assert_snapshot!(
        "result_accept_colored",
        out.escape_debug().to_string().replace("\\n", "\n")
    );
    let out = render_resolve_result(
        Some(&json!({"action": "discard", "reason": "no"})),
        false,
        &colored(30),
    );
    assert!(out.contains("\x1b[33m"), "discard is warning-coloured");
    let out = render_resolve_result(
        Some(&json!({"action": "discard", "reason": "no"})),
        true,
        &colored(30),
    );
    assert!(out.contains("\x1b[31m"), "an error is error-coloured");
}

#[test]
fn call_lines() {
    let long = "x".repeat(100);
    let lines = [
        render_resolve_call(ResolveAction::Apply, "  All replacements are correct ", &plain(120)),
        render_resolve_call(ResolveAction::Discard, "wrong files", &plain(120)),
        render_resolve_call(ResolveAction::Apply, "", &plain(120)),
        render_resolve_call(ResolveAction::Apply, &long, &plain(200)),
        render_resolve_call(ResolveAction::Discard, "narrow", &plain(20)),
        render_resolve_call(
            ResolveAction::Apply,
            "ascii",
            &RenderOptions { width: Some(80), color: false, symbols: Symbols::Ascii },
        ),
        render_resolve_call(ResolveAction::Apply, "colour", &colored(80))
            .escape_debug()
            .to_string(),
    ];
    insta::assert_snapshot!("call_lines", lines.join("\n"));
    // The reason is cut to 72 columns without an ellipsis.
    assert!(lines[3].ends_with(&"x".repeat(72)));
    assert!(!lines[3].contains(&"x".repeat(73)));
}

#[test]
fn intents() {
    assert_eq!(resolve_intent(ResolveAction::Apply, "looks right"), "accepting: looks right");
    assert_eq!(
        resolve_intent(ResolveAction::Discard, "wrong callsites"),
        "discarding: wrong callsites"
    );
    assert_eq!(resolve_intent(ResolveAction::Apply, "   "), "accepting changes");
    assert_eq!(resolve_intent(ResolveAction::Discard, ""), "discarding changes");
}

#[test]
fn honours_no_color() {
    assert!(!color_enabled(ColorChoice::Auto, true, Some("1")));
    assert!(color_enabled(ColorChoice::Auto, true, Some("")));
    assert!(!color_enabled(ColorChoice::Never, true, None));
    let out = render_resolve_result(Some(&apply_details()), false, &plain(40));
    assert!(!out.contains('\x1b'));
}
