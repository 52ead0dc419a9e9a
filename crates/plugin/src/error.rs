//! `PluginError`: why a plugin could not be configured, started or called. Its message is
//! what a person (a load error) or a model (`Apply failed: <message>`) reads.

/// Why a plugin failed.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// A `staged.toml` has a bad `[plugins]` table.
    #[error("{origin}: {message}")]
    Config {
        /// The file.
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// The program could not be started.
    #[error("cannot start plugin \"{plugin}\" (`{command}`): {source}")]
    Spawn {
        /// The plugin's name.
        plugin: String,
        /// Its command line.
        command: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The plugin process ended (crashed, or closed its output).
    #[error("plugin \"{plugin}\" exited ({status}) during {what}{stderr}{after}")]
    Exited {
        /// The plugin's name.
        plugin: String,
        /// Its exit status, or `still running` when only its output closed.
        status: String,
        /// What staged was waiting for, e.g. `` `_apply` ``.
        what: String,
        /// `: <its last line on stderr>`, or nothing.
        stderr: String,
        /// For a tool call: `; <what> may have run, in part or in full`.
        after: String,
    },
    /// The plugin did not answer in time; it was stopped, with every process it started.
    #[error("plugin \"{plugin}\" did not answer {what} within {ms} ms; it was stopped{after}")]
    Timeout {
        /// The plugin's name.
        plugin: String,
        /// What staged was waiting for.
        what: String,
        /// The timeout.
        ms: u128,
        /// For a tool call: `; <what> may have run, in part or in full`.
        after: String,
    },
    /// The plugin answered with a protocol error or an answer that is not a result, or broke
    /// the framing of its output (a message over 16 MiB, a line that is not JSON-RPC).
    #[error("plugin \"{plugin}\" answered {what} with an error: {message}{after}")]
    Protocol {
        /// The plugin's name.
        plugin: String,
        /// What staged asked.
        what: String,
        /// The error.
        message: String,
        /// For a tool call whose answer was broken: `; <what> may have run, in part or in
        /// full`; else nothing.
        after: String,
    },
    /// No plugin of that name is configured (or trusted) here.
    #[error(
        "plugin \"{plugin}\" is not configured here (a plugin declared in the workspace's staged.toml runs only after `staged trust`)"
    )]
    NotConfigured {
        /// The plugin's name.
        plugin: String,
    },
    /// The trust record could not be read or written.
    #[error("{0}")]
    Trust(String),
}
