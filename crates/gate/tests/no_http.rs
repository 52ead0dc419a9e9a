//! A host takes the gate without the providers: `staged-gate`'s dependency tree (normal
//! dependencies, as a host building on it gets them) holds no HTTP, TLS or model-client crate.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

/// Crates of an HTTP or TLS stack, and staged's own crates that bring one.
const FORBIDDEN: &[&str] = &[
    "reqwest",
    "hyper",
    "hyper-util",
    "h2",
    "http",
    "rustls",
    "native-tls",
    "openssl",
    "eventsource-stream",
    "axum",
    "rmcp",
    "staged-agent",
    "staged-mcp",
];

#[test]
fn the_gate_brings_no_http_stack() {
    let out = Command::new(env!("CARGO"))
        .args(["tree", "--offline", "-p", "staged-gate", "-e", "normal", "--prefix", "none"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let tree = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let names: std::collections::BTreeSet<&str> =
        tree.lines().filter_map(|line| line.split_whitespace().next()).collect();
    assert!(names.contains("staged-gate") && names.contains("staged-core"), "{tree}");
    let found: Vec<&str> = FORBIDDEN.iter().copied().filter(|name| names.contains(name)).collect();
    assert!(found.is_empty(), "staged-gate depends on {found:?}:\n{tree}");
}
