//! Drawing the review: a header naming the preview, its diff (or its file list over the diff
//! of the file or hunk under the cursor, or the resolve log), and a key or prompt line. The
//! file list scrolls with its cursor, so the row a key acts on is always on screen. The
//! sessions view draws the sessions (or a session's files and hunks) over the diff of the one
//! under the cursor.

use ratatui::{
    Frame,
    layout::{Constraint, Layout},
    style::{Color, Modifier, Style},
    text::{Line, Span, Text},
    widgets::{Block, Borders, Paragraph, Wrap},
};
use staged_core::PendingEntry;
use staged_protocol::{ResolveAction, preview_diff};

use staged_render::{escape_line, escape_text};
use staged_session::FileKind;
use staged_workspace::sessions::plural;

use crate::{
    cmd::{
        age,
        session::{numbered, progress},
    },
    review::{Mode, Review},
};

use super::state::{Mark, Row};

pub(crate) fn draw(frame: &mut Frame<'_>, review: &Review, color: bool) {
    let [header, body, footer] =
        Layout::vertical([Constraint::Length(2), Constraint::Min(3), Constraint::Length(2)])
            .areas(frame.area());

    let style = |s: Style| if color { s } else { Style::default() };
    if matches!(
        review.mode(),
        Mode::Sessions { .. } | Mode::SessionFiles { .. } | Mode::SessionReason { .. }
    ) {
        draw_sessions(frame, [header, body, footer], review, color);
        return;
    }
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
            "a apply · d discard · f pick files · l log · s sessions · n/p next/prev · j/k PgUp/PgDn scroll · r refresh · q quit",
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
            reason_line(review, format!("{verb} reason: "), input, color)
        }
        // Drawn by `draw_sessions`.
        Mode::Sessions { .. } | Mode::SessionFiles { .. } | Mode::SessionReason { .. } => {
            Line::from("")
        }
    };
    frame.render_widget(
        Paragraph::new(prompt).block(Block::default().borders(Borders::TOP)),
        footer,
    );
}

/// The reason prompt: `label`, what is typed, and how to finish (or why Enter did nothing).
fn reason_line(review: &Review, label: String, input: &str, color: bool) -> Line<'static> {
    let style = |s: Style| if color { s } else { Style::default() };
    Line::from(vec![
        Span::styled(label, style(Style::default().add_modifier(Modifier::BOLD))),
        Span::raw(input.to_owned()),
        Span::styled("▏", style(Style::default().add_modifier(Modifier::SLOW_BLINK))),
        // Why Enter did not resolve (an empty reason), else how to finish.
        Span::raw(if review.status().is_empty() {
            "  (Enter confirms, Esc cancels)".to_owned()
        } else {
            format!("  {}", review.status())
        }),
    ])
}

/// The sessions view: a header, the sessions (or the opened session's files and hunks) over
/// the diff of the one under the cursor, and the keys or the reason prompt.
fn draw_sessions(
    frame: &mut Frame<'_>,
    [header, body, footer]: [ratatui::layout::Rect; 3],
    review: &Review,
    color: bool,
) {
    let bold = if color { Style::default().add_modifier(Modifier::BOLD) } else { Style::default() };
    let title = sessions_title(review, bold);
    frame.render_widget(
        Paragraph::new(title).block(Block::default().borders(Borders::BOTTOM)),
        header,
    );

    let (lines, cursor) = session_list(review);
    let height = lines.len().min(usize::from(body.height / 2).max(1));
    let [list_area, diff_area] = Layout::vertical([
        Constraint::Length(u16::try_from(height + 1).unwrap_or(u16::MAX)),
        Constraint::Min(1),
    ])
    .areas(body);
    let top = review.list_top(cursor, height);
    let shown: Vec<Line<'static>> = if lines.is_empty() {
        vec![Line::from(match review.mode() {
            Mode::Sessions { .. } => {
                "No sessions: no agent session has staged or recorded anything here."
            }
            _ => "Nothing left of this session's change.",
        })]
    } else {
        lines
            .into_iter()
            .enumerate()
            .skip(top)
            .take(height)
            .map(|(idx, text)| {
                let pointer = if idx == cursor { ">" } else { " " };
                let style = if idx == cursor && color {
                    Style::default().add_modifier(Modifier::REVERSED)
                } else {
                    Style::default()
                };
                Line::styled(format!("{pointer} {text}"), style)
            })
            .collect()
    };
    frame.render_widget(
        Paragraph::new(Text::from(shown)).block(Block::default().borders(Borders::BOTTOM)),
        list_area,
    );

    // The diff follows the cursor: the whole session's, a file's, or one hunk's.
    let diff = session_diff(review, cursor);
    frame.render_widget(
        Paragraph::new(Text::from(
            diff.lines().map(|l| diff_line(&escape_text(l), color)).collect::<Vec<_>>(),
        ))
        .scroll((review.scroll_offset(), 0))
        .wrap(Wrap { trim: false }),
        diff_area,
    );

    let prompt = sessions_prompt(review, color);
    frame.render_widget(
        Paragraph::new(prompt).block(Block::default().borders(Borders::TOP)),
        footer,
    );
}

/// The sessions view's title: the workspace's sessions, or the one opened.
fn sessions_title(review: &Review, bold: Style) -> Line<'static> {
    match (review.mode(), review.session()) {
        (Mode::Sessions { .. }, _) | (_, None) => Line::from(vec![
            Span::styled("Sessions", bold),
            Span::raw(format!(
                "  {} in this workspace, the one active last first",
                plural(review.sessions().len(), "session")
            )),
        ]),
        (_, Some(loaded)) => Line::from(vec![
            Span::styled(loaded.name.clone(), bold),
            Span::raw(
                escape_line(&format!(
                    " {}{}: {}, {}; client id {}",
                    loaded.row.client,
                    loaded.row.title.as_deref().map(|t| format!(" \"{t}\"")).unwrap_or_default(),
                    plural(loaded.files.len(), "file"),
                    progress(loaded.reviewed_count(), loaded.hunk_count()),
                    crate::cmd::session::client_id_shown(&loaded.row.external_id)
                ))
                .into_owned(),
            ),
        ]),
    }
}

/// The sessions view's list: the sessions, or the opened session's files and hunks; and the
/// cursor's row.
fn session_list(review: &Review) -> (Vec<String>, usize) {
    match review.mode() {
        Mode::Sessions { cursor } => (
            review
                .sessions()
                .iter()
                .map(|l| {
                    let title =
                        l.row.title.as_deref().map(|t| format!(" \"{t}\"")).unwrap_or_default();
                    let about = match &l.error {
                        Some(err) => err.clone(),
                        None => format!(
                            "{} changed, {}, {} pending",
                            plural(l.files, "file"),
                            progress(l.reviewed, l.hunks),
                            plural(l.pending, "preview")
                        ),
                    };
                    escape_line(&format!(
                        "{} {}{title}: {about}, active {} ago",
                        l.row.short_id(),
                        l.row.client,
                        age(ms_time(l.row.active_ms))
                    ))
                    .into_owned()
                })
                .collect(),
            *cursor,
        ),
        Mode::SessionFiles { cursor } | Mode::SessionReason { cursor, .. } => {
            let lines = match review.session() {
                None => Vec::new(),
                Some(loaded) => review
                    .session_rows()
                    .iter()
                    .map(|row| match *row {
                        Row::File(f) => {
                            let file = &loaded.files[f];
                            let hunks = &file.diff.hunks;
                            let reviewed =
                                hunks.iter().filter(|h| loaded.states.contains_key(&h.key)).count();
                            let what = match &file.kind {
                                FileKind::Changed => {
                                    format!("{}, {reviewed} reviewed", plural(hunks.len(), "hunk"))
                                }
                                FileKind::Created => "new file".to_owned(),
                                FileKind::Deleted => "deleted".to_owned(),
                                FileKind::Moved { from } => format!("moved from {from}"),
                            };
                            let mark = if !hunks.is_empty() && reviewed == hunks.len() {
                                "[kept]"
                            } else {
                                "      "
                            };
                            escape_line(&format!("{mark} {} ({what})", file.path)).into_owned()
                        }
                        Row::Hunk(f, h) => {
                            let file = &loaded.files[f];
                            let hunk = &file.diff.hunks[h];
                            let mut text =
                                format!("         hunk {} of {}", h + 1, file.diff.hunks.len());
                            if let Some(state) = loaded.states.get(&hunk.key) {
                                text.push_str(&format!(" [{}]", escape_line(state)));
                            }
                            if let Some(by) = &hunk.changed_since {
                                text.push_str(&format!(
                                    " [changed since by {}]",
                                    staged_session::origin_text(by)
                                ));
                            }
                            text
                        }
                    })
                    .collect(),
            };
            (lines, *cursor)
        }
        _ => (Vec::new(), 0),
    }
}

/// The diff under the cursor: the whole session's, a file's, or one hunk's.
fn session_diff(review: &Review, cursor: usize) -> String {
    match (review.mode(), review.session()) {
        (_, None) => String::new(),
        (Mode::Sessions { .. }, Some(loaded)) => {
            loaded.files.iter().map(|f| numbered(f, &loaded.states)).collect()
        }
        (_, Some(loaded)) => match review.session_rows().get(cursor) {
            Some(Row::File(f)) => numbered(&loaded.files[*f], &loaded.states),
            Some(Row::Hunk(f, h)) => {
                let numbered = numbered(&loaded.files[*f], &loaded.states);
                staged_journal::diff_files(&numbered)
                    .first()
                    .and_then(|part| {
                        let first = part.hunks.first()?;
                        let hunk = part.hunks.get(*h)?;
                        Some(format!(
                            "{}{}",
                            &numbered[part.span.start..first.start],
                            &numbered[hunk.clone()]
                        ))
                    })
                    .unwrap_or_default()
            }
            None => String::new(),
        },
    }
}

/// The sessions view's footer: the reason being typed, a status, or the keys.
fn sessions_prompt(review: &Review, color: bool) -> Line<'static> {
    match review.mode() {
        Mode::SessionReason { revert, input, cursor } => {
            let target = review.session_target(*cursor);
            let label = if *revert {
                format!("Revert {target}, reason: ")
            } else {
                format!("Keep {target}, reason (optional): ")
            };
            reason_line(review, label, input, color)
        }
        _ if !review.status().is_empty() => Line::from(review.status().to_owned()),
        Mode::SessionFiles { .. } => {
            Line::from("r revert · K keep · j/k move · PgUp/PgDn diff · Esc sessions · s previews")
        }
        _ => Line::from("Enter files · j/k move · PgUp/PgDn diff · s previews · q back"),
    }
}

/// A time in milliseconds since the Unix epoch.
fn ms_time(ms: i64) -> std::time::SystemTime {
    std::time::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or_default())
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
