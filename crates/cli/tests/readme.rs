//! The quickstarts of `README.md` run as written: each line of their `sh` blocks is run by
//! `sh -c` with the built `staged` first on `PATH`, in a workspace made for it (for the session
//! review, a Claude Code session recorded from the hook events the client sends), and must
//! succeed, and the output the README shows is what they print. A quickstart whose commands
//! or output change fails here until the README follows. Besides: every relative link of the
//! README, ARCHITECTURE.md and `docs/` names a file that exists, and every crate has the
//! README `docs/README.md` promises.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{
    path::Path,
    process::{Command, Output, Stdio},
};

use common::{code, read, staged_bin, stderr, stdout, workspace};

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap()
}

/// The lines of the first `sh` block after the heading `heading`.
fn quickstart(heading: &str) -> Vec<String> {
    let readme = readme();
    let section = &readme[readme.find(&format!("\n{heading}\n")).expect(heading)..];
    let start = section.find("```sh\n").expect("an sh block") + "```sh\n".len();
    let block = &section[start..start + section[start..].find("```").unwrap()];
    block.lines().filter(|line| !line.trim().is_empty()).map(str::to_owned).collect()
}

/// Runs `line` as a person would type it, in `dir`, with a private home.
fn sh(dir: &Path, home: &Path, line: &str) -> Output {
    let bin_dir = staged_bin().parent().unwrap().to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bin_dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    Command::new("sh")
        .args(["-c", line])
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("CODEX_HOME", home.join(".codex"))
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn run_all(dir: &Path, home: &Path, lines: &[String]) -> Vec<Output> {
    lines
        .iter()
        .map(|line| {
            let out = sh(dir, home, line);
            assert_eq!(code(&out), 0, "`{line}` failed:\n{}{}", stdout(&out), stderr(&out));
            out
        })
        .collect()
}

#[test]
fn the_command_line_quickstart_runs_as_written() {
    let ws = workspace(&[
        ("src/app.ts", "console.log(\"starting\", port);\nrun();\n"),
        ("src/util.ts", "export function f() {\n  console.log(\"f\");\n}\n"),
    ]);
    let home = tempfile::tempdir().unwrap();
    let lines = quickstart("## Quickstart: the command line");
    assert_eq!(lines.len(), 6, "{lines:?}");
    let outs = run_all(ws.path(), home.path(), &lines);
    // The rewrite was staged, shown, applied, logged and undone.
    assert!(stdout(&outs[2]).contains("+  logger.info(\"f\");"), "{}", stdout(&outs[2]));
    assert!(stdout(&outs[4]).contains("route logging through the logger"), "{}", stdout(&outs[4]));
    assert_eq!(read(ws.path(), "src/util.ts"), "export function f() {\n  console.log(\"f\");\n}\n");
}

/// The `console` block after `heading`: each `$ command` with the stdout shown below it.
fn console_block(heading: &str) -> Vec<(String, String)> {
    let readme = readme();
    let section = &readme[readme.find(&format!("\n{heading}\n")).expect(heading)..];
    let start = section.find("```console\n").expect("a console block") + "```console\n".len();
    let block = &section[start..start + section[start..].find("```").unwrap()];
    let mut runs: Vec<(String, String)> = Vec::new();
    for line in block.lines() {
        match line.strip_prefix("$ ") {
            Some(command) => runs.push((command.to_owned(), String::new())),
            None => {
                let (_, shown) = runs.last_mut().expect("a block starts with a command");
                shown.push_str(line);
                shown.push('\n');
            }
        }
    }
    runs
}

#[test]
fn the_command_line_quickstart_prints_what_the_readme_shows() {
    let api = "export function get(url: string) {\n  console.log(\"get\", url);\n  return fetchJson(url);\n}\n";
    let ws = workspace(&[("src/api.ts", api)]);
    let home = tempfile::tempdir().unwrap();
    let runs = console_block("## Quickstart: the command line");
    assert_eq!(runs.len(), 2, "{runs:?}");
    for (command, shown) in runs {
        let out = sh(ws.path(), home.path(), &command);
        assert_eq!(code(&out), 0, "`{command}`: {}", stderr(&out));
        pretty_assertions::assert_eq!(stdout(&out), shown, "`{command}`");
    }
    assert_eq!(read(ws.path(), "src/api.ts"), api.replace("console.log", "logger.info"));
}

#[test]
fn the_hooks_quickstart_runs_as_written() {
    let ws = workspace(&[("src/a.ts", "a();\n")]);
    let home = tempfile::tempdir().unwrap();
    let lines = quickstart("## Quickstart: an agent's edits under staged");
    assert_eq!(lines.len(), 3, "{lines:?}");
    run_all(ws.path(), home.path(), &lines[..2]);
    assert!(ws.path().join(".claude/settings.json").is_file());
    assert!(home.path().join(".codex/hooks.json").is_file());
    // `staged doctor` exits 1 when a check fails (here: no client has trusted the folder);
    // what matters is that it runs and reports on both installs.
    let out = sh(ws.path(), home.path(), &lines[2]);
    assert!(matches!(code(&out), 0 | 1), "{}{}", stdout(&out), stderr(&out));
    let report = stdout(&out);
    assert!(report.contains("ok   Claude Code: hooks for Edit"), "{report}");
    assert!(report.contains("ok   Codex: hooks for apply_patch"), "{report}");
}

const RETRY_BEFORE: &str = "export const retries = 3;\nexport const timeoutMs = 1000;\n\
export const maxDelayMs = 30000;\n\n// The delay before attempt n (1-based),\n\
// in milliseconds, capped by the caller.\n\nexport function backoff(n: number) {\n  \
return 100 * n;\n}\n";

#[test]
fn the_session_review_quickstart_runs_as_written() {
    let api = "import { retries } from \"./retry\";\n\nexport async function get(url: string) {\n  \
               return fetchJson(url, { retries });\n}\n";
    let ws = workspace(&[("src/retry.ts", RETRY_BEFORE), ("src/api.ts", api)]);
    let dir = ws.path();
    let home = tempfile::tempdir().unwrap();
    // A Claude Code session in record mode: two edits of retry.ts's far-apart lines, one of api.ts.
    let retry = RETRY_BEFORE.replace("= 3;", "= 5;").replace("100 * n", "100 * 2 ** n");
    common::recorded_write(dir, "4f1c", "t1", "src/retry.ts", &retry);
    common::recorded_write(
        dir,
        "4f1c",
        "t2",
        "src/api.ts",
        &api.replace("{ retries }", "{ retries, backoff }"),
    );
    let lines = quickstart("## Quickstart: review what an agent session changed");
    assert_eq!(lines.len(), 5, "{lines:?}");
    let outs = run_all(dir, home.path(), &lines);
    assert!(stdout(&outs[1]).contains("[hunk 2 of 2]"), "{}", stdout(&outs[1]));
    // The revert put back hunk 2 of retry.ts alone; the undo took back the api.ts edit.
    assert_eq!(read(dir, "src/retry.ts"), RETRY_BEFORE.replace("= 3;", "= 5;"));
    assert_eq!(read(dir, "src/api.ts"), api);
}

/// Each fenced block of `text` in order: its language and its lines.
fn fenced_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let Some((lang, body)) = after.split_once('\n') else { break };
        let end = body.find("```").expect("a block is closed");
        blocks.push((lang.to_owned(), body[..end].to_owned()));
        rest = &body[end + 3..];
    }
    blocks
}

/// `text` with each time (`2026-12-06T16:10:40Z`) read as `<time>`: what differs at each run.
fn without_times(text: &str) -> String {
    let shape = |word: &[u8]| {
        word.len() == 20
            && word.iter().enumerate().all(|(i, c)| match i {
                4 | 7 => *c == b'-',
                10 => *c == b'T',
                13 | 16 => *c == b':',
                19 => *c == b'Z',
                _ => c.is_ascii_digit(),
            })
    };
    let mut out = String::new();
    let mut at = 0;
    while at < text.len() {
        if text.is_char_boundary(at)
            && text.len() - at >= 20
            && shape(&text.as_bytes()[at..at + 20])
        {
            out.push_str("<time>");
            at += 20;
        } else {
            let c = text[at..].chars().next().unwrap();
            out.push(c);
            at += c.len_utf8();
        }
    }
    out
}

/// The walk-through of `docs/guide/sessions.md` is real: its `console` blocks, run in order on
/// the session it describes (made from the hook events Claude Code sends), print what they
/// show (times apart), and its `text` block is what the session's next prompt hands its model.
#[test]
fn the_sessions_guide_walk_through_prints_what_it_shows() {
    let guide = std::fs::read_to_string(repo().join("docs/guide/sessions.md")).unwrap();
    let walk = &guide[guide.find("\n## A walk-through\n").expect("the walk-through")..];
    let walk = &walk[..walk[1..].find("\n## ").map_or(walk.len(), |end| end + 1)];
    let api = "import { retries } from \"./retry\";\n\nexport async function get(url: string) {\n  \
               return fetchJson(url, { retries });\n}\n";
    let ws = workspace(&[("src/retry.ts", RETRY_BEFORE), ("src/api.ts", api)]);
    let dir = ws.path();
    let home = tempfile::tempdir().unwrap();
    let session = "5f2a1c3e-0b9d-4e7f-8a6b-1c2d3e4f5a6b";
    let prompt = |text: &str| {
        let event = serde_json::json!({"session_id": session, "cwd": dir,
            "hook_event_name": "UserPromptSubmit", "prompt": text, "permission_mode": "acceptEdits"});
        let out = common::hook(dir, &["hook", "claude-code", "--mode", "record"], &event);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        stdout(&out)
    };
    assert_eq!(prompt("Make the API client retry with backoff"), "");
    let retry = RETRY_BEFORE.replace("= 3;", "= 5;").replace("100 * n", "100 * 2 ** n");
    common::recorded_write(dir, session, "t1", "src/retry.ts", &retry);
    let api_after = api
        .replace("import { retries }", "import { backoff, retries }")
        .replace("url, { retries }", "url, { retries, backoff }");
    common::recorded_write(dir, session, "t2", "src/api.ts", &api_after);
    let blocks = fenced_blocks(walk);
    assert_eq!(blocks.iter().filter(|(lang, _)| lang == "console").count(), 5, "{blocks:?}");
    for (lang, body) in blocks {
        match lang.as_str() {
            "console" => {
                let mut runs: Vec<(String, String)> = Vec::new();
                for line in body.lines() {
                    match line.strip_prefix("$ ") {
                        Some(command) => runs.push((command.to_owned(), String::new())),
                        None => {
                            let (_, shown) =
                                runs.last_mut().expect("a block starts with a command");
                            shown.push_str(line);
                            shown.push('\n');
                        }
                    }
                }
                for (command, shown) in runs {
                    let out = sh(dir, home.path(), &command);
                    assert_eq!(code(&out), 0, "`{command}`: {}", stderr(&out));
                    pretty_assertions::assert_eq!(
                        without_times(&stdout(&out)),
                        without_times(&shown),
                        "`{command}`"
                    );
                }
            }
            "text" => {
                let reply: serde_json::Value = serde_json::from_str(&prompt("go on")).unwrap();
                let told =
                    reply["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
                assert_eq!(format!("{told}\n"), body);
            }
            other => panic!("a block of {other} in the walk-through"),
        }
    }
}

#[test]
fn times_are_read_as_one_placeholder() {
    assert_eq!(
        without_times("at 2026-12-06T16:10:44Z, é 2026-12-06T16:10:4Z"),
        "at <time>, é 2026-12-06T16:10:4Z"
    );
}

fn repo() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn markdown_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            markdown_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "md") {
            out.push(path);
        }
    }
}

/// The targets of the inline links `[text](target)` of `text` that are neither web
/// addresses nor anchors in the same page, without their `#anchor`.
fn relative_links(text: &str) -> Vec<&str> {
    text.match_indices("](")
        .filter_map(|(idx, _)| {
            let rest = &text[idx + 2..];
            let target = &rest[..rest.find(')')?];
            let target = target.split('#').next().unwrap_or_default();
            let remote = target.contains("://") || target.starts_with("mailto:");
            (!target.is_empty() && !remote && !target.contains(' ')).then_some(target)
        })
        .collect()
}

#[test]
fn every_relative_link_of_the_readme_and_docs_names_a_file_that_exists() {
    let repo = repo();
    let mut files = vec![repo.join("README.md"), repo.join("ARCHITECTURE.md")];
    markdown_files(&repo.join("docs"), &mut files);
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for target in relative_links(&text) {
            if !file.parent().unwrap().join(target).exists() {
                broken.push(format!("{}: {target}", file.strip_prefix(&repo).unwrap().display()));
            }
        }
    }
    assert!(files.len() > 20, "{files:?}");
    assert!(broken.is_empty(), "links to nothing:\n{}", broken.join("\n"));
}

#[test]
fn relative_links_are_read_from_markdown() {
    let text =
        "[a](guide/cli.md#x), [b](https://x.org/a), [c](#here), [d](../crates/cli/README.md)";
    assert_eq!(relative_links(text), ["guide/cli.md", "../crates/cli/README.md"]);
}

/// Each crate's `staged-*` dependencies as ARCHITECTURE.md's code map lists them (which
/// `tests/tidy.rs` checks against the manifests), by crate folder.
fn code_map() -> std::collections::BTreeMap<String, Vec<String>> {
    let arch = std::fs::read_to_string(repo().join("ARCHITECTURE.md")).unwrap();
    let begin = arch.find("<!-- code-map: begin -->").unwrap();
    let end = arch.find("<!-- code-map: end -->").unwrap();
    arch[begin..end]
        .lines()
        .filter_map(|line| line.strip_prefix("- "))
        .map(|entry| {
            let (name, deps) = entry.split_once(" → ").unwrap_or((entry, ""));
            let deps = deps.split(',').map(str::trim).filter(|d| !d.is_empty());
            (name.trim().to_owned(), deps.map(|d| format!("staged-{d}")).collect())
        })
        .collect()
}

/// The `staged-*` names a README's `Depends on` sentence gives, up to its first `;`.
fn readme_dependencies(readme: &str) -> Option<Vec<String>> {
    let line = readme.lines().find(|line| line.starts_with("Depends on "))?;
    let sentence = line.split(';').next().unwrap_or_default();
    let mut names: Vec<String> = sentence
        .split('`')
        .filter(|word| word.starts_with("staged-") && !word.contains(' '))
        .map(str::to_owned)
        .collect();
    names.sort();
    Some(names)
}

/// `docs/README.md` promises each crate a `README.md` (its purpose and what must not go in
/// it): a crate added later fails here until it has one, and its `Depends on` sentence names
/// exactly the crates the code map gives it.
#[test]
fn every_crate_has_the_readme_the_docs_promise() {
    let repo = repo();
    let docs = std::fs::read_to_string(repo.join("docs/README.md")).unwrap();
    assert!(docs.contains("Each crate's `README.md`"));
    let code_map = code_map();
    assert!(code_map.len() > 15, "{code_map:?}");
    let mut problems = Vec::new();
    for entry in std::fs::read_dir(repo.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let Ok(text) = std::fs::read_to_string(dir.join("README.md")) else {
            problems.push(format!("{name}: no README.md"));
            continue;
        };
        if !text.starts_with(&format!("# staged-{name}\n")) {
            problems.push(format!("{name}: the README does not start `# staged-{name}`"));
        }
        let mut expected = code_map.get(&name).cloned().unwrap_or_default();
        expected.sort();
        match readme_dependencies(&text) {
            Some(found) if found == expected => {}
            found => problems
                .push(format!("{name}: `Depends on` gives {found:?}, the code map {expected:?}")),
        }
    }
    assert!(problems.is_empty(), "crate READMEs:\n{}", problems.join("\n"));
}

#[test]
fn a_readmes_dependencies_are_read_up_to_the_first_semicolon() {
    let readme = "# staged-x\nWhat.\nDepends on `staged-core` and `staged-fs`, and rusqlite; `staged-cli` uses it.\n";
    assert_eq!(readme_dependencies(readme), Some(vec!["staged-core".into(), "staged-fs".into()]));
    assert_eq!(readme_dependencies("# staged-x\nDepends on no staged crate.\n"), Some(vec![]));
    assert_eq!(readme_dependencies("# staged-x\n"), None);
}
