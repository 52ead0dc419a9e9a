//! `McpError`: why the MCP server could not start or stopped serving.

use std::{net::SocketAddr, path::PathBuf};

/// Why [`run`](crate::run) failed. Each message is one line, fit for the CLI to print.
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
    /// The workspace's staged session could not be opened.
    #[error("could not open the workspace at {root}: {message}")]
    Workspace {
        /// The workspace root.
        root: PathBuf,
        /// Why.
        message: String,
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
