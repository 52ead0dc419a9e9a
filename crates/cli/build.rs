//! Links the `staged` binary as a position-dependent executable on Linux (`-no-pie`).
//!
//! A hook call is a new process of this binary for every edit a client makes, and most of its
//! start-up was the dynamic loader relocating the position-independent executable: about
//! 64,000 relative relocations (the tree-sitter grammars' tables of names are most of them),
//! and a copy of each page they write, about 0.45 ms of CPU per start out of 1.3 ms
//! (`bench/RESULTS.md`, "Hook latency per client"). Linked at a fixed address there is
//! nothing to relocate. The price is that the executable's own code and data are not placed
//! at a random address (the libraries, the heap and the stack still are).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bin=staged=-no-pie");
    }
}
