//! [`recover`]: every journal left by an interrupted commit, checked before anything is touched
//! (**Distrust** in the journal's module doc), then rolled back (before its commit point) or
//! forward (after it), its hooks told.

use std::{collections::HashSet, ffi::OsString, io};

use staged_fs::{DirHandle, FileIdentity, RelPath};

use crate::{
    ConfinedRoot, JournalError,
    journal::{
        RecoveryReport,
        folders::{
            FolderRef, OpenFolders, emptied_or_below, make_late_dir, place_late, remove_emptied,
            remove_empty_dirs, sorted,
        },
        format::{
            EntryKind, JOURNAL_VERSION, Journal, JournalEntry, JournalState,
            OLDEST_JOURNAL_VERSION, TempIdentity, delete_freed_in, is_journal_id, journal_name,
            read_journal, remove_journal, temp_name,
        },
        journal_err,
        lock::CommitLock,
        write_err,
    },
};

/// What recovery tells the pending stack and the resolve log about each journal it settles.
pub trait RecoveryHooks {
    /// A committed journal `journal` (its id) was rolled forward; `origin` is what its commit
    /// recorded ([`crate::CommitOptions::origin`]). Called before the journal is deleted;
    /// returns whether the preview left the stack and the record is final. If not, the journal
    /// stays for a later recovery.
    fn finished(&mut self, journal: &str, origin: Option<&str>) -> bool;

    /// A journal that had not reached its commit point was rolled back (its temps are gone;
    /// no target was touched). Called before the journal is deleted; returns whether what was
    /// prepared under its id is forgotten. If not, the journal stays and a later recovery
    /// rolls it back again.
    fn rolled_back(&mut self, journal: &str, origin: Option<&str>) -> bool;
}

/// How [`recover`] runs, beyond the workspace.
#[derive(Default)]
pub struct RecoverOptions<'a> {
    /// Told about each journal recovery finishes or rolls back, by the journal's id, before
    /// it is deleted; without hooks every journal is deleted once settled.
    pub hooks: Option<&'a mut dyn RecoveryHooks>,
}

impl std::fmt::Debug for RecoverOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecoverOptions").field("hooks", &self.hooks.is_some()).finish()
    }
}

/// Finishes or rolls back every interrupted commit in the workspace's journal folder. Call it
/// on start, before anything else touches the workspace.
///
/// # Errors
/// [`JournalError::StateDir`] when `.staged` or its journal folder is a symlink or not a
/// directory; [`JournalError::Journal`] when replaying a valid journal fails (it is then left
/// in place for a later attempt).
pub fn recover(
    workspace: &ConfinedRoot,
    options: RecoverOptions<'_>,
) -> Result<RecoveryReport, JournalError> {
    struct Forget;
    impl RecoveryHooks for Forget {
        fn finished(&mut self, _journal: &str, _origin: Option<&str>) -> bool {
            true
        }
        fn rolled_back(&mut self, _journal: &str, _origin: Option<&str>) -> bool {
            true
        }
    }
    let mut forget = Forget;
    let hooks: &mut dyn RecoveryHooks = match options.hooks {
        Some(hooks) => hooks,
        None => &mut forget,
    };
    let mut report = RecoveryReport::default();
    let Some(dir) = workspace.journal(false)? else { return Ok(report) };
    let names = dir.names().map_err(|err| journal_err(workspace, &err))?;
    // What a commit that frees later left behind, killed before its cleaner ran (see
    // `free_later`): links to bytes nothing uses.
    delete_freed_in(&dir, &names);
    let mut ids: Vec<String> = names
        .iter()
        .filter_map(|name| name.to_str())
        .filter_map(|name| name.strip_suffix(".json.tmp").or_else(|| name.strip_suffix(".json")))
        .filter(|id| is_journal_id(id))
        .map(str::to_owned)
        .collect();
    ids.sort();
    ids.dedup();
    if ids.is_empty() {
        return Ok(report);
    }
    let Some(_lock) = CommitLock::try_exclusive(&dir, workspace)? else {
        // A commit is live somewhere; its journal (and any other) waits for a quiet moment.
        report.in_progress = ids.len();
        return Ok(report);
    };
    for id in ids {
        let _ = dir.remove_file(format!("{id}.json.tmp"));
        let name = journal_name(&id);
        let journal = match read_journal(&dir, &name) {
            Ok(Some(journal)) => journal,
            Ok(None) => continue,
            Err(why) => {
                report.refused.push(refusal(workspace, &id, &why));
                continue;
            }
        };
        let checked = match validate(workspace, &journal, &id) {
            Ok(checked) => checked,
            Err(why) => {
                report.refused.push(refusal(workspace, &id, &why));
                continue;
            }
        };
        match journal.state {
            JournalState::Preparing => {
                let mut open = OpenFolders::new(workspace);
                for entry in &checked.entries {
                    if let (true, Some(dir)) = (entry.temp_exists, &entry.dir) {
                        open.get(dir)
                            .and_then(|dir| dir.remove_file(&entry.temp))
                            .map_err(|err| journal_err(workspace, &err))?;
                    }
                }
                remove_empty_dirs(workspace, &checked.dirs);
                report.rolled_back += 1;
                if hooks.rolled_back(&id, journal.origin.as_deref()) {
                    remove_journal(&dir, &name).map_err(|err| journal_err(workspace, &err))?;
                }
            }
            JournalState::Committed => {
                roll_forward(workspace, &checked, &mut report)?;
                remove_empty_dirs(workspace, &checked.prune);
                report.rolled_forward += 1;
                let retired = hooks.finished(&id, journal.origin.as_deref());
                report.finished_origins.extend(journal.origin.clone());
                if retired {
                    remove_journal(&dir, &name).map_err(|err| journal_err(workspace, &err))?;
                }
            }
        }
    }
    Ok(report)
}

/// Puts the temps of a committed journal in place and deletes what it deletes, in the order
/// a commit does.
pub(super) fn roll_forward(
    workspace: &ConfinedRoot,
    checked: &Checked,
    report: &mut RecoveryReport,
) -> Result<(), JournalError> {
    let entries = &checked.entries;
    let mut open = OpenFolders::new(workspace);
    for kind in [EntryKind::Create, EntryKind::Replace, EntryKind::Delete] {
        for entry in entries.iter().filter(|e| e.kind == kind) {
            let Some(dir) = &entry.dir else { continue };
            let dir = open.get(dir).map_err(|err| write_err(workspace, &entry.rel, err))?;
            match kind {
                EntryKind::Create if entry.late => {}
                EntryKind::Create if entry.temp_exists => dir
                    .rename_noreplace(&entry.temp, &entry.name)
                    .map_err(|err| write_err(workspace, &entry.rel, err))?,
                EntryKind::Replace if entry.temp_exists => dir
                    .rename(&entry.temp, &entry.name)
                    .map_err(|err| write_err(workspace, &entry.rel, err))?,
                EntryKind::Delete => {
                    let meta = dir
                        .entry_metadata(&entry.name)
                        .map_err(|err| write_err(workspace, &entry.rel, err))?;
                    if meta.as_ref().is_some_and(|meta| meta.is_dir())
                        && checked.late_dirs.contains(&entry.rel)
                    {
                        // Deleted, and a folder made in its place already.
                        continue;
                    }
                    let found = meta.map(|meta| TempIdentity::from(FileIdentity::of_cap(&meta)));
                    match found {
                        Some(found) if Some(found) == entry.victim => dir
                            .remove_file(&entry.name)
                            .map_err(|err| write_err(workspace, &entry.rel, err))?,
                        Some(_) => report.kept.push(format!(
                            "{} changed after an interrupted apply checked it; it was kept, not deleted",
                            entry.rel.display()
                        )),
                        None => {}
                    }
                }
                EntryKind::Create | EntryKind::Replace => {}
            }
        }
    }
    for dir in checked.emptied.iter().rev() {
        remove_emptied(workspace, dir)?;
    }
    for dir in &checked.late_dirs {
        make_late_dir(workspace, dir)?;
    }
    for entry in entries.iter().filter(|e| e.late && e.temp_exists) {
        let Some(dir) = &entry.dir else { continue };
        let stage = open.get(dir).map_err(|err| write_err(workspace, &entry.rel, err))?;
        place_late(workspace, stage, &entry.temp, &entry.rel)
            .map_err(|err| write_err(workspace, &entry.rel, err))?;
    }
    let mut synced = HashSet::new();
    for entry in entries {
        if let Some(dir) = &entry.dir
            && !emptied_or_below(&dir.rel, &checked.emptied)
            && synced.insert(dir)
        {
            open.get(dir).and_then(DirHandle::sync).map_err(|err| journal_err(workspace, &err))?;
        }
    }
    Ok(())
}

/// A journal entry recovery may act on.
pub(super) struct CheckedEntry {
    pub(super) rel: RelPath,
    pub(super) kind: EntryKind,
    /// The folder of the temp file: the target's, or a late create's stage, `up` folders
    /// above; `None` when it does not exist (a commit that never created it).
    pub(super) dir: Option<FolderRef>,
    pub(super) late: bool,
    pub(super) name: OsString,
    pub(super) temp: OsString,
    pub(super) temp_exists: bool,
    pub(super) victim: Option<TempIdentity>,
}

/// A journal's entries and folders, checked.
pub(super) struct Checked {
    pub(super) entries: Vec<CheckedEntry>,
    pub(super) dirs: Vec<RelPath>,
    pub(super) prune: Vec<RelPath>,
    pub(super) emptied: Vec<RelPath>,
    pub(super) late_dirs: Vec<RelPath>,
}

/// Checks everything a journal names before anything is touched.
pub(super) fn validate(
    workspace: &ConfinedRoot,
    journal: &Journal,
    id: &str,
) -> Result<Checked, String> {
    if !(OLDEST_JOURNAL_VERSION..=JOURNAL_VERSION).contains(&journal.version) {
        return Err(format!(
            "journal format {} is not one this staged reads ({OLDEST_JOURNAL_VERSION} to {JOURNAL_VERSION})",
            journal.version
        ));
    }
    let folders = |list: &[String]| -> Result<Vec<RelPath>, String> {
        let mut res = Vec::with_capacity(list.len());
        for dir in list {
            res.push(RelPath::new(dir).map_err(|err| err.to_string())?);
        }
        Ok(sorted(&res))
    };
    let emptied = folders(&journal.emptied)?;
    let late_dirs = folders(&journal.late_dirs)?;
    let under_emptied = |rel: &RelPath| {
        let mut cursor = rel.parent();
        while let Some(dir) = cursor {
            if emptied.contains(&dir) {
                return true;
            }
            cursor = dir.parent();
        }
        false
    };
    let mut seen = HashSet::new();
    let mut entries = Vec::with_capacity(journal.entries.len());
    for (i, entry) in journal.entries.iter().enumerate() {
        let rel = RelPath::new(&entry.target).map_err(|err| err.to_string())?;
        if !seen.insert(rel.clone()) {
            return Err(format!("`{}` is listed twice", entry.target));
        }
        let below_emptied = under_emptied(&rel);
        entries.push(check_entry(
            workspace,
            journal.state,
            id,
            i,
            entry,
            rel,
            &late_dirs,
            below_emptied,
        )?);
    }
    Ok(Checked {
        entries,
        dirs: folders(&journal.dirs)?,
        prune: folders(&journal.prune)?,
        emptied,
        late_dirs,
    })
}

/// Checks one entry of a journal (the `i`-th, at `rel`) before anything is touched: what it
/// names is a regular file or nothing, its temp file is the file staged wrote, and its folder
/// opens without following a symlink (`below_emptied`: it is under a folder the deletes
/// empty, which may be gone).
#[allow(clippy::too_many_arguments, reason = "the entry's facts, each checked once")]
fn check_entry(
    workspace: &ConfinedRoot,
    state: JournalState,
    id: &str,
    i: usize,
    entry: &JournalEntry,
    rel: RelPath,
    late_dirs: &[RelPath],
    below_emptied: bool,
) -> Result<CheckedEntry, String> {
    if entry.kind == EntryKind::Delete && entry.victim.is_none() {
        return Err(format!("`{}` is to be deleted, but no file is named", entry.target));
    }
    if (entry.late || entry.up > 0) && entry.kind != EntryKind::Create {
        return Err(format!("`{}` waits for the deletes, but is not created", entry.target));
    }
    let Some(stage) = ancestor(&rel, entry.up) else {
        return Err(format!("the temp file of `{}` is said to be above the root", entry.target));
    };
    let dir = match workspace.fs().dir(stage.as_ref()) {
        Ok(dir) => Some(dir),
        // A folder a create needed and never got, or one a delete emptied and an undo
        // removed (or one a file took the place of): nothing of this entry is on disk,
        // so nothing is left to do for it.
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) if err.kind() == io::ErrorKind::NotADirectory && below_emptied => None,
        Err(err) => {
            return Err(format!(
                "the folder of `{}` cannot be opened without following a symlink: {err}",
                entry.target
            ));
        }
    };
    let name = rel.file_name().to_owned();
    let temp = temp_name(&name, id, i);
    let Some(dir) = dir else {
        return Ok(CheckedEntry {
            rel,
            kind: entry.kind,
            dir: None,
            late: entry.late,
            name,
            temp,
            temp_exists: false,
            victim: entry.victim,
        });
    };
    // A late create's target is not read: its folder may not be made yet, or it may still
    // be the folder the deletes empty.
    let target_meta =
        if entry.late { None } else { dir.entry_metadata(&name).map_err(|err| err.to_string())? };
    if let Some(meta) = &target_meta
        && !meta.is_file()
        && !(meta.is_dir() && entry.kind == EntryKind::Delete && late_dirs.contains(&rel))
    {
        return Err(format!("`{}` is not a regular file", entry.target));
    }
    let temp_exists = match dir.entry_metadata(&temp).map_err(|err| err.to_string())? {
        Some(meta) if meta.is_file() => true,
        Some(_) => {
            return Err(format!("the temp file of `{}` is not a regular file", entry.target));
        }
        None => false,
    };
    if entry.kind == EntryKind::Delete && temp_exists {
        return Err(format!("`{}` is to be deleted, but has a temp file", entry.target));
    }
    if state == JournalState::Committed && temp_exists {
        let found = dir.identity(&temp).map_err(|err| err.to_string())?.map(TempIdentity::from);
        if entry.temp.is_none() || found != entry.temp {
            return Err(format!(
                "the temp file of `{}` is not the file staged wrote",
                entry.target
            ));
        }
        if entry.kind == EntryKind::Create && target_meta.is_some() {
            return Err(format!(
                "`{}` was to be created, but another file is there now",
                entry.target
            ));
        }
    }
    let dir = FolderRef::of(stage, dir, None).map_err(|err| err.to_string())?;
    Ok(CheckedEntry {
        rel,
        kind: entry.kind,
        dir: Some(dir),
        late: entry.late,
        name,
        temp,
        temp_exists,
        victim: entry.victim,
    })
}

/// The folder `up` folders above `rel`'s (`Some(None)`: the root); `None` above the root.
pub(super) fn ancestor(rel: &RelPath, up: u32) -> Option<Option<RelPath>> {
    let mut cursor = rel.parent();
    for _ in 0..up {
        cursor = cursor?.parent();
    }
    Some(cursor)
}

pub(super) fn refusal(workspace: &ConfinedRoot, id: &str, why: &str) -> String {
    format!(
        "refused the journal {}: {why}. Nothing it names was changed; check those files, then delete the journal.",
        workspace.journal_dir().join(journal_name(id)).display()
    )
}

/// Whether the workspace's journal folder holds a journal (`<id>.json`, or one being written):
/// a commit interrupted (or running now) that [`recover`] would settle. A cheap look (one
/// listing of `.staged/journal`, nothing read), for a front end that skips opening the
/// workspace when there is nothing to recover, such as the shell wrapper before it runs a
/// command. Anything it cannot tell (the folder cannot be listed) counts as a journal, so the
/// caller recovers, and [`recover`] says why it cannot.
pub fn needs_recovery(workspace: &ConfinedRoot) -> bool {
    let dir = match workspace.journal(false) {
        Ok(Some(dir)) => dir,
        Ok(None) => return false,
        Err(_) => return true,
    };
    let Ok(names) = dir.names() else { return true };
    names.iter().any(|name| {
        name.to_str()
            .and_then(|n| n.strip_suffix(".json.tmp").or_else(|| n.strip_suffix(".json")))
            .is_some_and(is_journal_id)
    })
}
