//! Tidy checks over the workspace's Rust sources: every file opens with a `//!` comment that
//! says what it is, and nothing carries trailing whitespace, panic-expecting or ignored tests,
//! or stub macros (the banned spellings are assembled below so this file passes itself).

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
