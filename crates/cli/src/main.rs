//! The `staged` command-line entry point; all the work is in the library.

#[path = "allocator.rs"]
mod allocator;

fn main() -> std::process::ExitCode {
    staged_cli::main_with_args(std::env::args_os())
}
