//! Who may use the HTTP endpoint: the bearer token every request must carry, and the `Host`
//! and `Origin` values that name this server.
//!
//! A browser page can make a local server's address resolve to it (DNS rebinding) or post to
//! it from another origin; neither can read the token, and the `Host`/`Origin` checks refuse
//! such requests before the token is even looked at. An allowed `Host` names loopback
//! (`localhost`, `127.0.0.0/8`, `[::1]`) or, with `--allow-remote`, an IP literal or a name
//! given with `--allow-host`. A present `Origin` must be `http(s)://` such a host on the
//! server's own port.
//!
//! `staged ui` (crate `staged-ui`) serves its page behind the same rules: it uses
//! [`HostPolicy`] and [`BearerToken`] from here, so both servers refuse alike.

use std::{
    fmt,
    net::{IpAddr, Ipv6Addr},
};

use crate::McpError;

/// The bearer token clients must send as `Authorization: Bearer <token>`.
///
/// Its `Debug` form is redacted, so logs never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct BearerToken(String);

/// Tokens shorter than this are refused: they could be guessed.
pub(crate) const MIN_TOKEN_CHARS: usize = 16;

impl BearerToken {
    /// A token from user input (a token file's contents, an environment variable).
    /// Surrounding whitespace is ignored; the rest must be at least `MIN_TOKEN_CHARS` (16)
    /// visible ASCII characters, as an HTTP header value can carry them.
    pub fn parse(text: &str) -> Result<BearerToken, McpError> {
        let token = text.trim();
        if token.is_empty() {
            return Err(McpError::BadToken("it is empty".to_owned()));
        }
        if let Some(bad) = token.chars().find(|c| !c.is_ascii_graphic()) {
            return Err(McpError::BadToken(format!(
                "it contains {bad:?}; use visible ASCII characters only"
            )));
        }
        if token.len() < MIN_TOKEN_CHARS {
            return Err(McpError::BadToken(format!(
                "it has {} characters; use at least {MIN_TOKEN_CHARS}",
                token.len()
            )));
        }
        Ok(BearerToken(token.to_owned()))
    }

    /// A fresh token: 32 bytes from the operating system's random source, as 64 hex digits.
    pub fn generate() -> Result<BearerToken, McpError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|err| McpError::Random(err.to_string()))?;
        Ok(BearerToken(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// The token itself.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether an `Authorization` header value presents this token. The comparison takes
    /// the same time wherever the first difference is.
    pub(crate) fn accepts(&self, authorization: &[u8]) -> bool {
        let Some((scheme, presented)) = split_scheme(authorization) else { return false };
        scheme.eq_ignore_ascii_case(b"bearer") && self.matches(presented)
    }

    /// Whether `presented` is exactly this token (from a URL, a cookie or a header other than
    /// `Authorization`). The comparison takes the same time wherever the first difference is.
    pub fn matches(&self, presented: &[u8]) -> bool {
        let expected = self.0.as_bytes();
        if presented.len() != expected.len() {
            return false;
        }
        presented.iter().zip(expected).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(<redacted>)")
    }
}

/// `Bearer <token>` → (`Bearer`, `<token>`), tolerating extra spaces.
fn split_scheme(value: &[u8]) -> Option<(&[u8], &[u8])> {
    let value = value.trim_ascii();
    let space = value.iter().position(|b| *b == b' ')?;
    Some((&value[..space], value[space..].trim_ascii()))
}

/// Which `Host` and `Origin` values name this server.
#[derive(Debug, Clone)]
pub struct HostPolicy {
    /// The port the server listens on.
    pub(crate) port: u16,
    /// Whether non-loopback hosts (IP literals, `names`) are allowed.
    pub(crate) remote: bool,
    /// Extra host names allowed with `remote`, lowercase.
    pub(crate) names: Vec<String>,
}

/// The refusal of a `Host` that does not name the server.
pub(crate) const FOREIGN_HOST_TEXT: &str = "Forbidden: the Host header does not name this server";
/// The refusal of an `Origin` that is not the server's.
pub(crate) const FOREIGN_ORIGIN_TEXT: &str = "Forbidden: the Origin is not this server's";

impl HostPolicy {
    /// The policy of a server on loopback only, listening on `port`.
    pub fn loopback(port: u16) -> HostPolicy {
        HostPolicy { port, remote: false, names: Vec::new() }
    }

    /// The first two gates of every request, in order: the `Host` header must name this
    /// server, and an `Origin` header, when present, must be this server's origin. `Err`
    /// carries the refusal's text (a 403's body).
    pub fn check(&self, host: Option<&[u8]>, origin: Option<&[u8]>) -> Result<(), &'static str> {
        let host = host.and_then(|v| std::str::from_utf8(v).ok()).unwrap_or_default();
        if !self.allows_host(host) {
            return Err(FOREIGN_HOST_TEXT);
        }
        if let Some(origin) = origin {
            let allowed = std::str::from_utf8(origin).is_ok_and(|o| self.allows_origin(o));
            if !allowed {
                return Err(FOREIGN_ORIGIN_TEXT);
            }
        }
        Ok(())
    }

    /// Whether a `Host` header value names this server (any port: proxies may rewrite it).
    pub(crate) fn allows_host(&self, host: &str) -> bool {
        split_authority(host).is_some_and(|(name, _)| self.allows_name(&name))
    }

    /// Whether an `Origin` header value is this server's origin: `http` or `https`, an
    /// allowed host, and the server's port (explicit, or the scheme's default).
    pub(crate) fn allows_origin(&self, origin: &str) -> bool {
        let Some((scheme, authority)) = origin.split_once("://") else { return false };
        let default_port = match scheme.to_ascii_lowercase().as_str() {
            "http" => 80,
            "https" => 443,
            _ => return false,
        };
        if authority.contains(['/', '?', '#', '@']) {
            return false;
        }
        let Some((name, port)) = split_authority(authority) else { return false };
        port.unwrap_or(default_port) == self.port && self.allows_name(&name)
    }

    fn allows_name(&self, name: &str) -> bool {
        if is_loopback_name(name) {
            return true;
        }
        if !self.remote {
            return false;
        }
        name.parse::<IpAddr>().is_ok() || self.names.iter().any(|allowed| allowed == name)
    }
}

/// `host[:port]` or `[v6][:port]` → (lowercase host without brackets, port). `None` when
/// malformed.
fn split_authority(authority: &str) -> Option<(String, Option<u16>)> {
    let authority = authority.trim();
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (v6, after) = rest.split_once(']')?;
        v6.parse::<Ipv6Addr>().ok()?;
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':')?),
        };
        (v6, port)
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() || (host.contains(':') && !authority.starts_with('[')) {
        return None;
    }
    let port = match port {
        Some(port) => Some(port.parse::<u16>().ok()?),
        None => None,
    };
    Some((host.trim_end_matches('.').to_ascii_lowercase(), port))
}

fn is_loopback_name(name: &str) -> bool {
    name == "localhost" || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(port: u16) -> HostPolicy {
        HostPolicy { port, remote: false, names: Vec::new() }
    }

    #[test]
    fn tokens_must_be_long_visible_ascii() {
        assert_eq!(
            BearerToken::parse("  0123456789abcdef\n").unwrap().as_str(),
            "0123456789abcdef"
        );
        for (bad, why) in [
            ("", "it is empty"),
            ("short", "it has 5 characters; use at least 16"),
            ("0123456789 abcdef", "it contains ' '"),
            ("0123456789abcdéf", "it contains 'é'"),
        ] {
            let err = BearerToken::parse(bad).unwrap_err().to_string();
            assert!(err.starts_with(&format!("unusable MCP token: {why}")), "{bad:?}: {err}");
        }
    }

    #[test]
    fn generated_tokens_are_64_hex_digits_and_differ() {
        let a = BearerToken::generate().unwrap();
        let b = BearerToken::generate().unwrap();
        assert_eq!(a.as_str().len(), 64);
        assert!(a.as_str().chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert_eq!(format!("{a:?}"), "BearerToken(<redacted>)");
    }

    #[test]
    fn only_the_exact_bearer_token_is_accepted() {
        let token = BearerToken::parse("0123456789abcdef").unwrap();
        assert!(token.accepts(b"Bearer 0123456789abcdef"));
        assert!(token.accepts(b"bearer   0123456789abcdef "));
        for bad in [
            &b"Bearer 0123456789abcdeF"[..],
            b"Bearer 0123456789abcde",
            b"Bearer 0123456789abcdef0",
            b"Basic 0123456789abcdef",
            b"0123456789abcdef",
            b"Bearer",
            b"",
        ] {
            assert!(!token.accepts(bad), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn loopback_hosts_are_allowed_and_others_only_when_remote() {
        let policy = local(8765);
        for host in [
            "127.0.0.1:8765",
            "localhost:8765",
            "LOCALHOST",
            "[::1]:8765",
            "127.0.0.2",
            "localhost.",
        ] {
            assert!(policy.allows_host(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:8765",
            "10.0.0.1:8765",
            "",
            "[::1",
            "a:b:c",
            "127.0.0.1:99999",
        ] {
            assert!(!policy.allows_host(host), "{host}");
        }
        let remote = HostPolicy { port: 8765, remote: true, names: vec!["box.lan".to_owned()] };
        for host in ["10.0.0.1:8765", "[fe80::1]:8765", "box.lan:8765", "127.0.0.1"] {
            assert!(remote.allows_host(host), "{host}");
        }
        assert!(!remote.allows_host("evil.example:8765"));
    }

    #[test]
    fn an_origin_must_name_this_server_and_its_port() {
        let policy = local(8765);
        for origin in [
            "http://127.0.0.1:8765",
            "http://localhost:8765",
            "https://[::1]:8765",
            "HTTP://LocalHost:8765",
        ] {
            assert!(policy.allows_origin(origin), "{origin}");
        }
        for origin in [
            "http://evil.example",
            "http://evil.example:8765",
            "http://localhost:3000",
            "http://localhost",
            "null",
            "file://",
            "ws://localhost:8765",
            "http://localhost:8765/path",
            "http://user@localhost:8765",
        ] {
            assert!(!policy.allows_origin(origin), "{origin}");
        }
        assert!(local(80).allows_origin("http://localhost"));
        assert!(local(443).allows_origin("https://127.0.0.1"));
        let remote = HostPolicy { port: 8765, remote: true, names: vec!["box.lan".to_owned()] };
        assert!(remote.allows_origin("http://box.lan:8765"));
        assert!(remote.allows_origin("http://10.1.2.3:8765"));
        assert!(!remote.allows_origin("http://evil.example:8765"));
    }
}
