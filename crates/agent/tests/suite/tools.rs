//! The model's read-only tools: `read` with line numbers and ranges, `find` by glob; both
//! confined to the workspace.

use pretty_assertions::assert_eq;
use serde_json::json;
use staged_agent::{FindTool, ReadTool};
use staged_core::{CancelToken, Tool};
use staged_journal::ConfinedRoot;

fn workspace() -> (tempfile::TempDir, ConfinedRoot) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/nested")).unwrap();
    std::fs::write(dir.path().join("src/a.ts"), "one\ntwo\nthree\nfour\n").unwrap();
    std::fs::write(dir.path().join("src/nested/b.ts"), "b\n").unwrap();
    std::fs::write(dir.path().join("src/ignored.ts"), "x\n").unwrap();
    std::fs::write(dir.path().join(".gitignore"), "src/ignored.ts\n").unwrap();
    let workspace = ConfinedRoot::new(dir.path()).unwrap();
    (dir, workspace)
}

#[tokio::test]
async fn read_numbers_lines_and_reads_ranges() {
    let (_dir, workspace) = workspace();
    let read = ReadTool::new(workspace);
    let cancel = CancelToken::new();
    let all = read.execute(json!({"path": "src/a.ts"}), &cancel).await.unwrap();
    assert_eq!(all.text_content(), "1\tone\n2\ttwo\n3\tthree\n4\tfour");
    let range =
        read.execute(json!({"path": "src/a.ts", "offset": 2, "limit": 2}), &cancel).await.unwrap();
    assert_eq!(range.text_content(), "2\ttwo\n3\tthree\n… 1 more lines (read on with offset 4)");
    let outside = read.execute(json!({"path": "../etc/passwd"}), &cancel).await.unwrap_err();
    assert!(outside.message().contains("outside"), "{}", outside.message());
    let dir = read.execute(json!({"path": "src"}), &cancel).await.unwrap_err();
    assert_eq!(dir.message(), "src is a directory; use `find` to list its files");
    let bad = read.execute(json!({"path": "src/a.ts", "offset": 0}), &cancel).await.unwrap_err();
    assert_eq!(bad.message(), "`offset` must be a positive integer, not 0");
}

#[tokio::test]
async fn read_refuses_unknown_arguments_as_its_schema_says() {
    let (_dir, workspace) = workspace();
    let read = ReadTool::new(workspace);
    assert_eq!(read.parameters()["additionalProperties"], json!(false));
    let cancel = CancelToken::new();
    let err = read.execute(json!({"path": "src/a.ts", "lines": 2}), &cancel).await.unwrap_err();
    assert_eq!(
        err.message(),
        "Invalid arguments: unknown field `lines`, expected one of `path`, `offset`, `limit`"
    );
    // Named before any other problem: a misspelt `limit` is not read as "no limit".
    let err = read.execute(json!({"file": "src/a.ts"}), &cancel).await.unwrap_err();
    assert!(err.message().contains("unknown field `file`"), "{}", err.message());
    let ok = read.execute(json!({"path": "src/a.ts", "offset": null}), &cancel).await.unwrap();
    assert_eq!(ok.text_content(), "1\tone\n2\ttwo\n3\tthree\n4\tfour");
}

#[tokio::test]
async fn find_matches_globs_like_the_other_tools_and_honours_gitignore() {
    let (_dir, workspace) = workspace();
    let find = FindTool::new(workspace);
    let cancel = CancelToken::new();
    let direct = find.execute(json!({"pattern": "*.ts", "path": "src"}), &cancel).await.unwrap();
    assert_eq!(direct.text_content(), "src/a.ts");
    let recursive = find.execute(json!({"pattern": "**/*.ts"}), &cancel).await.unwrap();
    assert_eq!(recursive.text_content(), "src/a.ts\nsrc/nested/b.ts");
    let none = find.execute(json!({"pattern": "*.rs"}), &cancel).await.unwrap();
    assert_eq!(none.text_content(), "No files found");
    assert!(find.read_only());
}

#[tokio::test]
async fn read_of_a_big_file_says_where_it_stopped_on_every_page() {
    let (dir, workspace) = workspace();
    // 9 MB of 100-byte lines: `read` takes the first 8 MiB, 83886 whole lines.
    std::fs::write(dir.path().join("big.txt"), format!("{}\n", "y".repeat(99)).repeat(90_000))
        .unwrap();
    let read = ReadTool::new(workspace);
    let cancel = CancelToken::new();
    let first = read.execute(json!({"path": "big.txt", "limit": 2}), &cancel).await.unwrap();
    let note = "[big.txt is 9000000 bytes; `read` reads only its first 8 MiB, 83886 lines, and stopped there.]";
    let y = "y".repeat(99);
    assert_eq!(
        first.text_content(),
        format!("1\t{y}\n2\t{y}\n… 83884 more lines (read on with offset 3)\n{note}")
    );
    assert_eq!(first.details.as_ref().unwrap()["truncated"], true);
    let past =
        read.execute(json!({"path": "big.txt", "offset": 83_887}), &cancel).await.unwrap_err();
    assert_eq!(
        past.message(),
        format!(
            "big.txt has 83886 lines; offset 83887 is past the end of what `read` reads. {note}"
        )
    );
}

#[tokio::test]
async fn find_refuses_unknown_arguments_as_its_schema_says() {
    let (_dir, workspace) = workspace();
    let find = FindTool::new(workspace);
    assert_eq!(find.parameters()["additionalProperties"], json!(false));
    let cancel = CancelToken::new();
    let err = find.execute(json!({"pattern": "*.ts", "dir": "src"}), &cancel).await.unwrap_err();
    assert_eq!(
        err.message(),
        "Invalid arguments: unknown field `dir`, expected one of `pattern`, `path`"
    );
    let ok = find.execute(json!({"pattern": "**/*.ts", "path": "src"}), &cancel).await.unwrap();
    assert!(ok.text_content().contains("a.ts"), "{}", ok.text_content());
}
