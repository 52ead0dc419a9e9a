//! The folders a session made or removed as changes of their own (a shell command's `mkdir`,
//! a folder it emptied and deleted; the undo data's `folders`), net: a folder the session made
//! that is still a folder, a folder it removed that is still gone. A folder it made and then
//! removed (or the other way round) is no change; an entry undone since does not count.

use std::collections::HashMap;

use staged_core::LogEntry;
use staged_journal::{ConfinedRoot, FolderChange, FolderOp};

/// What undo data says in `folders` (format 3 on): the folders a change made or removed.
#[derive(Default, serde::Deserialize)]
#[serde(default)]
struct FoldersInUndo {
    folders: staged_protocol::lenient::Shaped<Vec<FolderChange>>,
}

/// The folders of `entries` (the log from the session's first entry on) that session `number`
/// made or removed, net, in the order each first changed, and only where the disk still holds
/// what the session left (a folder it made is a folder, one it removed is not there).
pub(crate) fn net_folders(
    workspace: &ConfinedRoot,
    entries: &[LogEntry],
    number: u64,
) -> Vec<FolderChange> {
    let mut order: Vec<String> = Vec::new();
    let mut first_last: HashMap<String, (FolderOp, FolderOp)> = HashMap::new();
    let ours = entries.iter().filter(|entry| {
        entry.session == Some(number)
            && entry.record.outcome.is_undoable()
            && entry.reverted_by.is_none()
    });
    for entry in ours {
        let Some(folders) = entry
            .record
            .undo
            .as_ref()
            .and_then(staged_protocol::lenient::view::<FoldersInUndo>)
            .and_then(|undo| undo.folders.0)
        else {
            continue;
        };
        for folder in folders {
            match first_last.get_mut(&folder.path) {
                Some((_, last)) => *last = folder.op,
                None => {
                    order.push(folder.path.clone());
                    first_last.insert(folder.path, (folder.op, folder.op));
                }
            }
        }
    }
    order
        .into_iter()
        .filter_map(|path| {
            let (first, last) = first_last.get(&path).copied()?;
            (first == last).then_some(())?;
            let is_dir = std::fs::symlink_metadata(workspace.root().join(&path))
                .is_ok_and(|meta| meta.is_dir());
            let there = std::fs::symlink_metadata(workspace.root().join(&path)).is_ok();
            let left = match first {
                FolderOp::Made => is_dir,
                FolderOp::Removed => !there,
            };
            left.then_some(FolderChange { path, op: first })
        })
        .collect()
}
