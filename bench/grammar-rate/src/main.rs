//! Parses every `.rs` file under a folder with tree-sitter-rust 0.24.2 (ast-grep-language's)
//! and the candidate grammars, and prints how many files each one leaves with error nodes.

use std::{path::PathBuf, time::Instant};

use rayon::prelude::*;

fn main() {
    let Some(root) = std::env::args().nth(1) else {
        eprintln!("usage: grammar-rate DIR");
        std::process::exit(2);
    };
    let texts: Vec<(PathBuf, String)> = walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "rs"))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok().map(|t| (e.into_path(), t)))
        .collect();
    let grammars: [(&str, tree_sitter::Language); 3] = [
        ("tree-sitter-rust 0.24.2", tree_sitter_rust::LANGUAGE.into()),
        ("tree-sitter-rust-orchard 0.16.11", tree_sitter_rust_orchard::LANGUAGE.into()),
        ("arborium-rust 2.18.2", arborium_rust::language().into()),
    ];
    println!("{} UTF-8 .rs files under {root}", texts.len());
    for (name, language) in &grammars {
        let started = Instant::now();
        let broken = texts
            .par_iter()
            .filter(|(_, text)| {
                let mut parser = tree_sitter::Parser::new();
                parser.set_language(language).is_ok()
                    && parser.parse(text, None).is_some_and(|t| t.root_node().has_error())
            })
            .count();
        let share = 100.0 * broken as f64 / texts.len().max(1) as f64;
        let secs = started.elapsed().as_secs_f64();
        println!("{name}: {broken} files with error nodes ({share:.2}%), {secs:.1}s");
    }
}
