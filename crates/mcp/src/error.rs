//! `McpError`: why the MCP server could not start or stopped serving.

use std::{net::SocketAddr, path::PathBuf};

/// Why serving failed. Each message is one line, fit for the CLI to print.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// `--http` named an address other than loopback without `--allow-remote`.
    #[error(
        "{addr} is not a loopback address; refusing to serve MCP on it (pass --allow-remote to allow it)"
    )]
    NotLoopback {
        /// The refused address.
        addr: SocketAddr,
    },
    /// `--allow-remote` without a token given by the user.
    #[error(
        "--allow-remote needs a token you chose: pass --token-file FILE or set STAGED_MCP_TOKEN (a generated token would be readable only on this machine)"
    )]
    RemoteNeedsToken,
    /// `--allow-host` without `--allow-remote`.
    #[error("--allow-host only applies with --allow-remote; loopback names are always allowed")]
    HostsNeedRemote,
    /// A given bearer token is unusable.
    #[error("unusable MCP token: {0}")]
    BadToken(String),
    /// No random token could be generated.
    #[error("could not generate an MCP token: {0}")]
    Random(String),
    /// The generated token could not be written to its file.
    #[error("could not write the MCP token file {path}: {source}")]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// The IO error.
        source: std::io::Error,
    },
    /// The HTTP listener could not be bound.
    #[error("could not listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The IO error.
        source: std::io::Error,
    },
    /// The transport failed while serving.
    #[error("MCP server failed: {0}")]
    Serve(String),
}
