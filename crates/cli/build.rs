//! The build identity that `staged` and `staged-hook` print after their version (`--version`)
//! and that `staged doctor` compares, so that a `staged-hook` left over from another build
//! beside `staged` is found: the clients' hooks run it, and it would run other code.
//!
//! The build id is the start of a SHA-256 of the sources: this package's `Cargo.toml`,
//! `build.rs` and `src/`, and, when it is built in its workspace (`../../Cargo.toml` is a
//! `[workspace]`), every crate's `Cargo.toml` and `src/` there with the workspace's
//! `Cargo.toml`, `Cargo.lock` and `rust-toolchain.toml`; then the target, the profile and
//! `rustc -vV`. It needs no git and no network, so it works from a crates.io-style source
//! tarball too (where the version pins the other crates). Two binaries of one build always
//! share it; builds of the same sources with the same compiler and profile do too, as they run
//! the same code.

// A build script speaks to cargo on stdout.
#![allow(clippy::print_stdout)]

use std::{
    io,
    path::{Path, PathBuf},
};

use sha2::{Digest, Sha256};

fn main() -> io::Result<()> {
    let package = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut inputs =
        vec![package.join("Cargo.toml"), package.join("build.rs"), package.join("src")];
    // Files are named relative to `base`, so that the id does not depend on where the
    // sources are.
    let mut base = package.clone();
    if let Some(workspace) = workspace_of(&package) {
        base = workspace.clone();
        for name in ["Cargo.toml", "Cargo.lock", "rust-toolchain.toml"] {
            inputs.push(workspace.join(name));
        }
        let mut crates: Vec<PathBuf> = std::fs::read_dir(workspace.join("crates"))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|dir| dir != &package && dir.join("Cargo.toml").is_file())
            .collect();
        crates.sort();
        for dir in crates {
            inputs.push(dir.join("Cargo.toml"));
            inputs.push(dir.join("src"));
        }
    }
    let mut hash = Sha256::new();
    for input in &inputs {
        println!("cargo:rerun-if-changed={}", input.display());
        hash_tree(&mut hash, &base, input)?;
    }
    for var in ["TARGET", "PROFILE", "OPT_LEVEL", "DEBUG"] {
        let value = std::env::var(var).unwrap_or_default();
        hash.update(format!("{var}={value}\n").as_bytes());
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    if let Ok(out) = std::process::Command::new(rustc).arg("-vV").output() {
        hash.update(&out.stdout);
    }
    let digest = hash.finalize();
    let id: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=STAGED_BUILD_ID={id}");
    Ok(())
}

/// The workspace `package` is built in: `../..`, when its `Cargo.toml` is a `[workspace]`
/// (this repository's layout, `crates/<name>`). A package unpacked from a registry has none.
fn workspace_of(package: &Path) -> Option<PathBuf> {
    let root = package.parent()?.parent()?;
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).ok()?;
    manifest.lines().any(|line| line.trim() == "[workspace]").then(|| root.to_path_buf())
}

/// Adds `path` to `hash`: a file's name (relative to `base`), length and bytes; a folder's
/// files in the order of their names; nothing for what is not there. Links are not followed.
fn hash_tree(hash: &mut Sha256, base: &Path, path: &Path) -> io::Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(err),
    };
    if meta.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?
            .map(|entry| entry.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        entries.sort();
        for entry in entries {
            hash_tree(hash, base, &entry)?;
        }
    } else if meta.is_file() {
        let bytes = std::fs::read(path)?;
        let name = path.strip_prefix(base).unwrap_or(path);
        hash.update(format!("{}\n{}\n", name.display(), bytes.len()).as_bytes());
        hash.update(&bytes);
    }
    Ok(())
}
