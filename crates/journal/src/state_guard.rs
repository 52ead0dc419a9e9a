//! What a model may name: paths inside the root, and never staged's own state folder.
//!
//! `.staged/` holds a running server's bearer token (`mcp-PORT.token`), the transcripts of
//! earlier runs and the database; a model that could read them would send them to its provider.
//! Every model-facing tool resolves the paths it is given with [`ConfinedRoot::resolve_for_model`]
//! (an existing path to read, list or search), or checks a [`RelPath`] it built itself
//! with [`ConfinedRoot::check_model_path`]. Both look at the path after
//! symlinks are resolved, so a symlink elsewhere in the tree that points into the state folder
//! is refused too; a tool that then opens the path should open it with
//! [`staged_fs::Root::open_file_strict`], so that no symlink swapped in meanwhile can lead back
//! into it.
//!
//! The one exception is reading a plan file (`.staged/plans/<name>`) that plan mode wrote
//! ([`ModelAccess::ReadPlan`]).

use staged_fs::RelPath;

use crate::{ConfinedRoot, JournalError, STATE_DIR_NAME};

/// The folder of plan mode's plan files inside the state folder.
const PLANS_DIR_NAME: &str = "plans";

/// What a tool does with a path it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelAccess {
    /// Reads, lists, searches or changes it: the whole state folder is refused.
    Any,
    /// Reads one file, which may be a plan file directly in `.staged/plans/`.
    ReadPlan,
}

/// Whether `rel` is the state folder or lies inside it (see [`ConfinedRoot::is_state_path`]).
pub(crate) fn in_state_folder(rel: &RelPath) -> bool {
    rel.components().next().is_some_and(|first| {
        first.to_str().is_some_and(|name| name.eq_ignore_ascii_case(STATE_DIR_NAME))
    })
}

impl ConfinedRoot {
    /// Whether `rel` is the state folder or lies inside it. The name is compared ignoring ASCII
    /// case, so that on a case-insensitive filesystem `.STAGED/` is refused as well.
    pub(crate) fn is_state_path(&self, rel: &RelPath) -> bool {
        in_state_folder(rel)
    }

    /// Refuses `rel` (which `given` named) when it is in the state folder, except a plan file
    /// for [`ModelAccess::ReadPlan`].
    ///
    /// # Errors
    /// [`JournalError::StatePath`].
    pub fn check_model_path(
        &self,
        rel: &RelPath,
        given: &str,
        access: ModelAccess,
    ) -> Result<(), JournalError> {
        if !self.is_state_path(rel) {
            return Ok(());
        }
        let parts: Vec<_> = rel.components().collect();
        let is_plan = access == ModelAccess::ReadPlan
            && parts.len() == 3
            && parts[0] == STATE_DIR_NAME
            && parts[1] == PLANS_DIR_NAME;
        if is_plan {
            return Ok(());
        }
        Err(JournalError::StatePath(given.to_owned()))
    }

    /// [`ConfinedRoot::resolve_existing`] for a path a model gave: `None` for the root, else the
    /// path relative to the root, which is never in the state folder.
    ///
    /// # Errors
    /// As [`ConfinedRoot::resolve_existing`], and [`JournalError::StatePath`].
    pub fn resolve_for_model(
        &self,
        given: &str,
        access: ModelAccess,
    ) -> Result<Option<RelPath>, JournalError> {
        let rel = self.resolve_existing(given)?;
        if let Some(rel) = &rel {
            self.check_model_path(rel, given, access)?;
        }
        Ok(rel)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_state_folder_is_refused_however_it_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".staged/plans")).unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join(".staged/mcp-1.token"), "secret").unwrap();
        std::fs::write(dir.path().join(".staged/plans/a-plan.md"), "plan").unwrap();
        std::fs::write(dir.path().join("src/a.ts"), "a").unwrap();
        std::os::unix::fs::symlink("../.staged", dir.path().join("src/state")).unwrap();
        let ws = ConfinedRoot::new(dir.path()).unwrap();
        for given in [
            ".staged",
            ".staged/mcp-1.token",
            "src/../.staged/mcp-1.token",
            "src/state/mcp-1.token",
            "src/state",
        ] {
            let err = ws.resolve_for_model(given, ModelAccess::Any).unwrap_err();
            assert!(matches!(err, JournalError::StatePath(_)), "{given}: {err}");
        }
        let abs = dir.path().join(".staged/mcp-1.token");
        assert!(ws.resolve_for_model(&abs.to_string_lossy(), ModelAccess::ReadPlan).is_err());
        assert!(ws.resolve_for_model(".staged/plans/a-plan.md", ModelAccess::Any).is_err());
        assert!(ws.resolve_for_model(".staged/plans/a-plan.md", ModelAccess::ReadPlan).is_ok());
        assert!(ws.resolve_for_model(".staged/plans", ModelAccess::ReadPlan).is_err());
        assert!(ws.resolve_for_model("src/a.ts", ModelAccess::Any).unwrap().is_some());
        assert!(ws.resolve_for_model(".", ModelAccess::Any).unwrap().is_none());
        assert!(ws.is_state_path(&RelPath::new(".STAGED/x").unwrap()));
        assert!(!ws.is_state_path(&RelPath::new("src/.staged/x").unwrap()));
    }
}
