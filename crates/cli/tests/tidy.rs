//! Tidy checks over the workspace: every Rust source file opens with a `//!` comment that
//! says what it is, and nothing carries trailing whitespace, panic-expecting or ignored tests,
//! or stub macros (the banned spellings are assembled below so this file passes itself); and
//! the code map of ARCHITECTURE.md names, for each crate, exactly the `staged-*` crates its
//! `Cargo.toml` lists as normal dependencies.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name == "snapshots" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn sources_are_tidy() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    assert!(files.len() > 10, "found only {} files under {}", files.len(), root.display());
    let banned = [
        ["#[should", "_panic"].concat(),
        ["#[ig", "nore]"].concat(),
        ["to", "do!("].concat(),
        ["unimple", "mented!("].concat(),
    ];
    let mut problems = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let shown = file.strip_prefix(&root).unwrap_or(&file).display().to_string();
        if !text.starts_with("//!") {
            problems.push(format!("{shown}: does not start with a `//!` comment"));
        }
        for (idx, line) in text.lines().enumerate() {
            if line.ends_with(' ') || line.ends_with('\t') {
                problems.push(format!("{shown}:{}: trailing whitespace", idx + 1));
            }
            for word in &banned {
                if line.contains(word.as_str()) {
                    problems.push(format!("{shown}:{}: contains `{word}`", idx + 1));
                }
            }
        }
    }
    assert!(problems.is_empty(), "tidy problems:\n{}", problems.join("\n"));
}

/// The `staged-*` crates a manifest lists as normal dependencies (`[dependencies]`, and
/// `[target.'cfg(..)'.dependencies]`), without the `staged-` prefix. Dev and build
/// dependencies are left out.
fn staged_dependencies(manifest: &str) -> std::collections::BTreeSet<String> {
    let mut deps = std::collections::BTreeSet::new();
    let mut in_deps = false;
    for line in manifest.lines().map(str::trim) {
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_end_matches(']');
            // `[dependencies.staged-x]` names one dependency as a table.
            let (table, name) = match header.split_once("dependencies.") {
                Some((before, name)) => (format!("{before}dependencies"), Some(name)),
                None => (header.to_owned(), None),
            };
            in_deps = table == "dependencies"
                || (table.starts_with("target.") && table.ends_with(".dependencies"));
            if in_deps && let Some(name) = name.and_then(|n| n.strip_prefix("staged-")) {
                deps.insert(name.to_owned());
                in_deps = false;
            }
            continue;
        }
        if !in_deps || line.starts_with('#') {
            continue;
        }
        let key = line.split(['=', '.']).next().unwrap_or("").trim().trim_matches('"');
        if let Some(name) = key.strip_prefix("staged-") {
            deps.insert(name.to_owned());
        }
    }
    deps
}

/// The code map of ARCHITECTURE.md: between its markers, one line per crate,
/// `- NAME` or `- NAME → DEP, DEP, ...`.
fn code_map(text: &str) -> Result<Vec<(String, std::collections::BTreeSet<String>)>, String> {
    let begin = "<!-- code-map: begin -->";
    let end = "<!-- code-map: end -->";
    let start = text.find(begin).ok_or(format!("no `{begin}` line"))? + begin.len();
    let stop = text[start..].find(end).ok_or(format!("no `{end}` line"))? + start;
    let mut map = Vec::new();
    for line in text[start..stop].lines().map(str::trim).filter(|l| !l.is_empty()) {
        let entry = line.strip_prefix("- ").ok_or(format!("not a `- NAME → ...` line: {line}"))?;
        let (name, deps) = entry.split_once('→').unwrap_or((entry, ""));
        let deps = deps.split(',').map(str::trim).filter(|d| !d.is_empty());
        map.push((name.trim().to_owned(), deps.map(str::to_owned).collect()));
    }
    Ok(map)
}

#[test]
fn code_map_matches_the_manifests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let map = code_map(&text).unwrap_or_else(|err| panic!("ARCHITECTURE.md's code map: {err}"));
    let mut crates = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        let manifest = entry.path().join("Cargo.toml");
        if let Ok(text) = std::fs::read_to_string(&manifest) {
            let name = entry.file_name().to_string_lossy().into_owned();
            crates.insert(name, staged_dependencies(&text));
        }
    }
    assert!(crates.len() > 10, "found only {} crates under {}", crates.len(), root.display());
    let mut problems = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (name, arrows) in &map {
        if !seen.insert(name.clone()) {
            problems.push(format!("{name}: listed twice"));
        }
        let Some(deps) = crates.get(name) else {
            problems.push(format!("{name}: no crates/{name}/Cargo.toml"));
            continue;
        };
        for extra in arrows.difference(deps) {
            problems
                .push(format!("{name} → {extra}: not in crates/{name}/Cargo.toml's dependencies"));
        }
        for missing in deps.difference(arrows) {
            problems.push(format!("{name} → {missing}: a dependency of {name} the map lacks"));
        }
    }
    for name in crates.keys().filter(|name| !seen.contains(*name)) {
        problems.push(format!("{name}: crates/{name} is not in the map"));
    }
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md's code map disagrees with Cargo.toml:\n{}",
        problems.join("\n")
    );
}
