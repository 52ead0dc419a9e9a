//! How big the workspace database gets: runs N stage-and-apply cycles of `ast_edit` (default
//! 10,000) in a temporary workspace, as `staged ast-edit` and `staged resolve apply` would,
//! and prints the size of `.staged/staged.db` and its WAL side files every 1,000 cycles.
//!
//! Each cycle rewrites one call in a 40-line file, so every resolve adds one log entry with a
//! small diff and its undo data. The log keeps the newest 1,000 entries by default, so the
//! size must level off; the run fails if the final size is over the stated bound.
//!
//! ```sh
//! cargo bench -p staged-workspace --bench log_size            # 10,000 cycles
//! cargo bench -p staged-workspace --bench log_size -- 2000    # fewer
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::{path::Path, time::Instant};

use staged_core::{CancelToken, ResolveOptions, Tool};
use staged_protocol::ResolveParams;
use staged_workspace::{AstEditParams, Op, WorkspaceSession};

/// The stated bound on the database and its side files after any number of cycles.
const BOUND_BYTES: u64 = 3 << 20;

fn db_bytes(root: &Path) -> (u64, u64) {
    let size =
        |name: &str| std::fs::metadata(root.join(".staged").join(name)).map_or(0, |m| m.len());
    (size("staged.db"), size("staged.db-wal") + size("staged.db-shm"))
}

fn main() {
    let cycles: usize = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join(".git")).unwrap();
    let body: String =
        (0..39).map(|i| format!("keep({i}, \"some text to diff against\");\n")).collect();
    std::fs::write(root.join("counter.ts"), format!("v0(1);\n{body}")).unwrap();
    let ws = WorkspaceSession::open(root).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let tool = ws.ast_edit_tool();
    let cancel = CancelToken::new();
    let start = Instant::now();
    println!("cycles  db_bytes  wal_and_shm_bytes  total_bytes  log_entries  seconds");
    for i in 0..cycles {
        runtime.block_on(async {
            let params = AstEditParams {
                ops: vec![Op { pat: format!("v{i}($A)"), out: format!("v{}($A)", i + 1) }],
                paths: vec!["counter.ts".to_owned()],
                lang: None,
                selector: None,
                strictness: None,
                limit: None,
                max_files: None,
                include_parse_errors: None,
            };
            let args = serde_json::to_value(params).unwrap();
            let res = tool.execute(args, &cancel).await.unwrap();
            assert!(!res.is_error, "{}", res.text_content());
            let res = ws
                .session()
                .resolve(
                    ResolveParams::apply(format!("cycle {i}")),
                    ResolveOptions::default(),
                    &cancel,
                )
                .await
                .unwrap();
            assert_eq!(res.text_content(), "Applied 1 replacement in 1 file.");
        });
        if (i + 1) % 1000 == 0 || i + 1 == cycles {
            let (db, side) = db_bytes(root);
            let entries = ws.store().log().unwrap().entries(usize::MAX, false).unwrap().len();
            println!(
                "{:>6}  {db:>8}  {side:>17}  {:>11}  {entries:>11}  {:>7.1}",
                i + 1,
                db + side,
                start.elapsed().as_secs_f64()
            );
        }
    }
    let (db, side) = db_bytes(root);
    let total = db + side;
    println!(
        "after {cycles} cycles: {total} bytes ({:.2} MiB); stated bound {} MiB: {}",
        total as f64 / f64::from(1 << 20),
        BOUND_BYTES >> 20,
        if total <= BOUND_BYTES { "under" } else { "OVER" }
    );
    assert!(total <= BOUND_BYTES, "the database grew past its bound");
}
