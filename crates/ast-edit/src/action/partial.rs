//! Applying part of a preview: the chosen files and hunks are written, the rest stays pending
//! as a new preview (see [`AstEditAction::apply_only_observed`]).

use staged_core::ActionError;
use staged_journal::{
    ChangeAction, Choice, Edit as ByteEdit, PartFile, ReplacementFile, cut_hunks, fingerprint,
    hunk_list,
};

use crate::{
    engine::{EditPreview, FileEdits, Scan},
    render::preview_details,
    scope::collect_for_lang,
};

use super::{AST_EDIT_TOOL_NAME, AstEditAction, byte_edit};

/// What a partial apply leaves pending: the files and hunks not chosen, in the preview's
/// order, and which of them are the left hunks of a split file.
pub(super) struct Divided {
    pub(super) rest: Vec<Rest>,
    /// Indexes into `rest` of the split files' left parts.
    pub(super) pinned: Vec<usize>,
    /// Each split file's chosen hunks, as the result names them.
    pub(super) hunk_notes: Vec<String>,
}

/// Keeps in `preview` the chosen files and hunks ([`Choice`], one per file of `parts`) and
/// returns the rest.
pub(super) fn divide(
    preview: &mut EditPreview,
    choices: &[Choice],
    parts: &[PartFile],
) -> Result<Divided, ActionError> {
    let mut rest = Vec::new();
    let mut kept = Vec::new();
    let mut pinned = Vec::new();
    let mut hunk_notes = Vec::new();
    for ((file, choice), part) in
        std::mem::take(&mut preview.files).into_iter().zip(choices).zip(parts)
    {
        match choice {
            Choice::Whole => kept.push(file),
            Choice::Skip => rest.push(Rest::Whole(file)),
            Choice::Hunks(hunks) => match split_file(file, hunks, part.hunks)? {
                Split::Whole(file) => kept.push(*file),
                Split::Cut { mine, left, of } => {
                    hunk_notes.push(format!(
                        "{}: hunk{} {} of {of}",
                        mine.path,
                        if hunks.len() == 1 { "" } else { "s" },
                        hunk_list(&hunks.iter().map(|h| h + 1).collect::<Vec<_>>())
                    ));
                    kept.push(*mine);
                    pinned.push(rest.len());
                    rest.push(Rest::Pinned(left));
                }
            },
        }
    }
    preview.files = kept;
    Ok(Divided { rest, pinned, hunk_notes })
}

/// What a partial apply leaves of one file: all of it (the rewrite runs again over it), or
/// the edits left once some of its hunks are written.
pub(super) enum Rest {
    Whole(FileEdits),
    Pinned(ReplacementFile),
}

impl Rest {
    pub(super) fn into_whole(self) -> Option<FileEdits> {
        match self {
            Rest::Whole(file) => Some(file),
            Rest::Pinned(_) => None,
        }
    }
}

/// A file split by hunk: written whole (every hunk was named), or cut in the part written
/// (with its text before and after) and the part left.
enum Split {
    Whole(Box<FileEdits>),
    Cut { mine: Box<FileEdits>, left: ReplacementFile, of: usize },
}

/// Cuts `file`'s edits by the hunks `chosen` (0-based) of its diff, which the preview showed
/// with `expected` hunks.
fn split_file(
    file: FileEdits,
    chosen: &[usize],
    expected: Option<usize>,
) -> Result<Split, ActionError> {
    let Some(contents) = file.contents.clone() else {
        return Err(ActionError::other("ast_edit apply lost the rewritten contents"));
    };
    let edits: Vec<ByteEdit> = file.edits.iter().map(byte_edit).collect();
    let Some(cut) = cut_hunks(&file.path, &contents.original, &edits, chosen, expected)? else {
        return Ok(Split::Whole(Box::new(file)));
    };
    let mut mine_edits = Vec::new();
    let mut left_counts = Vec::new();
    for (edit, picked) in file.edits.iter().zip(&cut.picks) {
        if *picked {
            mine_edits.push(edit.clone());
        } else {
            left_counts.push(edit.replacements);
        }
    }
    let index = staged_journal::LineIndex::new(&contents.original);
    let mine_diff = crate::preview_diff::file_diff_indexed(&file.path, &index, &mine_edits)
        .map_err(|err| ActionError::other(err.to_string()))?;
    let left_diff = staged_journal::file_diff(&file.path, &cut.text, &cut.left)
        .map_err(|err| ActionError::other(err.to_string()))?;
    let left = ReplacementFile {
        path: file.path.clone(),
        fingerprint: fingerprint(cut.text.as_bytes()),
        edits: cut.left,
        counts: left_counts,
        diff: left_diff,
    };
    let mine = FileEdits {
        edits: mine_edits,
        diff: Some(mine_diff),
        contents: Some(crate::engine::FileContents {
            original: contents.original,
            updated: cut.text,
        }),
        ..file
    };
    Ok(Split::Cut { mine: Box::new(mine), left, of: cut.of })
}

/// A path as a scope entry that names exactly that file: glob characters are bracketed.
fn glob_escape(path: &str) -> String {
    let mut res = String::with_capacity(path.len());
    for ch in path.chars() {
        if matches!(ch, '*' | '?' | '[' | ']' | '{' | '}' | ',' | '\\') {
            res.push('[');
            res.push(ch);
            res.push(']');
        } else {
            res.push(ch);
        }
    }
    res
}

impl AstEditAction {
    /// The rest of a preview some of whose files were split by hunk: the previewed edits
    /// left, each file promising the bytes the partial apply leaves it with.
    pub(super) fn pinned_remainder(&self, rest: Vec<Rest>) -> Result<ChangeAction, ActionError> {
        let files = rest
            .into_iter()
            .map(|rest| match rest {
                Rest::Pinned(file) => Ok(file),
                Rest::Whole(file) => {
                    let diff = match file.diff {
                        Some(diff) => diff,
                        None => {
                            let original =
                                file.contents.as_ref().map(|c| c.original.as_str()).unwrap_or("");
                            crate::preview_diff::file_diff(&file.path, original, &file.edits)
                                .map_err(|err| ActionError::other(err.to_string()))?
                        }
                    };
                    Ok(ReplacementFile {
                        counts: file.edits.iter().map(|e| e.replacements).collect(),
                        edits: file.edits.iter().map(byte_edit).collect(),
                        path: file.path,
                        fingerprint: file.fingerprint,
                        diff,
                    })
                }
            })
            .collect::<Result<Vec<_>, ActionError>>()?;
        Ok(ChangeAction::replacements(self.workspace.clone(), AST_EDIT_TOOL_NAME, files, None))
    }

    /// The preview of the files a partial apply leaves: the same rewrite over exactly those
    /// files, in the language the preview used, promising their edits as previewed.
    pub(super) fn remainder(&self, applied: &EditPreview, rest: Vec<FileEdits>) -> AstEditAction {
        let rest = EditPreview::of_files(applied.lang, rest, applied.files_searched, None);
        let mut params = self.params.clone();
        params.paths = rest.files.iter().map(|f| glob_escape(&f.path)).collect();
        params.lang = Some(rest.lang.name().to_owned());
        if params.limit.is_some() {
            // The same first edits of the files left, however many there were before them.
            params.limit = Some(rest.total_replacements() as f64);
        }
        let details = preview_details(&rest).into_value();
        let mut rest = rest;
        // The files left are not written by this apply: as they are now, they prove what an
        // apply of the rest would find.
        if let Ok(validated) = params.validate()
            && let Ok(candidates) =
                collect_for_lang(&self.workspace, &validated.paths, validated.lang, None)
        {
            rest.scan = Scan::of(&candidates, std::time::SystemTime::now());
            rest.files_searched = candidates.len();
        }
        AstEditAction::named(self.workspace.clone(), params, &rest, details, self.names)
    }
}

#[cfg(test)]
mod tests {
    use super::glob_escape;
    use crate::scope::compile_glob;

    #[test]
    fn an_escaped_path_is_a_glob_that_matches_exactly_that_path() {
        let names = [
            "{{cookiecutter.name}}/m.js",
            "{b}.js",
            "a,b}.js",
            "[id]/page.js",
            "x]y.js",
            "back\\slash.js",
            "!bang.js",
            "star*q?.js",
            "plain/dir/file.js",
        ];
        for name in names {
            let glob = glob_escape(name);
            let matcher = compile_glob(&glob).unwrap_or_else(|err| panic!("{name}: {err}"));
            assert!(matcher.is_match(name), "{name} as {glob}");
            assert!(!matcher.is_match(format!("{name}x")), "{name} as {glob} matched more");
        }
    }
}
