//! The errors of this crate's common path: [`Error`], which one `?` carries, and
//! [`OpenError`], why a workspace session could not be opened.

use staged_core::ErrorCause;
use staged_journal::JournalError;

/// Every error a host meets through this crate's common path, so that one `?` carries them:
/// opening the workspace, a tool call or `resolve`, the stack and the log, and the host's own
/// file reads. Each keeps the error underneath, and says what it says.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The workspace session could not be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// A tool call, `resolve` or an undo failed; the message is what a model would see.
    #[error(transparent)]
    Tool(#[from] staged_core::ToolError),
    /// The pending stack or the log could not be read or written.
    #[error(transparent)]
    Store(#[from] staged_core::StoreError),
    /// A file the host read or wrote itself.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a workspace session could not be opened. Each keeps the error underneath as its
/// source.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The root is not a usable directory.
    #[error("{message}")]
    ConfinedRoot {
        /// What the user sees.
        message: String,
        /// Why the root was refused.
        #[source]
        source: JournalError,
    },
    /// Recovering an interrupted apply failed; nothing else was touched.
    #[error("recovering an interrupted apply failed: {message}")]
    Recovery {
        /// What the user sees after the prefix.
        message: String,
        /// Why recovery failed.
        #[source]
        source: JournalError,
    },
    /// The pending stack could not be opened.
    #[error("{message}")]
    Store {
        /// What the user sees.
        message: String,
        /// The error underneath, when there is one.
        #[source]
        source: Option<ErrorCause>,
    },
}

impl OpenError {
    pub(crate) fn workspace(source: JournalError) -> Self {
        OpenError::ConfinedRoot { message: source.to_string(), source }
    }

    pub(crate) fn recovery(source: JournalError) -> Self {
        OpenError::Recovery { message: source.to_string(), source }
    }

    pub(crate) fn store(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        OpenError::Store { message: source.to_string(), source: Some(ErrorCause::new(source)) }
    }
}
