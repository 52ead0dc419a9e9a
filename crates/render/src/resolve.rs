//! The `resolve` call line, result block and in-flight intent (`docs/contract/rendering.md`).

use serde::{Deserialize, Deserializer};
use serde_json::Value;
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
    render_resolve_block(&ResolveShown::of(details), is_error, opts)
}

/// What the result block shows: the preview's label, the reason and the action, each as text
/// when the result's details give it as text.
///
/// ```
/// use staged_render::ResolveShown;
/// let details = serde_json::json!({"action": "discard", "reason": "r", "label": 3});
/// let shown = ResolveShown::of(Some(&details));
/// assert_eq!(shown.action.as_deref(), Some("discard"));
/// assert_eq!(shown.label, None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ResolveShown {
    /// `apply` or `discard` (anything but `discard` reads as an apply).
    #[serde(default, deserialize_with = "text")]
    pub action: Option<String>,
    /// The reason given.
    #[serde(default, deserialize_with = "text")]
    pub reason: Option<String>,
    /// The preview's label.
    #[serde(default, deserialize_with = "text")]
    pub label: Option<String>,
}

impl ResolveShown {
    /// Read from a result's details: `resolve`'s own (`ResolveDetails`), or a passed-through
    /// tool error's; a field that is absent or not text is `None`, and details that are not
    /// an object give none.
    pub fn of(details: Option<&Value>) -> Self {
        details
            .filter(|d| d.is_object())
            .and_then(|d| ResolveShown::deserialize(d).ok())
            .unwrap_or_default()
    }
}

/// A field's text, or `None` for any other JSON value.
fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::String(text) => Ok(Some(text)),
        _ => Ok(None),
    }
}

/// The five-line result block of [`render_resolve_result`], drawn from what it shows.
pub fn render_resolve_block(shown: &ResolveShown, is_error: bool, opts: &RenderOptions) -> String {
    let label = sanitize(shown.label.as_deref().unwrap_or("pending action"));
    let reason = match sanitize(shown.reason.as_deref().unwrap_or_default().trim()) {
        r if r.is_empty() => "No reason provided".to_owned(),
        r => r,
    };
    let is_apply = shown.action.as_deref() != Some("discard");
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
