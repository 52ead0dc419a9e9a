//! Where a patch's chunks go in a file, and the byte edits that make them.

use std::{borrow::Cow, collections::HashMap};

use staged_journal::Edit;

use super::{Chunk, Ending, Style};

/// A text cut into lines: where each starts, its text without the line ending, and its ending.
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
    texts: Vec<&'a str>,
    /// The ending of the first line that has one (`\n` when none has).
    preferred: &'static str,
    /// Whether a lone `\r` ends a line (Codex's format).
    lone_cr: bool,
}

impl<'a> Lines<'a> {
    /// `text`'s lines, each ended by `\n` or `\r\n`; with `lone_cr` (Codex's format, as
    /// Codex reads a file), a `\r` not before a `\n` ends a line too.
    fn new(text: &'a str, lone_cr: bool) -> Lines<'a> {
        let bytes = text.as_bytes();
        let mut starts = Vec::new();
        let mut texts = Vec::new();
        let mut preferred = None;
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            let (end, ending) = match bytes[i] {
                b'\n' if i > start && bytes[i - 1] == b'\r' => (i - 1, "\r\n"),
                b'\n' => (i, "\n"),
                b'\r' if lone_cr && bytes.get(i + 1) != Some(&b'\n') => (i, "\r"),
                _ => {
                    i += 1;
                    continue;
                }
            };
            starts.push(start);
            texts.push(&text[start..end]);
            preferred.get_or_insert(ending);
            i += 1;
            start = i;
        }
        if start < bytes.len() {
            starts.push(start);
            texts.push(&text[start..]);
        }
        Lines { text, starts, texts, preferred: preferred.unwrap_or("\n"), lone_cr }
    }

    /// Whether `s` ends with a line ending, as these lines are cut.
    fn ends_line(&self, s: &str) -> bool {
        s.ends_with('\n') || (self.lone_cr && s.ends_with('\r'))
    }

    fn count(&self) -> usize {
        self.texts.len()
    }

    /// The byte where line `idx` starts; the text's length past the last line.
    fn start(&self, idx: usize) -> usize {
        self.starts.get(idx).copied().unwrap_or(self.text.len())
    }
}

/// How many lines the search for one file's chunks may step over before it gives up: a
/// patch of thousands of chunks that each match only loosely, on a file of hundreds of
/// thousands of lines, would otherwise take minutes (each loose match searches the rest of
/// the file once per way of comparing).
pub(crate) const SEEK_BUDGET: u64 = 1 << 28;

/// The ways of comparing a file's line with a patch's, in the order they are tried: exact,
/// trailing whitespace ignored, surrounding whitespace ignored, Unicode dashes, quotes and
/// spaces as ASCII. Each is coarser than the one before: lines equal one way are equal every
/// later way.
const PASSES: usize = 4;

/// A line as pass `pass` compares it.
fn key(pass: usize, line: &str) -> Cow<'_, str> {
    match pass {
        0 => Cow::Borrowed(line),
        1 => Cow::Borrowed(line.trim_end()),
        2 => Cow::Borrowed(line.trim()),
        _ => normalise(line),
    }
}

/// A file's lines numbered one way of comparing: equal lines get equal numbers.
#[derive(Debug)]
struct Numbered<'a> {
    ids: Vec<u32>,
    of: HashMap<Cow<'a, str>, u32>,
}

/// Finds chunks in a file's lines. Each way of comparing numbers the lines once (by a hash
/// of what it compares), and a chunk is then looked for as a run of numbers (Knuth–Morris–
/// Pratt), so one search steps over each line once, whatever the chunk's length: a chunk
/// of K lines that almost matches at each of N lines costs N + K, not N × K.
#[derive(Debug)]
pub(crate) struct Seeker<'a> {
    lines: &'a [&'a str],
    numbered: [Option<Numbered<'a>>; PASSES],
    steps: u64,
    budget: u64,
}

/// The search stepped over more than [`SEEK_BUDGET`] lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OverBudget {
    /// How many lines it stepped over.
    pub steps: u64,
}

impl<'a> Seeker<'a> {
    /// A seeker over `lines` (without their line endings).
    pub(crate) fn new(lines: &'a [&'a str]) -> Seeker<'a> {
        Seeker { lines, numbered: [None, None, None, None], steps: 0, budget: SEEK_BUDGET }
    }

    fn numbered(&mut self, pass: usize) -> &Numbered<'a> {
        let lines = self.lines;
        self.numbered[pass].get_or_insert_with(|| {
            let mut of: HashMap<Cow<'a, str>, u32> = HashMap::new();
            let ids = lines
                .iter()
                .map(|line| {
                    let next = u32::try_from(of.len()).unwrap_or(u32::MAX);
                    *of.entry(key(pass, line)).or_insert(next)
                })
                .collect();
            Numbered { ids, of }
        })
    }

    /// Where `pattern` starts in the lines, at `start` or after, trying each way of
    /// comparing lines in turn (exact, trailing whitespace ignored, surrounding whitespace
    /// ignored, Unicode punctuation as ASCII). With `eof`, the pattern is looked for at the
    /// end of the file only.
    ///
    /// # Errors
    /// [`OverBudget`] once this seeker's searches, together, stepped over more than
    /// [`SEEK_BUDGET`] lines.
    pub(crate) fn seek(
        &mut self,
        pattern: &[String],
        start: usize,
        eof: bool,
    ) -> Result<Option<usize>, OverBudget> {
        if pattern.is_empty() {
            return Ok(Some(start));
        }
        if pattern.len() > self.lines.len() {
            return Ok(None);
        }
        let last = self.lines.len() - pattern.len();
        let from = if eof { last } else { start };
        if from > last {
            return Ok(None);
        }
        // The coarsest way first: where it finds nothing, no way does; where it finds the
        // pattern, a finer way's first match is there or later.
        let Some(coarse) = self.find(PASSES - 1, pattern, from)? else {
            return Ok(None);
        };
        for pass in 0..PASSES - 1 {
            if let Some(at) = self.find(pass, pattern, coarse)? {
                return Ok(Some(at));
            }
        }
        Ok(Some(coarse))
    }

    /// The first run of `pattern` at `from` or later, compared the way of `pass`.
    fn find(
        &mut self,
        pass: usize,
        pattern: &[String],
        from: usize,
    ) -> Result<Option<usize>, OverBudget> {
        let numbered = self.numbered(pass);
        let mut needle = Vec::with_capacity(pattern.len());
        for line in pattern {
            match numbered.of.get(key(pass, line).as_ref()) {
                Some(id) => needle.push(*id),
                // A line the file does not have.
                None => return Ok(None),
            }
        }
        let found = kmp(&numbered.ids, from, &needle);
        self.steps += found.map_or(numbered.ids.len(), |at| at + needle.len()).saturating_sub(from)
            as u64
            + needle.len() as u64;
        if self.steps > self.budget {
            return Err(OverBudget { steps: self.steps });
        }
        Ok(found)
    }
}

/// The first place at `from` or later where `needle` (not empty) runs in `hay`.
fn kmp(hay: &[u32], from: usize, needle: &[u32]) -> Option<usize> {
    // fail[i]: the length of the longest proper prefix of needle[..=i] that ends it.
    let mut fail = vec![0usize; needle.len()];
    let mut k = 0;
    for i in 1..needle.len() {
        while k > 0 && needle[i] != needle[k] {
            k = fail[k - 1];
        }
        if needle[i] == needle[k] {
            k += 1;
        }
        fail[i] = k;
    }
    let mut k = 0;
    for (i, &id) in hay.iter().enumerate().skip(from) {
        while k > 0 && id != needle[k] {
            k = fail[k - 1];
        }
        if id == needle[k] {
            k += 1;
            if k == needle.len() {
                return Some(i + 1 - k);
            }
        }
    }
    None
}

/// `s` trimmed, with typographic dashes, quotes and spaces as their ASCII counterparts.
fn normalise(s: &str) -> Cow<'_, str> {
    let s = s.trim();
    let ascii = |c: char| match c {
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => Some('-'),
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => Some('\''),
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => Some('"'),
        '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2004}' | '\u{2005}' | '\u{2006}'
        | '\u{2007}' | '\u{2008}' | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{205F}'
        | '\u{3000}' => Some(' '),
        _ => None,
    };
    if s.is_ascii() || !s.chars().any(|c| ascii(c).is_some()) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(s.chars().map(|c| ascii(c).unwrap_or(c)).collect())
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
    place(path, text, chunks, style, SEEK_BUDGET)
}

/// [`apply_chunks`], with a budget of line comparisons.
fn place(
    path: &str,
    text: &str,
    chunks: &[Chunk],
    style: Style,
    budget: u64,
) -> Result<Vec<Edit>, String> {
    if style == Style::CrlfSaved
        && text.split_inclusive('\n').any(|l| l.ends_with('\n') && !l.ends_with("\r\n"))
    {
        return Err(format!(
            "{path}'s lines end with LF, but the patch's end with CRLF (it was saved with Windows line endings): applying it would mix line endings in {path}. Convert the patch to LF (dos2unix) and apply it again"
        ));
    }
    let lines = Lines::new(text, style == Style::Codex);
    let replacements = locate(path, &lines, chunks, budget)?;
    let mut edits = to_edits(path, text, &lines, replacements)?;
    // A file a Codex patch updates ends with a line ending, as Codex writes it.
    if style == Style::Codex && !text.is_empty() {
        end_with_line_ending(&mut edits, text, &lines);
    }
    // Edits that change nothing are not edits.
    edits.retain(|e| e.before != e.after);
    Ok(edits)
}

/// A chunk's place: its first line, how many lines it replaces, and its new lines.
type Replacement<'c> = (usize, usize, &'c [super::PatchLine]);

/// Where each chunk goes: one replacement per chunk, found in order, each searched from where
/// the previous one ended (see [`Seeker`]).
fn locate<'c>(
    path: &str,
    lines: &Lines<'_>,
    chunks: &'c [Chunk],
    budget: u64,
) -> Result<Vec<Replacement<'c>>, String> {
    let texts = &lines.texts;
    let mut replacements: Vec<Replacement<'c>> = Vec::new();
    let mut seeker = Seeker::new(texts);
    seeker.budget = budget;
    let too_long = |n: usize, chunk: &Chunk, _: OverBudget| {
        format!(
            "Failed to apply the patch to {path}: finding where its chunk {} goes (the one starting '{}') took more than {budget} line comparisons; give each chunk's lines exactly as the file has them, or split the patch into smaller ones",
            n + 1,
            chunk.context.as_deref().or(chunk.old.first().map(String::as_str)).unwrap_or(""),
        )
    };
    let mut line_index = 0;
    for (n, chunk) in chunks.iter().enumerate() {
        if let Some(context) = &chunk.context {
            match seeker
                .seek(std::slice::from_ref(context), line_index, false)
                .map_err(|over| too_long(n, chunk, over))?
            {
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
            _ => seeker
                .seek(pattern, line_index, chunk.eof)
                .map_err(|over| too_long(n, chunk, over))?,
        };
        if found.is_none() && pattern.last().is_some_and(String::is_empty) {
            // The last old line may stand for the file's final line ending.
            pattern = &pattern[..pattern.len() - 1];
            if new.last().is_some_and(|l| l.text.is_empty()) {
                new = &new[..new.len() - 1];
            }
            found = seeker
                .seek(pattern, line_index, chunk.eof)
                .map_err(|over| too_long(n, chunk, over))?;
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
    Ok(replacements)
}

/// The edits of `text` that make the replacements, sorted.
fn to_edits(
    path: &str,
    text: &str,
    lines: &Lines<'_>,
    mut replacements: Vec<Replacement<'_>>,
) -> Result<Vec<Edit>, String> {
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
        if start == text.len() && !text.is_empty() && !lines.ends_line(text) {
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
    Ok(edits)
}

/// Makes the edits end the file with a line ending, as Codex writes a file it updates.
fn end_with_line_ending(edits: &mut Vec<Edit>, text: &str, lines: &Lines<'_>) {
    match edits.last_mut() {
        Some(last) if last.start + last.before.len() == text.len() => {
            let ends = if last.after.is_empty() {
                last.start == 0 || lines.ends_line(&text[..last.start])
            } else {
                lines.ends_line(&last.after)
            };
            if !ends {
                last.after.push_str(lines.preferred);
            }
        }
        _ if !lines.ends_line(text) => edits.push(Edit {
            start: text.len(),
            before: String::new(),
            after: lines.preferred.to_owned(),
        }),
        _ => {}
    }
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
        fn seek(lines: &[&str], pattern: &[String], start: usize, eof: bool) -> Option<usize> {
            Seeker::new(lines).seek(pattern, start, eof).unwrap()
        }
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

    /// The search as it was: each pass compares the pattern at every line.
    fn naive(lines: &[&str], pattern: &[String], start: usize, eof: bool) -> Option<usize> {
        if pattern.is_empty() {
            return Some(start);
        }
        if pattern.len() > lines.len() {
            return None;
        }
        let last = lines.len() - pattern.len();
        let from = if eof { last } else { start };
        (0..PASSES).find_map(|pass| {
            (from..=last).find(|&i| {
                pattern.iter().enumerate().all(|(k, p)| key(pass, lines[i + k]) == key(pass, p))
            })
        })
    }

    #[test]
    fn the_numbered_search_finds_what_comparing_at_every_line_finds() {
        // Lines from a small alphabet, so that patterns almost match often.
        let alphabet = ["a", "a ", " a", "b", "\u{2013}", "-", "", "a\u{00A0}"];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..20_000 {
            let lines: Vec<&str> = (0..next(12)).map(|_| alphabet[next(alphabet.len())]).collect();
            let pattern: Vec<String> =
                (0..next(5)).map(|_| alphabet[next(alphabet.len())].to_owned()).collect();
            let (start, eof) = (next(lines.len() + 2), next(4) == 0);
            assert_eq!(
                Seeker::new(&lines).seek(&pattern, start, eof).unwrap(),
                naive(&lines, &pattern, start, eof),
                "{lines:?} {pattern:?} from {start}, eof {eof}"
            );
        }
    }

    #[test]
    fn a_search_past_its_budget_stops_and_says_which_chunk() {
        let mut text = vec!["a"; 99];
        text.push("b ");
        let mut seeker = Seeker::new(&text);
        seeker.budget = 250;
        // Each search: the coarsest way steps over the 100 lines and the 2 of the pattern;
        // the exact way knows no "b"; the next finds it at once (4). The third stops after
        // the coarsest way.
        assert_eq!(seeker.seek(&strings(&["a", "b"]), 0, false), Ok(Some(98)));
        assert_eq!(seeker.seek(&strings(&["a", "b"]), 0, false), Ok(Some(98)));
        assert_eq!(seeker.seek(&strings(&["a", "b"]), 0, false), Err(OverBudget { steps: 314 }));
        let text = text.join("\n") + "\n";
        let chunks = [chunk(&["a", "b"], &["c"])];
        assert!(place("f", &text, &chunks, Style::Codex, 250).is_ok());
        let chunks =
            [chunk(&["a"], &["c"]), chunk(&["a", "b"], &["c"]), chunk(&["a", "b"], &["c"])];
        assert_eq!(
            place("f", &text, &chunks, Style::Codex, 100).unwrap_err(),
            "Failed to apply the patch to f: finding where its chunk 2 goes (the one starting 'a') took more than 100 line comparisons; give each chunk's lines exactly as the file has them, or split the patch into smaller ones"
        );
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
    fn in_codex_format_a_lone_carriage_return_ends_a_line() {
        // Codex's scenario 024: the line written takes the file's (first line's) ending.
        let mut three = chunk(&["one", "two", "three", "four"], &["one", "two", "THREE", "four"]);
        for (k, line) in three.new.iter_mut().enumerate() {
            if k != 2 {
                line.context = Some(k);
            }
        }
        assert_eq!(
            applied("one\r\ntwo\rthree\nfour\r\n", &[three]),
            "one\r\ntwo\rTHREE\r\nfour\r\n"
        );
        // A file ending with a lone `\r` ends with a line ending; one cut there is not new.
        assert_eq!(applied("a\rb\r", &[chunk(&["b"], &["B"])]), "a\rB\r");
        assert_eq!(applied("a\rb", &[chunk(&[], &["c"])]), "a\rb\rc\r");
        // In a unified diff a `\r` is text, as in git.
        let edits = apply_chunks("f", "a\rb\n", &[chunk(&["a"], &["A"])], Style::Exact);
        assert!(edits.unwrap_err().starts_with("Failed to find expected lines in f"));
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
