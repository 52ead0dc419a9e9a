//! The `staged-hook` entry point: the clients' hooks (`hook <client>`) and the shell wrapper
//! they put in place of a shell call (`shell-run`), without the rest of `staged` (its ast
//! tools and their grammars, the agent, the UI), so that a hook call starts faster. All the
//! work is in the library, shared with `staged`.

#[path = "allocator.rs"]
mod allocator;

fn main() -> std::process::ExitCode {
    staged_cli::hook_main_with_args(std::env::args_os())
}
