//! How `staged mcp` is started: the workspace root, the transport, and whether a person must
//! approve each `resolve apply`.

use std::{net::SocketAddr, path::PathBuf, str::FromStr};

/// Start-up options of the MCP server, as the `staged mcp` subcommand parses them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpOptions {
    /// The workspace every path is confined to (its `.staged/` holds the shared pending stack).
    pub workspace_root: PathBuf,
    /// `None` serves stdio; `Some(addr)` serves streamable HTTP at `http://addr/mcp`.
    pub http: Option<SocketAddr>,
    /// Allows `http` to be a non-loopback address.
    pub allow_remote: bool,
    /// Whether `resolve apply` first asks a person.
    pub approve: Approval,
}

/// Who must agree before `resolve apply` writes anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// The agent's `resolve` call is enough.
    None,
    /// A person confirms each apply through MCP elicitation.
    Human,
}

/// An `--approve` value that is neither `none` nor `human`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown approval mode `{0}`; expected `none` or `human`")]
pub struct UnknownApproval(pub String);

impl FromStr for Approval {
    type Err = UnknownApproval;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "none" => Ok(Approval::None),
            "human" => Ok(Approval::Human),
            other => Err(UnknownApproval(other.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_parses_the_two_flag_values() {
        assert_eq!("none".parse::<Approval>(), Ok(Approval::None));
        assert_eq!("human".parse::<Approval>(), Ok(Approval::Human));
        assert_eq!(
            "robot".parse::<Approval>().map_err(|err| err.to_string()),
            Err("unknown approval mode `robot`; expected `none` or `human`".to_owned())
        );
    }
}
