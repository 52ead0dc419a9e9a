//! Where a patch's chunks go in a file, and the byte edits that make them.

use staged_journal::Edit;

use super::{Chunk, Ending, Style};

/// A text cut into lines: where each starts, its text without the line ending, and its ending.
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
    texts: Vec<&'a str>,
    /// The ending of the first line that has one (`\n` when none has).
    preferred: &'static str,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        let mut starts = Vec::new();
        let mut texts = Vec::new();
        let mut preferred = None;
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            starts.push(at);
            at += line.len();
            let body = line.strip_suffix('\n').map_or(line, |l| {
                let crlf = l.ends_with('\r');
                preferred.get_or_insert(if crlf { "\r\n" } else { "\n" });
                l.strip_suffix('\r').unwrap_or(l)
            });
            texts.push(body);
        }
        Lines { text, starts, texts, preferred: preferred.unwrap_or("\n") }
    }

    fn count(&self) -> usize {
        self.texts.len()
    }

    /// The byte where line `idx` starts; the text's length past the last line.
    fn start(&self, idx: usize) -> usize {
        self.starts.get(idx).copied().unwrap_or(self.text.len())
    }
}

/// One way of comparing a file's line with a patch's.
type LineMatch = dyn Fn(&str, &str) -> bool;

/// Where `pattern` starts in `lines`, at `start` or after, trying each way of comparing lines
/// in turn (exact, trailing whitespace ignored, surrounding whitespace ignored, Unicode
/// punctuation as ASCII). With `eof`, the pattern is looked for at the end of the file.
pub fn seek(lines: &[&str], pattern: &[String], start: usize, eof: bool) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start);
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let last = lines.len() - pattern.len();
    let from = if eof { last } else { start };
    let passes: [&LineMatch; 4] = [
        &|a, b| a == b,
        &|a, b| a.trim_end() == b.trim_end(),
        &|a, b| a.trim() == b.trim(),
        &|a, b| normalise(a) == normalise(b),
    ];
    for same in passes {
        for i in from..=last {
            if pattern.iter().enumerate().all(|(k, p)| same(lines[i + k], p)) {
                return Some(i);
            }
        }
    }
    None
}

/// `s` trimmed, with typographic dashes, quotes and spaces as their ASCII counterparts.
fn normalise(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
            | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2004}' | '\u{2005}' | '\u{2006}'
            | '\u{2007}' | '\u{2008}' | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{205F}'
            | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

/// The byte edits that make `chunks` on `text` (the file at `path`), in order.
///
/// # Errors
/// `Failed to find context '<ctx>' in <path>`, or `Failed to find expected lines in <path>:`
/// and the lines, when a chunk has no place in the file.
pub fn apply_chunks(
    path: &str,
    text: &str,
    chunks: &[Chunk],
    style: Style,
) -> Result<Vec<Edit>, String> {
    let lines = Lines::new(text);
    let texts = &lines.texts;
    // (first line, how many lines, the chunk's new lines)
    let mut replacements: Vec<(usize, usize, &[super::PatchLine])> = Vec::new();
    let mut line_index = 0;
    for chunk in chunks {
        if let Some(context) = &chunk.context {
            match seek(texts, std::slice::from_ref(context), line_index, false) {
                Some(idx) => line_index = idx + 1,
                None => return Err(format!("Failed to find context '{context}' in {path}")),
            }
        }
        if chunk.old.is_empty() {
            // A pure insertion: where the hunk says (a unified diff), else at the end, as
            // Codex inserts it.
            let idx = chunk.at.map_or(lines.count(), |at| at.min(lines.count()));
            replacements.push((idx, 0, &chunk.new));
            continue;
        }
        let mut pattern: &[String] = &chunk.old;
        let mut new: &[super::PatchLine] = &chunk.new;
        let exact_at = |at: usize, pattern: &[String]| {
            at >= line_index
                && at + pattern.len() <= texts.len()
                && pattern.iter().enumerate().all(|(k, p)| texts[at + k] == p)
        };
        let mut found = match chunk.at {
            Some(at) if exact_at(at, pattern) => Some(at),
            _ => seek(texts, pattern, line_index, chunk.eof),
        };
        if found.is_none() && pattern.last().is_some_and(String::is_empty) {
            // The last old line may stand for the file's final line ending.
            pattern = &pattern[..pattern.len() - 1];
            if new.last().is_some_and(|l| l.text.is_empty()) {
                new = &new[..new.len() - 1];
            }
            found = seek(texts, pattern, line_index, chunk.eof);
        }
        match found {
            Some(start) => {
                replacements.push((start, pattern.len(), new));
                line_index = start + pattern.len();
            }
            None => {
                return Err(format!(
                    "Failed to find expected lines in {path}:\n{}",
                    chunk.old.join("\n")
                ));
            }
        }
    }
    replacements.sort_by_key(|(idx, _, _)| *idx);
    let mut edits: Vec<Edit> = Vec::with_capacity(replacements.len() + 1);
    let mut prev_end = 0;
    for (idx, len, new) in replacements {
        let start = lines.start(idx);
        let end = lines.start(idx + len);
        if start < prev_end {
            return Err(format!(
                "Failed to apply the patch to {path}: two of its chunks change the same lines"
            ));
        }
        let mut after = String::new();
        // A chunk after an unterminated last line (an insertion at the very end) starts on a
        // line of its own.
        if start == text.len() && !text.is_empty() && !text.ends_with('\n') {
            after.push_str(lines.preferred);
        }
        for line in new {
            // A context line is the file's own line, ending included.
            if let Some(k) = line.context.filter(|k| *k < len) {
                let (from, to) = (lines.start(idx + k), lines.start(idx + k + 1));
                after.push_str(&text[from..to]);
                continue;
            }
            after.push_str(&line.text);
            after.push_str(match line.ending {
                Some(Ending::Lf) => "\n",
                Some(Ending::CrLf) => "\r\n",
                Some(Ending::None) => "",
                None => lines.preferred,
            });
        }
        edits.push(Edit { start, before: text[start..end].to_owned(), after });
        prev_end = end;
    }
    // A file a Codex patch updates ends with a line ending, as Codex writes it.
    if style == Style::Codex && !text.is_empty() {
        match edits.last_mut() {
            Some(last) if last.start + last.before.len() == text.len() => {
                let ends = if last.after.is_empty() {
                    last.start == 0 || text.as_bytes()[last.start - 1] == b'\n'
                } else {
                    last.after.ends_with('\n')
                };
                if !ends {
                    last.after.push_str(lines.preferred);
                }
            }
            _ if !text.ends_with('\n') => edits.push(Edit {
                start: text.len(),
                before: String::new(),
                after: lines.preferred.to_owned(),
            }),
            _ => {}
        }
    }
    // Edits that change nothing are not edits.
    edits.retain(|e| e.before != e.after);
    Ok(edits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::PatchLine;

    fn strings(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn seek_tries_each_pass_in_turn() {
        assert_eq!(seek(&["foo", "bar", "baz"], &strings(&["bar", "baz"]), 0, false), Some(1));
        assert_eq!(seek(&["foo   ", "bar\t\t"], &strings(&["foo", "bar"]), 0, false), Some(0));
        assert_eq!(seek(&["    foo   ", "   bar\t"], &strings(&["foo", "bar"]), 0, false), Some(0));
        assert_eq!(
            seek(
                &["let s = \u{201C}x\u{201D}; // \u{2014}"],
                &strings(&["let s = \"x\"; // -"]),
                0,
                false
            ),
            Some(0)
        );
        assert_eq!(seek(&["just one line"], &strings(&["too", "many", "lines"]), 0, false), None);
        assert_eq!(seek(&["a", "b", "a"], &strings(&["a"]), 1, false), Some(2));
    }

    fn chunk(old: &[&str], new: &[&str]) -> Chunk {
        Chunk {
            context: None,
            old: strings(old),
            new: new.iter().map(|l| PatchLine::codex(l)).collect(),
            eof: false,
            at: None,
        }
    }

    fn applied(text: &str, chunks: &[Chunk]) -> String {
        let edits = apply_chunks("f", text, chunks, Style::Codex).unwrap();
        staged_journal::replay(text, &edits).unwrap()
    }

    #[test]
    fn codex_keeps_crlf_and_ends_with_a_line_ending() {
        assert_eq!(
            applied("a\r\nb\r\nc\r\n", &[chunk(&["b"], &["B", "B2"])]),
            "a\r\nB\r\nB2\r\nc\r\n"
        );
        assert_eq!(applied("a\nb", &[chunk(&["a"], &["A"])]), "A\nb\n");
        assert_eq!(applied("a\nb", &[chunk(&[], &["c"])]), "a\nb\nc\n");
        assert_eq!(applied("a\n\n", &[chunk(&[], &["c"])]), "a\n\nc\n");
    }

    #[test]
    fn context_lines_narrow_the_search() {
        let mut second = chunk(&["x"], &["y"]);
        second.context = Some("fn two()".to_owned());
        assert_eq!(applied("fn one()\nx\nfn two()\nx\n", &[second]), "fn one()\nx\nfn two()\ny\n");
        let mut missing = chunk(&["x"], &["y"]);
        missing.context = Some("fn three()".to_owned());
        assert_eq!(
            apply_chunks("src/f.rs", "x\n", &[missing], Style::Codex).unwrap_err(),
            "Failed to find context 'fn three()' in src/f.rs"
        );
        assert_eq!(
            apply_chunks("src/f.rs", "x\n", &[chunk(&["nope", "no"], &["y"])], Style::Codex)
                .unwrap_err(),
            "Failed to find expected lines in src/f.rs:\nnope\nno"
        );
    }
}
