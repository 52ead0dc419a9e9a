//! Provider configuration: the built-in providers, `[providers.NAME]` tables from `staged.toml`
//! (the user config directory's, then the workspace root's), and the command-line overrides.
//!
//! The library never reads the environment or looks for files itself: the caller passes the
//! TOML texts in, and the API key once it has read the variable the provider names.
//!
//! A workspace's `staged.toml` is committed with the repository, so the caller says whether
//! the user trusted it: an untrusted one may pick providers and models, but not set where
//! requests go or which key they carry (`base_url`, `headers`, `api_key_env`;
//! [`ProvidersConfig::apply_untrusted_toml`]).

use std::{collections::BTreeMap, time::Duration};

use serde::Deserialize;

use crate::ConfigError;

use staged_protocol::WireFormat;

/// The role a hidden reminder takes on the OpenAI wire formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReminderRole {
    /// `developer`, as OpenAI's models expect.
    Developer,
    /// `system`, for local servers whose chat templates know no `developer` role.
    System,
}

/// Everything needed to talk to one provider.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    /// The provider's name (`openai`, `anthropic`, or a configured one).
    pub name: String,
    /// The wire format.
    pub wire: WireFormat,
    /// The URL before `/responses`, `/chat/completions` or `/messages`.
    pub base_url: String,
    /// The environment variable holding the API key; `None` for keyless servers.
    pub api_key_env: Option<String>,
    /// The model; `None` until configured or given with `--model`.
    pub model: Option<String>,
    /// Extra HTTP headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// How many times a 429 or 5xx answer is retried.
    pub max_retries: u32,
    /// How long the stream may stay silent before the call is given up.
    pub stream_idle_timeout: Duration,
    /// Whether the model accepts a forced `tool_choice`; without it a forced choice is sent as
    /// `auto`.
    pub forced_tool_choice: bool,
    /// The role of reminder messages on the OpenAI wire formats.
    pub reminder_role: ReminderRole,
    /// `max_tokens` for Anthropic Messages.
    pub max_tokens: u32,
    /// Extra top-level request body fields (e.g. Anthropic `thinking`), merged into every
    /// request.
    pub body: serde_json::Map<String, serde_json::Value>,
}

impl ProviderConfig {
    /// The full URL of the wire format's endpoint.
    pub fn endpoint_url(&self) -> String {
        format!("{}{}", self.base_url.trim_end_matches('/'), self.wire.endpoint())
    }
}

/// The `[agent]` table: defaults for `staged agent`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentDefaults {
    /// The provider used without `--provider`.
    pub provider: Option<String>,
    /// The model used without `--model`.
    pub model: Option<String>,
    /// The turn limit used without `--max-turns`.
    pub max_turns: Option<u32>,
}

/// What the command line overrides.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderOverrides {
    /// `--provider`.
    pub provider: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
}

/// The providers known to a run: the built-in ones, updated by each `staged.toml` in turn.
#[derive(Debug, Clone)]
pub struct ProvidersConfig {
    agent: AgentDefaults,
    providers: BTreeMap<String, ProviderEntry>,
}

/// The provider used when nothing names one.
pub(crate) const DEFAULT_PROVIDER: &str = "openai";

const DEFAULT_MAX_RETRIES: u32 = 4;
const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
const DEFAULT_MAX_TOKENS: u32 = 16_384;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileToml {
    #[serde(default)]
    agent: Option<AgentToml>,
    #[serde(default)]
    providers: BTreeMap<String, ProviderEntry>,
    /// `[plugins.NAME]` tables, read by `staged-plugin`.
    #[serde(default, rename = "plugins")]
    _plugins: Option<toml::Table>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentToml {
    provider: Option<String>,
    model: Option<String>,
    max_turns: Option<u32>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderEntry {
    wire: Option<WireFormat>,
    base_url: Option<String>,
    api_key_env: Option<String>,
    model: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    max_retries: Option<u32>,
    stream_idle_timeout: Option<String>,
    forced_tool_choice: Option<bool>,
    reminder_role: Option<ReminderRole>,
    max_tokens: Option<u32>,
    #[serde(default)]
    body: serde_json::Map<String, serde_json::Value>,
}

impl ProviderEntry {
    fn builtin(wire: WireFormat, base_url: &str, key: Option<&str>, model: Option<&str>) -> Self {
        Self {
            wire: Some(wire),
            base_url: Some(base_url.to_owned()),
            api_key_env: key.map(str::to_owned),
            model: model.map(str::to_owned),
            ..Self::default()
        }
    }

    /// Field-wise update: what `later` sets wins; maps merge key by key.
    fn merge(&mut self, later: ProviderEntry) {
        macro_rules! take {
            ($($field:ident),*) => { $( if later.$field.is_some() { self.$field = later.$field; } )* };
        }
        take!(
            wire,
            base_url,
            api_key_env,
            model,
            max_retries,
            stream_idle_timeout,
            forced_tool_choice,
            reminder_role,
            max_tokens
        );
        self.headers.extend(later.headers);
        self.body.extend(later.body);
    }
}

impl Default for ProvidersConfig {
    fn default() -> Self {
        Self::builtin()
    }
}

impl ProvidersConfig {
    /// The built-in providers: `openai` (Responses, `OPENAI_API_KEY`), `openai-chat` (Chat
    /// Completions, `OPENAI_API_KEY`), `anthropic` (Messages, `ANTHROPIC_API_KEY`) and
    /// `ollama` (Chat Completions at `http://127.0.0.1:11434/v1`, no key).
    pub fn builtin() -> Self {
        let mut providers = BTreeMap::new();
        providers.insert(
            "openai".to_owned(),
            ProviderEntry::builtin(
                WireFormat::OpenaiResponses,
                "https://api.openai.com/v1",
                Some("OPENAI_API_KEY"),
                Some("gpt-5"),
            ),
        );
        providers.insert(
            "openai-chat".to_owned(),
            ProviderEntry::builtin(
                WireFormat::OpenaiChat,
                "https://api.openai.com/v1",
                Some("OPENAI_API_KEY"),
                Some("gpt-5"),
            ),
        );
        providers.insert(
            "anthropic".to_owned(),
            ProviderEntry::builtin(
                WireFormat::AnthropicMessages,
                "https://api.anthropic.com/v1",
                Some("ANTHROPIC_API_KEY"),
                Some("claude-sonnet-4-5"),
            ),
        );
        let mut ollama =
            ProviderEntry::builtin(WireFormat::OpenaiChat, "http://127.0.0.1:11434/v1", None, None);
        ollama.reminder_role = Some(ReminderRole::System);
        providers.insert("ollama".to_owned(), ollama);
        Self { agent: AgentDefaults::default(), providers }
    }

    /// Applies one `staged.toml` on top of what is known; `origin` names it in errors.
    ///
    /// ```
    /// use staged_agent::{ProviderOverrides, ProvidersConfig};
    /// use staged_protocol::WireFormat;
    /// let mut config = ProvidersConfig::builtin();
    /// config.apply_toml("staged.toml", r#"
    ///     [providers.local]
    ///     wire = "openai-chat"
    ///     base_url = "http://127.0.0.1:8000/v1"
    ///     model = "qwen3"
    /// "#).unwrap();
    /// let overrides = ProviderOverrides { provider: Some("local".into()), ..Default::default() };
    /// let local = config.resolve(&overrides).unwrap();
    /// assert_eq!(local.wire, WireFormat::OpenaiChat);
    /// assert_eq!(local.endpoint_url(), "http://127.0.0.1:8000/v1/chat/completions");
    /// ```
    pub fn apply_toml(&mut self, origin: &str, text: &str) -> Result<(), ConfigError> {
        self.apply_file(parse_file(origin, text)?);
        Ok(())
    }

    /// [`ProvidersConfig::apply_toml`] for a file the user has not trusted (a workspace's
    /// `staged.toml` that `staged trust` did not record): a provider table that sets
    /// `base_url`, `headers` or `api_key_env` is refused, and nothing of the file applies.
    ///
    /// ```
    /// use staged_agent::ProvidersConfig;
    /// let mut config = ProvidersConfig::builtin();
    /// config.apply_untrusted_toml("staged.toml", "[providers.openai]\nmodel = \"gpt-5-mini\"").unwrap();
    /// let err = config
    ///     .apply_untrusted_toml("staged.toml", "[providers.openai]\nbase_url = \"https://evil.example\"")
    ///     .unwrap_err();
    /// assert!(err.to_string().starts_with("staged.toml sets `base_url` for provider `openai`"));
    /// ```
    pub fn apply_untrusted_toml(&mut self, origin: &str, text: &str) -> Result<(), ConfigError> {
        let file = parse_file(origin, text)?;
        for (name, entry) in &file.providers {
            let field = if entry.base_url.is_some() {
                Some("base_url")
            } else if !entry.headers.is_empty() {
                Some("headers")
            } else if entry.api_key_env.is_some() {
                Some("api_key_env")
            } else {
                None
            };
            if let Some(field) = field {
                return Err(ConfigError::Untrusted {
                    origin: origin.to_owned(),
                    provider: name.clone(),
                    field: field.to_owned(),
                });
            }
        }
        self.apply_file(file);
        Ok(())
    }

    fn apply_file(&mut self, file: FileToml) {
        if let Some(agent) = file.agent {
            if agent.provider.is_some() {
                self.agent.provider = agent.provider;
            }
            if agent.model.is_some() {
                self.agent.model = agent.model;
            }
            if agent.max_turns.is_some() {
                self.agent.max_turns = agent.max_turns;
            }
        }
        for (name, entry) in file.providers {
            self.providers.entry(name).or_default().merge(entry);
        }
    }

    /// The `[agent]` defaults.
    pub fn agent_defaults(&self) -> &AgentDefaults {
        &self.agent
    }

    /// The names of the known providers, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.providers.keys().map(String::as_str).collect()
    }

    /// The provider a run uses: `--provider`, else `[agent] provider`, else `openai`; with
    /// `--model` and `--base-url` applied over its table.
    pub fn resolve(&self, overrides: &ProviderOverrides) -> Result<ProviderConfig, ConfigError> {
        let name = overrides
            .provider
            .clone()
            .or_else(|| self.agent.provider.clone())
            .unwrap_or_else(|| DEFAULT_PROVIDER.to_owned());
        let entry = self.providers.get(&name).ok_or_else(|| ConfigError::UnknownProvider {
            name: name.clone(),
            known: self.names().join(", "),
        })?;
        let invalid = |message: String| ConfigError::Invalid { name: name.clone(), message };
        let wire = entry.wire.ok_or_else(|| {
            invalid(
                "`wire` is required: \"openai-responses\", \"openai-chat\" or \"anthropic-messages\""
                    .to_owned(),
            )
        })?;
        let base_url = overrides
            .base_url
            .clone()
            .or_else(|| entry.base_url.clone())
            .ok_or_else(|| invalid("`base_url` is required".to_owned()))?;
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(invalid(format!(
                "base URL `{base_url}` must start with http:// or https://"
            )));
        }
        let stream_idle_timeout = match &entry.stream_idle_timeout {
            Some(text) => humantime::parse_duration(text).map_err(|err| {
                invalid(format!(
                    "stream_idle_timeout `{text}` is not a duration like \"90s\": {err}"
                ))
            })?,
            None => DEFAULT_IDLE_TIMEOUT,
        };
        if stream_idle_timeout.is_zero() {
            return Err(invalid("stream_idle_timeout must be longer than zero".to_owned()));
        }
        let model = overrides
            .model
            .clone()
            .or_else(|| entry.model.clone())
            .or_else(|| self.agent.model.clone());
        Ok(ProviderConfig {
            name: name.clone(),
            wire,
            base_url,
            api_key_env: entry.api_key_env.clone().filter(|v| !v.is_empty()),
            model,
            headers: entry.headers.clone(),
            max_retries: entry.max_retries.unwrap_or(DEFAULT_MAX_RETRIES),
            stream_idle_timeout,
            forced_tool_choice: entry.forced_tool_choice.unwrap_or(true),
            reminder_role: entry.reminder_role.unwrap_or(ReminderRole::Developer),
            max_tokens: entry.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            body: entry.body.clone(),
        })
    }
}

fn parse_file(origin: &str, text: &str) -> Result<FileToml, ConfigError> {
    toml::from_str(text)
        .map_err(|err| ConfigError::Parse { origin: origin.to_owned(), message: err.to_string() })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn resolve(
        files: &[&str],
        overrides: ProviderOverrides,
    ) -> Result<ProviderConfig, ConfigError> {
        let mut config = ProvidersConfig::builtin();
        for (idx, text) in files.iter().enumerate() {
            config.apply_toml(&format!("file{idx}"), text)?;
        }
        config.resolve(&overrides)
    }

    #[test]
    fn builtin_providers_have_the_documented_wire_formats_urls_and_keys() {
        let cases = [
            (
                "openai",
                WireFormat::OpenaiResponses,
                "https://api.openai.com/v1/responses",
                Some("OPENAI_API_KEY"),
            ),
            (
                "openai-chat",
                WireFormat::OpenaiChat,
                "https://api.openai.com/v1/chat/completions",
                Some("OPENAI_API_KEY"),
            ),
            (
                "anthropic",
                WireFormat::AnthropicMessages,
                "https://api.anthropic.com/v1/messages",
                Some("ANTHROPIC_API_KEY"),
            ),
            ("ollama", WireFormat::OpenaiChat, "http://127.0.0.1:11434/v1/chat/completions", None),
        ];
        for (name, wire, url, key) in cases {
            let overrides = ProviderOverrides { provider: Some(name.into()), ..Default::default() };
            let config = resolve(&[], overrides).unwrap();
            assert_eq!(
                (config.wire, config.endpoint_url().as_str(), config.api_key_env.as_deref()),
                (wire, url, key),
                "{name}"
            );
        }
    }

    #[test]
    fn later_files_override_earlier_ones_and_flags_override_both() {
        let user = r#"
            [agent]
            provider = "anthropic"
            [providers.anthropic]
            model = "claude-a"
            max_retries = 1
            headers = { "x-one" = "1" }
        "#;
        let root = r#"
            [providers.anthropic]
            model = "claude-b"
            stream_idle_timeout = "2s"
            headers = { "x-two" = "2" }
            body = { thinking = { type = "enabled", budget_tokens = 2048 } }
        "#;
        let config = resolve(&[user, root], ProviderOverrides::default()).unwrap();
        assert_eq!(config.name, "anthropic");
        assert_eq!(config.model.as_deref(), Some("claude-b"));
        assert_eq!(config.max_retries, 1);
        assert_eq!(config.stream_idle_timeout, Duration::from_secs(2));
        assert_eq!(config.headers.len(), 2);
        assert_eq!(config.body["thinking"]["budget_tokens"], 2048);
        let flags = ProviderOverrides {
            provider: None,
            model: Some("claude-c".into()),
            base_url: Some("http://127.0.0.1:9/v1".into()),
        };
        let config = resolve(&[user, root], flags).unwrap();
        assert_eq!(config.model.as_deref(), Some("claude-c"));
        assert_eq!(config.endpoint_url(), "http://127.0.0.1:9/v1/messages");
    }

    #[test]
    fn the_guide_example_is_a_valid_configuration() {
        let guide = include_str!("../../../docs/guide/agent.md");
        let section = &guide[guide.find("## Configuration: `staged.toml`").unwrap()..];
        let start = section.find("```toml\n").unwrap() + "```toml\n".len();
        let example = &section[start..start + section[start..].find("```").unwrap()];
        let mut config = ProvidersConfig::builtin();
        config.apply_toml("docs/guide/agent.md", example).unwrap();
        let anthropic = config.resolve(&ProviderOverrides::default()).unwrap();
        assert_eq!(anthropic.name, "anthropic");
        assert_eq!(anthropic.stream_idle_timeout, Duration::from_secs(120));
        assert_eq!(config.agent_defaults().max_turns, Some(40));
        let vllm = ProviderOverrides { provider: Some("vllm".into()), ..Default::default() };
        let vllm = config.resolve(&vllm).unwrap();
        assert_eq!(
            (vllm.wire, vllm.forced_tool_choice, vllm.reminder_role),
            (WireFormat::OpenaiChat, false, ReminderRole::System)
        );
        assert_eq!(vllm.api_key_env.as_deref(), Some("VLLM_API_KEY"));
    }

    #[test]
    fn bad_configuration_names_the_problem() {
        let unknown = ProviderOverrides { provider: Some("nope".into()), ..Default::default() };
        assert_eq!(
            resolve(&[], unknown).unwrap_err().to_string(),
            "unknown provider `nope`; known providers: anthropic, ollama, openai, openai-chat"
        );
        let no_wire = ProviderOverrides { provider: Some("mine".into()), ..Default::default() };
        let err = resolve(&["[providers.mine]\nbase_url = \"http://x\""], no_wire).unwrap_err();
        assert!(err.to_string().starts_with("provider `mine`: `wire` is required"), "{err}");
        let err = resolve(
            &["[providers.openai]\nstream_idle_timeout = \"soon\""],
            ProviderOverrides::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("stream_idle_timeout `soon`"), "{err}");
        let err = resolve(&["[providers.openai]\nwire = \"grpc\""], ProviderOverrides::default())
            .unwrap_err();
        assert!(err.to_string().starts_with("file0: "), "{err}");
        let err = resolve(&["[provider.openai]"], ProviderOverrides::default()).unwrap_err();
        assert!(err.to_string().contains("unknown field `provider`"), "{err}");
    }
}
