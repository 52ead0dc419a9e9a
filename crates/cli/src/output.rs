//! Where and how output goes: colour and symbol choices resolved once per run, and writers
//! that surface a closed pipe as an error the caller treats as success.
//!
//! Text is printed with its control characters escaped ([`Output::line`], [`Output::write`]):
//! labels, reasons, file names and messages come from plugins, models, files and the database,
//! and must not drive the terminal. Only what staged's own renderers styled (from escaped or
//! sanitized input) goes out as it is ([`Output::styled_line`]); a diff's lines are escaped on
//! a terminal ([`Output::diff`]), and left byte for byte in a pipe, where they may be a patch.

use std::{
    borrow::Cow,
    io::{IsTerminal, Write},
};

use staged_render::{ColorChoice, RenderOptions, Symbols, color_enabled, escape_text};

use crate::{
    args::{ColorArg, GlobalArgs},
    diff::colorize,
};

/// Output settings for one invocation.
#[derive(Debug, Clone)]
pub(crate) struct Output {
    pub(crate) json: bool,
    pub(crate) render: RenderOptions,
    /// Whether stdout is a terminal.
    pub(crate) terminal: bool,
}

impl Output {
    pub(crate) fn new(global: &GlobalArgs) -> Self {
        let choice = match global.color {
            ColorArg::Auto => ColorChoice::Auto,
            ColorArg::Always => ColorChoice::Always,
            ColorArg::Never => ColorChoice::Never,
        };
        let is_terminal = std::io::stdout().is_terminal();
        let no_color = std::env::var("NO_COLOR").ok();
        // Blocks are padded to the terminal's real width, for their background; off a
        // terminal, or without colour, lines are printed whole and unpadded.
        let width = (is_terminal && global.color != ColorArg::Never)
            .then(|| terminal_width().unwrap_or(80));
        Self {
            json: global.json,
            terminal: is_terminal,
            render: RenderOptions {
                width,
                color: color_enabled(choice, is_terminal, no_color.as_deref()),
                symbols: if global.ascii { Symbols::Ascii } else { Symbols::Unicode },
            },
        }
    }

    /// Writes `text` and a newline to stdout, its control characters (but line feeds and
    /// tabs) escaped.
    pub(crate) fn line(&self, text: &str) -> std::io::Result<()> {
        self.styled_line(&escape_text(text))
    }

    /// Writes `text`, an answer of one line, and a newline to stdout, every control character
    /// escaped: a line feed in a file name it quotes cannot start a line of its own.
    pub(crate) fn answer(&self, text: &str) -> std::io::Result<()> {
        self.styled_line(&staged_render::escape_line(text))
    }

    /// Writes `text` to stdout, its control characters (but line feeds and tabs) escaped.
    pub(crate) fn write(&self, text: &str) -> std::io::Result<()> {
        self.styled(&escape_text(text))
    }

    /// Writes `text`, styled by staged itself, and a newline to stdout, as it is.
    pub(crate) fn styled_line(&self, text: &str) -> std::io::Result<()> {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text.as_bytes())?;
        stdout.write_all(b"\n")?;
        stdout.flush()
    }

    /// Writes `text`, styled by staged itself, to stdout as it is.
    pub(crate) fn styled(&self, text: &str) -> std::io::Result<()> {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text.as_bytes())?;
        stdout.flush()
    }

    /// Writes a unified diff, coloured when colour is on. On a terminal each line's control
    /// characters are escaped (a file's text may hold ESC or a lone CR); in a pipe the diff is
    /// written byte for byte.
    pub(crate) fn diff(&self, diff: &str) -> std::io::Result<()> {
        let diff = if self.terminal { escape_diff(diff) } else { Cow::Borrowed(diff) };
        self.styled(&colorize(&diff, self.render.color))
    }

    /// Writes `value` as one line of JSON to stdout, serialized as it is (no JSON value of it
    /// is built first).
    pub(crate) fn json_line(&self, value: &impl serde::Serialize) -> std::io::Result<()> {
        let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
        serde_json::to_writer(&mut stdout, value)?;
        stdout.write_all(b"\n")?;
        stdout.flush()
    }
}

/// `diff` with each line's control characters escaped; a line's own `\n` (and a `\r` just
/// before it, a CRLF file's line ending) is kept.
pub(crate) fn escape_diff(diff: &str) -> Cow<'_, str> {
    if matches!(escape_text(diff), Cow::Borrowed(_)) {
        return Cow::Borrowed(diff);
    }
    let mut res = String::with_capacity(diff.len() + 64);
    for line in diff.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix("\r\n") {
            Some(body) => (body, "\r\n"),
            None => match line.strip_suffix('\n') {
                Some(body) => (body, "\n"),
                None => (line, ""),
            },
        };
        res.push_str(&escape_text(body));
        res.push_str(end);
    }
    Cow::Owned(res)
}

/// The terminal's width: `COLUMNS` when the shell exports it, else what the terminal says.
fn terminal_width() -> Option<usize> {
    let from_env = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok());
    let from_tty = || ratatui::crossterm::terminal::size().ok().map(|(cols, _)| usize::from(cols));
    from_env.or_else(from_tty).filter(|w| *w >= 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_on_a_terminal_shows_control_characters_escaped_and_keeps_crlf() {
        let plain = "--- a/x.ts\n+++ b/x.ts\n@@ -1 +1 @@\n-old\n+new\n";
        assert!(matches!(escape_diff(plain), Cow::Borrowed(_)));
        let crlf = "-old\r\n+new\r\n";
        assert_eq!(escape_diff(crlf), crlf);
        let evil = "-a\x1b[2Jb\n+c\rd\x07\n";
        assert_eq!(escape_diff(evil), "-a\\x1b[2Jb\n+c\\rd\\x07\n");
    }
}
