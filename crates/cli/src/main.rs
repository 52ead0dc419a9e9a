//! The `staged` command-line entry point; all the work is in the library.

/// jemalloc serves every allocation of the process, tree-sitter's C `malloc` included (the
/// crate exports the unprefixed symbols). Parsing is most of a preview's time and allocates a
/// node at a time; against glibc's allocator, jemalloc makes the benchmark's broad rows 7% to
/// 15% faster at the same peak memory (bench/RESULTS.md, "The allocator"). The library crates
/// leave the choice to whoever links them.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    staged_cli::main_with_args(std::env::args_os())
}
