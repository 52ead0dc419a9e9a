//! `staged mcp`: serve the workspace over the Model Context Protocol (stdio, or streamable
//! HTTP on loopback).

use anyhow::Context;
use staged_mcp::{Approval, McpOptions};

use crate::{
    args::{ApproveArg, GlobalArgs, McpArgs},
    context,
    exit::Exit,
};

pub(crate) fn run(global: &GlobalArgs, args: &McpArgs) -> anyhow::Result<Exit> {
    let options = McpOptions {
        workspace_root: context::workspace_root(global)?,
        http: args.http,
        allow_remote: args.allow_remote,
        approve: match args.approve {
            ApproveArg::None => Approval::None,
            ApproveArg::Human => Approval::Human,
        },
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(staged_mcp::run(options)).map_err(|err| anyhow::anyhow!("{err}"))?;
    Ok(Exit::Success)
}
