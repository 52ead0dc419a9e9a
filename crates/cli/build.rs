//! Links `staged` with packed relative relocations on x86_64 Linux with glibc
//! (`-z pack-relative-relocs`, DT_RELR): the binary's 64,000 relative relocations are a few
//! kilobytes of bitmaps instead of 1.5 MB of `.rela.dyn` that the dynamic loader reads at
//! every start, and most of staged's processes are short (a hook call per tool call of a
//! client). Needs glibc 2.36 to run and a linker that knows the flag (the `rust-lld` Rust
//! links x86_64 Linux binaries with since 1.90; GNU ld since 2.38): bench/RESULTS.md has
//! what it saves.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_ARCH") == "x86_64"
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
    {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
