//! Parsing patches: Codex's `apply_patch` format and unified diffs (`git diff`, `diff -u`),
//! both into [`Patch`].
//!
//! Codex's format, as its parser reads it (leniently: markers may carry surrounding
//! whitespace, and a heredoc around the patch is dropped):
//!
//! ```text
//! *** Begin Patch
//! *** Add File: <path>          then `+` lines: the new file's text
//! *** Delete File: <path>
//! *** Update File: <path>
//! *** Move to: <path>           optional
//! @@ <context line>             or a bare `@@`; optional before the first chunk
//!  context / -removed / +added lines
//! *** End of File               optional: the chunk ends the file
//! *** End Patch
//! ```

use super::{Chunk, Ending, Options, Patch, PatchFile, PatchLine, Style};

const BEGIN_PATCH: &str = "*** Begin Patch";
const END_PATCH: &str = "*** End Patch";
const ADD_FILE: &str = "*** Add File: ";
const DELETE_FILE: &str = "*** Delete File: ";
const UPDATE_FILE: &str = "*** Update File: ";
const MOVE_TO: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";
const CONTEXT_MARKER: &str = "@@ ";
const EMPTY_CONTEXT_MARKER: &str = "@@";

/// Parses `input`: a Codex patch when its first line is `*** Begin Patch` (or a heredoc
/// around one), else a unified diff.
///
/// # Errors
/// The message a model sees: Codex's parse errors, with the line number where it has one.
pub fn parse(input: &str) -> Result<Patch, String> {
    parse_with(input, &Options::default())
}

/// [`parse`], with a person's options (`staged patch -p N`), which only a unified diff takes.
///
/// # Errors
/// As [`parse`]; and an option given for a Codex patch.
pub fn parse_with(input: &str, options: &Options) -> Result<Patch, String> {
    let first = input.trim_start().lines().next().unwrap_or("").trim();
    let heredoc = matches!(first, "<<EOF" | "<<'EOF'" | "<<\"EOF\"");
    if first == BEGIN_PATCH || heredoc || !looks_unified(input) {
        if let Some(n) = options.strip {
            return Err(format!(
                "-p {n} drops folders from a unified diff's paths, but this is not a unified diff (no `---`/`+++` file headers were found)"
            ));
        }
        if options.reverse {
            return Err("-R reverses a unified diff, but this is not a unified diff (no `---`/`+++` file headers were found)".to_owned());
        }
        parse_codex(input)
    } else {
        parse_unified_with(input, options)
    }
}

/// Whether `input` reads as a unified diff: a `diff --git` line, or `---` then `+++`.
fn looks_unified(input: &str) -> bool {
    let mut prev_minus = false;
    for line in input.lines() {
        if line.starts_with("diff --git ")
            || (prev_minus && line.starts_with("+++ "))
            || binary_files(line).is_some()
        {
            return true;
        }
        prev_minus = line.starts_with("--- ");
    }
    false
}

/// Parses a patch in Codex's `apply_patch` format.
///
/// # Errors
/// `invalid patch: ...` for bad markers, `invalid hunk at line N, ...` for a bad hunk.
pub fn parse_codex(input: &str) -> Result<Patch, String> {
    let lines: Vec<&str> = input.trim().lines().collect();
    let body = match boundaries(&lines) {
        Ok(body) => body,
        Err(err) => {
            // A heredoc around the patch (`<<'EOF'` ... `EOF`), as some models send it.
            match lines.as_slice() {
                [first, .., last]
                    if matches!(*first, "<<EOF" | "<<'EOF'" | "<<\"EOF\"")
                        && last.ends_with("EOF")
                        && lines.len() >= 4 =>
                {
                    boundaries(&lines[1..lines.len() - 1])?
                }
                _ => return Err(err),
            }
        }
    };
    let mut files = Vec::new();
    let mut rest = body;
    let mut line_number = 2;
    while !rest.is_empty() {
        let (file, used) = parse_codex_file(rest, line_number)?;
        files.push(file);
        line_number += used;
        rest = &rest[used..];
    }
    Ok(Patch { files })
}

/// The lines between `*** Begin Patch` and `*** End Patch`.
fn boundaries<'a>(lines: &'a [&'a str]) -> Result<&'a [&'a str], String> {
    let first = lines.first().map(|l| l.trim());
    let last = lines.last().map(|l| l.trim());
    match (first, last) {
        (Some(BEGIN_PATCH), Some(END_PATCH)) if lines.len() >= 2 => Ok(&lines[1..lines.len() - 1]),
        (Some(first), _) if first != BEGIN_PATCH => {
            Err("invalid patch: The first line of the patch must be '*** Begin Patch'".to_owned())
        }
        (None, _) => {
            Err("invalid patch: The first line of the patch must be '*** Begin Patch'".to_owned())
        }
        _ => Err("invalid patch: The last line of the patch must be '*** End Patch'".to_owned()),
    }
}

fn hunk_error(line_number: usize, message: impl std::fmt::Display) -> String {
    format!("invalid hunk at line {line_number}, {message}")
}

/// One file of a Codex patch, and how many lines it took.
fn parse_codex_file(lines: &[&str], line_number: usize) -> Result<(PatchFile, usize), String> {
    let header = lines[0].trim();
    if let Some(path) = header.strip_prefix(ADD_FILE) {
        let mut content = String::new();
        let mut used = 1;
        for line in &lines[1..] {
            let Some(text) = line.strip_prefix('+') else { break };
            content.push_str(text);
            content.push('\n');
            used += 1;
        }
        let add = PatchFile::Add {
            path: path.to_owned(),
            content,
            style: Style::Codex,
            executable: false,
        };
        return Ok((add, used));
    }
    if let Some(path) = header.strip_prefix(DELETE_FILE) {
        return Ok((PatchFile::Delete { path: path.to_owned(), old: None }, 1));
    }
    let Some(path) = header.strip_prefix(UPDATE_FILE) else {
        return Err(hunk_error(
            line_number,
            format!(
                "'{header}' is not a valid hunk header. Valid hunk headers: '*** Add File: {{path}}', '*** Delete File: {{path}}', '*** Update File: {{path}}'"
            ),
        ));
    };
    let mut rest = &lines[1..];
    let mut used = 1;
    let move_to = rest.first().and_then(|l| l.strip_prefix(MOVE_TO)).map(str::to_owned);
    if move_to.is_some() {
        rest = &rest[1..];
        used += 1;
    }
    let mut chunks = Vec::new();
    while !rest.is_empty() {
        // Blank lines between chunks.
        if rest[0].trim().is_empty() {
            rest = &rest[1..];
            used += 1;
            continue;
        }
        if rest[0].starts_with('*') {
            break;
        }
        let (chunk, chunk_lines) = parse_codex_chunk(rest, line_number + used, chunks.is_empty())?;
        chunks.push(chunk);
        used += chunk_lines;
        rest = &rest[chunk_lines..];
    }
    if chunks.is_empty() {
        return Err(hunk_error(
            line_number,
            format!("Update file hunk for path '{path}' is empty"),
        ));
    }
    Ok((
        PatchFile::Update {
            path: path.to_owned(),
            move_to,
            chunks,
            style: Style::Codex,
            executable: None,
        },
        used,
    ))
}

/// One chunk of an update, and how many lines it took.
fn parse_codex_chunk(
    lines: &[&str],
    line_number: usize,
    first: bool,
) -> Result<(Chunk, usize), String> {
    let (context, start) = if lines[0] == EMPTY_CONTEXT_MARKER {
        (None, 1)
    } else if let Some(context) = lines[0].strip_prefix(CONTEXT_MARKER) {
        (Some(context.to_owned()), 1)
    } else if first {
        (None, 0)
    } else {
        return Err(hunk_error(
            line_number,
            format!("Expected update hunk to start with a @@ context marker, got: '{}'", lines[0]),
        ));
    };
    if start >= lines.len() {
        return Err(hunk_error(line_number + 1, "Update hunk does not contain any lines"));
    }
    let mut chunk = Chunk { context, old: Vec::new(), new: Vec::new(), eof: false, at: None };
    let mut parsed = 0;
    for line in &lines[start..] {
        if *line == END_OF_FILE {
            if parsed == 0 {
                return Err(hunk_error(line_number + 1, "Update hunk does not contain any lines"));
            }
            chunk.eof = true;
            parsed += 1;
            break;
        }
        match line.chars().next() {
            None => {
                chunk.new.push(PatchLine::codex_context("", chunk.old.len()));
                chunk.old.push(String::new());
            }
            Some(' ') => {
                chunk.new.push(PatchLine::codex_context(&line[1..], chunk.old.len()));
                chunk.old.push(line[1..].to_owned());
            }
            Some('+') => chunk.new.push(PatchLine::codex(&line[1..])),
            Some('-') => chunk.old.push(line[1..].to_owned()),
            _ if parsed == 0 => {
                return Err(hunk_error(
                    line_number + 1,
                    format!(
                        "Unexpected line found in update hunk: '{line}'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)"
                    ),
                ));
            }
            // The next chunk starts here.
            _ => break,
        }
        parsed += 1;
    }
    Ok((chunk, parsed + start))
}

/// Parses a unified diff: `git diff` output (new, deleted and renamed files included) or
/// `diff -u`'s.
///
/// # Errors
/// A message naming the line that does not parse, or what the diff asks that staged does not
/// preview (binary files, mode changes, copies).
pub fn parse_unified(input: &str) -> Result<Patch, String> {
    parse_unified_with(input, &Options::default())
}

/// [`parse_unified`], with a person's options.
///
/// # Errors
/// As [`parse_unified`]; and a path with fewer folders than `-p` drops.
pub fn parse_unified_with(input: &str, options: &Options) -> Result<Patch, String> {
    let lines: Vec<&str> = input.split_inclusive('\n').collect();
    let mut files = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("diff --git ") || line.starts_with("--- ") {
            let (file, used) = parse_unified_file(&lines[i..], i + 1, options)?;
            files.extend(file);
            i += used;
        } else if let Some(path) = binary_files(line) {
            return Err(format!(
                "line {}: {path} is a binary file (`{}`): the diff does not hold its bytes, and staged previews changes to text files only",
                i + 1,
                line.trim_end()
            ));
        } else {
            // Text around the diff (a commit message, `index` lines of other tools).
            i += 1;
        }
    }
    if files.is_empty() {
        return Err("invalid patch: it is neither a Codex patch (its first line must be '*** Begin Patch') nor a unified diff (no `---`/`+++` file headers were found)".to_owned());
    }
    Ok(Patch { files })
}

/// The path of GNU diff's `Binary files <a> and <b> differ` line (the new side's, its first
/// folder dropped as for `---`/`+++` names), which stands for a binary file's change that the
/// diff does not hold.
fn binary_files(line: &str) -> Option<String> {
    let names = line.trim_end().strip_prefix("Binary files ")?.strip_suffix(" differ")?;
    let (a, b) = names.split_once(" and ")?;
    let (a, b) = strip_header_names(Some(a.to_owned()), Some(b.to_owned()));
    b.or(a)
}

/// The extended header of one `diff --git` section.
#[derive(Debug, Default)]
struct GitHeader {
    /// Whether the section starts with a `diff --git` line.
    git: bool,
    from: Option<String>,
    to: Option<String>,
    new_file: bool,
    deleted: bool,
    rename_from: Option<String>,
    rename_to: Option<String>,
    /// `new file mode 100755`.
    executable: bool,
    /// `deleted file mode 100755` (a new file's mode, reversed).
    deleted_executable: bool,
    /// `old mode <m>` and `new mode <m>`, as written.
    old_mode: Option<(String, usize)>,
    new_mode: Option<(String, usize)>,
}

/// The refusal of a file that is not a regular file, from a header line that gives its mode
/// (`new file mode 120000`, `deleted file mode 160000`, `index 1a2b..3c4d 120000`, `old
/// mode`, `new mode`): staged stages regular text files only, and writing a symlink's target
/// or a submodule's commit as a regular file would be wrong.
fn kind_refusal(line: &str, at: usize, header: &GitHeader) -> Option<String> {
    let moded = ["new file mode ", "deleted file mode ", "old mode ", "new mode ", "index "];
    if !moded.iter().any(|p| line.starts_with(p)) {
        return None;
    }
    let deleted = line.starts_with("deleted file mode ") || line.starts_with("old mode ");
    let path = if deleted { header.from.as_deref() } else { header.to.as_deref() };
    let path = path.unwrap_or("a file");
    match line.rsplit(' ').next()? {
        "120000" => Some(format!(
            "line {at}: {path} is a symbolic link (`{line}`): staged does not stage symlinks, only regular text files; make this change to the link yourself (ln -s, rm)"
        )),
        "160000" => Some(format!(
            "line {at}: {path} is a submodule (`{line}`): staged does not stage submodules, only regular text files; make this change with git (git submodule)"
        )),
        _ => None,
    }
}

/// One file of a unified diff (`None` for a section with nothing to do), and how many lines
/// it took.
fn parse_unified_file(
    lines: &[&str],
    line_number: usize,
    options: &Options,
) -> Result<(Option<PatchFile>, usize), String> {
    let mut header = GitHeader::default();
    let mut i = 0;
    let strip = |name: &str, at: usize| -> Result<String, String> {
        match options.strip {
            Some(n) => strip_folders(name, n).ok_or_else(|| {
                format!(
                    "invalid patch: line {at}: -p {n} drops {n} folders, but '{name}' has fewer"
                )
            }),
            None => Ok(strip_prefix_component(name)),
        }
    };
    if let Some(rest) = lines[0].strip_prefix("diff --git ") {
        header.git = true;
        match split_git_names(rest.trim_end_matches(['\n', '\r'])) {
            Some((a, b)) => {
                header.from = Some(strip(&a, line_number)?);
                header.to = Some(strip(&b, line_number)?);
            }
            // `--no-prefix` names of a renamed file (`diff --git old.txt new.txt`) have no
            // `b/` to split at: its `rename from`/`rename to` lines (or `---`/`+++`) say them.
            None if lines[1..]
                .iter()
                .take_while(|l| !l.starts_with("diff --git ") && !l.starts_with("@@"))
                .any(|l| l.starts_with("rename to ") || l.starts_with("+++ ")) => {}
            None => {
                return Err(format!(
                    "invalid patch: line {line_number}: cannot read the file names of '{}'",
                    lines[0].trim_end()
                ));
            }
        }
        i = 1;
        while i < lines.len() {
            let line = lines[i].trim_end_matches(['\n', '\r']);
            let at = line_number + i;
            if line.starts_with("--- ") || line.starts_with("diff --git ") || line.starts_with("@@")
            {
                break;
            }
            if let Some(refusal) = kind_refusal(line, at, &header) {
                return Err(refusal);
            }
            if let Some(mode) = line.strip_prefix("new file mode ") {
                header.new_file = true;
                header.executable = mode.trim() == "100755";
            } else if let Some(mode) = line.strip_prefix("deleted file mode ") {
                header.deleted = true;
                header.deleted_executable = mode.trim() == "100755";
            } else if let Some(name) = line.strip_prefix("rename from ") {
                header.rename_from = Some(unquote(name));
            } else if let Some(name) = line.strip_prefix("rename to ") {
                header.rename_to = Some(unquote(name));
            } else if let Some(mode) = line.strip_prefix("old mode ") {
                header.old_mode = Some((mode.trim().to_owned(), at));
            } else if let Some(mode) = line.strip_prefix("new mode ") {
                header.new_mode = Some((mode.trim().to_owned(), at));
            } else if line.starts_with("copy from ") || line.starts_with("copy to ") {
                return Err(format!(
                    "line {at}: copies (`{line}`) are not supported; add the copy as a new file"
                ));
            } else if line.starts_with("Binary files ") || line.starts_with("GIT binary patch") {
                return Err(format!(
                    "line {at}: {} is a binary patch: staged previews changes to text files only",
                    header.to.as_deref().unwrap_or("this file")
                ));
            }
            // `index`, `similarity index`, `dissimilarity index`: nothing to do.
            i += 1;
        }
    }
    // `---` and `+++`, unless the section is a rename, a new or a deleted empty file alone.
    let mut old_name = None;
    let mut new_name = None;
    let (mut minus_null, mut plus_null) = (false, false);
    // GNU `diff -N` names a missing side with the epoch as its time.
    let (mut minus_epoch, mut plus_epoch) = (false, false);
    if i < lines.len() && lines[i].starts_with("--- ") {
        let minus = lines[i].trim_end_matches(['\n', '\r']);
        let Some(plus) = lines.get(i + 1).map(|l| l.trim_end_matches(['\n', '\r'])) else {
            return Err(format!(
                "invalid patch: line {}: `---` without a `+++` line",
                line_number + i
            ));
        };
        let Some(plus) = plus.strip_prefix("+++ ") else {
            return Err(format!(
                "invalid patch: line {}: expected a `+++` line, got '{plus}'",
                line_number + i + 1
            ));
        };
        let (old_raw, old_epoch) = raw_file_name(&minus[4..]);
        let (new_raw, new_epoch) = raw_file_name(plus);
        let at = line_number + i;
        (old_name, new_name) = if header.git || options.strip.is_some() {
            // A `diff --git` section: `a/` and `b/`, as before (`--no-prefix`: as written);
            // or the folders `-p` says.
            (
                old_raw.map(|n| strip(&n, at)).transpose()?,
                new_raw.map(|n| strip(&n, at)).transpose()?,
            )
        } else {
            strip_header_names(old_raw, new_raw)
        };
        minus_null = old_name.is_none();
        plus_null = new_name.is_none();
        (minus_epoch, plus_epoch) = (old_epoch, new_epoch);
        if options.reverse {
            (old_name, new_name) = (new_name, old_name);
            (minus_null, plus_null) = (plus_null, minus_null);
            (minus_epoch, plus_epoch) = (plus_epoch, minus_epoch);
        }
        i += 2;
    }
    if options.reverse {
        (header.from, header.to) = (header.to.take(), header.from.take());
        (header.rename_from, header.rename_to) =
            (header.rename_to.take(), header.rename_from.take());
        (header.new_file, header.deleted) = (header.deleted, header.new_file);
        (header.executable, header.deleted_executable) =
            (header.deleted_executable, header.executable);
        (header.old_mode, header.new_mode) = (header.new_mode.take(), header.old_mode.take());
    }
    let executable = mode_change(&header)?;
    let mut hunks = Vec::new();
    let name = new_name.clone().or(old_name.clone()).or(header.to.clone()).unwrap_or_default();
    while i < lines.len() && lines[i].starts_with("@@") {
        let which = format!("hunk {} of {name}", hunks.len() + 1);
        let (chunk, used, counts) =
            parse_unified_hunk(&lines[i..], line_number + i, &which, options.reverse)?;
        beyond_count(&lines[i..], used, line_number + i, &which, counts)?;
        hunks.push(chunk);
        i += used;
    }
    let from = header.rename_from.clone().or(old_name).or(header.from.clone());
    let to = header.rename_to.clone().or(new_name).or(header.to.clone());
    // A side dated at the epoch whose hunks hold no line of it: the file is made or deleted.
    let style = if lines[0].ends_with("\r\n") { Style::CrlfSaved } else { Style::Exact };
    let created = header.new_file
        || minus_null
        || (minus_epoch && !hunks.is_empty() && hunks.iter().all(|h| h.old.is_empty()));
    let deleted = header.deleted
        || plus_null
        || (plus_epoch && !hunks.is_empty() && hunks.iter().all(|h| h.new.is_empty()));
    let file = if created {
        let path = to.ok_or_else(|| {
            format!("invalid patch: line {line_number}: a new file without a name")
        })?;
        let content: String =
            hunks.iter().flat_map(|h| h.new.iter()).map(PatchLine::to_text).collect();
        Some(PatchFile::Add { path, content, style, executable: header.executable })
    } else if deleted {
        let path = from.ok_or_else(|| {
            format!("invalid patch: line {line_number}: a deleted file without a name")
        })?;
        let old: Vec<String> = hunks.iter().flat_map(|h| h.old.iter().cloned()).collect();
        Some(PatchFile::Delete { path, old: Some(old) })
    } else {
        let path = from
            .ok_or_else(|| format!("invalid patch: line {line_number}: a file without a name"))?;
        let to = to.unwrap_or_else(|| path.clone());
        let move_to = (to != path).then_some(to);
        if hunks.is_empty() && move_to.is_none() && executable.is_none() {
            None
        } else {
            Some(PatchFile::Update { path, move_to, chunks: hunks, style, executable })
        }
    };
    Ok((file, i))
}

/// The mode `old mode`/`new mode` give a file: `Some(true)` to make it executable (100755),
/// `Some(false)` to make it not (100644), `None` when they give none or the same. Other modes
/// are refused, naming the line: staged sets the executable bits only (symlinks and
/// submodules are refused before, by [`kind_refusal`]).
fn mode_change(header: &GitHeader) -> Result<Option<bool>, String> {
    let Some((new, at)) = &header.new_mode else { return Ok(None) };
    if header.old_mode.as_ref().is_some_and(|(old, _)| old == new) {
        return Ok(None);
    }
    match new.as_str() {
        "100755" => Ok(Some(true)),
        "100644" => Ok(Some(false)),
        _ => Err(format!(
            "line {at}: `new mode {new}` gives {} a mode staged does not set: staged sets a file executable (100755) or not (100644); change the mode with chmod",
            header.to.as_deref().unwrap_or("a file")
        )),
    }
}

/// How many old and new lines a hunk's header counts.
type Counts = (usize, usize);

/// A hunk's body that goes on past what its header counts (models miscount hunks often, and
/// applying the counted part alone would apply part of the change, silently): refused, as
/// `git apply` refuses it, with what was counted. `hunk` is the hunk's lines, its header at
/// `line_number`; its first `used` lines are the counted ones.
fn beyond_count(
    hunk: &[&str],
    used: usize,
    line_number: usize,
    which: &str,
    (old_len, new_len): Counts,
) -> Result<(), String> {
    let body_line = |k: usize| -> bool {
        let Some(line) = hunk.get(k) else { return false };
        let text = line.trim_end_matches(['\n', '\r']);
        // A mail's signature (`-- ` then git's version), and the next file of a diff -u.
        if text == "--" || text == "-- " {
            return false;
        }
        if text.starts_with("--- ") && hunk.get(k + 1).is_some_and(|l| l.starts_with("+++ ")) {
            return false;
        }
        matches!(line.as_bytes().first(), Some(b' ' | b'-' | b'+' | b'\\'))
    };
    let blank = |k: usize| hunk.get(k).is_some_and(|l| l.trim_end_matches(['\n', '\r']).is_empty());
    // Blank lines after a hunk are its lines (context lines whose space an editor dropped)
    // only when more lines of it follow them.
    let body_after_blanks = |mut k: usize| {
        while blank(k) {
            k += 1;
        }
        body_line(k)
    };
    if !body_after_blanks(used) {
        return Ok(());
    }
    let (mut old, mut new) = (old_len, new_len);
    let mut end = used;
    while body_after_blanks(end) {
        match hunk[end].as_bytes().first() {
            Some(b'-') => old += 1,
            Some(b'+') => new += 1,
            Some(b'\\') => {}
            _ => {
                old += 1;
                new += 1;
            }
        }
        end += 1;
    }
    Err(format!(
        "invalid patch: line {line_number}: {which} ('{}') counts {old_len} old and {new_len} new lines, but its body goes on to line {} and has {old} old and {new} new lines; fix the counts in its `@@` header (or make the diff again)",
        hunk[0].trim_end_matches(['\n', '\r']),
        line_number + end - 1,
    ))
}

/// One `@@ -a,b +c,d @@` hunk, how many lines it took, and what its header counts.
/// `which` names it (`hunk 2 of src/a.rs`) in errors.
fn parse_unified_hunk(
    lines: &[&str],
    line_number: usize,
    which: &str,
    reverse: bool,
) -> Result<(Chunk, usize, Counts), String> {
    let header = lines[0].trim_end_matches(['\n', '\r']);
    let bad = || {
        format!(
            "invalid patch: line {line_number}: '{header}' is not a hunk header (`@@ -a,b +c,d @@`)"
        )
    };
    let inner = header
        .strip_prefix("@@ -")
        .and_then(|h| h.split_once(" @@"))
        .map(|(r, _)| r)
        .ok_or_else(bad)?;
    let (old_range, new_range) = inner.split_once(" +").ok_or_else(bad)?;
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((start, len)) => Some((start.parse().ok()?, len.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (written_old, written_new) =
        (range(old_range).ok_or_else(bad)?, range(new_range).ok_or_else(bad)?);
    // `-R`: the new side is the old, and `+` lines are removed.
    let ((old_start, old_len), (_, new_len)) =
        if reverse { (written_new, written_old) } else { (written_old, written_new) };
    let written = (written_old.1, written_new.1);
    let flip = |tag: char| match tag {
        '-' if reverse => '+',
        '+' if reverse => '-',
        tag => tag,
    };
    let mut chunk = Chunk { context: None, old: Vec::new(), new: Vec::new(), eof: false, at: None };
    let (mut old_seen, mut new_seen) = (0, 0);
    let mut i = 1;
    // Which side the last line belongs to, for a `\ No newline at end of file` after it.
    let mut last: Option<char> = None;
    let mut last_ending = Ending::Lf;
    while i < lines.len()
        && (old_seen < old_len || new_seen < new_len || lines[i].starts_with('\\'))
    {
        let raw = lines[i];
        let (tag, body) = match raw.chars().next() {
            Some(tag @ (' ' | '-' | '+')) => (flip(tag), &raw[1..]),
            Some('\\') => {
                // The line before has no line ending; a `\r` before its `\n` is its text's
                // (`x\r` at the end of a file), as git reads it.
                // (Not in a diff saved with CRLF endings, whose `\r`s are all the saving's.)
                let cr = last_ending == Ending::CrLf && !lines[0].ends_with("\r\n");
                if matches!(last, Some('-' | ' '))
                    && cr
                    && let Some(old) = chunk.old.last_mut()
                {
                    old.push('\r');
                }
                if matches!(last, Some('+' | ' '))
                    && let Some(new) = chunk.new.last_mut()
                {
                    new.ending = Some(Ending::None);
                    if cr {
                        new.text.push('\r');
                    }
                }
                last_ending = Ending::None;
                i += 1;
                continue;
            }
            // An empty context line whose space an editor dropped.
            Some('\n') | Some('\r') => (' ', raw),
            // The next file or hunk: this one has fewer lines than its header counts.
            _ if raw.starts_with("diff --git ") || raw.starts_with("@@") => break,
            _ => {
                return Err(format!(
                    "invalid patch: line {}: '{}' is not a line of {which} (it should start with ' ', '-' or '+'; the hunk header promised {} old and {} new lines)",
                    line_number + i,
                    raw.trim_end(),
                    written.0,
                    written.1,
                ));
            }
        };
        let (text, ending) = split_ending(body);
        last_ending = ending;
        match tag {
            ' ' => {
                chunk.new.push(PatchLine {
                    text: text.to_owned(),
                    ending: Some(ending),
                    context: Some(chunk.old.len()),
                });
                chunk.old.push(text.to_owned());
                old_seen += 1;
                new_seen += 1;
            }
            '-' => {
                chunk.old.push(text.to_owned());
                old_seen += 1;
            }
            _ => {
                chunk.new.push(PatchLine {
                    text: text.to_owned(),
                    ending: Some(ending),
                    context: None,
                });
                new_seen += 1;
            }
        }
        last = Some(tag);
        i += 1;
    }
    if old_seen != old_len || new_seen != new_len {
        let (old_seen, new_seen) =
            if reverse { (new_seen, old_seen) } else { (old_seen, new_seen) };
        return Err(format!(
            "invalid patch: line {line_number}: {which} ('{header}') counts {} old and {} new lines, but its body ends at line {} with {old_seen} old and {new_seen} new lines; fix the counts in its `@@` header (or make the diff again)",
            written.0,
            written.1,
            line_number + i - 1
        ));
    }
    // `-a,0`: insert after line a (0: at the top).
    chunk.at = Some(if old_len == 0 { old_start } else { old_start.saturating_sub(1) });
    Ok((chunk, i, written))
}

/// A line's text and ending: `\n`, `\r\n`, or none.
fn split_ending(line: &str) -> (&str, Ending) {
    if let Some(text) = line.strip_suffix("\r\n") {
        (text, Ending::CrLf)
    } else if let Some(text) = line.strip_suffix('\n') {
        (text, Ending::Lf)
    } else {
        (line, Ending::None)
    }
}

/// The name of a `---`/`+++` line as written (`None` for `/dev/null`), unquoted, without the
/// time after a tab; and whether that time is the epoch (`1970-01-01 00:00:00 +0000`, or the
/// same instant in another zone), which GNU `diff -N` gives a file that is not there.
fn raw_file_name(raw: &str) -> (Option<String>, bool) {
    let (name, time) = raw.split_once('\t').unwrap_or((raw, ""));
    let name = unquote(name.trim_end());
    let epoch = is_epoch(time.trim());
    if name == "/dev/null" { (None, epoch) } else { (Some(name), epoch) }
}

/// Whether `time` (`YYYY-MM-DD HH:MM:SS[.fraction] [+-]HHMM`) is 1970-01-01 00:00:00 UTC.
fn is_epoch(time: &str) -> bool {
    let mut parts = time.split(' ');
    let (Some(date), Some(clock)) = (parts.next(), parts.next()) else { return false };
    let zone = parts.next().unwrap_or("+0000");
    let num = |s: &str| s.parse::<i64>().ok();
    let date: Vec<Option<i64>> = date.split('-').map(num).collect();
    let (clock, fraction) = clock.split_once('.').unwrap_or((clock, "0"));
    let clock: Vec<Option<i64>> = clock.split(':').map(num).collect();
    let (&[Some(y), Some(m), Some(d)], &[Some(h), Some(mi), Some(sec)]) =
        (date.as_slice(), clock.as_slice())
    else {
        return false;
    };
    if !fraction.bytes().all(|b| b == b'0') || zone.len() != 5 {
        return false;
    }
    let sign = match zone.as_bytes()[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return false,
    };
    let (Some(zh), Some(zm)) = (num(&zone[1..3]), num(&zone[3..])) else { return false };
    // Days from 1970-01-01 to y-m-d (the proleptic Gregorian calendar's civil-day count).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    days * 86_400 + h * 3_600 + mi * 60 + sec - sign * (zh * 3_600 + zm * 60) == 0
}

/// The paths of a `---`/`+++` pair. When the two names differ only in their first folder
/// (`a/f.txt` and `b/f.txt`; `old/f.txt` and `new/f.txt` of `diff -ruN old new`), that
/// folder is dropped, as `git apply` and `patch -p1` do; otherwise a leading `a/` or `b/` is
/// dropped, as before.
fn strip_header_names(
    old: Option<String>,
    new: Option<String>,
) -> (Option<String>, Option<String>) {
    if let (Some(a), Some(b)) = (&old, &new)
        && let (Some((a_dir, a_rest)), Some((b_dir, b_rest))) =
            (a.split_once('/'), b.split_once('/'))
        && a_dir != b_dir
        && a_rest == b_rest
        && !a_dir.is_empty()
        && !a_rest.is_empty()
    {
        return (Some(a_rest.to_owned()), Some(b_rest.to_owned()));
    }
    (old.map(|n| strip_prefix_component(&n)), new.map(|n| strip_prefix_component(&n)))
}

/// The path of a `---`/`+++` name: `None` for `/dev/null`; `a/` and `b/` dropped; a
/// timestamp after a tab dropped; a quoted name unquoted.
#[cfg(test)]
fn file_name(raw: &str) -> Option<String> {
    raw_file_name(raw).0.map(|n| strip_prefix_component(&n))
}

/// `name` without its first `n` folders (`-p n`; repeated slashes count as one), or `None`
/// when it has no more than `n` parts.
fn strip_folders(name: &str, n: usize) -> Option<String> {
    let mut rest = name;
    for _ in 0..n {
        let (_, after) = rest.split_once('/')?;
        rest = after.trim_start_matches('/');
    }
    (!rest.is_empty()).then(|| rest.to_owned())
}

/// `a/x` and `b/x` as `x` (git's `-p1`); other names as they are.
fn strip_prefix_component(name: &str) -> String {
    name.strip_prefix("a/").or_else(|| name.strip_prefix("b/")).unwrap_or(name).to_owned()
}

/// The two names of a `diff --git a/x b/x` line (either may be quoted).
fn split_git_names(rest: &str) -> Option<(String, String)> {
    if rest.starts_with('"') {
        let (a, tail) = read_quoted(rest)?;
        let tail = tail.strip_prefix(' ')?;
        let b = if tail.starts_with('"') { read_quoted(tail)?.0 } else { tail.to_owned() };
        return Some((a, b));
    }
    if let Some(idx) = rest.find(" \"") {
        let b = read_quoted(&rest[idx + 1..])?.0;
        return Some((rest[..idx].to_owned(), b));
    }
    // Unquoted: the names are the same length when nothing was renamed; otherwise split at
    // ` b/`.
    let bytes = rest.len();
    if bytes % 2 == 1 {
        let half = bytes / 2;
        let (a, b) = (&rest[..half], &rest[half + 1..]);
        if rest.as_bytes()[half] == b' ' && a.get(2..) == b.get(2..) {
            return Some((a.to_owned(), b.to_owned()));
        }
    }
    let idx = rest.find(" b/")?;
    Some((rest[..idx].to_owned(), rest[idx + 1..].to_owned()))
}

/// A name as written: unquoted C-style when it is quoted.
fn unquote(name: &str) -> String {
    if name.starts_with('"')
        && let Some((res, _)) = read_quoted(name)
    {
        return res;
    }
    name.to_owned()
}

/// A C-style quoted string at the start of `s`, and what follows it.
fn read_quoted(s: &str) -> Option<(String, &str)> {
    let bytes = s.as_bytes();
    if bytes.first() != Some(&b'"') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return Some((String::from_utf8(out).ok()?, &s[i + 1..])),
            b'\\' => {
                i += 1;
                let c = *bytes.get(i)?;
                match c {
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b't' => out.push(b'\t'),
                    b'n' => out.push(b'\n'),
                    b'v' => out.push(11),
                    b'f' => out.push(12),
                    b'r' => out.push(b'\r'),
                    b'0'..=b'7' => {
                        let digits = s.get(i..i + 3)?;
                        out.push(u8::from_str_radix(digits, 8).ok()?);
                        i += 2;
                    }
                    other => out.push(other),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_markers_and_errors() {
        assert_eq!(
            parse_codex("bad").unwrap_err(),
            "invalid patch: The first line of the patch must be '*** Begin Patch'"
        );
        assert_eq!(
            parse_codex("*** Begin Patch\nbad").unwrap_err(),
            "invalid patch: The last line of the patch must be '*** End Patch'"
        );
        assert_eq!(
            parse_codex("*** Begin Patch\n*** Update File: test.py\n*** End Patch").unwrap_err(),
            "invalid hunk at line 2, Update file hunk for path 'test.py' is empty"
        );
        assert_eq!(
            parse_codex("*** Begin Patch\n*** Frob File: x\n*** End Patch").unwrap_err(),
            "invalid hunk at line 2, '*** Frob File: x' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
        );
        assert!(parse_codex("*** Begin Patch\n*** End Patch").unwrap().files.is_empty());
    }

    #[test]
    fn codex_files_of_every_kind() {
        let patch = parse_codex(
            "*** Begin Patch\n*** Add File: path/add.py\n+abc\n+def\n*** Delete File: path/delete.py\n*** Update File: path/update.py\n*** Move to: path/update2.py\n@@ def f():\n-    pass\n+    return 123\n*** End Patch",
        )
        .unwrap();
        assert_eq!(patch.files.len(), 3);
        match &patch.files[0] {
            PatchFile::Add { path, content, .. } => {
                assert_eq!((path.as_str(), content.as_str()), ("path/add.py", "abc\ndef\n"));
            }
            other => panic!("{other:?}"),
        }
        match &patch.files[2] {
            PatchFile::Update { path, move_to, chunks, .. } => {
                assert_eq!(path, "path/update.py");
                assert_eq!(move_to.as_deref(), Some("path/update2.py"));
                assert_eq!(chunks[0].context.as_deref(), Some("def f():"));
                assert_eq!(chunks[0].old, ["    pass"]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_heredoc_around_the_patch_is_dropped() {
        let patch = parse("<<'EOF'\n*** Begin Patch\n*** Add File: foo\n+hi\n*** End Patch\nEOF\n")
            .unwrap();
        assert_eq!(patch.files.len(), 1);
    }

    #[test]
    fn unified_names() {
        assert_eq!(
            split_git_names("a/x y.txt b/x y.txt"),
            Some(("a/x y.txt".into(), "b/x y.txt".into()))
        );
        assert_eq!(split_git_names("a/old b/new"), Some(("a/old".into(), "b/new".into())));
        assert_eq!(
            split_git_names("\"a/t\\tb\" \"b/t\\tb\""),
            Some(("a/t\tb".into(), "b/t\tb".into()))
        );
        assert_eq!(unquote("\"caf\\303\\251\""), "café");
        assert_eq!(file_name("a/x.txt\t2024-01-01 00:00:00"), Some("x.txt".into()));
        assert_eq!(file_name("/dev/null"), None);
        assert_eq!(raw_file_name("/dev/null"), (None, false));
        assert!(is_epoch("1970-01-01 00:00:00.000000000 +0000"));
        assert!(is_epoch("1969-12-31 16:00:00.000000000 -0800"));
        assert!(is_epoch("1970-01-01 05:30:00 +0530"));
        assert!(!is_epoch("1970-01-01 00:00:01.000000000 +0000"));
        assert!(!is_epoch("1970-01-01 00:00:00.5 +0000"));
        assert!(!is_epoch("2024-01-01 00:00:00.000000000 +0000"));
        assert!(!is_epoch(""));
        assert_eq!(
            strip_header_names(Some("old/d/f.txt".into()), Some("new/d/f.txt".into())),
            (Some("d/f.txt".into()), Some("d/f.txt".into()))
        );
        assert_eq!(
            strip_header_names(Some("f.txt".into()), Some("f.txt".into())),
            (Some("f.txt".into()), Some("f.txt".into()))
        );
        assert_eq!(strip_header_names(Some("a/x".into()), None), (Some("x".into()), None));
    }

    #[test]
    fn unified_hunks_keep_line_endings() {
        let patch = parse_unified(
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n",
        )
        .unwrap();
        let PatchFile::Update { chunks, .. } = &patch.files[0] else { panic!() };
        assert_eq!(chunks[0].old, ["a", "b"]);
        assert_eq!(chunks[0].new[0].ending, Some(Ending::CrLf));
        assert_eq!(chunks[0].new[1].ending, Some(Ending::None));
        assert_eq!(chunks[0].at, Some(0));
    }

    #[test]
    fn a_hunk_whose_body_does_not_match_its_header_is_refused() {
        // Undercounted: the rest of the body would be dropped silently.
        assert_eq!(
            parse_unified("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n c\n-d\n+D\n")
                .unwrap_err(),
            "invalid patch: line 3: hunk 1 of f ('@@ -1,2 +1,2 @@') counts 2 old and 2 new lines, but its body goes on to line 9 and has 4 old and 4 new lines; fix the counts in its `@@` header (or make the diff again)"
        );
        // Blank lines inside the rest count as context lines.
        assert!(
            parse_unified("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+A\n\n\n-b\n")
                .unwrap_err()
                .contains("counts 1 old and 1 new lines, but its body goes on to line 8 and has 4 old and 3 new lines")
        );
        // Overcounted, at the end of the diff and before the next file.
        assert_eq!(
            parse_unified("--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n a\n-b\n+B\n c\n").unwrap_err(),
            "invalid patch: line 3: hunk 1 of f ('@@ -1,4 +1,4 @@') counts 4 old and 4 new lines, but its body ends at line 7 with 3 old and 3 new lines; fix the counts in its `@@` header (or make the diff again)"
        );
        assert_eq!(
            parse_unified("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+A\n@@ -5,2 +5,2 @@\n-e\n+E\ndiff --git a/g b/g\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+y\n").unwrap_err(),
            "invalid patch: line 7: hunk 2 of f ('@@ -5,2 +5,2 @@') counts 2 old and 2 new lines, but its body ends at line 9 with 1 old and 1 new lines; fix the counts in its `@@` header (or make the diff again)"
        );
        // What may follow a hunk: blank lines, a mail's signature, the next `diff -u` file,
        // the next commit of `git log -p`.
        for tail in [
            "\n\n",
            "-- \n2.43.0\n\n",
            "--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+y\n",
            "\ncommit 0123\nAuthor: t\n\n    message\n",
        ] {
            let diff = format!("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+A\n{tail}");
            assert!(parse_unified(&diff).is_ok(), "{diff}");
        }
    }
}
