//! Every Markdown file of the README and `docs/` that holds a Rust block is compiled and run
//! as a doctest of this crate (`DocsCompiled` in `src/lib.rs` includes it): a file added
//! later, such as a guide page, fails here until it is included.

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            markdown_files(&path, out)?;
        } else if path.extension().is_some_and(|ext| ext == "md") {
            out.push(path);
        }
    }
    Ok(())
}

/// Whether `text` has a fenced block rustdoc compiles: ```` ```rust ```` (with or without
/// attributes).
fn has_rust_block(text: &str) -> bool {
    text.lines().any(|line| {
        let tag = line.trim_start().strip_prefix("```").unwrap_or("");
        tag.split(',').next().is_some_and(|first| first.trim() == "rust")
    })
}

#[test]
fn every_markdown_rust_block_is_a_doctest() {
    let repo = repo();
    let mut files = vec![repo.join("README.md")];
    markdown_files(&repo.join("docs"), &mut files).unwrap();
    let lib = std::fs::read_to_string(repo.join("crates/workspace/src/lib.rs")).unwrap();
    let mut missing = Vec::new();
    let mut with_rust = 0;
    for file in &files {
        if !has_rust_block(&std::fs::read_to_string(file).unwrap()) {
            continue;
        }
        with_rust += 1;
        let rel = file.strip_prefix(&repo).unwrap().to_string_lossy().replace('\\', "/");
        if !lib.contains(&format!("#[doc = include_str!(\"../../../{rel}\")]")) {
            missing.push(rel);
        }
    }
    assert!(with_rust >= 2, "docs/guide/library.md and docs/contract/plugins.md hold Rust blocks");
    assert!(missing.is_empty(), "not compiled as doctests (add them to DocsCompiled): {missing:?}");
}

#[test]
fn a_rust_block_is_recognised() {
    assert!(has_rust_block("text\n```rust\nfn main() {}\n```\n"));
    assert!(has_rust_block("```rust,no_run\n```\n"));
    assert!(!has_rust_block("```sh\ncargo test\n```\n"));
    assert!(!has_rust_block("```rusty\n```\n"));
}
