//! Drawing the review: a header naming the preview, its diff (or its file list, or the resolve
//! log), and a key or prompt line.

use ratatui::{
    Frame,
    layout::{Constraint, Layout},
    style::{Color, Modifier, Style},
    text::{Line, Span, Text},
    widgets::{Block, Borders, Paragraph, Wrap},
};
use serde_json::Value;
use staged_core::{PendingEntry, ResolveAction};

use crate::{
    cmd::age,
    review::{Mode, Review},
};

pub(crate) fn draw(frame: &mut Frame<'_>, review: &Review, color: bool) {
    let [header, body, footer] =
        Layout::vertical([Constraint::Length(2), Constraint::Min(3), Constraint::Length(2)])
            .areas(frame.area());

    let style = |s: Style| if color { s } else { Style::default() };
    let total = review.entries().len();
    let title = match review.selected() {
        None => {
            Line::from("staged review: no pending previews (q quits; the list refreshes by itself)")
        }
        Some(entry) => Line::from(vec![
            Span::styled(
                format!("[{}/{total}] ", review.selected_index() + 1),
                style(Style::default().add_modifier(Modifier::BOLD)),
            ),
            Span::styled(
                entry.label().to_owned(),
                style(Style::default().add_modifier(Modifier::BOLD)),
            ),
            Span::raw(format!(
                "  {}  {}, {} ago",
                entry.id,
                entry.source_tool_name(),
                age(entry.created_at)
            )),
            Span::raw(if review.selected_index() == 0 {
                "  (newest)"
            } else {
                "  (older: read only)"
            }),
        ]),
    };
    frame.render_widget(
        Paragraph::new(title).block(Block::default().borders(Borders::BOTTOM)),
        header,
    );

    let diff_text = match (review.mode(), review.selected()) {
        (Mode::Log, _) => log_text(review),
        (Mode::Files { cursor }, Some(entry)) => files_text(review, entry, *cursor, color),
        (Mode::Reason { files: Some(files), .. }, _) => Text::from(
            std::iter::once(Line::from("Apply only these files; the rest stays pending:"))
                .chain(files.iter().map(|f| Line::from(format!("  {f}"))))
                .collect::<Vec<_>>(),
        ),
        (_, None) => Text::from("Nothing to review."),
        (_, Some(entry)) => {
            let details = entry.action.details();
            match details.and_then(|d| d.get("diff")).and_then(Value::as_str) {
                Some(diff) => {
                    Text::from(diff.lines().map(|l| diff_line(l, color)).collect::<Vec<_>>())
                }
                None => Text::from(
                    details
                        .map(|d| serde_json::to_string_pretty(d).unwrap_or_default())
                        .unwrap_or_else(|| "(this preview has no details)".to_owned()),
                ),
            }
        }
    };
    frame.render_widget(
        Paragraph::new(diff_text).scroll((review.scroll_offset(), 0)).wrap(Wrap { trim: false }),
        body,
    );

    let help = |keys: &str| {
        Line::from(if review.status().is_empty() {
            keys.to_owned()
        } else {
            review.status().to_owned()
        })
    };
    let prompt = match review.mode() {
        Mode::Browse => help(
            "a apply · d discard · f pick files · l log · n/p next/prev · j/k PgUp/PgDn scroll · r refresh · q quit",
        ),
        Mode::Files { .. } => help("space mark · a apply the marked files · j/k move · Esc back"),
        Mode::Log => {
            help("the resolve log, newest first · j/k PgUp/PgDn scroll · r refresh · Esc back")
        }
        Mode::Reason { action, input, .. } => {
            let verb = match action {
                ResolveAction::Apply => "Apply",
                ResolveAction::Discard => "Discard",
            };
            Line::from(vec![
                Span::styled(
                    format!("{verb} reason: "),
                    style(Style::default().add_modifier(Modifier::BOLD)),
                ),
                Span::raw(input.clone()),
                Span::styled("▏", style(Style::default().add_modifier(Modifier::SLOW_BLINK))),
                // Why Enter did not resolve (an empty reason), else how to finish.
                Span::raw(if review.status().is_empty() {
                    "  (Enter confirms, Esc cancels)".to_owned()
                } else {
                    format!("  {}", review.status())
                }),
            ])
        }
    };
    frame.render_widget(
        Paragraph::new(prompt).block(Block::default().borders(Borders::TOP)),
        footer,
    );
}

/// The newest preview's files, marked or not, the cursor's highlighted, then its diff.
fn files_text(review: &Review, entry: &PendingEntry, cursor: usize, color: bool) -> Text<'static> {
    let files = review.head_files();
    let mut lines: Vec<Line<'static>> = files
        .iter()
        .enumerate()
        .map(|(idx, (path, summary))| {
            let mark = if review.is_marked(path) { "[x]" } else { "[ ]" };
            let text =
                format!("{} {mark} {path} ({summary})", if idx == cursor { ">" } else { " " });
            let style = if idx == cursor && color {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            Line::styled(text, style)
        })
        .collect();
    lines.push(Line::from(""));
    // The diff of the file under the cursor.
    let diff = entry.action.details().and_then(|d| d.get("diff")).and_then(Value::as_str);
    if let (Some(diff), Some((path, _))) = (diff, files.get(cursor)) {
        let header = format!(
            "diff --git {} {}",
            staged_workspace::quote_diff_path("a/", path),
            staged_workspace::quote_diff_path("b/", path)
        );
        let mut inside = false;
        for line in diff.lines() {
            if line.starts_with("diff --git ") {
                inside = line == header;
            }
            if inside {
                lines.push(diff_line(line, color));
            }
        }
    }
    Text::from(lines)
}

/// The resolve log, one entry a line.
fn log_text(review: &Review) -> Text<'static> {
    if review.history().is_empty() {
        return Text::from("The log is empty: nothing was applied, discarded or undone here yet.");
    }
    let lines: Vec<Line<'static>> = review
        .history()
        .iter()
        .map(|e| {
            let r = &e.record;
            let reverted =
                e.reverted_by.map(|by| format!(" (reverted by {by})")).unwrap_or_default();
            Line::from(format!(
                "{:>4}  {}{reverted}  {}  {} · {} ago · {}",
                e.seq,
                r.outcome,
                r.label,
                r.front_end,
                age(e.at),
                r.reason.split_whitespace().collect::<Vec<_>>().join(" ")
            ))
        })
        .collect();
    Text::from(lines)
}

fn diff_line(line: &str, color: bool) -> Line<'static> {
    let style = if !color {
        Style::default()
    } else if line.starts_with("+++") || line.starts_with("---") {
        Style::default().add_modifier(Modifier::BOLD)
    } else if line.starts_with("@@") {
        Style::default().fg(Color::Cyan)
    } else if line.starts_with('+') {
        Style::default().fg(Color::Green)
    } else if line.starts_with('-') {
        Style::default().fg(Color::Red)
    } else {
        Style::default()
    };
    Line::styled(line.to_owned(), style)
}
