//! Drawing the review: a header naming the preview, its diff (or its file list over the diff
//! of the file or hunk under the cursor, or the resolve log), and a key or prompt line. The
//! file list scrolls with its cursor, so the row a key acts on is always on screen.

use ratatui::{
    Frame,
    layout::{Constraint, Layout},
    style::{Color, Modifier, Style},
    text::{Line, Span, Text},
    widgets::{Block, Borders, Paragraph, Wrap},
};
use staged_core::{PendingEntry, ResolveAction, preview_diff};

use crate::{
    cmd::age,
    review::{Mode, Review},
};

use super::state::{Mark, Row};

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

    if let (Mode::Files { cursor }, Some(entry)) = (review.mode(), review.selected()) {
        draw_files(frame, body, review, entry, *cursor, color);
    }
    let diff_text = match (review.mode(), review.selected()) {
        (Mode::Files { .. }, Some(_)) => None,
        (Mode::Log, _) => Some(log_text(review)),
        (Mode::Reason { part: Some(part), .. }, _) => Some(Text::from(
            std::iter::once(Line::from("Apply only these files; the rest stays pending:"))
                .chain(part.lines().into_iter().map(|f| Line::from(format!("  {f}"))))
                .collect::<Vec<_>>(),
        )),
        (_, None) => Some(Text::from("Nothing to review.")),
        (_, Some(entry)) => {
            let details = entry.action.details();
            Some(match details.and_then(preview_diff) {
                Some(diff) => Text::from(
                    crate::pick::number_hunks(diff)
                        .lines()
                        .map(|l| diff_line(l, color))
                        .collect::<Vec<_>>(),
                ),
                None => Text::from(
                    details
                        .map(|d| serde_json::to_string_pretty(d).unwrap_or_default())
                        .unwrap_or_else(|| "(this preview has no details)".to_owned()),
                ),
            })
        }
    };
    if let Some(diff_text) = diff_text {
        frame.render_widget(
            Paragraph::new(diff_text)
                .scroll((review.scroll_offset(), 0))
                .wrap(Wrap { trim: false }),
            body,
        );
    }

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
        Mode::Files { .. } => help(
            "space mark · →/← hunks · A all · N none · F folder · a apply the marked · j/k move · PgUp/PgDn diff · Esc back",
        ),
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

/// The newest preview's files (and the hunks of the opened ones), marked or not, over the
/// diff of the row under the cursor. The list takes at most half of `area`, and scrolls so
/// that the cursor's row is on screen.
fn draw_files(
    frame: &mut Frame<'_>,
    area: ratatui::layout::Rect,
    review: &Review,
    entry: &PendingEntry,
    cursor: usize,
    color: bool,
) {
    let rows = review.rows();
    let height = rows.len().min(usize::from(area.height / 2).max(1));
    let [list_area, diff_area] = Layout::vertical([
        Constraint::Length(u16::try_from(height + 1).unwrap_or(u16::MAX)),
        Constraint::Min(1),
    ])
    .areas(area);
    let top = review.list_top(cursor, height);
    let files = review.head_files();
    let diff = entry.action.details().and_then(preview_diff);
    let lines: Vec<Line<'static>> = rows
        .iter()
        .enumerate()
        .skip(top)
        .take(height)
        .map(|(idx, row)| {
            let pointer = if idx == cursor { ">" } else { " " };
            let text = match *row {
                Row::File(f) => {
                    let file = &files[f];
                    let mark = match review.mark_of(f) {
                        Some(Mark::Whole) => "[x]",
                        Some(Mark::Hunks(_)) => "[~]",
                        None => "[ ]",
                    };
                    let fold = match (file.splits(), review.is_open(f)) {
                        (true, true) => format!(", {} hunks:", file.hunks.len()),
                        (true, false) => format!(", {} hunks →", file.hunks.len()),
                        (false, _) => String::new(),
                    };
                    format!("{pointer} {mark} {} ({}{fold})", file.path, file.summary)
                }
                Row::Hunk(f, h) => {
                    let file = &files[f];
                    let marked = match review.mark_of(f) {
                        Some(Mark::Whole) => true,
                        Some(Mark::Hunks(set)) => set.contains(&h),
                        None => false,
                    };
                    let header = diff
                        .and_then(|d| d.get(file.hunks[h].clone()))
                        .and_then(|t| t.lines().next())
                        .unwrap_or_default();
                    format!(
                        "{pointer}     {} hunk {} of {}  {header}",
                        if marked { "[x]" } else { "[ ]" },
                        h + 1,
                        file.hunks.len()
                    )
                }
            };
            let style = if idx == cursor && color {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            Line::styled(text, style)
        })
        .collect();
    frame.render_widget(
        Paragraph::new(Text::from(lines)).block(Block::default().borders(Borders::BOTTOM)),
        list_area,
    );
    // The diff of the file under the cursor, or of the hunk.
    let shown = match (rows.get(cursor), diff) {
        (Some(Row::File(f)), Some(diff)) => {
            files[*f].diff.clone().and_then(|span| diff.get(span)).map(crate::pick::number_hunks)
        }
        (Some(Row::Hunk(f, h)), Some(diff)) => {
            // The file's header lines and that hunk, numbered as in the whole diff.
            let numbered = files[*f]
                .diff
                .clone()
                .and_then(|span| diff.get(span))
                .map(crate::pick::number_hunks)
                .unwrap_or_default();
            let parts = staged_journal::diff_files(&numbered);
            parts.first().and_then(|part| {
                let first = part.hunks.first()?;
                let hunk = part.hunks.get(*h)?;
                Some(format!(
                    "{}{}",
                    &numbered[part.span.start..first.start],
                    &numbered[hunk.clone()]
                ))
            })
        }
        _ => None,
    };
    let text = match shown {
        Some(shown) => Text::from(shown.lines().map(|l| diff_line(l, color)).collect::<Vec<_>>()),
        None => Text::from(""),
    };
    frame.render_widget(
        Paragraph::new(text).scroll((review.scroll_offset(), 0)).wrap(Wrap { trim: false }),
        diff_area,
    );
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
