//! Command-line arguments (clap derive).

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Stage changes as previews, then resolve them: apply with a reason, or discard.
#[derive(Debug, Parser)]
#[command(name = "staged", version, about, propagate_version = true)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// Print machine-readable JSON on stdout.
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// When to colour output (`NO_COLOR` also turns it off in `auto`).
    #[arg(long, global = true, value_enum, default_value_t = ColorArg::Auto)]
    pub(crate) color: ColorArg,
    /// Draw ASCII symbols instead of Unicode ones.
    #[arg(long, global = true)]
    pub(crate) ascii: bool,
}

/// `--color` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorArg {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Walk through the stage-then-resolve cycle with two in-memory previews.
    Demo(DemoArgs),
}

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Reason given when applying the newest preview.
    #[arg(long, default_value = "The rename is correct")]
    pub(crate) apply_reason: String,
    /// Reason given when discarding the older preview.
    #[arg(long, default_value = "Strict mode can wait")]
    pub(crate) discard_reason: String,
}
