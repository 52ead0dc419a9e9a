//! How `staged mcp` is started: whether a person must approve each `resolve apply`, and, for
//! streamable HTTP, the address, the bearer token and the host names it answers to.

use std::{net::SocketAddr, str::FromStr};

use crate::{BearerToken, McpError};

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

/// Options of the streamable HTTP transport (`staged mcp --http ADDR`).
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// The address to listen on; the endpoint is `http://ADDR/mcp`.
    pub addr: SocketAddr,
    /// Allows `addr` to be a non-loopback address. Requires an explicit `token`.
    pub allow_remote: bool,
    /// The token every request must carry as `Authorization: Bearer <token>`. `None`
    /// generates one at start and writes it to a file only the user can read (see
    /// [`HttpEndpoint::token_file`](crate::HttpEndpoint::token_file)).
    pub token: Option<BearerToken>,
    /// Host names, besides loopback names and IP literals, that `Host` and `Origin` may name
    /// (only with `allow_remote`).
    pub allowed_hosts: Vec<String>,
}

impl HttpOptions {
    /// Options for `addr` on loopback with a generated token.
    pub fn loopback(addr: SocketAddr) -> HttpOptions {
        HttpOptions { addr, allow_remote: false, token: None, allowed_hosts: Vec::new() }
    }

    /// Refuses what must not start: a non-loopback address without `allow_remote`, and
    /// `allow_remote` without an explicitly given token.
    pub fn check(&self) -> Result<(), McpError> {
        if !self.addr.ip().is_loopback() && !self.allow_remote {
            return Err(McpError::NotLoopback { addr: self.addr });
        }
        if self.allow_remote && self.token.is_none() {
            return Err(McpError::RemoteNeedsToken);
        }
        if !self.allow_remote && !self.allowed_hosts.is_empty() {
            return Err(McpError::HostsNeedRemote);
        }
        Ok(())
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

    #[test]
    fn loopback_is_allowed_and_other_addresses_need_allow_remote_and_a_token() {
        let token = BearerToken::parse("0123456789abcdef").unwrap();
        for addr in ["127.0.0.1:8080", "[::1]:8080", "127.0.0.2:1"] {
            assert!(HttpOptions::loopback(addr.parse().unwrap()).check().is_ok(), "{addr}");
        }
        let remote = HttpOptions::loopback("0.0.0.0:8080".parse().unwrap());
        assert_eq!(
            remote.check().unwrap_err().to_string(),
            "0.0.0.0:8080 is not a loopback address; refusing to serve MCP on it (pass --allow-remote to allow it)"
        );
        let no_token = HttpOptions { allow_remote: true, ..remote.clone() };
        let err = no_token.check().unwrap_err().to_string();
        assert!(err.starts_with("--allow-remote needs a token"), "{err}");
        let with_token = HttpOptions { token: Some(token.clone()), ..no_token };
        assert!(with_token.check().is_ok());
        let hosts = HttpOptions {
            allowed_hosts: vec!["box.lan".to_owned()],
            token: Some(token),
            ..HttpOptions::loopback("127.0.0.1:1".parse().unwrap())
        };
        assert!(hosts.check().unwrap_err().to_string().contains("--allow-host"));
    }
}
