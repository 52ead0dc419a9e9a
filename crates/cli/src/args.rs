//! Command-line arguments (clap derive). The command names and flags are a contract: other
//! tools and tests depend on them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use staged_workspace::Strictness;

/// Stage changes as previews, then resolve them: apply with a reason, or discard.
#[derive(Debug, Parser)]
#[command(name = "staged", version = crate::cmd::doctor::BUILD, about, propagate_version = true)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// `staged-hook`: the hook entry points alone (`hook <client>` and `shell-run`), the same
/// command line as `staged`'s, in a binary without the ast tools, the agent and the UI, which
/// starts faster; `staged hook install` writes it into the clients' hooks when it is installed
/// beside `staged`.
#[derive(Debug, Parser)]
#[command(name = "staged-hook", version = crate::cmd::doctor::BUILD, propagate_version = true)]
pub(crate) struct HookCli {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    #[command(subcommand)]
    pub(crate) command: HookOnlyCommand,
}

/// The commands of `staged-hook`.
#[derive(Debug, Subcommand)]
pub(crate) enum HookOnlyCommand {
    /// A client's hook: reads one event on stdin, answers on stdout.
    Hook(HookArgs),
    /// Run a shell command under staged (the command the hooks put in place of a client's
    /// shell call).
    #[command(name = "shell-run")]
    ShellRun(ShellRunArgs),
}

/// Options every command takes.
#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// The workspace root. Default: the nearest ancestor holding `.staged` or `.git`, else the
    /// current directory.
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
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
    /// Preview a structural rewrite and stage it; nothing is written until `staged resolve`.
    #[command(name = "ast-edit")]
    AstEdit(AstEditArgs),
    /// Search structurally; read-only.
    #[command(name = "ast-grep")]
    AstGrep(AstGrepArgs),
    /// Preview replacing exact text in one file and stage it; nothing is written until
    /// `staged resolve`.
    Edit(EditArgs),
    /// Preview creating or replacing a whole file and stage it.
    Write(WriteArgs),
    /// Preview a patch (Codex's `*** Begin Patch` format, or a unified diff as `git diff`
    /// prints it) and stage it: files added, deleted, updated and moved, all or none.
    Patch(PatchArgs),
    /// Apply or discard the newest pending preview.
    Resolve(ResolveArgs),
    /// List the pending previews, newest first.
    Pending,
    /// Print the full diff of a pending preview (the newest by default).
    Show(ShowArgs),
    /// Review pending previews interactively: see each diff, apply or discard with a reason.
    Review,
    /// Serve the review page on 127.0.0.1 and open it in the browser: each preview's files and
    /// diff, apply or discard (whole, per file, per hunk), and the log with undo and redo.
    Ui(UiArgs),
    /// The resolve log, newest first: every apply, discard, failure, stale preview and undo.
    Log(LogArgs),
    /// Revert an applied entry of the log: by default the newest one not reverted yet, so undo
    /// run again walks back one apply at a time; undoing an undo redoes it.
    Undo(UndoArgs),
    /// Review an agent session like a pull request: its net change as one diff, keep or
    /// revert each file or hunk, in any order, with a reason its model is told.
    Session(SessionArgs),
    /// Redo the newest undo (made since the last apply); run again, it walks forward.
    Redo(RedoArgs),
    /// Serve staged to MCP clients (Claude Code, Codex, Cursor, goose, ...): stdio by default.
    Mcp(McpArgs),
    /// Walk through the stage-then-resolve cycle with two in-memory previews.
    Demo(DemoArgs),
    /// Run a codemod agent on TASK: every change is a preview, resolved with a reason.
    Agent(AgentArgs),
    /// List the tools a model or an MCP client gets here, plugins' included.
    Tools,
    /// Call one tool with JSON arguments; a tool that stages a preview leaves it pending.
    Tool(ToolArgs),
    /// Trust this workspace's staged.toml, so its plugins and provider settings take effect.
    Trust(TrustArgs),
    /// The coding clients' hooks (Claude Code, Codex, Qwen Code, Gemini CLI, opencode, Cursor,
    /// Copilot CLI, Cline) that stage (or record) every edit those agents make, and their
    /// installer.
    Hook(HookArgs),
    /// Run a shell command under staged: it runs in a private overlay of the workspace, and
    /// what it wrote is recorded in the session (record mode) or staged as one preview of it
    /// (gate mode). The hooks put it in place of a client's shell call.
    #[command(name = "shell-run")]
    ShellRun(ShellRunArgs),
    /// Check that the installed hooks and MCP servers will work: one line per check.
    Doctor,
}

#[derive(Debug, Args)]
pub(crate) struct HookArgs {
    #[command(subcommand)]
    pub(crate) command: HookCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HookCommand {
    /// Claude Code's hook: reads one event on stdin, answers on stdout.
    #[command(name = "claude-code")]
    ClaudeCode(HookRunArgs),
    /// Codex's hook: reads one event on stdin, answers on stdout.
    Codex(HookRunArgs),
    /// Qwen Code's hook: reads one event on stdin, answers on stdout.
    #[command(name = "qwen-code")]
    QwenCode(HookRunArgs),
    /// Gemini CLI's hook: reads one event on stdin, answers on stdout.
    #[command(name = "gemini-cli")]
    GeminiCli(HookRunArgs),
    /// opencode's hook, which staged's opencode plugin runs: reads one event on stdin,
    /// answers on stdout.
    Opencode(HookRunArgs),
    /// Cursor's hook (`.cursor/hooks.json`): reads one event on stdin, answers on stdout.
    Cursor(HookRunArgs),
    /// GitHub Copilot CLI's hook: reads one event on stdin, answers on stdout.
    Copilot(HookRunArgs),
    /// Cline's hook, which staged's Cline plugin runs: reads one event on stdin, answers on
    /// stdout.
    Cline(HookRunArgs),
    /// Write the hooks and the MCP server a client needs (merged into its settings), or remove
    /// them.
    Install(HookInstallArgs),
}

#[derive(Debug, Args)]
pub(crate) struct HookRunArgs {
    /// `gate`: every edit becomes a preview; `record`: every edit goes through and is logged.
    #[arg(long, value_enum, default_value_t = HookModeArg::Gate)]
    pub(crate) mode: HookModeArg,
    /// Act only when the hook runs in this workspace or a folder inside it (repeatable):
    /// anywhere else the hook answers nothing and creates nothing. Codex's installer writes
    /// one per workspace it was installed in, since Codex's hooks apply to every folder.
    #[arg(long = "in", value_name = "ROOT")]
    pub(crate) only_in: Vec<PathBuf>,
    /// The most memory (address space, MiB) a gate call's work may take: work that needs more
    /// is stopped and the edit refused.
    #[arg(long, value_name = "MIB", default_value_t = 4096, value_parser = clap::value_parser!(u64).range(64..))]
    pub(crate) max_memory: u64,
    /// How long a gate call's work may take, in seconds: work still running then is stopped
    /// and the edit refused. Keep it below the client's hook timeout, after which Claude Code
    /// runs the tool.
    #[arg(long, value_name = "SECONDS", default_value_t = 45, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub(crate) timeout: u64,
    /// Internal: do a gate call's work in this process. The hook runs itself with it as a
    /// child it supervises where it cannot fork itself, so that a child that dies, or takes
    /// too long, is a deny.
    #[arg(long, hide = true)]
    pub(crate) work: bool,
}

#[derive(Debug, Args)]
pub(crate) struct HookInstallArgs {
    /// The client.
    #[arg(value_enum)]
    pub(crate) client: HookClientArg,
    /// `gate` (the default) or `record`.
    #[arg(long, value_enum, default_value_t = HookModeArg::Gate)]
    pub(crate) mode: HookModeArg,
    /// Remove what the installer wrote, and nothing else (for Codex: this workspace's part;
    /// the hooks go when no workspace is left).
    #[arg(long)]
    pub(crate) uninstall: bool,
    /// Claude Code: write the hooks and approvals to `.claude/settings.local.json` (a person's
    /// own, not committed) and the MCP server to Claude Code's own config for this folder
    /// (its local scope), instead of `.claude/settings.json` and `.mcp.json`.
    #[arg(long)]
    pub(crate) local: bool,
    /// Name the binary `staged`, found on `PATH` when the client runs it, instead of this
    /// binary's absolute path (for settings that are committed and used on other machines).
    #[arg(long)]
    pub(crate) on_path: bool,
    /// `human`: the MCP server the client runs asks a person before every `resolve apply`
    /// (`staged mcp --approve human`, through the client's MCP elicitation).
    #[arg(long, value_enum, default_value_t = ApproveArg::None)]
    pub(crate) approve: ApproveArg,
}

#[derive(Debug, Args)]
pub(crate) struct ShellRunArgs {
    /// The client whose session the command belongs to.
    #[arg(long, value_parser = ["claude-code", "codex", "gemini-cli", "qwen-code", "opencode", "copilot", "cline"])]
    pub(crate) client: String,
    /// The client's session id.
    // Any value, one that starts with `-` too: the ids come from the client, and a wrapped
    // command whose id reads as a flag would not run at all.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) session: String,
    /// The client's tool call id.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) call: Option<String>,
    /// `gate`: the command's writes become a preview; `record`: they go through and are logged.
    #[arg(long, value_enum, default_value_t = HookModeArg::Gate)]
    pub(crate) mode: HookModeArg,
    /// The command, run by the shell (`$SHELL -c`, else `/bin/sh -c`).
    #[arg(last = true, required = true)]
    pub(crate) command: Vec<String>,
}

/// `--mode` values of the hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum HookModeArg {
    Gate,
    Record,
}

/// The clients staged has hooks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum HookClientArg {
    #[value(name = "claude-code")]
    ClaudeCode,
    Codex,
    #[value(name = "qwen-code")]
    QwenCode,
    #[value(name = "gemini-cli")]
    GeminiCli,
    Opencode,
    Cursor,
    Copilot,
    Cline,
}

#[derive(Debug, Args)]
pub(crate) struct ToolArgs {
    /// The tool's name (see `staged tools`).
    #[arg(value_name = "NAME")]
    pub(crate) name: String,
    /// The arguments, a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub(crate) args: String,
}

#[derive(Debug, Args)]
pub(crate) struct TrustArgs {
    /// Only say whether the workspace's staged.toml is trusted.
    #[arg(long, conflicts_with = "revoke")]
    pub(crate) show: bool,
    /// Stop trusting the workspace's staged.toml.
    #[arg(long)]
    pub(crate) revoke: bool,
}

#[derive(Debug, Args)]
pub(crate) struct AgentArgs {
    /// The provider: openai, openai-chat, anthropic, ollama, or a `[providers.NAME]` of
    /// staged.toml (default: `[agent] provider`, else openai).
    #[arg(long, value_name = "P")]
    pub(crate) provider: Option<String>,
    /// The model (default: the provider's `model`, else `[agent] model`).
    #[arg(long, value_name = "M")]
    pub(crate) model: Option<String>,
    /// Replaces the provider's base URL: the part before /responses, /chat/completions or
    /// /messages.
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// Plan first: the model writes a plan under .staged/plans/ and you approve or refine it
    /// before anything is changed.
    #[arg(long)]
    pub(crate) plan: bool,
    /// `human`: every `resolve apply` waits for your answer at the terminal.
    #[arg(long, value_enum, default_value_t = ApproveArg::None)]
    pub(crate) approve: ApproveArg,
    /// The most model calls the run makes (default 50).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_turns: Option<u32>,
    /// What to do.
    #[arg(value_name = "TASK")]
    pub(crate) task: String,
}

#[derive(Debug, Args)]
pub(crate) struct UiArgs {
    /// The port on 127.0.0.1; by default a free one.
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    pub(crate) port: u16,
    /// Only print the page's address; do not open a browser.
    #[arg(long)]
    pub(crate) no_open: bool,
}

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// Serve streamable HTTP at this address (e.g. 127.0.0.1:8765) instead of stdio. Every
    /// request needs `Authorization: Bearer <token>`.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<std::net::SocketAddr>,
    /// Read the HTTP bearer token from FILE (at least 16 visible ASCII characters). Without
    /// it, or STAGED_MCP_TOKEN, a token is generated and written to `.staged/mcp-PORT.token`.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub(crate) token_file: Option<PathBuf>,
    /// Allow `--http` on an address other than loopback. Needs `--token-file` or
    /// STAGED_MCP_TOKEN.
    #[arg(long, requires = "http")]
    pub(crate) allow_remote: bool,
    /// With `--allow-remote`: a host name clients may use in `Host` and `Origin`, besides
    /// loopback names and IP addresses. Repeatable.
    #[arg(long, value_name = "NAME", requires = "allow_remote")]
    pub(crate) allow_host: Vec<String>,
    /// `human`: every `resolve apply` first asks the person through MCP elicitation.
    #[arg(long, value_enum, default_value_t = ApproveArg::None)]
    pub(crate) approve: ApproveArg,
}

/// `--approve` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ApproveArg {
    None,
    Human,
}

/// Match strictness, as ast-grep defines it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum StrictnessArg {
    Cst,
    Smart,
    Ast,
    Relaxed,
    Signature,
    Template,
}

impl StrictnessArg {
    pub(crate) fn to_strictness(self) -> Strictness {
        match self {
            StrictnessArg::Cst => Strictness::Cst,
            StrictnessArg::Smart => Strictness::Smart,
            StrictnessArg::Ast => Strictness::Ast,
            StrictnessArg::Relaxed => Strictness::Relaxed,
            StrictnessArg::Signature => Strictness::Signature,
            StrictnessArg::Template => Strictness::Template,
        }
    }
}

/// What the paths of `ast-edit` and `ast-grep` are relative to, for their help.
const PATHS_HELP: &str = "Files, directories or globs (`*.ts` matches direct children, `**/*.ts` recurses), relative to the current directory (run from outside the workspace with --workspace: to its root)";

#[derive(Debug, Args)]
pub(crate) struct AstEditArgs {
    /// A rewrite: the pattern to match and its replacement template. Repeatable, for several
    /// rewrites in one preview.
    #[arg(long = "op", num_args = 2, value_names = ["PAT", "OUT"], required_unless_present = "pattern", conflicts_with = "pattern", action = clap::ArgAction::Append)]
    pub(crate) ops: Vec<String>,
    /// The pattern to match, as in ast-grep (`-p PAT -r OUT` is `--op PAT OUT`).
    #[arg(short = 'p', long = "pattern", value_name = "PAT", requires = "rewrite")]
    pub(crate) pattern: Option<String>,
    /// The replacement template of `-p`, as in ast-grep.
    #[arg(short = 'r', long = "rewrite", value_name = "OUT", requires = "pattern")]
    pub(crate) rewrite: Option<String>,
    #[command(flatten)]
    pub(crate) scope: ScopeArgs,
    /// Maximum total replacements.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) limit: Option<u64>,
    /// Maximum files touched (default: no cap; what a cap leaves out is counted and said).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_files: Option<u64>,
    /// Also rewrite files whose syntax tree has errors, only where the matched code holds
    /// none (by default such files are skipped and counted).
    #[arg(long)]
    pub(crate) include_parse_errors: bool,
}

/// What `ast-edit` and `ast-grep` share: the language, how a pattern matches, and the paths.
#[derive(Debug, Clone, Args)]
pub(crate) struct ScopeArgs {
    /// Language (name or alias); inferred from the files when absent.
    #[arg(short = 'l', long)]
    pub(crate) lang: Option<String>,
    /// The node kind a contextual pattern stands for.
    #[arg(long, value_name = "KIND")]
    pub(crate) selector: Option<String>,
    /// Match strictness.
    #[arg(long, value_enum)]
    pub(crate) strictness: Option<StrictnessArg>,
    #[arg(value_name = "PATH", default_value = ".", help = PATHS_HELP)]
    pub(crate) paths: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct EditArgs {
    /// The file, relative to the current directory (or absolute, inside the workspace).
    #[arg(value_name = "PATH")]
    pub(crate) path: String,
    /// The exact text to replace; it must occur once (unless --all). Repeatable, with one
    /// --new each: the replacements are made in order, all or none.
    #[arg(long = "old", value_name = "S", required = true, allow_hyphen_values = true, action = clap::ArgAction::Append)]
    pub(crate) old: Vec<String>,
    /// The text to put in its place.
    #[arg(long = "new", value_name = "S", required = true, allow_hyphen_values = true, action = clap::ArgAction::Append)]
    pub(crate) new: Vec<String>,
    /// Replace every occurrence.
    #[arg(long)]
    pub(crate) all: bool,
}

#[derive(Debug, Args)]
pub(crate) struct WriteArgs {
    /// The file, relative to the current directory (or absolute, inside the workspace).
    #[arg(value_name = "PATH")]
    pub(crate) path: String,
    /// Where its new text comes from: a file, or `-` (the default) for stdin.
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct PatchArgs {
    /// The patch: a file, or `-` (the default) for stdin. Its paths are relative to the
    /// workspace root, as in `git diff`.
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<PathBuf>,
    /// Drop N leading folders from a unified diff's paths (as `git apply -p N`). Without it,
    /// a leading `a/` or `b/` is dropped, or the first folder when it is all the `---` and
    /// `+++` names differ in (`diff -ruN old new`).
    #[arg(short = 'p', value_name = "N")]
    pub(crate) strip: Option<usize>,
    /// Reverse a unified diff, as `git apply -R`: a preview that undoes a commit (`git show
    /// <commit> | staged patch -R`).
    #[arg(short = 'R', long)]
    pub(crate) reverse: bool,
}

#[derive(Debug, Args)]
pub(crate) struct AstGrepArgs {
    /// The pattern to search for.
    #[arg(short = 'p', long)]
    pub(crate) pattern: String,
    /// Rewrite the matches with this template, as ast-grep's `-r` does: not a search, but
    /// `staged ast-edit -p PATTERN -r OUT`, which stages the rewrite as a preview.
    #[arg(short = 'r', long = "rewrite", value_name = "OUT")]
    pub(crate) rewrite: Option<String>,
    #[command(flatten)]
    pub(crate) scope: ScopeArgs,
    /// Maximum matches reported.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) limit: Option<u64>,
}

#[derive(Debug, Args)]
pub(crate) struct ResolveArgs {
    /// `apply` or `discard`.
    #[arg(value_enum)]
    pub(crate) action: ActionArg,
    /// Why; recorded with the decision. Must not be blank.
    #[arg(long)]
    pub(crate) reason: String,
    /// Free-form metadata, a JSON object.
    #[arg(long, value_name = "JSON")]
    pub(crate) extra: Option<String>,
    /// Resolve only if this preview (see `staged pending`; `3` and `ast_edit:3` are short for
    /// `pending-action:ast_edit:3`) is the newest; otherwise change nothing and exit 1. A guard
    /// for scripts: an earlier step that failed to stage cannot make this one resolve the
    /// preview before it.
    #[arg(long, value_name = "ID")]
    pub(crate) id: Option<String>,
    /// With `apply`: write only these of the preview's files: files, folders, globs, or
    /// FILE:HUNKS for hunks of a file, numbered as `staged show` prints them (`src/a.ts:2,3`,
    /// `src/a.ts:2-4`). The rest stays pending as a new preview. Paths are relative to the
    /// current directory.
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub(crate) only: Vec<String>,
    /// With `apply`: write all of the preview but these (files, folders, globs, FILE:HUNKS);
    /// they stay pending as a new preview. With --only: what --only names, but these.
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub(crate) except: Vec<String>,
    /// Resolve the newest preview of this agent session (`S3`, or its client's session id;
    /// see `staged session list`) rather than the newest of all.
    #[arg(long, value_name = "S")]
    pub(crate) session: Option<String>,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct LogArgs {
    #[command(subcommand)]
    pub(crate) command: Option<LogCommand>,
    /// Show at most N entries (default 20).
    #[arg(short = 'n', long = "max-count", value_name = "N")]
    pub(crate) max_count: Option<usize>,
    /// From now on keep at most N entries in this workspace's log (default 1000); older ones
    /// are deleted.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub(crate) keep: Option<u64>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum LogCommand {
    /// Print one entry with its diff.
    Show(LogShowArgs),
}

#[derive(Debug, Args)]
pub(crate) struct LogShowArgs {
    /// The entry number (see `staged log`), `newest`, or a preview's id, whole or short
    /// (`ast_edit:3`; a number alone is an entry number): its newest entry.
    #[arg(value_name = "ENTRY")]
    pub(crate) id: String,
}

#[derive(Debug, Args)]
pub(crate) struct UndoArgs {
    /// The entry to revert: its number (see `staged log`), or a preview's id, whole or short
    /// (`ast_edit:3`; a number alone is an entry number). Default (or `newest`): the newest
    /// applied entry not reverted yet.
    #[arg(value_name = "ENTRY")]
    pub(crate) id: Option<String>,
    /// Why; recorded with the undo.
    #[arg(long, default_value = "")]
    pub(crate) reason: String,
    /// Do not show the diff and ask first (at a terminal, undo asks).
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,
    /// Revert only these of the entry's own hunks (FILE:HUNKS, files, globs), numbered as
    /// `staged session show` numbers an entry's change; the entry stays undoable for the rest.
    #[arg(long, num_args = 1.., value_name = "PATH", requires = "id")]
    pub(crate) only: Vec<String>,
    /// With --only: all of the entry's change but these.
    #[arg(long, num_args = 1.., value_name = "PATH", requires = "only")]
    pub(crate) except: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct SessionArgs {
    #[command(subcommand)]
    pub(crate) command: SessionCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum SessionCommand {
    /// The sessions, the one active last first: client, title, times, files, entries, pending previews and
    /// review progress.
    List,
    /// A session's net change as one diff (`git apply` takes it), hunks numbered as `staged
    /// show` numbers them; the session active last when S is absent.
    Show {
        /// The session (`S3` or `3`, or its client's session id, or 6 or more characters it
        /// begins with; see `staged session list`).
        #[arg(value_name = "S", conflicts_with = "entry")]
        session: Option<String>,
        /// Show one log entry's own change on the files as they are now, numbered as `staged
        /// undo ENTRY --only FILE:HUNKS` takes it.
        #[arg(long, value_name = "ENTRY")]
        entry: Option<u64>,
    },
    /// Revert hunks of a session's change on the files as they are now: all or nothing, one
    /// log entry `staged undo` can undo.
    Revert(SessionPickArgs),
    /// Mark hunks of a session's change reviewed and kept.
    Keep(SessionPickArgs),
}

#[derive(Debug, Args)]
pub(crate) struct SessionPickArgs {
    /// The session (`S3` or `3`, or its client's session id, or 6 or more characters it
    /// begins with); the one active last when absent.
    #[arg(value_name = "S")]
    pub(crate) session: Option<String>,
    /// Only these: files, folders, globs, or FILE:HUNKS (`src/a.ts:2,3`), numbered as `staged
    /// session show` prints them. Paths are relative to the current directory.
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub(crate) only: Vec<String>,
    /// All but these (files, folders, globs, FILE:HUNKS).
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub(crate) except: Vec<String>,
    /// Why; recorded, and told to the session's model. Required for a revert.
    #[arg(long)]
    pub(crate) reason: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct RedoArgs {
    /// Why; recorded with the redo.
    #[arg(long, default_value = "")]
    pub(crate) reason: String,
    /// Do not show the diff and ask first (at a terminal, redo asks).
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,
}

/// `resolve` actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ActionArg {
    Apply,
    Discard,
}

#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The pending id (see `staged pending`), or a short form: its number (`3`), its tool and
    /// number (`ast_edit:3`), or `newest`. The newest when absent.
    #[arg(value_name = "ID")]
    pub(crate) id: Option<String>,
    /// Number the hunks (`@@ ... @@ [hunk 2 of 3]`, what `resolve apply --only FILE:2` names)
    /// even when the output is not a terminal; on a terminal they always are. The diff stays
    /// one that `git apply` takes.
    #[arg(long)]
    pub(crate) hunks: bool,
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
