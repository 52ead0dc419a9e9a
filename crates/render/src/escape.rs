//! Text from outside (a plugin's label, a model's reason, a planted database row, a file name,
//! a plugin's stderr) made safe to print on a terminal: every control character is shown as an
//! escape instead of being sent to the terminal, where ESC starts a command (clear the screen,
//! set the window title), BEL rings, CR returns to the start of the line, and LF forges a new
//! table row.
//!
//! [`escape_text`] keeps line feeds and tabs (a message of several lines); [`escape_line`]
//! escapes those too (a table cell, a header). Escapes read as Rust and JSON write them:
//! `\n`, `\r`, `\t`, `\x1b` for other C0 controls and DEL, `\u{9b}` for C1 controls and the
//! Unicode direction overrides (which reorder what follows them on screen). A backslash is
//! left alone: text with no control character comes back unchanged, borrowed.

use std::{borrow::Cow, fmt::Write as _};

/// Whether `c` must not reach a terminal as it is (line feed and tab aside).
pub(crate) fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escape(text: &str, keep_lines: bool) -> Cow<'_, str> {
    let kept = |c: char| keep_lines && (c == '\n' || c == '\t');
    if !text.chars().any(|c| is_unsafe(c) && !kept(c)) {
        return Cow::Borrowed(text);
    }
    let mut res = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if kept(c) || !is_unsafe(c) => res.push(c),
            '\n' => res.push_str("\\n"),
            '\r' => res.push_str("\\r"),
            '\t' => res.push_str("\\t"),
            c if (c as u32) < 0x80 => {
                let _ = write!(res, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(res, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(res)
}

/// `text` for a terminal, with its line feeds and tabs kept and every other control character
/// escaped (see the module docs).
///
/// ```
/// use staged_render::escape_text;
/// assert_eq!(escape_text("two\nlines"), "two\nlines");
/// assert_eq!(escape_text("a\x1b]0;pwned\x07b\rc"), "a\\x1b]0;pwned\\x07b\\rc");
/// ```
pub fn escape_text(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

/// `text` on one line for a terminal: line feeds and tabs are escaped too.
///
/// ```
/// use staged_render::escape_line;
/// assert_eq!(escape_line("Rename: 2 files"), "Rename: 2 files");
/// assert_eq!(escape_line("x\n1  forged row"), "x\\n1  forged row");
/// assert_eq!(escape_line("\u{202e}txt.exe"), "\\u{202e}txt.exe");
/// ```
pub fn escape_line(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_character_is_escaped_and_nothing_else_changes() {
        for c in (0u32..0x110000).filter_map(char::from_u32) {
            let text = c.to_string();
            let line = escape_line(&text);
            assert!(!line.chars().any(char::is_control), "{c:?}");
            if !is_unsafe(c) {
                assert!(matches!(line, Cow::Borrowed(_)), "{c:?}");
            }
        }
        assert_eq!(escape_text("a\tb\nc\u{9b}2J"), "a\tb\nc\\u{9b}2J");
        assert_eq!(escape_line("a\tb"), "a\\tb");
        assert_eq!(escape_line("C:\\dir\\x"), "C:\\dir\\x");
        assert_eq!(escape_line("\x7f\0"), "\\x7f\\x00");
    }
}
