//! `staged trust`: a workspace's `staged.toml` takes effect only once trusted, the trust follows
//! the file's bytes, and an untrusted workspace's plugins are never started (one warning line
//! says why and what to run). Plugins that do start are tested with real Python and Node
//! children in `crates/plugin/tests/python`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{
    path::Path,
    process::{Command, Output},
};

use pretty_assertions::assert_eq;
use serde_json::json;

use common::{code, stderr, stdout, workspace};

/// `staged ARGS` in `dir` with its own user config dir.
fn run(dir: &Path, config_home: &Path, args: &[&str]) -> Output {
    Command::new(common::staged_bin())
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", config_home)
        .output()
        .unwrap()
}

fn status(dir: &Path, config_home: &Path) -> String {
    let out = run(dir, config_home, &["--json", "trust", "--show"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["status"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A plugin that would leave a mark if it ever ran.
fn marker_plugin(dir: &Path) -> String {
    let marker = dir.join("ran");
    format!(
        "[plugins.marker]\ncommand = [\"sh\", \"-c\", \"touch {}\"]\ntimeout_ms = 2000\n",
        marker.display()
    )
}

#[test]
fn trust_follows_the_file_and_can_be_shown_and_revoked() {
    let dir = workspace(&[]);
    let home = tempfile::tempdir().unwrap();
    let (dir, home) = (dir.path(), home.path());
    let root = dir.canonicalize().unwrap();
    assert_eq!(status(dir, home), "no-config");
    let out = run(dir, home, &["trust"]);
    assert_eq!(code(&out), 2);
    assert_eq!(
        stderr(&out),
        format!(
            "error: {}/staged.toml does not exist: there is nothing to trust\n",
            root.display()
        )
    );

    std::fs::write(dir.join("staged.toml"), "[plugins.p]\ncommand = [\"p\"]\n").unwrap();
    assert_eq!(status(dir, home), "untrusted");
    let out = run(dir, home, &["trust"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).starts_with(&format!("Trusted {}/staged.toml (sha256 ", root.display())));
    assert!(stdout(&out).ends_with("  plugin \"p\" runs: p\n"), "{}", stdout(&out));
    assert_eq!(status(dir, home), "trusted");
    assert!(home.join("staged/trusted-workspaces.json").is_file());

    std::fs::write(dir.join("staged.toml"), "[plugins.p]\ncommand = [\"q\"]\n").unwrap();
    assert_eq!(status(dir, home), "changed");
    let other_home = tempfile::tempdir().unwrap();
    assert_eq!(status(dir, other_home.path()), "untrusted", "trust is the user's");

    let out = run(dir, home, &["--json", "trust", "--revoke"]);
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap(),
        json!({"root": root, "revoked": true})
    );
    let out = run(dir, home, &["trust", "--revoke"]);
    assert_eq!(
        stdout(&out),
        format!("{}/staged.toml was not trusted; nothing changed.\n", root.display())
    );
}

#[test]
fn an_untrusted_workspace_starts_no_plugin_and_says_what_to_run() {
    let dir = workspace(&[]);
    let home = tempfile::tempdir().unwrap();
    let (dir, home) = (dir.path(), home.path());
    std::fs::write(dir.join("staged.toml"), marker_plugin(dir)).unwrap();
    let root = dir.canonicalize().unwrap();
    for args in [&["tools"][..], &["tool", "anything"], &["pending"]] {
        let out = run(dir, home, args);
        if args[0] == "pending" {
            assert_eq!(stderr(&out), "", "commands that start no plugin do not warn");
        } else {
            assert_eq!(
                stderr(&out).lines().next().unwrap(),
                format!(
                    "staged: warning: plugin \"marker\" in {}/staged.toml not started: this workspace is not trusted; read the file, then run `staged trust` to allow it",
                    root.display()
                )
            );
        }
        assert!(!dir.join("ran").exists(), "{args:?} ran an untrusted plugin");
    }

    // Trusted, it runs (here: it starts, leaves its mark and is no MCP server: a load error).
    assert_eq!(code(&run(dir, home, &["trust"])), 0);
    let out = run(dir, home, &["tools"]);
    assert!(dir.join("ran").exists());
    assert!(stderr(&out).contains("staged: warning: plugin \"marker\": Failed to load tool: plugin \"marker\" exited (exit status: 0) during the MCP handshake"), "{}", stderr(&out));
}

#[test]
fn a_planted_symlink_for_staged_toml_is_refused() {
    let dir = workspace(&[]);
    let home = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("real.toml"), marker_plugin(dir.path())).unwrap();
    std::os::unix::fs::symlink(elsewhere.path().join("real.toml"), dir.path().join("staged.toml"))
        .unwrap();
    let out = run(dir.path(), home.path(), &["trust"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("staged.toml"), "{}", stderr(&out));
    // Other commands go on without its plugins, and say so.
    let out = run(dir.path(), home.path(), &["tools"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).ends_with("; no plugin was started\n"), "{}", stderr(&out));
    assert_eq!(code(&run(dir.path(), home.path(), &["pending"])), 0);
    assert!(!dir.path().join("ran").exists());
}

#[test]
fn two_roots_whose_names_are_not_utf8_never_share_a_trust_record() {
    use std::os::unix::ffi::OsStrExt;
    let base = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let toml = "[plugins.p]\ncommand = [\"sh\", \"tools/p.sh\"]\ntimeout_ms = 2000\n";
    let root = |name: &[u8], script: &str| {
        let dir = base.path().join(std::ffi::OsStr::from_bytes(name));
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::create_dir_all(dir.join("tools")).unwrap();
        std::fs::write(dir.join("staged.toml"), toml).unwrap();
        std::fs::write(dir.join("tools/p.sh"), script).unwrap();
        dir
    };
    // Both names read `lossy\u{fffd}` once made lossy.
    let trusted = root(b"lossy\xff", "exit 0\n");
    let other = root(b"lossy\xfe", "touch ran\n");
    let out = run(&trusted, home.path(), &["trust"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(status(&trusted, home.path()), "trusted");
    assert_eq!(status(&other, home.path()), "untrusted");
    let out = run(&other, home.path(), &["tools"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not started: this workspace is not trusted"),
        "{}",
        stderr(&out)
    );
    assert!(!other.join("ran").exists(), "the untrusted root ran its script");
}
