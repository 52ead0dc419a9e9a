//! The walk over the workspace's Rust sources that the tidy and public-items checks share:
//! which files there are, and which of them are test modules of their own.

use std::path::{Path, PathBuf};

/// The `.rs` files under `dir`, into `out` (not under `target/`, `snapshots/` or a folder
/// whose name starts with a dot).
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
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

/// The files `text` (the file at `file`) declares as test modules of its own
/// (`#[cfg(test)]`, other attributes, then `mod NAME;`): `NAME.rs` and the folder `NAME/`
/// beside it, or under the folder named after `file` when `file` is not a `lib.rs`, `main.rs`
/// or `mod.rs`.
pub(crate) fn test_module_paths(file: &Path, text: &str) -> Vec<PathBuf> {
    let dir = file.parent().unwrap_or(Path::new(""));
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let dir = match stem {
        "lib" | "main" | "mod" => dir.to_owned(),
        _ => dir.join(stem),
    };
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut res = Vec::new();
    for (idx, line) in lines.iter().enumerate() {
        if *line != "#[cfg(test)]" {
            continue;
        }
        let next = lines[idx + 1..].iter().find(|l| !l.starts_with("#["));
        let name = next.and_then(|l| l.strip_prefix("mod ")).and_then(|l| l.strip_suffix(';'));
        if let Some(name) = name {
            res.push(dir.join(format!("{name}.rs")));
            res.push(dir.join(name));
        }
    }
    res
}
