//! Small surfaces (issue 38): every public item of a crate has a user outside the crate, or is
//! library API that the crate's docs name as meant for a Rust user; the rest is `pub(crate)`.
//!
//! The rule, as [`unused_public_items`] applies it:
//! - A crate's public items are its declarations with a bare `pub` (`pub fn`, `pub struct`,
//!   `pub enum`, `pub trait`, `pub type`, `pub const`, `pub static`, `pub mod`, `pub union`),
//!   methods and associated items included, in `src/` outside `#[cfg(test)]` and
//!   `#[cfg(doctest)]` items. Fields, variants and `pub use` re-exports are left out: a field or
//!   a variant goes with its type, and a re-export is the facade's, its item is checked where
//!   it is declared.
//! - An item has a user outside its crate when its name is an identifier (outside comments
//!   and string literals) in another crate's sources, tests, examples or benches, or in the
//!   crate's own binaries' roots (`src/main.rs`, `src/hook_main.rs`: each binary is a crate
//!   of its own). The crate's own `tests/`, `examples/` and `benches/` are not outside users: they are the crate checking itself. An
//!   item they need and nothing else uses is library API, or its test moves into the crate.
//!   The match is by name, so an item whose name another crate uses for something else passes:
//!   the check catches what nothing could call, not every narrowing left to do. An item
//!   re-exported under another name (`pub use a::NAME as ALIAS`) is used by either name.
//! - A crate's doc examples (the ``` blocks of its `///` and `//!` comments that rustdoc runs
//!   as doctests) are users outside the crate too: a doctest is a crate of its own, which
//!   calls the library as a user does. So an item that only a doc example calls needs no entry
//!   in [`LIBRARY_API`]; and a name a doc example calls that the crate declares narrower than
//!   `pub` (`pub(crate)`, private) fails [`doc_examples_call_only_public_items`] here, rather
//!   than the doctest failing in CI.
//! - Library API is [`LIBRARY_API`]: per crate, the names a Rust user is meant to call, each of
//!   which the crate's docs (`src/lib.rs`'s `//!` comment or its `README.md`) name as library
//!   API (written as `` `NAME` ``, or `` `Type::NAME` `` for a method, in those docs).
//! - Every crate under `crates/` is checked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod sources;
use sources::{rust_files, test_module_paths};

/// Per crate (the folder under `crates/`), the public items whose only users are the crate's own
/// tests, examples and benches, or a Rust user of the library: what the crate's docs promise.
const LIBRARY_API: &[(&str, &[&str])] = &[
    (
        "agent",
        &[
            "AgentDefaults",
            "ConfigError",
            "PLAN_DECISION_REMINDER",
            "PLAN_PROMPT",
            "PlanTitleError",
            "ProviderConfig",
            "ReminderRole",
            "RunReport",
            "SYSTEM_PROMPT",
            "SkippedCall",
            "ToolResultMessage",
            "ToolSpec",
            "is_active",
            "responses_body",
        ],
    ),
    (
        "ast-edit",
        &[
            "AppliedDetails",
            "AstEditError",
            "Candidate",
            "Cap",
            "EditPreview",
            "EngineOptions",
            "ErrorFile",
            "ErrorFileDetails",
            "Expected",
            "ExpectedFile",
            "FileContents",
            "FileCount",
            "FileEdits",
            "IndexStats",
            "Inferred",
            "Lang",
            "LangChoice",
            "LangCount",
            "LangInferred",
            "LeftOut",
            "LeftOutDetails",
            "NestedLeft",
            "NestedLeftDetails",
            "Position",
            "RawEdit",
            "RemainderDetails",
            "SearchMatch",
            "SearchResult",
            "ValidatedEdit",
            "collect_candidates",
            "compute_preview",
            "compute_preview_with",
            "edits_digest",
            "from_json",
            "infer",
            "into_value",
            "preview_details",
            "search",
            "search_details",
            "search_text",
            "stats",
            "unified_diff",
            "wait_indexed",
            "writes",
        ],
    ),
    (
        "core",
        &[
            "ApplyInput",
            "BLANK_REASON_TEXT",
            "NOTHING_TO_REDO_TEXT",
            "NOTHING_TO_UNDO_TEXT",
            "RejectInput",
            "ToolErrorKind",
        ],
    ),
    ("edit", &["Chunk", "EditError", "Ending", "PatchLine", "parse_unified"]),
    (
        "mcp",
        &["HTTP_PATH", "MAX_INLINE_RESULT_BYTES", "PAGE_FILE", "UnknownApproval", "preview_link"],
    ),
    ("plugin", &["PendingMeta", "PluginConfig", "PluginError"]),
    (
        "session",
        &[
            "Author",
            "FileDiff",
            "FileHistory",
            "HistoryError",
            "LoggedChange",
            "Misfit",
            "NetChange",
            "NetError",
            "Origin",
            "Region",
            "RegionState",
            "RevertError",
            "ReviewError",
            "SessionError",
            "file_histories",
            "net_change",
            "regions",
            "revert_edits",
        ],
    ),
    ("shell", &["Written"]),
    ("store", &["keep_texts", "retire_finished"]),
    ("ui", &["UiError"]),
    (
        "workspace",
        &["ChangeStager", "OpenError", "SessionActionError", "ToolContext", "warm_index"],
    ),
    ("fs", &["InvalidRelPath"]),
    ("hooks", &["Check", "EventName", "HookEvent", "InstallError", "parse_from"]),
    (
        "journal",
        &[
            "CommitReport",
            "DiffFile",
            "EditHunks",
            "HunkCut",
            "KeptUndo",
            "ModeChange",
            "PROTECTED_PATHS",
            "Protected",
            "Remainder",
            "StepChange",
            "StepMode",
            "UndoPlan",
        ],
    ),
];

/// A token of Rust source, comments and literals left out.
#[derive(Debug, PartialEq, Eq)]
enum Token {
    Ident(String),
    Punct(char),
}

/// The identifiers and punctuation of `text`, without comments, string, byte-string and
/// character literals, and lifetimes.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut res = Vec::new();
    let mut idx = 0;
    while idx < chars.len() {
        let ch = chars[idx];
        let next = chars.get(idx + 1).copied();
        if ch == '/' && next == Some('/') {
            while idx < chars.len() && chars[idx] != '\n' {
                idx += 1;
            }
        } else if ch == '/' && next == Some('*') {
            let mut depth = 0;
            while idx < chars.len() {
                if chars[idx] == '/' && chars.get(idx + 1) == Some(&'*') {
                    depth += 1;
                    idx += 2;
                } else if chars[idx] == '*' && chars.get(idx + 1) == Some(&'/') {
                    depth -= 1;
                    idx += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    idx += 1;
                }
            }
        } else if ch == '"' {
            idx = skip_string(&chars, idx, 0);
        } else if ch == '\'' {
            if next == Some('\\') {
                idx += 2;
                while idx < chars.len() && chars[idx] != '\'' {
                    idx += 1;
                }
                idx += 1;
            } else if chars.get(idx + 2) == Some(&'\'') {
                idx += 3;
            } else {
                // A lifetime or a label: the quote goes, the name is an identifier.
                idx += 1;
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = idx;
            while idx < chars.len() && (chars[idx].is_alphanumeric() || chars[idx] == '_') {
                idx += 1;
            }
            let word: String = chars[start..idx].iter().collect();
            let prefix = matches!(word.as_str(), "r" | "b" | "br" | "c" | "cr");
            let hashes = chars[idx..].iter().take_while(|c| **c == '#').count();
            if prefix && chars.get(idx + hashes) == Some(&'"') {
                idx =
                    skip_string(&chars, idx + hashes, if word.contains('r') { hashes } else { 0 });
            } else if word == "r" && hashes == 1 {
                // A raw identifier, `r#type`: the identifier is what follows.
                idx += 1;
            } else {
                res.push(Token::Ident(word));
            }
        } else if ch.is_ascii_digit() {
            while idx < chars.len() && (chars[idx].is_alphanumeric() || chars[idx] == '_') {
                idx += 1;
            }
        } else {
            if !ch.is_whitespace() {
                res.push(Token::Punct(ch));
            }
            idx += 1;
        }
    }
    res
}

/// The index after the string literal whose opening `"` is at `open`; `hashes` is the number of
/// `#` of a raw string (whose backslashes escape nothing), 0 for others.
fn skip_string(chars: &[char], open: usize, hashes: usize) -> usize {
    let raw = hashes > 0 || (open > 0 && chars[open - 1] == 'r');
    let mut idx = open + 1;
    while idx < chars.len() {
        if chars[idx] == '\\' && !raw {
            idx += 2;
            continue;
        }
        if chars[idx] == '"'
            && chars[idx + 1..].iter().take(hashes).filter(|c| **c == '#').count() == hashes
        {
            return idx + 1 + hashes;
        }
        idx += 1;
    }
    idx
}

fn ident(token: Option<&Token>) -> Option<&str> {
    match token {
        Some(Token::Ident(word)) => Some(word),
        _ => None,
    }
}

/// The index after the item that starts at `start`: its `;` or its `{ ... }` block, whichever
/// comes first outside brackets.
fn skip_item(toks: &[Token], start: usize) -> usize {
    let mut depth = 0usize;
    let mut idx = start;
    while idx < toks.len() {
        match toks[idx] {
            Token::Punct('(' | '[') => depth += 1,
            Token::Punct(')' | ']') => depth = depth.saturating_sub(1),
            Token::Punct(';') if depth == 0 => return idx + 1,
            Token::Punct('{') if depth == 0 => {
                let mut braces = 0usize;
                while idx < toks.len() {
                    match toks[idx] {
                        Token::Punct('{') => braces += 1,
                        Token::Punct('}') => {
                            braces -= 1;
                            if braces == 0 {
                                return idx + 1;
                            }
                        }
                        _ => {}
                    }
                    idx += 1;
                }
            }
            _ => {}
        }
        idx += 1;
    }
    idx
}

/// The keywords that declare an item.
const KINDS: [&str; 9] =
    ["fn", "struct", "enum", "trait", "type", "const", "static", "mod", "union"];

/// The words that may stand between a visibility and an item's kind.
const QUALIFIERS: [&str; 5] = ["const", "async", "unsafe", "extern", "safe"];

/// Calls `at` with each index of `toks` outside items under `#[cfg(test)]` or
/// `#[cfg(doctest)]`; `at` says where to go on from there.
fn outside_tests(toks: &[Token], mut at: impl FnMut(usize) -> usize) {
    let mut idx = 0;
    while idx < toks.len() {
        idx = if is_cfg_test(toks, idx) { skip_item(toks, idx + 7) } else { at(idx) };
    }
}

/// The names `text` declares with a bare `pub`, outside items under `#[cfg(test)]` or
/// `#[cfg(doctest)]`.
fn public_items(text: &str) -> Vec<String> {
    let toks = tokens(text);
    let mut res = Vec::new();
    outside_tests(&toks, |idx| {
        if ident(toks.get(idx)) == Some("pub") && toks.get(idx + 1) != Some(&Token::Punct('(')) {
            let mut at = idx + 1;
            while let Some(word) = ident(toks.get(at)) {
                if KINDS.contains(&word) {
                    // `pub const fn` is a function, `pub const NAME` a constant.
                    match ident(toks.get(at + 1)) {
                        Some(name) if !KINDS.contains(&name) && !QUALIFIERS.contains(&name) => {
                            res.push(name.to_owned());
                            break;
                        }
                        _ => {}
                    }
                } else if !QUALIFIERS.contains(&word) {
                    break;
                }
                at += 1;
            }
        }
        idx + 1
    });
    res
}

/// The renames of `text`'s imports and re-exports (`NAME as ALIAS`), as (NAME, ALIAS).
fn renames(text: &str) -> Vec<(String, String)> {
    let toks = tokens(text);
    toks.windows(3)
        .filter_map(|w| match (ident(w.first()), ident(w.get(1)), ident(w.get(2))) {
            (Some(name), Some("as"), Some(alias)) => Some((name.to_owned(), alias.to_owned())),
            _ => None,
        })
        .collect()
}

/// The identifiers of `text`, comments and literals left out.
fn identifiers(text: &str, into: &mut BTreeSet<String>) {
    for token in tokens(text) {
        if let Token::Ident(word) = token {
            into.insert(word);
        }
    }
}

/// Rustdoc runs a ``` block as a doctest when its info string is empty or names only these
/// (`ignore` and `compile_fail` blocks are not run as calls of the library).
const DOCTEST_INFO: &[&str] =
    &["rust", "no_run", "should_panic", "edition2015", "edition2018", "edition2021", "edition2024"];

/// The code of the doc examples in `text`: the lines of the ``` blocks of its `///` and `//!`
/// comments that rustdoc runs as doctests, hidden lines (`# `) included.
fn doc_examples(text: &str) -> String {
    let mut res = String::new();
    // Inside a fence, and whether its block is a doctest.
    let mut fence: Option<bool> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let doc = trimmed.strip_prefix("///").filter(|rest| !rest.starts_with('/'));
        let Some(doc) = doc.or_else(|| trimmed.strip_prefix("//!")) else {
            fence = None;
            continue;
        };
        let doc = doc.strip_prefix(' ').unwrap_or(doc);
        if let Some(info) = doc.trim_start().strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(
                    info.split(',')
                        .map(str::trim)
                        .all(|word| word.is_empty() || DOCTEST_INFO.contains(&word)),
                ),
            };
            continue;
        }
        if fence == Some(true) {
            let code = if doc.trim() == "#" { "" } else { doc.strip_prefix("# ").unwrap_or(doc) };
            res.push_str(code);
            res.push('\n');
        }
    }
    res
}

/// The names `text` declares narrower than a bare `pub` (`pub(crate)`, `pub(super)`,
/// `pub(in ...)` or private items, methods and associated items included), outside items under
/// `#[cfg(test)]` or `#[cfg(doctest)]`.
fn narrowed_items(text: &str) -> Vec<String> {
    let toks = tokens(text);
    let mut res = Vec::new();
    outside_tests(&toks, |idx| {
        // A trait's items, and those of a trait's impl, are as public as the trait.
        if ident(toks.get(idx)) == Some("impl") {
            let body = toks[idx..].iter().position(|t| *t == Token::Punct('{'));
            let for_trait = body.is_some_and(|end| {
                toks[idx..idx + end].iter().any(|t| *t == Token::Ident("for".to_owned()))
            });
            if for_trait {
                return skip_item(&toks, idx);
            }
        }
        let Some(kind) = ident(toks.get(idx)).filter(|word| KINDS.contains(word)) else {
            return idx + 1;
        };
        let name =
            ident(toks.get(idx + 1)).filter(|n| !KINDS.contains(n) && !QUALIFIERS.contains(n));
        // Where the declaration starts: back over its qualifiers (`pub(crate) const async fn`).
        let mut start = idx;
        while start > 0 && ident(toks.get(start - 1)).is_some_and(|w| QUALIFIERS.contains(&w)) {
            start -= 1;
        }
        let before = start.checked_sub(1).map(|at| &toks[at]);
        let bare_pub = ident(before) == Some("pub");
        // An item starts a statement: after `;`, a brace, an attribute's `]`, a visibility's
        // `)`, or at the start of the file (not `*const T`, `&'static`, `<const N: usize>`).
        let at_item = matches!(before, None | Some(Token::Punct(';' | '{' | '}' | ']' | ')')));
        if let Some(name) = name.filter(|_| at_item && !bare_pub && kind != "mod") {
            res.push(name.to_owned());
        }
        if kind == "trait" { skip_item(&toks, idx) } else { idx + 1 }
    });
    res
}

/// The names `text` declares with a bare `pub` that are not items: its fields.
fn public_fields(text: &str) -> Vec<String> {
    let toks = tokens(text);
    toks.windows(3)
        .filter_map(|w| match (ident(w.first()), ident(w.get(1)), w.get(2)) {
            (Some("pub"), Some(name), Some(Token::Punct(':'))) => Some(name.to_owned()),
            _ => None,
        })
        .collect()
}

/// Whether an attribute `#[cfg(test)]` or `#[cfg(doctest)]` starts at `idx`.
fn is_cfg_test(toks: &[Token], idx: usize) -> bool {
    toks[idx] == Token::Punct('#')
        && toks.get(idx + 1) == Some(&Token::Punct('['))
        && ident(toks.get(idx + 2)) == Some("cfg")
        && toks.get(idx + 3) == Some(&Token::Punct('('))
        && matches!(ident(toks.get(idx + 4)), Some("test" | "doctest"))
        && toks.get(idx + 5) == Some(&Token::Punct(')'))
}

/// Per crate, the public items of its `src/` that no other crate names and no doc example of
/// its own calls, sorted, without its [`LIBRARY_API`].
fn unused_public_items(root: &Path) -> std::io::Result<BTreeMap<String, BTreeSet<String>>> {
    let mut crates = BTreeMap::new();
    for entry in std::fs::read_dir(root.join("crates"))?.flatten() {
        if entry.path().join("Cargo.toml").is_file() {
            crates.insert(entry.file_name().to_string_lossy().into_owned(), entry.path());
        }
    }
    // Per crate: (the names its library declares public, the identifiers the crate shows to
    // the others: its tests, examples, benches, its binary and its library).
    let mut declared = BTreeMap::new();
    let mut shown = BTreeMap::new();
    let mut examples = BTreeMap::new();
    for (name, dir) in &crates {
        let mut files = Vec::new();
        rust_files(dir, &mut files);
        let mut items = BTreeSet::new();
        let mut aliases = Vec::new();
        let mut words = BTreeSet::new();
        let mut called = BTreeSet::new();
        for file in files {
            let text = std::fs::read_to_string(&file)?;
            let rel = file.strip_prefix(dir).unwrap_or(&file);
            if rel.starts_with("src") && !is_binary_root(rel) {
                items.extend(public_items(&text));
                aliases.extend(renames(&text));
                identifiers(&doc_examples(&text), &mut called);
            }
            identifiers(&text, &mut words);
        }
        declared.insert(name.clone(), (items, aliases));
        shown.insert(name.clone(), words);
        examples.insert(name.clone(), called);
    }
    let mut res = BTreeMap::new();
    for (name, (items, aliases)) in declared {
        let api: BTreeSet<&str> = LIBRARY_API
            .iter()
            .filter(|(krate, _)| *krate == name)
            .flat_map(|(_, names)| names.iter().copied())
            .collect();
        let unused: BTreeSet<String> = items
            .into_iter()
            .filter(|item| !api.contains(item.as_str()))
            .filter(|item| {
                let in_main = BINARY_ROOTS.iter().any(|main| {
                    std::fs::read_to_string(crates[&name].join(main)).is_ok_and(|text| {
                        let mut words = BTreeSet::new();
                        identifiers(&text, &mut words);
                        words.contains(item)
                    })
                });
                // An item re-exported under another name (`use a::NAME as ALIAS`) is used by
                // that name too.
                let names: Vec<&String> = std::iter::once(item)
                    .chain(aliases.iter().filter(|(orig, _)| orig == item).map(|(_, alias)| alias))
                    .collect();
                let elsewhere = shown.iter().any(|(other, words)| {
                    *other != name && names.iter().any(|n| words.contains(*n))
                });
                // A doc example is a crate of its own that calls the library.
                let in_examples = names.iter().any(|n| examples[&name].contains(*n));
                !in_main && !elsewhere && !in_examples
            })
            .collect();
        if !unused.is_empty() {
            res.insert(name, unused);
        }
    }
    Ok(res)
}

#[test]
fn public_items_have_users_outside_their_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let unused = unused_public_items(&root).unwrap();
    let total: usize = unused.values().map(BTreeSet::len).sum();
    let listed: Vec<String> = unused
        .iter()
        .map(|(krate, items)| {
            format!("{krate}: {}", items.iter().cloned().collect::<Vec<_>>().join(", "))
        })
        .collect();
    assert!(
        unused.is_empty(),
        "{total} public items have no user outside their crate: make them `pub(crate)` (or \
         private, or delete them if dead), or, if a Rust user of the library is meant to call \
         one, name it in the crate's docs and in LIBRARY_API:\n{}",
        listed.join("\n")
    );
}

/// Per crate, the names its doc examples call that its `src/` declares only narrower than
/// `pub`: a doctest, a crate of its own, cannot call them, so CI's doctests would fail.
fn doc_examples_call_only_public_items(
    root: &Path,
) -> std::io::Result<BTreeMap<String, BTreeSet<String>>> {
    let mut res = BTreeMap::new();
    let mut public = BTreeSet::new();
    let mut per_crate = Vec::new();
    for entry in std::fs::read_dir(root.join("crates"))?.flatten() {
        let mut files = Vec::new();
        rust_files(&entry.path().join("src"), &mut files);
        let texts = files
            .into_iter()
            .filter(|f| !is_binary_root(f))
            .map(|f| std::fs::read_to_string(&f).map(|text| (f, text)))
            .collect::<std::io::Result<Vec<_>>>()?;
        let tests: Vec<PathBuf> =
            texts.iter().flat_map(|(file, text)| test_module_paths(file, text)).collect();
        let (mut narrowed, mut called) = (BTreeSet::new(), BTreeSet::new());
        for (file, text) in &texts {
            public.extend(public_items(text));
            public.extend(public_fields(text));
            if !tests.iter().any(|t| file.starts_with(t)) {
                narrowed.extend(narrowed_items(text));
            }
            identifiers(&doc_examples(text), &mut called);
        }
        per_crate.push((entry.file_name().to_string_lossy().into_owned(), narrowed, called));
    }
    for (krate, narrowed, called) in per_crate {
        // A name some crate declares `pub` may be what the example calls (a public method of
        // the same name, another crate's item): the check holds what nothing could call.
        let unreachable: BTreeSet<String> = called
            .into_iter()
            .filter(|word| narrowed.contains(word) && !public.contains(word))
            .collect();
        if !unreachable.is_empty() {
            res.insert(krate, unreachable);
        }
    }
    Ok(res)
}

#[test]
fn doc_examples_call_public_items() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let found = doc_examples_call_only_public_items(&root).unwrap();
    let listed: Vec<String> = found
        .iter()
        .map(|(krate, items)| {
            format!("{krate}: {}", items.iter().cloned().collect::<Vec<_>>().join(", "))
        })
        .collect();
    assert!(
        found.is_empty(),
        "doc examples call items their crate declares narrower than `pub` (the doctests would \
         fail): make them `pub` again (library API, named in the crate's docs), or change the \
         example:\n{}",
        listed.join("\n")
    );
}

/// A planted workspace: crate `lib` has an item only its doc example calls (a user: the check
/// passes it), and an item narrowed to `pub(crate)` that a doc example still calls (the check
/// fails it), beside an `ignore`d and a `text` block that are not doctests.
#[test]
fn a_planted_doc_example_is_a_user_and_a_narrowed_call_fails() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("crates/lib");
    let other = dir.path().join("crates/other");
    std::fs::create_dir_all(lib.join("src")).unwrap();
    std::fs::create_dir_all(other.join("src")).unwrap();
    std::fs::write(lib.join("Cargo.toml"), "[package]\nname = \"lib\"\n").unwrap();
    std::fs::write(other.join("Cargo.toml"), "[package]\nname = \"other\"\n").unwrap();
    let text = r#"//! A library.
//!
//! ```
//! # use lib::only_in_docs;
//! assert_eq!(only_in_docs(), 1);
//! ```

/// Called by the example above only.
pub fn only_in_docs() -> u8 { 1 }

/// Called by nothing.
pub fn unused() {}

/// Narrowed, yet its example calls it.
///
/// ```no_run
/// lib::narrowed();
/// ```
pub(crate) fn narrowed() {}

/// ```ignore
/// lib::ignored_private();
/// ```
///
/// ```text
/// lib::texted_private()
/// ```
fn ignored_private() {}
fn texted_private() {}
"#;
    std::fs::write(lib.join("src/lib.rs"), text).unwrap();
    std::fs::write(other.join("src/lib.rs"), "//! Nothing.\n").unwrap();
    let unused = unused_public_items(dir.path()).unwrap();
    assert_eq!(unused["lib"], BTreeSet::from(["unused".to_owned()]), "{unused:?}");
    let found = doc_examples_call_only_public_items(dir.path()).unwrap();
    assert_eq!(found["lib"], BTreeSet::from(["narrowed".to_owned()]), "{found:?}");
    assert_eq!(found.len(), 1, "{found:?}");
}

#[test]
fn library_api_is_documented_as_such() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut problems = Vec::new();
    for (krate, names) in LIBRARY_API {
        let dir = root.join("crates").join(krate);
        let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap_or_default();
        let docs: String = lib
            .lines()
            .filter_map(|line| line.strip_prefix("//!"))
            .chain(std::fs::read_to_string(dir.join("README.md")).unwrap_or_default().lines())
            .collect::<Vec<_>>()
            .join("\n");
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        let declared: BTreeSet<String> = files
            .iter()
            .flat_map(|file| public_items(&std::fs::read_to_string(file).unwrap()))
            .collect();
        for name in *names {
            if !declared.contains(*name) {
                problems.push(format!(
                    "{krate}: `{name}` is in LIBRARY_API but is no public item of crates/{krate}/src"
                ));
            }
            let plain = format!("`{name}`");
            let method = format!("::{name}`");
            if !docs.contains(&plain) && !docs.contains(&method) {
                problems.push(format!(
                    "{krate}: `{name}` is in LIBRARY_API but neither src/lib.rs's `//!` docs nor README.md name it"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_scanner_sees_items_and_users() {
    let text = r##"//! A file naming `Hidden` in a comment.
pub fn shown() {}
pub(crate) fn narrow() {}
pub const fn constant_fn() {}
pub const LIMIT: usize = 3;
pub async fn later() {}
pub struct Point<'a> { pub x: &'a str }
impl Point<'_> {
    pub fn method(&self) -> char { let _ = "pub fn in_string() {}"; 'x' }
    pub unsafe fn risky() {}
}
pub mod inner {}
pub use other::{Reexport, inner as renamed};
/* pub fn commented() {} /* nested */ pub fn still_commented() {} */
const RAW: &str = r#"pub fn raw() "quoted" {}"#;
pub enum Kind { A, B }
#[cfg(test)]
pub fn test_only() {}
#[cfg(doctest)]
pub struct DocsOnly;
#[cfg(test)]
mod tests {
    pub fn in_tests() {}
}
pub trait Named { fn name(&self); }
pub type Alias = u8;
pub static STATE: u8 = 0;
fn r#match() -> char { '\'' }
pub fn after_escape() {}
"##;
    assert_eq!(
        public_items(text),
        [
            "shown",
            "constant_fn",
            "LIMIT",
            "later",
            "Point",
            "method",
            "risky",
            "inner",
            "Kind",
            "Named",
            "Alias",
            "STATE",
            "after_escape"
        ]
    );
    assert_eq!(renames(text), [("inner".to_owned(), "renamed".to_owned())]);
    assert_eq!(narrowed_items(text), ["narrow", "RAW", "match"]);
    assert_eq!(doc_examples(text), "");
    let docs = "/// ```\n/// # use a::b;\n/// call();\n/// #\n/// ```\n/// ```text\n/// shown()\n/// ```\n//// ```\nfn f() {}\n";
    assert_eq!(doc_examples(docs), "use a::b;\ncall();\n\n");
    let mut words = BTreeSet::new();
    identifiers(text, &mut words);
    for word in ["shown", "Point", "Reexport", "match", "a", "str"] {
        assert!(words.contains(word), "{word} missing from {words:?}");
    }
    for word in ["Hidden", "in_string", "commented", "still_commented", "raw", "quoted"] {
        assert!(!words.contains(word), "{word} is in a comment or a literal");
    }
}

/// The roots of the crates' binaries (`staged`'s and `staged-hook`'s, in `crates/cli`): each a
/// crate of its own, a user of its library.
const BINARY_ROOTS: [&str; 2] = ["src/main.rs", "src/hook_main.rs"];

fn is_binary_root(path: &Path) -> bool {
    BINARY_ROOTS.iter().any(|root| path.ends_with(root))
}
