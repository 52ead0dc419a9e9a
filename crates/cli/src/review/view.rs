//! Drawing the review: a header naming the preview, its diff, and a key or prompt line.

use ratatui::{
    Frame,
    layout::{Constraint, Layout},
    style::{Color, Modifier, Style},
    text::{Line, Span, Text},
    widgets::{Block, Borders, Paragraph, Wrap},
};
use serde_json::Value;
use staged_core::ResolveAction;

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

    let diff_text = match review.selected() {
        None => Text::from("Nothing to review."),
        Some(entry) => {
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

    let prompt = match review.mode() {
        Mode::Browse => Line::from(if review.status().is_empty() {
            "a apply · d discard · n/p next/prev · j/k PgUp/PgDn scroll · r refresh · q quit"
                .to_owned()
        } else {
            review.status().to_owned()
        }),
        Mode::Reason { action, input } => {
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
