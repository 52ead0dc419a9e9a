//! [`EditErrorDetails`]: the details of an `edit` error a front end phrases in its own terms.

use serde::{Deserialize, Serialize};

/// The details of the `edit` errors a front end rephrases (the CLI names `--old` and `--all`,
/// not `old_string` and `replace_all`): `{"error": "editNotFound" | "editAmbiguous" |
/// "editNoChange", "path", ...}`.
///
/// # Example
/// ```
/// use staged_protocol::EditErrorDetails;
/// let details = EditErrorDetails::NotFound { path: "a.rs".to_owned() };
/// let value = serde_json::to_value(&details).unwrap();
/// assert_eq!(value, serde_json::json!({"error": "editNotFound", "path": "a.rs"}));
/// assert_eq!(serde_json::from_value::<EditErrorDetails>(value).unwrap(), details);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "error")]
pub enum EditErrorDetails {
    /// `old_string` is not in the file.
    #[serde(rename = "editNotFound")]
    NotFound {
        /// The file.
        path: String,
    },
    /// `old_string` occurs more than once and `replace_all` is not set.
    #[serde(rename = "editAmbiguous")]
    Ambiguous {
        /// The file.
        path: String,
        /// How many matches.
        count: usize,
        /// The first lines where they start, `3, 17, 40` (and `and N more`).
        lines: String,
    },
    /// `old_string` equals `new_string`.
    #[serde(rename = "editNoChange")]
    NoChange {
        /// The file.
        path: String,
    },
}
