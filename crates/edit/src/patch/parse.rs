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

use super::{
    Chunk, Options, Patch, PatchFile, PatchLine, Style,
    unified::{binary_files, parse_unified_with},
};

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
pub(crate) fn parse_with(input: &str, options: &Options) -> Result<Patch, String> {
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
pub(crate) fn parse_codex(input: &str) -> Result<Patch, String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::{
        Ending,
        names::{file_name, is_epoch, raw_file_name, split_git_names, strip_header_names, unquote},
        unified::parse_unified,
    };

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
