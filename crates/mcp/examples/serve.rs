//! Serves a workspace over MCP with the flags `staged mcp` takes, for end-to-end tests before
//! the CLI subcommand exists:
//! `serve [--workspace DIR] [--http ADDR] [--allow-remote] [--approve none|human]`.

use std::{net::SocketAddr, path::PathBuf, process::ExitCode};

use clap::Parser;
use staged_mcp::{Approval, McpOptions};

/// Command-line flags.
#[derive(Debug, Parser)]
#[command(name = "serve", about = "Serve a staged workspace over the Model Context Protocol")]
struct Args {
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Serve streamable HTTP at this address instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Allow a non-loopback `--http` address.
    #[arg(long)]
    allow_remote: bool,
    /// Who approves `resolve apply`: `none` or `human`.
    #[arg(long, value_name = "MODE", default_value = "none")]
    approve: Approval,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let workspace_root = match args.workspace {
        Some(dir) => dir,
        None => match std::env::current_dir() {
            Ok(dir) => dir,
            Err(err) => {
                tracing::error!("cannot read the current directory: {err}");
                return ExitCode::FAILURE;
            }
        },
    };
    let options = McpOptions {
        workspace_root,
        http: args.http,
        allow_remote: args.allow_remote,
        approve: args.approve,
    };
    match staged_mcp::run(options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // `run` installed the stderr logger before it could fail, except when the address
            // is refused; write the one-line message to stderr either way.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("error: {err}\n").as_bytes(),
            );
            ExitCode::FAILURE
        }
    }
}
