//! `staged review` driven through a pseudo-terminal, as a person at a terminal (or over ssh)
//! would use it: discard one preview, apply another, survive a resize, and never resolve on a
//! cancelled or empty prompt, or on an older preview.
//!
//! The pseudo-terminal's output goes through a terminal emulator (`vt100`), so each step waits
//! for what the screen shows *now* (not for text seen at some point in the byte stream). Every
//! "nothing changed" check comes after the screen showed that the UI handled the keys (the
//! prompt closed with its message, the same preview still listed), never after a blind sleep.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{
    io::{Read, Write},
    num::NonZeroU16,
    path::Path,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use common::{code, pending_ids, read, staged, stderr, workspace};
use portable_pty::{Child, CommandBuilder, ExitStatus, MasterPty, PtySize, native_pty_system};

/// How long any one screen state may take to appear. Generous: a slow, busy machine must not
/// fail the test; a UI that never gets there still does.
const DEADLINE: Duration = Duration::from_secs(60);

fn stage(dir: &Path, pat: &str, out: &str, path: &str) {
    let res = staged(dir, &["ast-edit", "--op", pat, out, path]);
    assert_eq!(code(&res), 0, "{}", stderr(&res));
}

fn pty_size(rows: u16, cols: u16) -> PtySize {
    PtySize { rows, cols, pixel_width: 0, pixel_height: 0 }
}

fn nonzero(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap()
}

/// `staged review` running in a pseudo-terminal, its output fed to a terminal emulator.
struct Tui {
    screen: Arc<Mutex<vt100::Parser>>,
    master: Box<dyn MasterPty + Send>,
    keys: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
}

impl Tui {
    fn start(dir: &Path, rows: u16, cols: u16) -> Tui {
        let pair = native_pty_system().openpty(pty_size(rows, cols)).unwrap();
        let mut cmd = CommandBuilder::new(common::staged_bin());
        cmd.arg("review");
        cmd.cwd(dir);
        cmd.env("TERM", "xterm-256color");
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);

        let screen = Arc::new(Mutex::new(vt100::Parser::new(nonzero(rows), nonzero(cols), 0)));
        let sink = Arc::clone(&screen);
        let mut reader = pair.master.try_clone_reader().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().process(&buf[..n]);
            }
        });
        let keys = pair.master.take_writer().unwrap();
        Tui { screen, master: pair.master, keys, child }
    }

    /// The screen's rows as they are now, trailing blanks trimmed.
    fn rows(&self) -> Vec<String> {
        let parser = self.screen.lock().unwrap();
        let (_, cols) = parser.screen().size();
        parser.screen().rows(0, cols.get()).map(|row| row.trim_end().to_owned()).collect()
    }

    fn shown(&self) -> String {
        self.rows().join("\n")
    }

    /// Waits until the screen satisfies `check`, and returns it; on timeout, fails showing it.
    #[track_caller]
    fn wait_for(&self, what: &str, check: impl Fn(&[String]) -> bool) -> Vec<String> {
        let start = Instant::now();
        loop {
            let rows = self.rows();
            if check(&rows) {
                return rows;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "timed out after {DEADLINE:?} waiting for {what}; the screen shows:\n{}",
                rows.join("\n")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the screen shows every one of `texts` and none of `absent`.
    #[track_caller]
    fn wait_shown(&self, texts: &[&str], absent: &[&str]) -> Vec<String> {
        let what = format!("{texts:?} on screen without {absent:?}");
        self.wait_for(&what, |rows| {
            let shown = rows.join("\n");
            texts.iter().all(|t| shown.contains(t)) && !absent.iter().any(|t| shown.contains(t))
        })
    }

    fn press(&mut self, keys: &str) {
        self.keys.write_all(keys.as_bytes()).unwrap();
        self.keys.flush().unwrap();
    }

    /// Resizes the terminal. The emulator's screen is blanked first, so whatever shows next
    /// was drawn by the UI after it learnt the new size.
    fn resize(&mut self, rows: u16, cols: u16) {
        {
            let mut parser = self.screen.lock().unwrap();
            parser.set_size(nonzero(rows), nonzero(cols));
            parser.process(b"\x1b[2J\x1b[H");
        }
        self.master.resize(pty_size(rows, cols)).unwrap();
    }

    #[track_caller]
    fn wait_exit(&mut self) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "review did not quit; the screen shows:\n{}",
                self.shown()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        // A failed assertion must not leave the UI running.
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
        }
    }
}

/// Nothing was resolved: the same stack, the same files.
#[track_caller]
fn assert_unchanged(dir: &Path, ids: &[String]) {
    assert_eq!(pending_ids(dir), ids);
    assert_eq!(read(dir, "a.ts"), "first(1);\n");
    assert_eq!(read(dir, "b.ts"), "second(2);\n");
}

const KEY_HELP: &str = "a apply · d discard";
const HINT: &str = "(Enter confirms, Esc cancels)";

#[test]
fn review_discards_one_preview_and_applies_another() {
    let ws = workspace(&[("a.ts", "first(1);\n"), ("b.ts", "second(2);\n")]);
    stage(ws.path(), "first($A)", "one($A)", "a.ts");
    stage(ws.path(), "second($A)", "two($A)", "b.ts");
    let ids = pending_ids(ws.path());
    assert_eq!(ids.len(), 2);

    let mut tui = Tui::start(ws.path(), 30, 120);

    // The newest preview (b.ts) is shown first.
    tui.wait_shown(&["[1/2]", "(newest)", "+two(2);", KEY_HELP], &[]);

    // An older preview can be read but not resolved.
    tui.press("n");
    tui.wait_shown(&["[2/2]", "(older: read only)", "+one(1);"], &["+two(2);"]);
    tui.press("a");
    tui.wait_shown(&["Only the newest preview can be resolved", "[2/2]"], &["Apply reason:"]);
    assert_unchanged(ws.path(), &ids);
    tui.press("p");
    tui.wait_shown(&["[1/2]", "+two(2);", KEY_HELP], &["Only the newest"]);

    // A cancelled prompt changes nothing.
    tui.press("a");
    tui.wait_shown(&["Apply reason:", HINT], &[KEY_HELP]);
    tui.press("\x1b");
    tui.wait_shown(&["Cancelled; nothing was changed.", "[1/2]", "+two(2);"], &["Apply reason:"]);
    assert_unchanged(ws.path(), &ids);

    // Neither does Enter on an empty or blank reason; the prompt stays open and says why.
    tui.press("a");
    tui.wait_shown(&["Apply reason:", HINT], &["Cancelled"]);
    tui.press("\r");
    tui.wait_shown(&["Apply reason:", "Type a reason first (Esc cancels)."], &[HINT]);
    assert_unchanged(ws.path(), &ids);
    tui.press("  ");
    tui.wait_shown(&["Apply reason:", HINT], &["Type a reason first"]);
    tui.press("\r");
    tui.wait_shown(&["Apply reason:", "Type a reason first (Esc cancels)."], &[HINT]);
    assert_unchanged(ws.path(), &ids);
    tui.press("\x1b");
    tui.wait_shown(&["Cancelled; nothing was changed.", "[1/2]", "+two(2);"], &["Apply reason:"]);
    assert_unchanged(ws.path(), &ids);

    // Discard the newest with a typed reason.
    tui.press("d");
    tui.wait_shown(&["Discard reason:", HINT], &[]);
    tui.press("wrong file");
    tui.wait_shown(&["Discard reason: wrong file"], &[]);
    tui.press("\r");
    tui.wait_shown(
        &["[1/1]", "+one(1);", "Discarded: AST Edit: 1 replacement in 1 file. Reason: wrong file"],
        &["Discard reason:", "+two(2);"],
    );
    assert_eq!(pending_ids(ws.path()), [ids[1].clone()]);
    assert_eq!(read(ws.path(), "b.ts"), "second(2);\n");
    assert_eq!(read(ws.path(), "a.ts"), "first(1);\n");

    // The terminal is resized; the UI redraws at the new size and keeps working.
    tui.resize(20, 60);
    tui.wait_for("the UI redrawn at 20x60", |rows| {
        rows.len() == 20
            && rows[0].starts_with("[1/1] AST Edit")
            && rows[1] == "─".repeat(60)
            && rows.iter().any(|r| r == "+one(1);")
            && rows[18] == "─".repeat(60)
            && rows[19].starts_with("AST Edit: 1 replacement in 1 file: Discarded")
    });

    // Apply the next one.
    tui.press("a");
    tui.wait_shown(&["Apply reason:"], &[]);
    tui.press("looks right");
    tui.wait_shown(&["Apply reason: looks right"], &[]);
    tui.press("\r");
    tui.wait_shown(&["no pending previews", "Nothing to review."], &["Apply reason:"]);
    assert!(pending_ids(ws.path()).is_empty());
    assert_eq!(read(ws.path(), "a.ts"), "one(1);\n");
    assert_eq!(read(ws.path(), "b.ts"), "second(2);\n");

    // Quitting leaves the alternate screen and prints what was decided.
    tui.press("q");
    let status = tui.wait_exit();
    assert!(status.success(), "{status:?}");
    let discarded = format!("discarded {} (AST Edit: 1 replacement in 1 file): wrong file", ids[0]);
    let applied = format!("applied {} (AST Edit: 1 replacement in 1 file): looks right", ids[1]);
    tui.wait_for("the decisions printed after the UI closed", |rows| {
        // Lines longer than the terminal wrap onto the next row.
        let shown = rows.concat();
        shown.contains(&discarded) && shown.contains(&applied)
    });
}

#[test]
fn review_applies_only_the_marked_files_and_shows_the_log() {
    // See: issue 13.
    let ws = workspace(&[("a.ts", "foo(1);\n"), ("b.ts", "foo(2);\n"), ("c.ts", "foo(3);\n")]);
    stage(ws.path(), "foo($A)", "bar($A)", ".");
    let ids = pending_ids(ws.path());
    let mut tui = Tui::start(ws.path(), 30, 120);
    tui.wait_shown(&["[1/1]", "AST Edit: 3 replacements in 3 files", KEY_HELP], &[]);

    // The file list: the cursor's file diff below it; nothing marked yet.
    tui.press("f");
    tui.wait_shown(&["> [ ] a.ts (1 replacement)", "  [ ] b.ts", "+bar(1);"], &["+bar(2);"]);
    tui.press("a");
    tui.wait_shown(&["Mark at least one file or hunk first"], &["Apply reason:"]);
    // Mark b.ts and c.ts.
    tui.press("j");
    tui.wait_shown(&["> [ ] b.ts (1 replacement)", "+bar(2);"], &["+bar(1);"]);
    tui.press(" ");
    tui.wait_shown(&["> [x] b.ts"], &[]);
    tui.press("j ");
    tui.wait_shown(&["> [x] c.ts", "  [x] b.ts", "  [ ] a.ts"], &[]);
    tui.press("a");
    tui.wait_shown(
        &["Apply reason:", "Apply only these files; the rest stays pending:", "  b.ts", "  c.ts"],
        &[],
    );
    assert_eq!(pending_ids(ws.path()), ids, "nothing applied before the reason");
    tui.press("b and c\r");
    tui.wait_shown(
        &["[1/1]", "AST Edit: 1 replacement in 1 file", "The rest stays pending"],
        &["Apply reason:"],
    );
    assert_eq!(read(ws.path(), "a.ts"), "foo(1);\n");
    assert_eq!(read(ws.path(), "b.ts"), "bar(2);\n");
    assert_eq!(read(ws.path(), "c.ts"), "bar(3);\n");
    let pending = pending_ids(ws.path());
    assert_eq!(pending.len(), 1);
    assert_ne!(pending, ids);

    // The log, newest first, says who decided.
    tui.press("l");
    // The entry is named by what was written.
    tui.wait_shown(&["applied  AST Edit: 2 replacements in 2 files  review", "b and c"], &[]);
    tui.press("\x1b");
    tui.wait_shown(&[KEY_HELP], &["b and c"]);
    tui.press("q");
    assert!(tui.wait_exit().success());
    let out = staged(ws.path(), &["--json", "log"]);
    let entry = &common::json(&out)["entries"][0];
    assert_eq!(entry["frontEnd"], "review");
    assert_eq!(entry["extra"], serde_json::json!({"files": ["b.ts", "c.ts"]}));
}

/// A file with `foo(N)` on line 1 and line 20: its rewrite has two hunks.
fn two_hunks(a: u32, b: u32) -> String {
    let middle: String = (2..20).map(|i| format!("keep({i});\n")).collect();
    format!("foo({a});\n{middle}foo({b});\n")
}

#[test]
fn review_marks_single_hunks_and_applies_only_those() {
    // See: issue 24.
    let ws = workspace(&[("a.ts", &two_hunks(1, 2)), ("b.ts", "foo(3);\n")]);
    stage(ws.path(), "foo($A)", "bar($A)", ".");
    let ids = pending_ids(ws.path());
    let mut tui = Tui::start(ws.path(), 40, 120);
    // The diff numbers its hunks as `--only FILE:N` names them.
    tui.wait_shown(&["[1/1]", "@@ -17,4 +17,4 @@ [hunk 2 of 2]"], &[]);
    tui.press("f");
    tui.wait_shown(&["> [ ] a.ts (2 replacements, 2 hunks →)", "  [ ] b.ts (1 replacement)"], &[]);
    // → lists a.ts's hunks; the cursor's hunk shows below the list.
    tui.press("\x1b[C");
    tui.wait_shown(&["hunk 1 of 2  @@ -1,4 +1,4 @@", "hunk 2 of 2  @@ -17,4 +17,4 @@"], &[]);
    tui.press("jj");
    tui.wait_shown(&[">     [ ] hunk 2 of 2"], &[]);
    tui.wait_shown(&["+bar(2);"], &["+bar(1);"]);
    tui.press(" ");
    tui.wait_shown(&[">     [x] hunk 2 of 2", "  [~] a.ts", "      [ ] hunk 1 of 2"], &[]);
    tui.press("a");
    tui.wait_shown(
        &[
            "Apply reason:",
            "Apply only these files; the rest stays pending:",
            "  a.ts: hunk 2 of 2",
        ],
        &["  b.ts"],
    );
    assert_eq!(pending_ids(ws.path()), ids, "nothing applied before the reason");
    tui.press("second only\r");
    tui.wait_shown(&["The rest stays pending"], &["Apply reason:"]);
    assert_eq!(read(ws.path(), "a.ts"), two_hunks(1, 2).replace("foo(2)", "bar(2)"));
    assert_eq!(read(ws.path(), "b.ts"), "foo(3);\n");
    // The rest is the newest preview: a.ts's first hunk and b.ts.
    tui.wait_shown(&["AST Edit: 2 replacements in 2 files"], &[]);
    tui.press("q");
    assert!(tui.wait_exit().success());
    let out = staged(ws.path(), &["--json", "log"]);
    let entry = &common::json(&out)["entries"][0];
    assert_eq!(entry["frontEnd"], "review");
    assert_eq!(entry["label"], "AST Edit: 1 replacement in 1 file");
    assert_eq!(entry["extra"], serde_json::json!({"hunks": {"a.ts": [2]}}));
}

#[test]
fn the_file_list_scrolls_with_its_cursor_at_a_small_height() {
    // See: issue 24. 30 files in a 16-row terminal: the list shows a few rows at a time.
    let files: Vec<(String, String)> =
        (0..30).map(|i| (format!("src/f{i:02}.ts"), format!("foo({i});\n"))).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let ws = workspace(&refs);
    stage(ws.path(), "foo($A)", "bar($A)", "src");
    let mut tui = Tui::start(ws.path(), 16, 120);
    tui.wait_shown(&["[1/1]", "AST Edit: 30 replacements in 30 files"], &[]);
    tui.press("f");
    tui.wait_shown(&["> [ ] src/f00.ts"], &[]);
    // Down past the last visible row: the cursor's row is always on screen.
    for i in 1..=25 {
        tui.press("j");
        tui.wait_shown(&[&format!("> [ ] src/f{i:02}.ts")], &[]);
    }
    // The cursor's file's diff below the list.
    let rows = tui.wait_shown(&["-foo(25);"], &["src/f00.ts"]);
    assert!(rows.len() <= 16);
    tui.press(" ");
    tui.wait_shown(&["> [x] src/f25.ts"], &[]);
    // Back up to the top: the list scrolls back.
    tui.press("g");
    tui.wait_shown(&["> [ ] src/f00.ts"], &["src/f25.ts"]);
    tui.press("G");
    tui.wait_shown(&["> [ ] src/f29.ts", "  [x] src/f25.ts"], &["src/f00.ts"]);
    tui.press("a");
    tui.wait_shown(&["Apply reason:", "  src/f25.ts"], &[]);
    tui.press("the one I saw\r");
    tui.wait_shown(&["The rest stays pending"], &["Apply reason:"]);
    for (i, (path, _)) in files.iter().enumerate() {
        let want = if i == 25 { "bar(25);\n".to_owned() } else { format!("foo({i});\n") };
        assert_eq!(read(ws.path(), path), want, "{path}");
    }
    tui.press("q");
    assert!(tui.wait_exit().success());
}

#[test]
fn review_marks_all_none_and_a_folder() {
    // See: issue 24.
    let ws = workspace(&[
        ("a.ts", "foo(1);\n"),
        ("lib/b.ts", "foo(2);\n"),
        ("src/c.ts", "foo(3);\n"),
        ("src/deep/d.ts", "foo(4);\n"),
    ]);
    stage(ws.path(), "foo($A)", "bar($A)", ".");
    let mut tui = Tui::start(ws.path(), 30, 120);
    tui.wait_shown(&["[1/1]"], &[]);
    tui.press("f");
    tui.wait_shown(&["> [ ] a.ts"], &[]);
    tui.press("A");
    tui.wait_shown(&["> [x] a.ts", "[x] lib/b.ts", "[x] src/c.ts", "[x] src/deep/d.ts"], &["[ ]"]);
    tui.press("N");
    tui.wait_shown(&["> [ ] a.ts", "[ ] lib/b.ts", "[ ] src/c.ts", "[ ] src/deep/d.ts"], &["[x]"]);
    // F on src/c.ts marks src/ and what is under it.
    tui.press("jj");
    tui.wait_shown(&["> [ ] src/c.ts"], &[]);
    tui.press("F");
    tui.wait_shown(
        &[
            "Marked 2 files in src/.",
            "> [x] src/c.ts",
            "[x] src/deep/d.ts",
            "[ ] a.ts",
            "[ ] lib/b.ts",
        ],
        &[],
    );
    tui.press("a");
    tui.wait_shown(&["Apply reason:", "  src/c.ts", "  src/deep/d.ts"], &["  a.ts"]);
    tui.press("src\r");
    tui.wait_shown(&["The rest stays pending"], &["Apply reason:"]);
    assert_eq!(read(ws.path(), "src/c.ts"), "bar(3);\n");
    assert_eq!(read(ws.path(), "src/deep/d.ts"), "bar(4);\n");
    assert_eq!(read(ws.path(), "a.ts"), "foo(1);\n");
    assert_eq!(read(ws.path(), "lib/b.ts"), "foo(2);\n");
    tui.press("q");
    assert!(tui.wait_exit().success());
}

#[test]
fn review_without_a_terminal_is_a_clear_error() {
    let ws = workspace(&[("a.ts", "x(1);\n")]);
    let out = staged(ws.path(), &["review"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("staged review needs a terminal"), "{}", stderr(&out));
}

/// Runs `staged hook claude-code --mode record` in `dir` with `event` on stdin.
fn record_hook(dir: &Path, event: &serde_json::Value) -> std::process::Output {
    let mut child = std::process::Command::new(common::staged_bin())
        .args(["hook", "claude-code", "--mode", "record"])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("CODEX_HOME", dir.join(".no-codex-home"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&serde_json::to_vec(event).unwrap()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    out
}

/// Claude Code's Write of `text` to `path` in session `session`, recorded by the hooks.
fn recorded_write(dir: &Path, session: &str, call: &str, path: &str, text: &str) {
    let file = dir.join(path);
    let input = serde_json::json!({"file_path": file, "content": text});
    record_hook(
        dir,
        &serde_json::json!({"session_id": session, "cwd": dir, "hook_event_name": "PreToolUse",
            "tool_name": "Write", "tool_input": input, "tool_use_id": call,
            "permission_mode": "acceptEdits"}),
    );
    let original = std::fs::read_to_string(&file).ok();
    std::fs::write(&file, text).unwrap();
    let kind = if original.is_some() { "update" } else { "create" };
    record_hook(
        dir,
        &serde_json::json!({"session_id": session, "cwd": dir, "hook_event_name": "PostToolUse",
            "tool_name": "Write", "tool_input": input, "tool_use_id": call,
            "permission_mode": "acceptEdits",
            "tool_response": {"type": kind, "filePath": file, "content": text,
                "structuredPatch": [], "originalFile": original}}),
    );
}

/// Twenty numbered lines, with line `n` replaced by `with` for each `(n, with)`.
fn numbered_lines(changes: &[(usize, &str)]) -> String {
    (1..=20)
        .map(|n| {
            changes
                .iter()
                .find(|(m, _)| *m == n)
                .map_or(format!("line {n}\n"), |(_, w)| format!("{w}\n"))
        })
        .collect()
}

#[test]
fn the_sessions_view_reverts_and_keeps_hunks_with_reasons() {
    // See: issue 34, point 7.
    let ws = workspace(&[("a.txt", &numbered_lines(&[])), ("b.txt", "alpha\nbeta\n")]);
    let dir = ws.path().canonicalize().unwrap();
    record_hook(
        &dir,
        &serde_json::json!({"session_id": "claude-1", "cwd": dir,
            "hook_event_name": "UserPromptSubmit", "prompt": "Tidy the lines"}),
    );
    let two = (2, "two, by the agent");
    let fifteen = (15, "fifteen, by the agent");
    recorded_write(&dir, "claude-1", "t1", "a.txt", &numbered_lines(&[two]));
    recorded_write(&dir, "claude-1", "t2", "a.txt", &numbered_lines(&[two, fifteen]));
    recorded_write(&dir, "claude-1", "t3", "b.txt", "alpha\nBETA\n");

    let mut tui = Tui::start(&dir, 40, 140);
    tui.wait_shown(&["no pending previews", "s sessions"], &[]);
    // The sessions, over the diff of the one under the cursor.
    tui.press("s");
    tui.wait_shown(
        &[
            "Sessions  1 session in this workspace",
            "> S1 claude-code \"Tidy the lines\": 2 files changed, 0 of 3 hunks reviewed, 0 previews pending",
            "[hunk 1 of 2]",
            "+BETA",
        ],
        &[],
    );
    // Its files and hunks; the diff follows the cursor.
    tui.press("\r");
    tui.wait_shown(
        &[
            "S1 claude-code \"Tidy the lines\": 2 files, 0 of 3 hunks reviewed; client id claude-1",
            ">        a.txt (2 hunks, 0 reviewed)",
            "           hunk 1 of 2",
            "           hunk 2 of 2",
            "         b.txt (1 hunk, 0 reviewed)",
            "+fifteen, by the agent",
            "r revert · K keep",
        ],
        &["+BETA"],
    );
    tui.press("j");
    tui.wait_shown(&[">          hunk 1 of 2", "+two, by the agent"], &["+fifteen, by the agent"]);
    tui.press("jj");
    tui.wait_shown(&[">        b.txt (1 hunk, 0 reviewed)", "+BETA"], &["+two, by the agent"]);
    tui.press("kk");
    tui.wait_shown(&[">          hunk 1 of 2", "+two, by the agent"], &[]);

    // A revert needs a reason; Enter on none, or Esc, writes nothing.
    tui.press("r");
    tui.wait_shown(&["Revert hunk 1 of a.txt, reason:", HINT], &[]);
    tui.press("\r");
    tui.wait_shown(&["Type a reason first: a revert says why (Esc cancels)."], &[HINT]);
    tui.press("\x1b");
    tui.wait_shown(&["Cancelled; nothing was changed.", ">          hunk 1 of 2"], &[]);
    assert_eq!(read(&dir, "a.txt"), numbered_lines(&[two, fifteen]));

    // Revert the first hunk with a reason: only its lines go back.
    tui.press("r");
    tui.wait_shown(&["Revert hunk 1 of a.txt, reason:"], &[]);
    tui.press("line 2 stays\r");
    tui.wait_shown(
        &[
            "Reverted 1 hunk of S1 (a.txt (hunk 1)): line 2 stays. Logged as entry 4",
            "S1 claude-code \"Tidy the lines\": 2 files, 0 of 2 hunks reviewed",
            "         a.txt (1 hunk, 0 reviewed)",
            ">        b.txt (1 hunk, 0 reviewed)",
        ],
        &["hunk 2 of 2"],
    );
    assert_eq!(read(&dir, "a.txt"), numbered_lines(&[fifteen]));
    assert_eq!(read(&dir, "b.txt"), "alpha\nBETA\n");
    let log = common::json(&staged(&dir, &["--json", "log"]));
    let entry = &log["entries"][0];
    assert_eq!(entry["reason"], "line 2 stays", "{entry}");
    assert_eq!(entry["frontEnd"], "review", "{entry}");
    assert_eq!(entry["source"], "session_revert", "{entry}");
    assert_eq!(entry["extra"]["session"], "S1", "{entry}");

    // Keep b.txt's hunk, without a reason: the progress moves.
    tui.press("K");
    tui.wait_shown(&["Keep b.txt, reason (optional):"], &[]);
    tui.press("\r");
    tui.wait_shown(
        &[
            "Kept 1 hunk of S1; 1 of 2 hunks reviewed.",
            "S1 claude-code \"Tidy the lines\": 2 files, 1 of 2 hunks reviewed",
            "> [kept] b.txt (1 hunk, 1 reviewed)",
            "[kept]",
        ],
        &[],
    );
    assert_eq!(read(&dir, "b.txt"), "alpha\nBETA\n", "a keep writes nothing");
    let list = common::json(&staged(&dir, &["--json", "session", "list"]));
    assert_eq!(list[0]["reviewed"], 1, "{list}");
    assert_eq!(list[0]["hunks"], 2, "{list}");
    tui.press("\x1b");
    tui.wait_shown(&["> S1 claude-code", "1 of 2 hunks reviewed"], &[]);
    tui.press("s");
    tui.wait_shown(&["no pending previews"], &["Sessions"]);
    tui.press("q");
    assert!(tui.wait_exit().success());
    // What was decided is printed after the UI closes.
    tui.wait_for("the decisions printed after the UI closed", |rows| {
        let shown = rows.concat();
        shown.contains("Reverted 1 hunk of S1 (a.txt (hunk 1)): line 2 stays.")
            && shown.contains("Kept 1 hunk of S1; 1 of 2 hunks reviewed.")
    });

    // The session's model hears of the revert at its next hook event.
    let out = record_hook(
        &dir,
        &serde_json::json!({"session_id": "claude-1", "cwd": dir,
            "hook_event_name": "UserPromptSubmit", "prompt": "go on"}),
    );
    let reply: serde_json::Value = serde_json::from_str(&common::stdout(&out)).unwrap();
    assert_eq!(
        reply["hookSpecificOutput"]["additionalContext"],
        "A person reverted your change to a.txt (line 2): line 2 stays."
    );
}

#[test]
fn a_file_changed_after_the_sessions_view_read_it_is_refused_and_nothing_is_written() {
    // See: issue 34. A revert's steps are computed on the texts the session's history read
    // when the view opened the session; a file changed since (here a line no hunk touches)
    // is refused by the commit's check under its lock, never overwritten.
    let ws = workspace(&[("a.txt", &numbered_lines(&[]))]);
    let dir = ws.path().canonicalize().unwrap();
    let two = (2, "two, by the agent");
    let fifteen = (15, "fifteen, by the agent");
    recorded_write(&dir, "claude-1", "t1", "a.txt", &numbered_lines(&[two, fifteen]));
    let entries = common::json(&staged(&dir, &["--json", "log"]))["entries"].clone();

    let mut tui = Tui::start(&dir, 40, 140);
    tui.wait_shown(&["s sessions"], &[]);
    tui.press("s");
    tui.wait_shown(&["> S1 claude-code: 1 file changed, 0 of 2 hunks reviewed"], &[]);
    tui.press("\rj");
    tui.wait_shown(&[">          hunk 1 of 2", "+two, by the agent"], &[]);
    // A person edits line 9 while the view shows the session.
    let edited = numbered_lines(&[two, (9, "nine, by a person"), fifteen]);
    std::fs::write(dir.join("a.txt"), &edited).unwrap();
    tui.press("r");
    tui.wait_shown(&["Revert hunk 1 of a.txt, reason:"], &[]);
    tui.press("undo it\r");
    tui.wait_shown(
        &["Cannot revert S1's change: a.txt changed since it was read. Nothing was written."],
        &["Revert hunk 1 of a.txt, reason:"],
    );
    assert_eq!(read(&dir, "a.txt"), edited, "a refused revert writes nothing");
    assert_eq!(
        common::json(&staged(&dir, &["--json", "log"]))["entries"],
        entries,
        "a refused revert logs nothing"
    );
    // The view read the session again: the same revert now takes hunk 1 back on the file as
    // it is, and keeps the person's line.
    tui.press("r");
    tui.wait_shown(&["Revert hunk 1 of a.txt, reason:"], &[]);
    tui.press("undo it\r");
    tui.wait_shown(&["Reverted 1 hunk of S1 (a.txt (hunk 1)): undo it."], &[]);
    assert_eq!(read(&dir, "a.txt"), numbered_lines(&[(9, "nine, by a person"), fifteen]));
    tui.press("q");
    tui.wait_shown(&["> S1 claude-code"], &[]);
    tui.press("q");
    tui.wait_shown(&["no pending previews"], &["Sessions"]);
    tui.press("q");
    assert!(tui.wait_exit().success());
}

#[test]
fn the_sessions_view_refuses_a_hunk_changed_since_and_writes_nothing() {
    // See: issue 34, point 7.
    let ws = workspace(&[("a.txt", &numbered_lines(&[]))]);
    let dir = ws.path().canonicalize().unwrap();
    let two = (2, "two, by the agent");
    let fifteen = (15, "fifteen, by the agent");
    recorded_write(&dir, "claude-1", "t1", "a.txt", &numbered_lines(&[two, fifteen]));
    // A person rewrites the session's line 2 outside staged.
    let edited = numbered_lines(&[(2, "two, by a person"), fifteen]);
    std::fs::write(dir.join("a.txt"), &edited).unwrap();
    let entries = common::json(&staged(&dir, &["--json", "log"]))["entries"].clone();

    let mut tui = Tui::start(&dir, 40, 140);
    tui.wait_shown(&["s sessions"], &[]);
    tui.press("s");
    tui.wait_shown(&["> S1 claude-code: 1 file changed, 0 of 2 hunks reviewed"], &[]);
    // Keys that act on a file or hunk say to open the session first.
    tui.press("r");
    tui.wait_shown(&["Open a session (Enter) to keep or revert its files and hunks."], &[]);
    tui.press("\rj");
    tui.wait_shown(
        &[
            ">          hunk 1 of 2 [changed since by a change made outside staged]",
            "+two, by a person",
        ],
        &[],
    );
    tui.press("r");
    tui.wait_shown(&["Revert hunk 1 of a.txt, reason:"], &[]);
    tui.press("undo it\r");
    tui.wait_shown(
        &["Cannot revert S1's change: hunk 1 of a.txt was changed since", "Nothing was written."],
        &["Revert hunk 1 of a.txt, reason:"],
    );
    assert_eq!(read(&dir, "a.txt"), edited, "a refused revert writes nothing");
    assert_eq!(
        common::json(&staged(&dir, &["--json", "log"]))["entries"],
        entries,
        "a refused revert logs nothing"
    );
    tui.press("q");
    tui.wait_shown(&["> S1 claude-code"], &[">          hunk 1 of 2"]);
    tui.press("q");
    tui.wait_shown(&["no pending previews"], &["Sessions"]);
    tui.press("q");
    assert!(tui.wait_exit().success());
}
