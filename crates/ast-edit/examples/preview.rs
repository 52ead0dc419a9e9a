//! Previews (and with `--apply`, applies) one rewrite from the command line and prints a JSON
//! summary; the benchmark (`bench/compare.sh`) times it against `ast-grep run`.
//!
//! ```text
//! cargo run --release -p staged-ast-edit --example preview -- \
//!     --pattern 'foo($A)' --rewrite 'bar($A)' [--lang ts] [--root DIR] [--diff] [--apply] \
//!     [--no-prefilter] [--include-parse-errors] PATH...
//! ```
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::Instant;

use serde::Serialize;
use staged_ast_edit::{AstEditParams, EngineOptions, Op, compute_preview_with};
use staged_journal::{CommitOptions, ConfinedRoot, Step, commit};

/// The allocator of the `staged` binary and its options, the same file, so that the benchmark
/// measures what users run.
#[path = "../../cli/src/allocator.rs"]
mod allocator;

struct Args {
    pattern: String,
    rewrite: String,
    lang: Option<String>,
    root: String,
    apply: bool,
    diff: bool,
    prefilter: bool,
    include_parse_errors: bool,
    paths: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        pattern: String::new(),
        rewrite: String::new(),
        lang: None,
        root: ".".to_owned(),
        apply: false,
        diff: false,
        prefilter: true,
        include_parse_errors: false,
        paths: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--pattern" | "-p" => args.pattern = value("--pattern")?,
            "--rewrite" | "-r" => args.rewrite = value("--rewrite")?,
            "--lang" | "-l" => args.lang = Some(value("--lang")?),
            "--root" => args.root = value("--root")?,
            "--apply" => args.apply = true,
            "--diff" => args.diff = true,
            "--no-prefilter" => args.prefilter = false,
            "--include-parse-errors" => args.include_parse_errors = true,
            other if other.starts_with('-') => return Err(format!("unknown flag {other}")),
            other => args.paths.push(other.to_owned()),
        }
    }
    if args.pattern.is_empty() {
        return Err("--pattern is required".to_owned());
    }
    if args.paths.is_empty() {
        args.paths.push(".".to_owned());
    }
    Ok(args)
}

fn run() -> Result<Summary, String> {
    let args = parse_args()?;
    let started = Instant::now();
    let workspace = ConfinedRoot::new(&args.root).map_err(|e| e.to_string())?;
    let params = AstEditParams {
        ops: vec![Op { pat: args.pattern.clone(), out: args.rewrite.clone() }],
        paths: args.paths.clone(),
        lang: args.lang.clone(),
        selector: None,
        strictness: None,
        limit: None,
        max_files: Some(None),
        include_parse_errors: Some(args.include_parse_errors),
    };
    let validated = params.validate().map_err(|e| e.to_string())?;
    // By default the preview computes the edits (positions, matched and replacement text: what
    // `ast-grep run --json` reports); `--diff` adds the per-file unified diffs the `ast_edit`
    // tool shows; `--apply` keeps the rewritten contents and writes them.
    let options =
        EngineOptions { prefilter: args.prefilter, diff: args.diff, keep_contents: args.apply };
    let preview = compute_preview_with(&workspace, &validated, options, None, None)
        .map_err(|e| e.to_string())?;
    if args.apply {
        let writes = preview.writes().ok_or("the rewritten contents were not kept")?;
        let steps: Vec<Step> = writes.into_iter().map(Step::from).collect();
        commit(&workspace, &steps, CommitOptions::default()).map_err(|e| e.to_string())?;
    }
    Ok(Summary {
        total_replacements: preview.total_replacements(),
        edits_digest: preview.edits_digest(),
        files_touched: preview.files_touched(),
        files_searched: preview.files_searched,
        parse_errors_total: preview.parse_errors.len(),
        diff_bytes: preview.files.iter().filter_map(|f| f.diff.as_ref()).map(String::len).sum(),
        limit_reached: preview.limit_reached,
        applied: args.apply,
        parse_issues: args.apply.then(|| preview.parse_errors.clone()),
        error_files_skipped: preview.error_files_skipped,
        error_files: preview
            .error_files
            .iter()
            .map(|f| ErrorFile {
                path: f.path.clone(),
                count: f.replacements,
                matches_skipped: f.matches_skipped,
            })
            .collect(),
        nested_left: preview
            .nested_left
            .iter()
            .map(|n| NestedLeft { path: n.path.clone(), line: n.outer.0, inner: n.inner.len() })
            .collect(),
        elapsed_ms: started.elapsed().as_millis(),
    })
}

/// The summary printed: what the preview found, and how long it took.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Summary {
    total_replacements: usize,
    edits_digest: String,
    files_touched: usize,
    files_searched: usize,
    parse_errors_total: usize,
    diff_bytes: usize,
    limit_reached: bool,
    applied: bool,
    /// The parse errors, with `--apply` (`null` without).
    parse_issues: Option<Vec<String>>,
    error_files_skipped: usize,
    error_files: Vec<ErrorFile>,
    nested_left: Vec<NestedLeft>,
    elapsed_ms: u128,
}

/// A file with parse errors that the rewrite skipped.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ErrorFile {
    path: String,
    count: usize,
    matches_skipped: usize,
}

/// A match left unrewritten because another match holds it.
#[derive(Serialize)]
struct NestedLeft {
    path: String,
    line: usize,
    inner: usize,
}

/// What a run that failed prints.
#[derive(Serialize)]
struct Failed {
    error: String,
}

/// Prints `shape` as one line of JSON, its keys sorted (through a `Value`), as the benchmark
/// has always read it. Its fields are numbers, strings and lists, which always serialize.
fn print_json(shape: &impl Serialize) {
    println!("{}", serde_json::to_value(shape).unwrap_or_default());
}

fn main() {
    match run() {
        Ok(summary) => print_json(&summary),
        Err(error) => {
            print_json(&Failed { error });
            std::process::exit(1);
        }
    }
}
