//! What may stand between the two texts of a pair: a language's whitespace, comments and
//! unnamed tokens, scanned in a file's text (the cold check) and followed from each word (the
//! warm index's adjacencies).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, OnceLock, PoisonError},
};

use rustc_hash::FxHashSet;

use ast_grep_core::tree_sitter::LanguageExt;

use crate::lang::Lang;

use super::{is_trivia_char, is_word_byte, pattern::KEYWORD_NEEDLE_LANGS, utf8_width};

/// How a language spells what may stand between two tokens: whitespace, comments, and the
/// unnamed tokens of its grammar.
#[derive(Debug, Clone)]
pub(super) struct Gap {
    pub(super) lang: Lang,
    comments: CommentSyntax,
    /// Every ASCII word in the name of an unnamed node kind (`static get` gives `static` and
    /// `get`): the only words an unnamed token can consist of.
    words: FxHashSet<Box<[u8]>>,
    /// The length of the longest of `words`.
    longest: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CommentSyntax {
    /// `//` to the end of the line and `/* */`, not nested (Go, Java).
    Slashes,
    /// As [`CommentSyntax::Slashes`], plus HTML-like comments (`<!--`, `-->`): JavaScript,
    /// TypeScript, TSX.
    SlashesAndHtml,
    /// `//` and `/* */`, nested (Rust).
    NestedSlashes,
    /// `#` to the end of the line (Python).
    Hash,
}

/// What a scan of the text after one occurrence of a pair's first needle found.
enum Step {
    /// Consumed up to here; go on.
    To(usize),
    /// The pair may occur here (or the scanner cannot tell): the file must be parsed.
    Maybe,
    /// Something no match can have between the two needles.
    Stop,
}

impl Gap {
    /// The gap rules of `lang`, made once per language.
    pub(super) fn of(lang: Lang) -> Arc<Gap> {
        static GAPS: OnceLock<Mutex<HashMap<Lang, Arc<Gap>>>> = OnceLock::new();
        let gaps = GAPS.get_or_init(Mutex::default);
        let mut gaps = gaps.lock().unwrap_or_else(PoisonError::into_inner);
        gaps.entry(lang).or_insert_with(|| Arc::new(Gap::make(lang))).clone()
    }

    fn make(lang: Lang) -> Gap {
        let ts_lang = lang.get_ts_language();
        let comments = match lang {
            Lang::JavaScript | Lang::TypeScript | Lang::Tsx => CommentSyntax::SlashesAndHtml,
            Lang::Rust => CommentSyntax::NestedSlashes,
            Lang::Python => CommentSyntax::Hash,
            _ => CommentSyntax::Slashes,
        };
        let mut words: FxHashSet<Box<[u8]>> = FxHashSet::default();
        for id in 0..ts_lang.node_kind_count() {
            let Ok(id) = u16::try_from(id) else { break };
            if ts_lang.node_kind_is_named(id) {
                continue;
            }
            if let Some(name) = ts_lang.node_kind_for_id(id) {
                words.extend(
                    name.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .filter(|w| !w.is_empty())
                        .map(|w| Box::from(w.as_bytes())),
                );
            }
        }
        let longest = words.iter().map(|w| w.len()).max().unwrap_or(0);
        Gap { lang, comments, words, longest }
    }

    /// Whether one of `seconds` follows one of `firsts` (occurrences of a pair's texts, the
    /// first `first_len` bytes long) with only whitespace, comments and unnamed tokens between;
    /// with `name_between`, also with one name between them, the scan then stepping over one
    /// word of any kind too. The name may be missing (a zero-width node that error recovery
    /// inserts), and a word the scan could step over anyway (`get` in `function get(`) may be
    /// the name: both are tried.
    pub(super) fn pair_occurs(
        &self,
        haystack: &[u8],
        firsts: &[usize],
        first_len: usize,
        seconds: &[usize],
        name_between: bool,
    ) -> bool {
        !seconds.is_empty()
            && firsts.iter().any(|&start| {
                let at = start + first_len;
                self.reaches(haystack, at, seconds)
                    || (name_between && self.reaches_past_name(haystack, at, seconds))
            })
    }

    /// Whether one of `seconds` follows the gap scan from `at`.
    fn reaches(&self, haystack: &[u8], mut at: usize, seconds: &[usize]) -> bool {
        loop {
            if seconds.binary_search(&at).is_ok() {
                return true;
            }
            match self.step(haystack, at) {
                Step::To(next) => at = next,
                Step::Maybe => return true,
                Step::Stop => return false,
            }
        }
    }

    /// Whether one of `seconds` follows the gap scan from `at` past one name.
    fn reaches_past_name(&self, haystack: &[u8], mut at: usize, seconds: &[usize]) -> bool {
        // The words the scan would step over before the name are unnamed tokens': a few at
        // most. Past this many, give up and assume the pair occurs.
        for _ in 0..PAST_NAME_TRIES {
            match self.name_end(haystack, at) {
                Some(Some(end)) if self.reaches(haystack, end, seconds) => return true,
                Some(None) => return true,
                _ => {}
            }
            match self.step(haystack, at) {
                Step::To(next) => at = next,
                Step::Maybe => return true,
                Step::Stop => return false,
            }
        }
        true
    }

    /// If a name (an identifier) may start at `at`: `Some(Some(end))` with where it ends, or
    /// `Some(None)` when the scanner cannot tell (an escape in it). A name here is a run of
    /// ASCII letters, digits, `_`, `$` and DEL (JavaScript's identifiers allow it), and
    /// non-ASCII characters other than whitespace (every grammar's identifier characters are
    /// among them), and Rust's `r#` prefix.
    fn name_end(&self, text: &[u8], at: usize) -> Option<Option<usize>> {
        let mut end = at;
        while let Some(&byte) = text.get(end) {
            if is_word_byte(byte) || byte == b'$' || byte == 0x7F {
                end += 1;
            } else if byte == b'\\' {
                return Some(None);
            } else if byte == b'#' && self.lang == Lang::Rust && &text[at..end] == b"r" {
                end += 1;
            } else if byte.is_ascii() {
                break;
            } else {
                let width = utf8_width(byte).min(text.len() - end);
                let Some(ch) = std::str::from_utf8(&text[end..end + width])
                    .ok()
                    .and_then(|s| s.chars().next())
                else {
                    return Some(None);
                };
                if is_trivia_char(ch) {
                    break;
                }
                end += width;
            }
        }
        (end > at).then_some(Some(end))
    }

    /// Consumes one piece of trivia or one unnamed token's worth of text at `at`.
    fn step(&self, text: &[u8], at: usize) -> Step {
        let Some(&byte) = text.get(at) else { return Step::Stop };
        let rest = &text[at..];
        if let Some(end) = self.comment_end(rest) {
            return end.map_or(Step::Maybe, |len| Step::To(at + len));
        }
        if is_word_byte(byte) {
            let len = rest.iter().take_while(|b| is_word_byte(**b)).count();
            return if self.words.contains(&rest[..len]) { Step::To(at + len) } else { Step::Stop };
        }
        if byte.is_ascii() {
            // Whitespace or punctuation (part of an unnamed token).
            return Step::To(at + 1);
        }
        // Unicode whitespace separates tokens; any other non-ASCII character may belong to
        // an identifier, which no gap can hold. (`at` is always on a character boundary:
        // needles, words, comments and ASCII bytes all end on one.)
        let Some(ch) = std::str::from_utf8(&rest[..utf8_width(byte).min(rest.len())])
            .ok()
            .and_then(|s| s.chars().next())
        else {
            return Step::Maybe;
        };
        if is_trivia_char(ch) { Step::To(at + ch.len_utf8()) } else { Step::Stop }
    }

    /// If `rest` starts with a comment: `Some(Some(len))` with its length, or `Some(None)`
    /// when the scanner cannot be sure where the grammar ends it (then the caller assumes the
    /// pair may occur).
    fn comment_end(&self, rest: &[u8]) -> Option<Option<usize>> {
        let line = |open: usize| {
            let len = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
            // Grammars differ on `\r`, U+2028 and U+2029 inside a line comment: don't guess.
            let body = &rest[open..len];
            let odd = memchr::memchr(b'\r', body).is_some()
                || memchr::memmem::find(body, "\u{2028}".as_bytes()).is_some()
                || memchr::memmem::find(body, "\u{2029}".as_bytes()).is_some();
            (!odd).then_some(len)
        };
        match self.comments {
            CommentSyntax::Hash => rest.starts_with(b"#").then(|| line(1)),
            _ if rest.starts_with(b"//") => Some(line(2)),
            _ if rest.starts_with(b"/*") => {
                let close = memchr::memmem::find(&rest[2..], b"*/").map(|i| i + 2);
                Some(close.and_then(|close| {
                    // Rust nests block comments: an inner `/*` (even overlapping the opening
                    // one, as in `/*/*/`) makes the end uncertain.
                    let nested = self.comments == CommentSyntax::NestedSlashes
                        && memchr::memmem::find(&rest[1..close + 1], b"/*").is_some();
                    (!nested).then_some(close + 2)
                }))
            }
            CommentSyntax::SlashesAndHtml
                if rest.starts_with(b"<!--") || rest.starts_with(b"-->") =>
            {
                Some(None)
            }
            _ => None,
        }
    }
}

/// How many places before the name [`Gap::reaches_past_name`] tries the name at, from
/// one occurrence of the keyword, before it assumes the pair occurs.
const PAST_NAME_TRIES: usize = 64;

/// How far past a word the warm index follows the gap scan; beyond, anything may follow it.
/// (This bounds the work per word, so that no text makes indexing quadratic.)
pub(super) const REACH: usize = 512;

/// Whether the warm index keeps adjacencies for files of `lang`: the languages with pairs.
pub(crate) fn pairs_indexed(lang: Lang) -> bool {
    KEYWORD_NEEDLE_LANGS.contains(&lang)
}

/// Whether a pair's text can be looked up among adjacencies: a word of three bytes or more.
pub(crate) fn is_indexed_word(text: &[u8]) -> bool {
    text.len() >= 3 && text.iter().all(|b| is_word_byte(*b))
}

/// The key of one adjacency: the last three bytes of a word, and the first three of a word
/// the gap scan reaches after it, or `None` when anything may follow.
pub(crate) fn pair_key(tail: &[u8], head: Option<&[u8]>) -> u64 {
    use crate::grams::window_key;
    (window_key(tail) << 24) | head.map_or(0, window_key)
}

/// Calls `emit` with the [`pair_key`] of every adjacency in `text` under `lang`'s gap rules,
/// for the warm index: a file whose keys lack a pair's cannot hold that pair.
///
/// Why that is sound, for a pair of words `first` then `second` (see [`is_indexed_word`]),
/// against [`Gap::pair_occurs`] (the cold test, which the index must never contradict): the
/// scan starts where an occurrence of `first` ends, at some `e` inside a run of word bytes
/// `text[a..b]`. If `e < b`, it finds `second` right there (then `first` followed by `second`
/// is in the text, which the trigrams answer), or it reads the word `text[e..b]`, which must be
/// an unnamed token's, and goes on from `b`. From `b` it visits only positions after trivia and
/// unnamed tokens, so every word byte it lands on starts a run, where `second` is found only as
/// that run's prefix; it goes on past a run only if the run is an unnamed token's word. So
/// this emits, for each run's end `b` and for each `e` where `text[e..b]` is such a word, the
/// last three bytes before it with the first three of each run the scan from `b` lands on,
/// and with `None` wherever the scan would answer "maybe" or goes past [`REACH`].
pub(crate) fn adjacencies(lang: Lang, text: &[u8], mut emit: impl FnMut(u64)) {
    let gap = Gap::of(lang);
    let mut heads: Vec<Option<[u8; 3]>> = Vec::new();
    let mut at = 0;
    while at < text.len() {
        if !is_word_byte(text[at]) {
            at += 1;
            continue;
        }
        let start = at;
        let end = start + text[start..].iter().take_while(|b| is_word_byte(**b)).count();
        at = end;
        if end - start < 3 {
            continue;
        }
        heads.clear();
        gap.reach(text, end, &mut heads);
        if heads.is_empty() {
            continue;
        }
        let from = (start + 3).max(end.saturating_sub(gap.longest));
        let ends =
            std::iter::once(end).chain((from..end).filter(|&e| gap.words.contains(&text[e..end])));
        for e in ends {
            let tail = &text[e - 3..e];
            for head in &heads {
                emit(pair_key(tail, head.as_ref().map(|h| h.as_slice())));
            }
        }
    }
}

impl Gap {
    /// Adds to `heads` the first three bytes of each run of word bytes that the gap scan from
    /// `from` (a run's end) lands on, and `None` where it would answer "maybe" or goes past
    /// [`REACH`] (see [`adjacencies`]).
    fn reach(&self, text: &[u8], from: usize, heads: &mut Vec<Option<[u8; 3]>>) {
        let limit = text.len().min(from + REACH);
        // Only `limit` bytes are looked at; a scan cut there may go on.
        let window = &text[..limit];
        let cut = limit < text.len();
        let mut at = from;
        loop {
            let Some(&byte) = window.get(at) else {
                if cut {
                    heads.push(None);
                }
                return;
            };
            if is_word_byte(byte) {
                let len = window[at..].iter().take_while(|b| is_word_byte(**b)).count();
                if cut && at + len == limit {
                    heads.push(None);
                    return;
                }
                if len >= 3 {
                    heads.push(Some([text[at], text[at + 1], text[at + 2]]));
                }
                if !self.words.contains(&text[at..at + len]) {
                    return;
                }
                at += len;
                continue;
            }
            match self.step(window, at) {
                Step::To(next) => at = next,
                Step::Maybe => {
                    heads.push(None);
                    return;
                }
                Step::Stop => return,
            }
        }
    }
}
