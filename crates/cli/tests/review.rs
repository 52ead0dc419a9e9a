//! `staged review` driven through a pseudo-terminal, as a person at a terminal (or over ssh)
//! would use it: discard one preview, apply another, survive a resize, and never apply on a
//! cancelled or empty prompt.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{
    io::{Read, Write},
    path::Path,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use common::{code, pending_ids, read, staged, stderr, workspace};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};

fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn stage(dir: &Path, pat: &str, out: &str, path: &str) {
    let res = staged(dir, &["ast-edit", "--op", pat, out, path]);
    assert_eq!(code(&res), 0, "{}", stderr(&res));
}

#[test]
fn review_discards_one_preview_and_applies_another() {
    let ws = workspace(&[("a.ts", "first(1);\n"), ("b.ts", "second(2);\n")]);
    stage(ws.path(), "first($A)", "one($A)", "a.ts");
    stage(ws.path(), "second($A)", "two($A)", "b.ts");
    let ids = pending_ids(ws.path());

    let pty = native_pty_system();
    let pair =
        pty.openpty(PtySize { rows: 30, cols: 100, pixel_width: 0, pixel_height: 0 }).unwrap();
    let mut cmd = CommandBuilder::new(common::staged_bin());
    cmd.arg("review");
    cmd.cwd(ws.path());
    cmd.env("TERM", "xterm-256color");
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);

    let screen = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&screen);
    let mut reader = pair.master.try_clone_reader().unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let mut keys = pair.master.take_writer().unwrap();
    let mut type_keys = |text: &str| {
        keys.write_all(text.as_bytes()).unwrap();
        keys.flush().unwrap();
        std::thread::sleep(Duration::from_millis(150));
    };

    // The newest preview (b.ts) is shown first.
    wait_until("the first diff", || screen.lock().unwrap().contains("+two(2);"));

    // A cancelled prompt and an empty reason change nothing.
    type_keys("a");
    type_keys("\x1b");
    type_keys("a");
    type_keys("\r");
    type_keys("\x1b");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(pending_ids(ws.path()), ids);

    // Discard the newest with a typed reason.
    type_keys("d");
    type_keys("wrong file");
    type_keys("\r");
    wait_until("the discard", || pending_ids(ws.path()).len() == 1);
    assert_eq!(read(ws.path(), "b.ts"), "second(2);\n");

    // The terminal is resized; the UI follows and keeps working.
    pair.master.resize(PtySize { rows: 20, cols: 60, pixel_width: 0, pixel_height: 0 }).unwrap();
    wait_until("the next diff", || screen.lock().unwrap().contains("+one(1);"));

    // Apply the next one.
    type_keys("a");
    type_keys("looks right");
    type_keys("\r");
    wait_until("the apply", || pending_ids(ws.path()).is_empty());
    assert_eq!(read(ws.path(), "a.ts"), "one(1);\n");

    type_keys("q");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "review did not quit");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    let screen = screen.lock().unwrap().clone();
    assert!(
        screen.contains(&format!(
            "discarded {} (AST Edit: 1 replacement in 1 file): wrong file",
            ids[0]
        )),
        "{screen}"
    );
    assert!(
        screen.contains(&format!(
            "applied {} (AST Edit: 1 replacement in 1 file): looks right",
            ids[1]
        )),
        "{screen}"
    );
}

#[test]
fn review_without_a_terminal_is_a_clear_error() {
    let ws = workspace(&[("a.ts", "x(1);\n")]);
    let out = staged(ws.path(), &["review"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("staged review needs a terminal"), "{}", stderr(&out));
}
