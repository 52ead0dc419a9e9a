//! Render options, symbol presets, colour decisions, and the styled-span machinery that keeps
//! truncation and padding width-aware and escape-safe.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Which glyphs to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Symbols {
    /// `✓`, `✘`, `⏳`, `⟦ ⟧`.
    #[default]
    Unicode,
    /// `[v]`, `[!!]`, `[*]`, `[ ]`: for terminals and logs without Unicode.
    Ascii,
}

impl Symbols {
    pub(crate) fn accept(self) -> &'static str {
        match self {
            Symbols::Unicode => "✓",
            Symbols::Ascii => "[v]",
        }
    }

    pub(crate) fn error(self) -> &'static str {
        match self {
            Symbols::Unicode => "✘",
            Symbols::Ascii => "[!!]",
        }
    }

    pub(crate) fn pending(self) -> &'static str {
        match self {
            Symbols::Unicode => "⏳",
            Symbols::Ascii => "[*]",
        }
    }

    pub(crate) fn open(self) -> &'static str {
        match self {
            Symbols::Unicode => "⟦",
            Symbols::Ascii => "[",
        }
    }

    pub(crate) fn close(self) -> &'static str {
        match self {
            Symbols::Unicode => "⟧",
            Symbols::Ascii => "]",
        }
    }

    pub(crate) fn ellipsis(self) -> &'static str {
        match self {
            Symbols::Unicode => "…",
            Symbols::Ascii => "...",
        }
    }
}

/// How to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RenderOptions {
    /// The terminal's width in columns (at least 3 is used): lines are cut to it and block
    /// lines padded to it. `None` off a terminal: lines are printed whole, unpadded.
    pub width: Option<usize>,
    /// Whether to emit ANSI colour and style escapes.
    pub color: bool,
    /// The glyph preset.
    pub symbols: Symbols,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self { width: Some(80), color: false, symbols: Symbols::Unicode }
    }
}

/// The user's colour preference, as given by a `--color` flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ColorChoice {
    /// Colour on a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Decides whether to colour. `no_color` is the value of the `NO_COLOR` environment variable:
/// any non-empty value turns colour off in `Auto` mode (<https://no-color.org>).
///
/// ```
/// use staged_render::{ColorChoice, color_enabled};
/// assert!(color_enabled(ColorChoice::Auto, true, None));
/// assert!(!color_enabled(ColorChoice::Auto, true, Some("1")));
/// assert!(!color_enabled(ColorChoice::Auto, false, None));
/// assert!(color_enabled(ColorChoice::Always, false, Some("1")));
/// ```
pub fn color_enabled(choice: ColorChoice, is_terminal: bool, no_color: Option<&str>) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => is_terminal && no_color.is_none_or(str::is_empty),
    }
}

/// A theme colour, as an SGR foreground code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Color {
    Success,
    Warning,
    Error,
    Muted,
}

impl Color {
    fn sgr(self) -> &'static str {
        match self {
            Color::Success => "32",
            Color::Warning => "33",
            Color::Error => "31",
            Color::Muted => "90",
        }
    }
}

/// A run of text with attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) text: String,
    pub(crate) bold: bool,
    pub(crate) italic: bool,
    pub(crate) color: Option<Color>,
}

impl Span {
    pub(crate) fn plain(text: impl Into<String>) -> Self {
        Self { text: text.into(), bold: false, italic: false, color: None }
    }

    pub(crate) fn bold(text: impl Into<String>) -> Self {
        Self { bold: true, ..Self::plain(text) }
    }

    pub(crate) fn italic(text: impl Into<String>) -> Self {
        Self { italic: true, ..Self::plain(text) }
    }

    pub(crate) fn colored(text: impl Into<String>, color: Color) -> Self {
        Self { color: Some(color), ..Self::plain(text) }
    }
}

/// Display width of `text` in columns.
pub(crate) fn width_of(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// Replaces tabs with three spaces and other control characters (and the Unicode direction
/// overrides, which reorder the rest of the line) with nothing, so the rendered width is what
/// the terminal shows and nothing in the text drives the terminal.
pub(crate) fn sanitize(text: &str) -> String {
    let mut res = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '\t' => res.push_str("   "),
            '\n' | '\r' => res.push(' '),
            c if crate::escape::is_unsafe(c) => {}
            c => res.push(c),
        }
    }
    res
}

/// Cuts `text` to at most `max` columns, without an ellipsis.
pub(crate) fn cut(text: &str, max: usize) -> String {
    let mut res = String::new();
    let mut used = 0;
    for ch in text.chars() {
        let w = UnicodeWidthChar::width(ch).unwrap_or(0);
        if used + w > max {
            break;
        }
        used += w;
        res.push(ch);
    }
    res
}

/// Truncates spans to `max` columns, ending in `ellipsis` when something was cut.
pub(crate) fn truncate_spans(spans: Vec<Span>, max: usize, ellipsis: &str) -> Vec<Span> {
    let total: usize = spans.iter().map(|s| width_of(&s.text)).sum();
    if total <= max {
        return spans;
    }
    let ellipsis_width = width_of(ellipsis);
    let (budget, ellipsis) =
        if max >= ellipsis_width { (max - ellipsis_width, ellipsis) } else { (max, "") };
    let mut res = Vec::new();
    let mut used = 0;
    for span in spans {
        let piece = cut(&span.text, budget - used);
        used += width_of(&piece);
        let exhausted = piece.len() < span.text.len();
        res.push(Span { text: piece, ..span.clone() });
        if exhausted {
            res.push(Span { text: ellipsis.to_owned(), ..span });
            break;
        }
    }
    res
}

/// Renders spans inside an optional outer style. With colour, each span's own attributes are
/// switched on and off with their specific SGR resets, never a full reset, so the outer
/// inverse and foreground colour hold across the whole line.
pub(crate) fn paint(spans: &[Span], color: bool) -> String {
    let mut res = String::new();
    for span in spans {
        if !color {
            res.push_str(&span.text);
            continue;
        }
        let mut open = Vec::new();
        let mut close = Vec::new();
        if span.bold {
            open.push("1");
            close.push("22");
        }
        if span.italic {
            open.push("3");
            close.push("23");
        }
        if let Some(c) = span.color {
            open.push(c.sgr());
            close.push("39");
        }
        if !open.is_empty() {
            res.push_str(&format!("\x1b[{}m", open.join(";")));
        }
        res.push_str(&span.text);
        if !close.is_empty() {
            res.push_str(&format!("\x1b[{}m", close.join(";")));
        }
    }
    res
}

/// One full-width inverse-video block line: ` text ` padded to `width` columns; without a
/// width, ` text` as is.
pub(crate) fn block_line(spans: Vec<Span>, bg: Color, opts: &RenderOptions) -> String {
    let mut line = vec![Span::plain(" ")];
    match opts.width {
        Some(width) => {
            let width = width.max(3);
            let spans = truncate_spans(spans, width - 2, opts.symbols.ellipsis());
            let used: usize = spans.iter().map(|s| width_of(&s.text)).sum();
            line.extend(spans);
            line.push(Span::plain(" ".repeat(width - 1 - used)));
        }
        None => {
            line.extend(spans);
            // A line of only padding stays empty.
            if line.iter().all(|s| s.text.trim().is_empty()) {
                line.clear();
            }
        }
    }
    let body = paint(&line, opts.color);
    if opts.color { format!("\x1b[7m\x1b[{}m{body}\x1b[39m\x1b[27m", bg.sgr()) } else { body }
}
