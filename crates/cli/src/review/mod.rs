//! `staged review`: an interactive terminal UI for a person to walk the pending previews,
//! newest first, read each diff, and apply or discard it with a typed reason.
//!
//! Nothing is applied without an explicit key: `a` (or `d`) opens a reason prompt, and only
//! Enter on a non-empty reason resolves. `f` lists the newest preview's files: space marks
//! some, `→` lists a file's hunks to mark some of them, `A`, `N` and `F` mark all, none, or
//! the folder of the file under the cursor, and `a` applies only what is marked (the rest
//! stays pending as a new preview). `l` shows the resolve log. Only the newest preview can be resolved (the stack is
//! LIFO); older ones can be read.
//!
//! `s` switches to the sessions view: the agent sessions, the one active last first, with
//! their review progress; Enter lists a session's files and hunks, the diff following the
//! cursor; `r` reverts the file or hunk under the cursor (a reason is required) and `K` keeps
//! it (the reason is optional), through the same code as `staged session revert|keep`. The resolve names the preview the person saw, so a preview
//! staged meanwhile by another process is never applied by mistake.

mod state;
mod view;

use std::{io::IsTerminal, time::Duration};

use anyhow::{Context, bail};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::{args::GlobalArgs, context, exit::Exit, output::Output};

pub(crate) use state::{Mode, Review};

/// How often the stack is re-read while idle, to follow other processes.
const REFRESH: Duration = Duration::from_millis(500);

pub(crate) fn run(global: &GlobalArgs, out: &Output) -> anyhow::Result<Exit> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        bail!(
            "staged review needs a terminal; in scripts use `staged pending`, `staged show` and `staged resolve`"
        );
    }
    let ws = context::open_existing(global)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let mut review = Review::new(ws, runtime);
    review.reload();

    let mut terminal = ratatui::try_init().context("setting up the terminal")?;
    let res = event_loop(&mut terminal, &mut review, out.render.color);
    ratatui::restore();
    res?;
    for line in review.log() {
        out.line(line)?;
    }
    Ok(Exit::Success)
}

fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    review: &mut Review,
    color: bool,
) -> anyhow::Result<()> {
    loop {
        terminal.draw(|frame| view::draw(frame, review, color)).context("drawing")?;
        if !event::poll(REFRESH).context("reading the terminal")? {
            if review.mode() == &Mode::Browse {
                review.reload();
            }
            continue;
        }
        match event::read().context("reading the terminal")? {
            Event::Key(key) if key.kind != KeyEventKind::Release && !handle_key(review, key) => {
                return Ok(());
            }
            // A resize only needs a redraw, which the loop does next.
            _ => {}
        }
    }
}

/// Applies one key press; `false` means quit.
fn handle_key(review: &mut Review, key: KeyEvent) -> bool {
    if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
        return false;
    }
    match review.mode().clone() {
        Mode::Browse => match key.code {
            KeyCode::Char('q') | KeyCode::Esc => return false,
            KeyCode::Char('a') => review.start_reason(staged_protocol::ResolveAction::Apply),
            KeyCode::Char('d') => review.start_reason(staged_protocol::ResolveAction::Discard),
            KeyCode::Char('f') => review.start_files(),
            KeyCode::Char('l') => review.show_log(),
            KeyCode::Char('s') => review.toggle_sessions(),
            KeyCode::Right | KeyCode::Char('n') | KeyCode::Tab => review.select_offset(1),
            KeyCode::Left | KeyCode::Char('p') | KeyCode::BackTab => review.select_offset(-1),
            KeyCode::Down | KeyCode::Char('j') => review.scroll(1),
            KeyCode::Up | KeyCode::Char('k') => review.scroll(-1),
            KeyCode::PageDown | KeyCode::Char(' ') => review.scroll(20),
            KeyCode::PageUp => review.scroll(-20),
            KeyCode::Home | KeyCode::Char('g') => review.scroll_to_top(),
            KeyCode::Char('r') => review.reload(),
            _ => {}
        },
        Mode::Files { .. } => match key.code {
            KeyCode::Esc | KeyCode::Char('q') => review.back_to_browse(),
            KeyCode::Down | KeyCode::Char('j') => review.move_cursor(1),
            KeyCode::Up | KeyCode::Char('k') => review.move_cursor(-1),
            KeyCode::Home | KeyCode::Char('g') => review.cursor_to(false),
            KeyCode::End | KeyCode::Char('G') => review.cursor_to(true),
            KeyCode::Right | KeyCode::Char('l') => review.open_hunks(true),
            KeyCode::Left | KeyCode::Char('h') => review.open_hunks(false),
            KeyCode::Char(' ') | KeyCode::Char('x') => review.toggle_mark(),
            KeyCode::Char('A') => review.mark_all(),
            KeyCode::Char('N') => review.mark_none(),
            KeyCode::Char('F') => review.mark_folder(),
            KeyCode::Char('a') | KeyCode::Enter => review.apply_marked(),
            KeyCode::PageDown => review.scroll(20),
            KeyCode::PageUp => review.scroll(-20),
            _ => {}
        },
        Mode::Log => match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('l') => review.back_to_browse(),
            KeyCode::Down | KeyCode::Char('j') => review.scroll(1),
            KeyCode::Up | KeyCode::Char('k') => review.scroll(-1),
            KeyCode::PageDown | KeyCode::Char(' ') => review.scroll(20),
            KeyCode::PageUp => review.scroll(-20),
            KeyCode::Char('r') => review.show_log(),
            _ => {}
        },
        Mode::Sessions { .. } => match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('s') => review.toggle_sessions(),
            KeyCode::Down | KeyCode::Char('j') => review.move_session_cursor(1),
            KeyCode::Up | KeyCode::Char('k') => review.move_session_cursor(-1),
            KeyCode::Right | KeyCode::Char('l') | KeyCode::Enter => review.open_session(),
            KeyCode::Char('r') | KeyCode::Char('K') => review.start_session_reason(true),
            KeyCode::PageDown | KeyCode::Char(' ') => review.scroll(20),
            KeyCode::PageUp => review.scroll(-20),
            _ => {}
        },
        Mode::SessionFiles { .. } => match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Left | KeyCode::Char('h') => {
                review.close_session();
            }
            KeyCode::Char('s') => review.toggle_sessions(),
            KeyCode::Down | KeyCode::Char('j') => review.move_session_cursor(1),
            KeyCode::Up | KeyCode::Char('k') => review.move_session_cursor(-1),
            KeyCode::Char('r') => review.start_session_reason(true),
            KeyCode::Char('K') => review.start_session_reason(false),
            KeyCode::PageDown | KeyCode::Char(' ') => review.scroll(20),
            KeyCode::PageUp => review.scroll(-20),
            _ => {}
        },
        Mode::Reason { .. } | Mode::SessionReason { .. } => match key.code {
            KeyCode::Esc => review.cancel_reason(),
            KeyCode::Enter => review.submit_reason(),
            KeyCode::Backspace => review.pop_reason_char(),
            KeyCode::Char(ch) => review.push_reason_char(ch),
            _ => {}
        },
    }
    true
}
