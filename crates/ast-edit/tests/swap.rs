//! A folder swapped for a symlink to the outside, again and again, while previews are applied
//! (the attack of `renameat2(RENAME_EXCHANGE)`): the outside twin holds byte-identical files,
//! so only the directory handles stand between the apply and the outside. Every attempt writes
//! everything inside or nothing, never anything outside, and leaves no temp file. The stress
//! script (`scripts/stress.py swap`) runs the same attack against the real binary, 200 times.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{
    path::Path,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use common::Fixture;
use rustix::fs::{CWD, RenameFlags, renameat_with};
use serde_json::json;

const ATTEMPTS: usize = 40;

fn old(i: usize) -> String {
    format!("legacyWrap({i}, 0);\n")
}

fn new(i: usize) -> String {
    format!("modernWrap(0, {i});\n")
}

fn temps(dir: &Path) -> Vec<String> {
    let mut res = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with(".tmp") {
                res.push(path.display().to_string());
            }
        }
    }
    res
}

#[tokio::test(flavor = "multi_thread")]
async fn a_folder_swapped_for_a_symlink_mid_apply_never_redirects_a_write() {
    for _ in 0..ATTEMPTS {
        let outside = tempfile::tempdir().unwrap();
        let mut files: Vec<(String, String)> =
            (0..4).map(|i| (format!("src/top{i}.ts"), old(i))).collect();
        files.extend((0..8).map(|i| (format!("src/sub/f{i}.ts"), old(100 + i))));
        let refs: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let fx = Fixture::new(&refs);
        std::fs::create_dir(outside.path().join("sub")).unwrap();
        for i in 0..8 {
            std::fs::write(outside.path().join(format!("sub/f{i}.ts")), old(100 + i)).unwrap();
        }
        std::os::unix::fs::symlink(outside.path().join("sub"), fx.root().join("src/link")).unwrap();
        fx.edit(json!({"ops": [{"pat": "legacyWrap($A, $B)", "out": "modernWrap($B, $A)"}],
                       "paths": ["src"], "lang": "typescript"}))
            .await
            .unwrap();

        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let stop = Arc::clone(&stop);
            let (a, b) = (fx.root().join("src/sub"), fx.root().join("src/link"));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let _ = renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE);
                }
            })
        };
        let res = fx
            .session
            .resolve(
                staged_protocol::ResolveParams::apply("swap"),
                staged_core::ResolveOptions::default(),
                &staged_core::CancelToken::new(),
            )
            .await;
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();

        for i in 0..8 {
            let text =
                std::fs::read_to_string(outside.path().join(format!("sub/f{i}.ts"))).unwrap();
            assert_eq!(text, old(100 + i), "a file outside was written");
        }
        assert!(temps(outside.path()).is_empty(), "{:?}", temps(outside.path()));
        assert!(temps(fx.root()).is_empty(), "{:?}", temps(fx.root()));
        let real = if fx.root().join("src/sub").is_symlink() { "src/link" } else { "src/sub" };
        let mut texts: Vec<bool> =
            (0..4).map(|i| fx.read(&format!("src/top{i}.ts")) == new(i)).collect();
        for i in 0..8 {
            let text = fx.read(&format!("{real}/f{i}.ts"));
            assert!(text == old(100 + i) || text == new(100 + i), "torn: {text}");
            texts.push(text == new(100 + i));
        }
        assert!(texts.iter().all(|t| *t == texts[0]), "mixed: {texts:?}");
        let written = texts[0];
        match res {
            Ok(result) => {
                // A result that says it applied wrote everything; a stale one wrote nothing.
                assert_eq!(!result.is_error, written, "{}", result.text_content());
                assert!(!result.text_content().is_empty());
            }
            Err(err) => {
                assert!(!written, "an error after writing: {}", err.message());
                assert!(!err.message().is_empty());
            }
        }
    }
}
