//! Where and how output goes: colour and symbol choices resolved once per run, and writers
//! that surface a closed pipe as an error the caller treats as success.

use std::io::{IsTerminal, Write};

use staged_render::{ColorChoice, RenderOptions, Symbols, color_enabled};

use crate::args::{ColorArg, GlobalArgs};

/// Output settings for one invocation.
#[derive(Debug, Clone)]
pub(crate) struct Output {
    pub(crate) json: bool,
    pub(crate) render: RenderOptions,
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
            render: RenderOptions {
                width,
                color: color_enabled(choice, is_terminal, no_color.as_deref()),
                symbols: if global.ascii { Symbols::Ascii } else { Symbols::Unicode },
            },
        }
    }

    /// Writes `text` and a newline to stdout.
    pub(crate) fn line(&self, text: &str) -> std::io::Result<()> {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text.as_bytes())?;
        stdout.write_all(b"\n")?;
        stdout.flush()
    }

    /// Writes `text` as is to stdout.
    pub(crate) fn write(&self, text: &str) -> std::io::Result<()> {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(text.as_bytes())?;
        stdout.flush()
    }

    /// Writes `value` as one line of JSON to stdout.
    pub(crate) fn json_line(&self, value: &serde_json::Value) -> std::io::Result<()> {
        let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
        serde_json::to_writer(&mut stdout, value)?;
        stdout.write_all(b"\n")?;
        stdout.flush()
    }

    /// Writes one line of JSON: the object with these members, in this order, each written as
    /// it is serialized (no JSON value or text of the whole object is built).
    pub(crate) fn json_object_line(
        &self,
        members: &[(&str, &serde_json::Value)],
    ) -> std::io::Result<()> {
        let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
        for (idx, (key, value)) in members.iter().enumerate() {
            stdout.write_all(if idx == 0 { b"{" } else { b"," })?;
            serde_json::to_writer(&mut stdout, key)?;
            stdout.write_all(b":")?;
            serde_json::to_writer(&mut stdout, value)?;
        }
        stdout.write_all(if members.is_empty() { b"{}\n" } else { b"}\n" })?;
        stdout.flush()
    }
}

/// The terminal's width: `COLUMNS` when the shell exports it, else what the terminal says.
fn terminal_width() -> Option<usize> {
    let from_env = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok());
    let from_tty = || ratatui::crossterm::terminal::size().ok().map(|(cols, _)| usize::from(cols));
    from_env.or_else(from_tty).filter(|w| *w >= 3)
}
