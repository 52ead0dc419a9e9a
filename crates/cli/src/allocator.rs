//! The allocator of `staged` (included by its `main`, and by `staged-ast-edit`'s `preview`
//! example, which the benchmark times as `staged`; `staged-hook` runs on the system's, see
//! `hook_main.rs`).

/// jemalloc serves every allocation of the process, tree-sitter's C `malloc` included (the
/// crate exports the unprefixed symbols). Parsing is most of a preview's time and allocates a
/// node at a time; against glibc's allocator, jemalloc makes the benchmark's broad rows 7% to
/// 15% faster at the same peak memory (bench/RESULTS.md, "The allocator"). The library crates
/// leave the choice to whoever links them.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read once when it starts (the `malloc_conf` string an application may
/// define; `MALLOC_CONF` in the environment still overrides it). By default jemalloc keeps the
/// pages a thread freed for 10 s before giving them back, so in a run shorter than that every
/// page it ever touched stays resident, and every worker thread's arena keeps the peak of the
/// trees it parsed: that doubled the peak memory of a preview against glibc's allocator. After
/// 250 ms unused pages go back to the system (`madvise(MADV_DONTNEED)`, so they leave the
/// resident set at once), at no measurable cost in time (bench/RESULTS.md, "Peak memory").
#[cfg(all(not(target_env = "msvc"), target_os = "linux"))]
#[allow(unsafe_code, non_upper_case_globals)]
// SAFETY: jemalloc declares `const char *malloc_conf` and reads it, once, before the first
// allocation; this is a pointer to a NUL-terminated string in read-only memory that lives as
// long as the program, and nothing else has that name (tikv-jemallocator's unprefixed build
// exports jemalloc's symbols without a prefix on Linux).
#[unsafe(export_name = "malloc_conf")]
static malloc_conf: &u8 = &b"dirty_decay_ms:250,muzzy_decay_ms:0\0"[0];
