//! The `resolve` call line, result block and in-flight intent (`docs/contract/rendering.md`).

use staged_protocol::ResolveAction;

use crate::style::{Color, RenderOptions, Span, block_line, cut, paint, sanitize, truncate_spans};

/// Reasons on the call line are cut to this many columns, without an ellipsis.
const CALL_REASON_COLUMNS: usize = 72;

/// The status text while a `resolve` call runs: `accepting: <reason>` or
/// `discarding: <reason>` (`accepting changes` / `discarding changes` without a reason).
///
/// ```
/// use staged_protocol::ResolveAction;
/// use staged_render::resolve_intent;
/// assert_eq!(resolve_intent(ResolveAction::Apply, "  tests pass "), "accepting: tests pass");
/// assert_eq!(resolve_intent(ResolveAction::Discard, ""), "discarding changes");
/// ```
pub fn resolve_intent(action: ResolveAction, reason: &str) -> String {
    let verb = match action {
        ResolveAction::Apply => "accepting",
        ResolveAction::Discard => "discarding",
    };
    match reason.trim() {
        "" => format!("{verb} changes"),
        reason => format!("{verb}: {reason}"),
    }
}

/// The one-line call header:
/// `⏳ Resolve: <action> ⟦proposed -> resolved⟧ <reason>` (`proposed -> rejected` for discard).
pub fn render_resolve_call(action: ResolveAction, reason: &str, opts: &RenderOptions) -> String {
    let sym = opts.symbols;
    let (badge, color) = match action {
        ResolveAction::Apply => ("proposed -> resolved", Color::Success),
        ResolveAction::Discard => ("proposed -> rejected", Color::Warning),
    };
    let mut spans = vec![
        Span::plain(format!("{} Resolve: {} ", sym.pending(), action.as_str())),
        Span::colored(format!("{}{badge}{}", sym.open(), sym.close()), color),
    ];
    let reason = sanitize(reason.trim());
    if !reason.is_empty() {
        spans.push(Span::plain(" "));
        spans.push(Span::colored(cut(&reason, CALL_REASON_COLUMNS), Color::Muted));
    }
    let spans = match opts.width {
        Some(width) => truncate_spans(spans, width.max(3), sym.ellipsis()),
        None => spans,
    };
    paint(&spans, opts.color)
}

/// The five-line result block: blank, header, blank, reason, blank; each line full width, in
/// inverse video on the outcome's colour.
///
/// `details` are the result's details (`ResolveDetails` on the wire, or anything else for a
/// result that has none). The verb is `Accept` for a successful apply, `Failed` for an apply
/// that errored, and `Discard` otherwise. A label `Source: summary` shows the summary with a
/// bold `⟦Source⟧` badge. Missing fields read `pending action` and `No reason provided`.
pub fn render_resolve_result(
    details: Option<&serde_json::Value>,
    is_error: bool,
    opts: &RenderOptions,
) -> String {
    let field = |name: &str| details.and_then(|d| d.get(name)).and_then(|v| v.as_str());
    let label = sanitize(field("label").unwrap_or("pending action"));
    let reason = match sanitize(field("reason").unwrap_or_default().trim()) {
        r if r.is_empty() => "No reason provided".to_owned(),
        r => r,
    };
    let is_apply = field("action") != Some("discard");
    let verb = match (is_apply, is_error) {
        (true, false) => "Accept",
        (true, true) => "Failed",
        (false, _) => "Discard",
    };
    let bg = if is_error {
        Color::Error
    } else if verb == "Accept" {
        Color::Success
    } else {
        Color::Warning
    };
    let icon = if verb == "Accept" { opts.symbols.accept() } else { opts.symbols.error() };

    let mut header = vec![Span::plain(format!("{icon} ")), Span::bold(format!("{verb}:"))];
    match label.find(": ") {
        Some(idx) if idx > 0 => {
            let (source, summary) = (&label[..idx], &label[idx + 2..]);
            header.push(Span::plain(format!(" {summary} ")));
            header.push(Span::bold(format!(
                "{}{source}{}",
                opts.symbols.open(),
                opts.symbols.close()
            )));
        }
        _ => header.push(Span::plain(format!(" {label}"))),
    }

    [
        block_line(Vec::new(), bg, opts),
        block_line(header, bg, opts),
        block_line(Vec::new(), bg, opts),
        block_line(vec![Span::italic(reason)], bg, opts),
        block_line(Vec::new(), bg, opts),
    ]
    .join("\n")
}
