//! Parsing unified diffs (`git diff`, `format-patch`, `diff -ruN`) into [`Patch`], as `git
//! apply` reads them (see [`super`]).

use super::{
    Chunk, Ending, Options, Patch, PatchFile, PatchLine, Style,
    names::{
        raw_file_name, split_git_names, strip_folders, strip_header_names, strip_prefix_component,
        unquote,
    },
};

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
pub(crate) fn parse_unified_with(input: &str, options: &Options) -> Result<Patch, String> {
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
pub(super) fn binary_files(line: &str) -> Option<String> {
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
    let (mut header, mut i) = match lines[0].strip_prefix("diff --git ") {
        Some(rest) => read_git_header(lines, rest, line_number, options)?,
        None => (GitHeader::default(), 0),
    };
    // `---` and `+++`, unless the section is a rename, a new or a deleted empty file alone.
    let mut sides = Sides::default();
    if i < lines.len() && lines[i].starts_with("--- ") {
        sides = read_sides(lines, i, line_number, &header, options)?;
        i += 2;
    }
    if options.reverse {
        header.reverse();
    }
    let executable = mode_change(&header)?;
    let mut hunks = Vec::new();
    let name = sides.new.clone().or(sides.old.clone()).or(header.to.clone()).unwrap_or_default();
    while i < lines.len() && lines[i].starts_with("@@") {
        let which = format!("hunk {} of {name}", hunks.len() + 1);
        let (chunk, used, counts) =
            parse_unified_hunk(&lines[i..], line_number + i, &which, options.reverse)?;
        beyond_count(&lines[i..], used, line_number + i, &which, counts)?;
        hunks.push(chunk);
        i += used;
    }
    let from = header.rename_from.clone().or(sides.old).or(header.from.clone());
    let to = header.rename_to.clone().or(sides.new).or(header.to.clone());
    // A side dated at the epoch whose hunks hold no line of it: the file is made or deleted.
    let style = if lines[0].ends_with("\r\n") { Style::CrlfSaved } else { Style::Exact };
    let created = header.new_file
        || sides.minus_null
        || (sides.minus_epoch && !hunks.is_empty() && hunks.iter().all(|h| h.old.is_empty()));
    let deleted = header.deleted
        || sides.plus_null
        || (sides.plus_epoch && !hunks.is_empty() && hunks.iter().all(|h| h.new.is_empty()));
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

/// A name of the diff as `-p N` strips it, or as the usual rule does (a leading `a/` or `b/`).
fn strip_name(name: &str, at: usize, options: &Options) -> Result<String, String> {
    match options.strip {
        Some(n) => strip_folders(name, n).ok_or_else(|| {
            format!("invalid patch: line {at}: -p {n} drops {n} folders, but '{name}' has fewer")
        }),
        None => Ok(strip_prefix_component(name)),
    }
}

/// The extended header of a `diff --git` section (`rest`: its first line after `diff --git `),
/// and how many lines it took.
fn read_git_header(
    lines: &[&str],
    rest: &str,
    line_number: usize,
    options: &Options,
) -> Result<(GitHeader, usize), String> {
    let mut header = GitHeader { git: true, ..GitHeader::default() };
    match split_git_names(rest.trim_end_matches(['\n', '\r'])) {
        Some((a, b)) => {
            header.from = Some(strip_name(&a, line_number, options)?);
            header.to = Some(strip_name(&b, line_number, options)?);
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
    let mut i = 1;
    while i < lines.len() {
        let line = lines[i].trim_end_matches(['\n', '\r']);
        let at = line_number + i;
        if line.starts_with("--- ") || line.starts_with("diff --git ") || line.starts_with("@@") {
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
    Ok((header, i))
}

/// What a section's `---` and `+++` lines say of its two sides, as `-R` turns them.
#[derive(Debug, Default)]
struct Sides {
    old: Option<String>,
    new: Option<String>,
    /// A side named `/dev/null`.
    minus_null: bool,
    plus_null: bool,
    /// A side dated at the epoch: GNU `diff -N` names a missing side so.
    minus_epoch: bool,
    plus_epoch: bool,
}

/// Reads the `---` line at `lines[i]` and the `+++` line after it.
fn read_sides(
    lines: &[&str],
    i: usize,
    line_number: usize,
    header: &GitHeader,
    options: &Options,
) -> Result<Sides, String> {
    let minus = lines[i].trim_end_matches(['\n', '\r']);
    let Some(plus) = lines.get(i + 1).map(|l| l.trim_end_matches(['\n', '\r'])) else {
        return Err(format!("invalid patch: line {}: `---` without a `+++` line", line_number + i));
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
    let (old, new) = if header.git || options.strip.is_some() {
        // A `diff --git` section: `a/` and `b/`, as before (`--no-prefix`: as written);
        // or the folders `-p` says.
        (
            old_raw.map(|n| strip_name(&n, at, options)).transpose()?,
            new_raw.map(|n| strip_name(&n, at, options)).transpose()?,
        )
    } else {
        strip_header_names(old_raw, new_raw)
    };
    let sides = Sides {
        minus_null: old.is_none(),
        plus_null: new.is_none(),
        old,
        new,
        minus_epoch: old_epoch,
        plus_epoch: new_epoch,
    };
    Ok(match options.reverse {
        false => sides,
        true => Sides {
            old: sides.new,
            new: sides.old,
            minus_null: sides.plus_null,
            plus_null: sides.minus_null,
            minus_epoch: sides.plus_epoch,
            plus_epoch: sides.minus_epoch,
        },
    })
}

impl GitHeader {
    /// The header of the reversed diff (`-R`).
    fn reverse(&mut self) {
        (self.from, self.to) = (self.to.take(), self.from.take());
        (self.rename_from, self.rename_to) = (self.rename_to.take(), self.rename_from.take());
        (self.new_file, self.deleted) = (self.deleted, self.new_file);
        (self.executable, self.deleted_executable) = (self.deleted_executable, self.executable);
        (self.old_mode, self.new_mode) = (self.new_mode.take(), self.old_mode.take());
    }
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
    let (written_old, written_new) = hunk_ranges(header, line_number)?;
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
                // (Not in a diff saved with CRLF endings, whose `\r`s are all the saving's.)
                let cr = last_ending == Ending::CrLf && !lines[0].ends_with("\r\n");
                no_newline(&mut chunk, last, cr);
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

/// One side's range in a hunk header: its first line and its length.
type HunkRange = (usize, usize);

/// The old and the new range of a hunk header `@@ -a,b +c,d @@`.
fn hunk_ranges(header: &str, line_number: usize) -> Result<(HunkRange, HunkRange), String> {
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
    Ok((range(old_range).ok_or_else(bad)?, range(new_range).ok_or_else(bad)?))
}

/// A `\ No newline at end of file` after a line of side `last`: that line has no line ending,
/// and with `cr`, the `\r` before its `\n` is its text's (`x\r` at the end of a file), as git
/// reads it.
fn no_newline(chunk: &mut Chunk, last: Option<char>, cr: bool) {
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
