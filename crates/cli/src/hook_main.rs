//! The `staged-hook` entry point: the clients' hooks (`hook <client>`) and the shell wrapper
//! they put in place of a shell call (`shell-run`), without the rest of `staged` (its ast
//! tools and their grammars, the agent, the UI), so that a hook call starts faster. All the
//! work is in the library, shared with `staged`.
//!
//! It runs on the system's allocator, not `staged`'s jemalloc: a hook call is two short
//! processes (the supervisor and its forked worker) that allocate little, where jemalloc's
//! start (its arenas, its per-size-class pages) and its fork handlers cost more page faults
//! than they save (bench/RESULTS.md, issue 36's round 6).

fn main() -> std::process::ExitCode {
    staged_cli::hook_main_with_args(std::env::args_os())
}
