//! Scope resolution: turns `paths` entries (files, directories, globs) into the sorted list of
//! candidate files, with a gitignore-aware walk.
//!
//! The walk includes hidden files, respects `.gitignore` (even outside a git repository),
//! skips `.git` and the workspace's own `.staged` folder, skips `node_modules` unless the glob
//! names it, and never follows symlinks. A glob is compiled relative to its literal base
//! directory with `*` not crossing `/`, so `*.ts` means direct children and `**/*.ts` means any
//! depth.

use std::{
    path::{Path, PathBuf},
    sync::Mutex,
};

use globset::{GlobBuilder, GlobMatcher};
use ignore::{WalkBuilder, WalkState};
use staged_fs::{FileIdentity, RelPath, Root};
use staged_journal::{ConfinedRoot, JournalError, ModelAccess, STATE_DIR_NAME};

use crate::{
    error::AstEditError,
    lang::{Inferred, Lang},
    warm::Listing,
};

/// A file to search, by its path relative to the root and its display path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The root it is read through.
    pub root: Root,
    /// Path relative to the root.
    pub rel: RelPath,
    /// Path relative to the workspace root, `/`-separated.
    pub display: String,
    /// Whether the file was named directly (not found by a walk).
    pub explicit: bool,
    /// Size in bytes when listed (used to schedule big files first).
    pub size: u64,
    /// Which file it was when listed (device, inode, change time), if that could be read:
    /// an apply that finds every candidate as it was need not search them again (see
    /// `engine::Scan`).
    pub(crate) identity: Option<FileIdentity>,
    /// The file's trigrams, when a warm index listed it and knows its text (see `warm`): a
    /// query whose needles cannot occur in them skips the file unread.
    pub(crate) grams: Option<std::sync::Arc<crate::grams::Grams>>,
    /// What its name says of its language, when the walk or the index worked it out already
    /// (see [`Candidate::inferred`]).
    pub(crate) inferred: Option<Inferred>,
}

/// Files at least this big are started first, one at a time, and their syntax trees are freed
/// off the workers' path (see `parallel` and `source::dispose`).
const BIG_FILE_BYTES: u64 = 1 << 20;

/// Files at least this big (and not big) start before the small ones, biggest first, several
/// at a time (see `parallel`): a file of a few hundred kilobytes reached last in path order
/// would leave the other workers idle while it is parsed.
const MEDIUM_FILE_BYTES: u64 = 128 << 10;

/// Files at least this big run only beside files at most an eighth of their size (see
/// `parallel`): their syntax trees take a hundred megabytes or more (about 70 bytes per byte of
/// a Rust file of numbers).
const HUGE_FILE_BYTES: u64 = 2 << 20;

impl Candidate {
    /// What its name says of its language ([`Lang::infer`]).
    pub(crate) fn inferred(&self) -> Inferred {
        self.inferred.unwrap_or_else(|| Lang::infer(self.rel.as_path()))
    }

    /// Whether the file is big enough to schedule and free specially.
    pub(crate) fn is_big(&self) -> bool {
        self.size >= BIG_FILE_BYTES
    }

    /// Whether the file is big enough to start before the small ones.
    pub(crate) fn is_medium(&self) -> bool {
        self.size >= MEDIUM_FILE_BYTES
    }

    /// Whether the file is big enough to run only beside much smaller ones.
    pub(crate) fn is_huge(&self) -> bool {
        self.size >= HUGE_FILE_BYTES
    }
}

/// Resolves every scope entry and returns the union of candidates, sorted by display path.
///
/// # Errors
/// The first entry that is a URL, missing, outside the workspace, or an invalid glob.
pub fn collect_candidates(
    workspace: &ConfinedRoot,
    paths: &[String],
) -> Result<Vec<Candidate>, AstEditError> {
    collect(workspace, paths, None, &|_| true)
}

/// [`collect_candidates`] for a search in `lang` (or, with `None`, in each file's inferred
/// language): a walk keeps only the files [`assign_languages`] would keep, and so never stats
/// the others (most files of a mixed tree; the stats were half the walk's time). Files named
/// explicitly are kept whatever their language, as `assign_languages` needs them to report.
///
/// With a `listing` (a warm index's), a walk that the listing can stand for is read from it
/// instead of the disk.
pub(crate) fn collect_for_lang(
    workspace: &ConfinedRoot,
    paths: &[String],
    lang: Option<Lang>,
    listing: Option<&Listing>,
) -> Result<Vec<Candidate>, AstEditError> {
    collect(workspace, paths, listing, &|inferred| searched_when_walked(lang, inferred))
}

/// Whether a walked (not explicitly named) file is searched: it is of `lang` (or a component
/// file with code blocks in it), or, without `lang`, of any compiled-in language. The one rule for both the walk and
/// [`assign_languages`].
fn searched_when_walked(lang: Option<Lang>, inferred: Inferred) -> bool {
    match inferred {
        // A component file is searched in its code blocks by a call in their language.
        Inferred::Lang(found) => lang.is_none_or(|lang| {
            lang == found
                || (crate::embed::is_embeddable(lang) && crate::embed::is_component(found))
        }),
        Inferred::NotCompiled(_) | Inferred::Unknown => false,
    }
}

/// Resolves `paths`, keeping the walked files whose language, as their name says
/// ([`Lang::infer`]), passes `keep`.
fn collect(
    workspace: &ConfinedRoot,
    paths: &[String],
    listing: Option<&Listing>,
    keep: &(dyn Fn(Inferred) -> bool + Sync),
) -> Result<Vec<Candidate>, AstEditError> {
    let walk_or_list =
        |base: &Path, glob: Option<&GlobMatcher>, node_modules: bool, res: &mut Vec<_>| {
            let listed = listing.filter(|_| !node_modules).is_some_and(|listing| {
                listing.list(
                    workspace,
                    base,
                    &|under_base, inferred| {
                        glob.is_none_or(|glob| glob.is_match(under_base)) && keep(inferred)
                    },
                    res,
                )
            });
            if !listed {
                walk(workspace, base, glob, node_modules, keep, res);
            }
        };
    let mut res: Vec<Candidate> = Vec::new();
    for entry in paths {
        let entry = entry.trim();
        check_not_url(entry)?;
        if has_glob_meta(entry) {
            let (base, glob) = split_glob(entry);
            let base_rel = workspace
                .resolve_for_model(if base.is_empty() { "." } else { &base }, ModelAccess::Any)
                .map_err(|err| match err {
                    JournalError::OutsideWorkspace { root, .. } => {
                        JournalError::OutsideWorkspace { path: entry.to_owned(), root }
                    }
                    JournalError::PathNotFound(_) => JournalError::PathNotFound(entry.to_owned()),
                    JournalError::StatePath(_) => JournalError::StatePath(entry.to_owned()),
                    other => other,
                })?;
            if !is_dir(workspace, base_rel.as_ref()) {
                return Err(JournalError::PathNotFound(entry.to_owned()).into());
            }
            let base_abs = absolute(workspace, base_rel.as_ref());
            let matcher = compile_glob(&glob)?;
            let allow_node_modules = entry.contains("node_modules");
            walk_or_list(&base_abs, Some(&matcher), allow_node_modules, &mut res);
        } else {
            let Some(rel) = workspace.resolve_for_model(entry, ModelAccess::Any)? else {
                walk_or_list(workspace.root(), None, false, &mut res);
                continue;
            };
            let meta = workspace
                .fs()
                .symlink_metadata(&rel)
                .map_err(|_| JournalError::PathNotFound(entry.to_owned()))?;
            if meta.is_dir() {
                walk_or_list(&absolute(workspace, Some(&rel)), None, false, &mut res);
            } else if meta.is_file() {
                res.push(Candidate {
                    root: workspace.fs().clone(),
                    display: rel.display(),
                    rel,
                    explicit: true,
                    size: meta.len(),
                    identity: Some(FileIdentity::of_cap(&meta)),
                    grams: None,
                    inferred: None,
                });
            } else {
                return Err(AstEditError::NotFileOrDirectory(entry.to_owned()));
            }
        }
    }
    res.sort_by(|a, b| a.display.cmp(&b.display).then(b.explicit.cmp(&a.explicit)));
    res.dedup_by(|later, earlier| later.rel == earlier.rel);
    Ok(res)
}

/// The longest glob accepted, in bytes. globset turns a glob into a regex, and a glob of
/// 100,000 `*` made it panic ("error building NFA"); globs written for real trees are far
/// shorter.
pub(crate) const MAX_GLOB_BYTES: usize = 4096;

/// Compiles `glob` as the walks and `find` use it (`*` does not cross `/`). A glob longer than
/// `MAX_GLOB_BYTES`, or one globset cannot compile (even by panicking), is an
/// [`AstEditError::InvalidGlob`] with a short message.
///
/// # Errors
/// [`AstEditError::InvalidGlob`].
pub fn compile_glob(glob: &str) -> Result<GlobMatcher, AstEditError> {
    let start = || -> String {
        let mut start: String = glob.chars().take(40).collect();
        if start.len() < glob.len() {
            start.push('…');
        }
        start
    };
    if glob.len() > MAX_GLOB_BYTES {
        return Err(AstEditError::InvalidGlob(format!(
            "`{}` is {} bytes long; globs are limited to {MAX_GLOB_BYTES} bytes",
            start(),
            glob.len()
        )));
    }
    let built = std::panic::catch_unwind(|| {
        GlobBuilder::new(glob).literal_separator(true).build().map(|g| g.compile_matcher())
    });
    match built {
        Ok(Ok(matcher)) => Ok(matcher),
        Ok(Err(err)) => Err(AstEditError::InvalidGlob(err.to_string())),
        Err(_) => {
            Err(AstEditError::InvalidGlob(format!("`{}` is too complex to compile", start())))
        }
    }
}

fn is_dir(workspace: &ConfinedRoot, rel: Option<&RelPath>) -> bool {
    match rel {
        None => true,
        Some(rel) => workspace.fs().symlink_metadata(rel).is_ok_and(|m| m.is_dir()),
    }
}

fn absolute(workspace: &ConfinedRoot, rel: Option<&RelPath>) -> PathBuf {
    match rel {
        None => workspace.root().to_path_buf(),
        Some(rel) => workspace.root().join(rel.as_path()),
    }
}

fn check_not_url(entry: &str) -> Result<(), AstEditError> {
    let lower = entry.to_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Err(AstEditError::ExternalUrl(entry.to_owned()));
    }
    if lower.starts_with("ssh://") {
        return Err(AstEditError::RemotePath(entry.to_owned()));
    }
    if let Some(idx) = entry.find("://") {
        let scheme = &entry[..idx];
        if !scheme.is_empty()
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return Err(AstEditError::InternalUrl(entry.to_owned()));
        }
    }
    Ok(())
}

fn has_glob_meta(s: &str) -> bool {
    s.contains(['*', '?', '[', '{'])
}

/// Splits `a/b/*/c/**/*.ts` into the literal base `a/b` and the glob `*/c/**/*.ts`.
fn split_glob(entry: &str) -> (String, String) {
    let parts: Vec<&str> = entry.split('/').collect();
    let first_glob = parts.iter().position(|p| has_glob_meta(p)).unwrap_or(parts.len());
    let mut base = parts[..first_glob].join("/");
    if base.is_empty() && entry.starts_with('/') {
        base = "/".to_owned();
    }
    (base, parts[first_glob..].join("/"))
}

/// The walker of `base` every walk uses (the warm index's too, so that both list the same
/// files): hidden files included, `.gitignore`, `.ignore` and `.git/info/exclude` respected
/// (with the parents' ignore files), no symlink followed, `.git`, the workspace's `.staged` and,
/// unless `allow_node_modules`, `node_modules` never entered.
pub(crate) fn walker(
    workspace: &ConfinedRoot,
    base: &Path,
    allow_node_modules: bool,
) -> WalkBuilder {
    let state_dir = workspace.state_dir();
    let mut builder = WalkBuilder::new(base);
    builder
        .hidden(false)
        .follow_links(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .ignore(true)
        .parents(true)
        .require_git(false)
        .filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            if !is_dir || entry.depth() == 0 {
                return true;
            }
            let name = entry.file_name();
            if name == ".git" {
                return false;
            }
            if name == "node_modules" && !allow_node_modules {
                return false;
            }
            !(name == STATE_DIR_NAME && entry.path() == state_dir)
        });
    builder
}

fn walk(
    workspace: &ConfinedRoot,
    base: &Path,
    glob: Option<&GlobMatcher>,
    allow_node_modules: bool,
    keep: &(dyn Fn(Inferred) -> bool + Sync),
    out: &mut Vec<Candidate>,
) {
    let found: Mutex<Vec<Candidate>> = Mutex::new(Vec::new());
    let walker = walker(workspace, base, allow_node_modules).build_parallel();
    walker.run(|| {
        let found = &found;
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let path = entry.path();
            if let Some(glob) = glob {
                let Ok(rel) = path.strip_prefix(base) else {
                    return WalkState::Continue;
                };
                if !glob.is_match(rel) {
                    return WalkState::Continue;
                }
            }
            let inferred = Lang::infer(path);
            if !keep(inferred) {
                return WalkState::Continue;
            }
            let Some(rel) = workspace.walked(path) else {
                return WalkState::Continue;
            };
            let meta = entry.metadata().ok();
            let candidate = Candidate {
                root: workspace.fs().clone(),
                display: rel.display(),
                rel,
                explicit: false,
                size: meta.as_ref().map_or(0, std::fs::Metadata::len),
                identity: meta.as_ref().map(FileIdentity::of),
                grams: None,
                inferred: Some(inferred),
            };
            if let Ok(mut found) = found.lock() {
                found.push(candidate);
            }
            WalkState::Continue
        })
    });
    if let Ok(found) = found.into_inner() {
        out.extend(found);
    }
}

/// Pairs each candidate with its language. With `lang` given, a walk keeps the files of that
/// language (like `ast-grep run -l`) and a file named explicitly is always kept. Without it,
/// each file's language is inferred; an explicitly named file whose language cannot be
/// inferred, or is not compiled in, is an error naming `tool`.
pub(crate) fn assign_languages(
    lang: Option<Lang>,
    candidates: Vec<Candidate>,
    tool: &'static str,
) -> Result<Vec<(Candidate, Lang)>, AstEditError> {
    if let Some(lang) = lang {
        return Ok(candidates
            .into_iter()
            .filter(|c| c.explicit || searched_when_walked(Some(lang), c.inferred()))
            .map(|c| (c, lang))
            .collect());
    }
    let mut res = Vec::with_capacity(candidates.len());
    let mut problems = Vec::new();
    for candidate in candidates {
        match candidate.inferred() {
            Inferred::Lang(lang) => res.push((candidate, lang)),
            Inferred::NotCompiled(name) if candidate.explicit => problems.push(format!(
                "- {}: Unsupported language '{name}'. Supported: {}",
                candidate.display,
                crate::lang::supported_aliases().join(", ")
            )),
            Inferred::Unknown if candidate.explicit => problems.push(format!(
                "- {}: Unable to infer language from file extension: {}. Specify `lang` explicitly.",
                candidate.display, candidate.display
            )),
            Inferred::NotCompiled(_) | Inferred::Unknown => {}
        }
    }
    if !problems.is_empty() {
        return Err(AstEditError::LangNotInferred { tool, list: problems.join("\n") });
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_glob_at_first_meta_component() {
        assert_eq!(
            split_glob("packages/pkg-*/src/**/*.ts"),
            ("packages".to_owned(), "pkg-*/src/**/*.ts".to_owned())
        );
        assert_eq!(split_glob("*.ts"), (String::new(), "*.ts".to_owned()));
    }

    #[test]
    fn a_walk_for_one_language_keeps_what_assign_languages_keeps() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (path, text) in [
            ("a.ts", "a;"),
            ("b.js", "b;"),
            ("notes.txt", "n"),
            ("sub/c.ts", "c;"),
            ("sub/d.tsx", "d;"),
        ] {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        let ws = ConfinedRoot::new(dir.path()).expect("workspace");
        let paths = [".".to_owned(), "notes.txt".to_owned()];
        let shown = |lang: Option<Lang>| -> Vec<String> {
            collect_for_lang(&ws, &paths, lang, None)
                .expect("collect")
                .into_iter()
                .map(|c| c.display)
                .collect()
        };
        // An explicitly named file stays, whatever its language, for assign_languages to judge.
        assert_eq!(shown(Some(Lang::TypeScript)), ["a.ts", "notes.txt", "sub/c.ts"]);
        assert_eq!(shown(None), ["a.ts", "b.js", "notes.txt", "sub/c.ts", "sub/d.tsx"]);
        // And the filter changes nothing assign_languages returns.
        for lang in [None, Some(Lang::TypeScript), Some(Lang::JavaScript)] {
            let all = collect_candidates(&ws, &paths).expect("collect");
            let filtered = collect_for_lang(&ws, &paths, lang, None).expect("collect");
            let names = |list: Vec<(Candidate, Lang)>| -> Vec<(String, Lang)> {
                list.into_iter().map(|(c, l)| (c.display, l)).collect()
            };
            let wide = assign_languages(lang, all, "ast_edit");
            let narrow = assign_languages(lang, filtered, "ast_edit");
            match (wide, narrow) {
                (Ok(a), Ok(b)) => assert_eq!(names(a), names(b)),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("differ: {:?} / {:?}", a.map(names), b.map(names)),
            }
        }
    }

    #[test]
    fn rejects_urls() {
        assert!(matches!(check_not_url("https://x.dev/a.ts"), Err(AstEditError::ExternalUrl(_))));
        assert!(matches!(check_not_url("ssh://host/a.ts"), Err(AstEditError::RemotePath(_))));
        assert!(matches!(check_not_url("skill://x/a.ts"), Err(AstEditError::InternalUrl(_))));
        assert!(check_not_url("src/a.ts").is_ok());
    }
}
