//! Errors of the agent runtime: a model call that failed, a configuration that cannot work,
//! and a run that could not go on.

use std::time::Duration;

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// The provider could not be reached at all (connection refused, DNS, TLS).
    #[error("cannot reach {provider} at {url}: {message}")]
    Unreachable {
        /// The provider's name.
        provider: String,
        /// The URL tried.
        url: String,
        /// What failed.
        message: String,
    },
    /// HTTP 400: the provider rejected the request as malformed or unsupported.
    #[error("{provider} rejected the request (HTTP 400): {body}")]
    BadRequest {
        /// The provider's name.
        provider: String,
        /// The response body.
        body: String,
    },
    /// HTTP 401 or 403: the API key is missing, wrong or not allowed.
    #[error("{provider} refused the credentials (HTTP {status}): {body}")]
    Auth {
        /// The provider's name.
        provider: String,
        /// The status code.
        status: u16,
        /// The response body.
        body: String,
    },
    /// Any other unsuccessful status, after the retries were used up when it was retryable.
    #[error("{provider} answered HTTP {status} (after {attempts} attempts): {body}")]
    Status {
        /// The provider's name.
        provider: String,
        /// The status code.
        status: u16,
        /// How many requests were sent.
        attempts: u32,
        /// The response body.
        body: String,
    },
    /// The stream went quiet for longer than the provider's `stream_idle_timeout`.
    #[error("{provider} sent nothing for {} while streaming; gave up (stream_idle_timeout)", humantime::format_duration(*.idle))]
    IdleTimeout {
        /// The provider's name.
        provider: String,
        /// The configured idle timeout.
        idle: Duration,
    },
    /// The connection failed while the reply was streaming.
    #[error("{provider}'s stream failed: {message}")]
    Stream {
        /// The provider's name.
        provider: String,
        /// What failed.
        message: String,
    },
    /// The stream was not what the wire format promises.
    #[error("{provider} sent a malformed stream: {message}")]
    Protocol {
        /// The provider's name.
        provider: String,
        /// What was wrong.
        message: String,
    },
    /// The provider reported an error inside the stream.
    #[error("{provider} reported an error: {message}")]
    Provider {
        /// The provider's name.
        provider: String,
        /// Its message.
        message: String,
    },
    /// The caller cancelled the request.
    #[error("cancelled")]
    Cancelled,
}

impl ModelError {
    /// Whether sending the same request again may succeed. The HTTP layer retries these
    /// before the stream starts.
    pub(crate) fn is_retryable(&self) -> bool {
        match self {
            ModelError::Status { status, .. } => *status == 429 || *status >= 500,
            ModelError::Unreachable { .. }
            | ModelError::BadRequest { .. }
            | ModelError::Auth { .. }
            | ModelError::IdleTimeout { .. }
            | ModelError::Stream { .. }
            | ModelError::Protocol { .. }
            | ModelError::Provider { .. }
            | ModelError::Cancelled => false,
        }
    }

    /// Whether this is HTTP 400, the answer of a provider that rejects a forced `tool_choice`.
    pub(crate) fn is_bad_request(&self) -> bool {
        matches!(self, ModelError::BadRequest { .. })
    }
}

/// Why a provider configuration cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A `staged.toml` could not be parsed.
    #[error("{origin}: {message}")]
    Parse {
        /// Where the text came from.
        origin: String,
        /// The parser's message.
        message: String,
    },
    /// An untrusted workspace's `staged.toml` sets a provider's endpoint, headers or key
    /// variable, which could send the user's API key elsewhere.
    #[error(
        "{origin} sets `{field}` for provider `{provider}`, but this workspace's staged.toml is not trusted; read it, then run `staged trust` to allow it"
    )]
    Untrusted {
        /// The file.
        origin: String,
        /// The provider's table.
        provider: String,
        /// The refused setting (`base_url`, `headers` or `api_key_env`).
        field: String,
    },
    /// No provider of that name is built in or configured.
    #[error("unknown provider `{name}`; known providers: {known}")]
    UnknownProvider {
        /// The name asked for.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A configured provider lacks something it needs.
    #[error("provider `{name}`: {message}")]
    Invalid {
        /// The provider's name.
        name: String,
        /// What is missing or wrong.
        message: String,
    },
    /// The provider needs an API key and its environment variable is not set.
    #[error("{variable} is not set: provider `{provider}` needs an API key")]
    MissingApiKey {
        /// The provider's name.
        provider: String,
        /// The environment variable.
        variable: String,
    },
}
