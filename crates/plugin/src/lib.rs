//! Custom tools in any language: a plugin is an MCP server that staged starts as a child
//! process and speaks to as rmcp's client.
//!
//! Plugins are declared in `staged.toml` (`[plugins.NAME]`, see [`PluginsConfig`]): the user
//! config directory's is always used; the workspace root's only once the user trusted that
//! exact file ([`TrustStore`]), since a cloned repository must not run programs on its own.
//!
//! A plugin tool stages a preview by returning `_meta["staged/pending"]` (see `PROTOCOL.md`):
//! staged pushes a plugin's action on the
//! workspace's durable stack, and `resolve` later calls the plugin's `apply` or `reject`
//! callback with the payload, the reason, `extra` and the pending id, starting the plugin
//! again if needed. Tools whose name begins with `_` are callbacks: staged never offers them
//! to a model or a client.
//!
//! The library API besides the example's: a plugin's declaration (`PluginConfig`, from
//! `PluginsConfig::get` and `PluginsConfig::iter`) and the error of a configuration or a trust
//! store (`PluginError`), and how a plugin tool's result is read (`parse_pending_meta`, giving a
//! `PendingMeta`).
//!
//! # Example
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use staged_plugin::{ConfigOrigin, PluginHost, PluginsConfig};
//! use staged_workspace::WorkspaceSession;
//!
//! let root = std::path::Path::new("/path/to/repo");
//! let text = "[plugins.rename]\ncommand = [\"python3\", \"tools/rename.py\"]\n";
//! let plugins = PluginsConfig::parse("staged.toml", ConfigOrigin::User, text)?;
//! let host = PluginHost::new(root, &plugins);
//! let loaded = host.load().await;
//! let ws = host.register(loaded, WorkspaceSession::builder()).open(root)?;
//! for error in ws.load_errors() {
//!     eprintln!("{error}");
//! }
//! // ws.tools() now holds the plugins' tools, `resolve` last.
//! host.shutdown().await;
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

mod action;
mod config;
mod connection;
mod error;
mod host;
mod protocol;
mod tool;
pub mod trust;

pub use crate::{
    config::{ConfigOrigin, PluginConfig, PluginsConfig},
    error::PluginError,
    host::{Loaded, PluginHost},
    protocol::{PendingMeta, parse_pending_meta},
    trust::{CONFIG_FILE, TrustStatus, TrustStore, WorkspaceConfig},
};
