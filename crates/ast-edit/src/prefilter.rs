//! The prefilter: literal texts a file must contain for a pattern to possibly match, so that
//! files lacking them are never parsed.
//!
//! Every named leaf of a pattern (an identifier, a literal) must be matched by a candidate
//! node with the same text under every strictness except `signature`, so each such text is a
//! substring of any file that matches.
//!
//! Unnamed leaves (punctuation, keywords) are compared by kind only, and only `cst` and `smart`
//! never skip them (except right after a `$$$` ellipsis, where trivial leaves are skipped).
//! A keyword's kind is the literal string the grammar lexes it from, so under `cst` and
//! `smart` a required keyword leaf is a needle too: `use $A;` cannot match a Rust file without
//! `use`. This holds only for word-like keywords whose kind name is their text, in grammars
//! whose keywords are case-sensitive literals (no aliases, no zero-width tokens), so it is
//! limited to [`KEYWORD_NEEDLE_LANGS`]; punctuation is never used (JavaScript inserts
//! zero-width `;` tokens). Comments may be skipped, so they are never used. These grammars lex
//! keywords by keyword extraction (the whole identifier-like lexeme must equal the keyword), so
//! a keyword occurrence only counts when no ASCII letter, digit or `_` touches it: `use` in
//! `unused` or `because` does not.
//!
//! Pairs. Under `cst` and `smart`, in the same languages, two named leaves that are children
//! of one pattern node with only unnamed leaves between them (`util` and `deprecate` in
//! `util.deprecate($$$A)`, `mem` and `forget` in `mem::forget($A)`), or a keyword needle and
//! a named leaf after it (`interface` and `Foo` in `interface Foo { $$$B }`), are matched by
//! sibling candidate nodes, and ast-grep matches siblings in order, skipping only unnamed
//! nodes and extras (comments) between them. So in a match, the text between the two leaves consists of
//! whitespace, comments and unnamed tokens. The same holds across a node boundary: before the
//! child that matches a pattern node's first child, a candidate holds only unnamed nodes and
//! extras, so a sibling that starts with a leaf (after unnamed leaves) starts the pair's second
//! text; and a node of a kind whose grammar rule ends with one mandatory symbol (a path or a
//! member access, see `closed_kind`) ends with the leaf its last child matched, so in
//! `std::mem::take($A)` the inner `std::mem` ends with `mem`, and `mem` and `take` are a pair
//! too: the longer path prunes at least as well as its tail. (Other kinds may end with
//! children that `smart` skips after the pattern's last one.) [`Gap`] scans that text after every occurrence of
//! the first leaf: it steps over whitespace (Unicode too), comments in the language's syntax,
//! ASCII punctuation, and words that occur in the name of one of the grammar's unnamed node
//! kinds; it fails on any other word or character, and it gives up (assumes a match) where it
//! cannot be sure where the grammar ends a comment. A file where no occurrence of the first
//! leaf is followed that way by the second is not parsed: `util.inspect(x); deprecate(f)` holds
//! both texts but not the pair.
//!
//! Names. In node kinds whose grammar always puts one name after a keyword (`function` in a
//! TypeScript `function_signature`, `fn` in a Rust `function_item`; [`name_after_keyword`]),
//! a single metavariable right after the keyword binds that name, an identifier token. So
//! the keyword, one word, and what the next pattern sibling starts with make a pair with the
//! word between: `function $F($$$P): $R;` needs `function`, a name, then `(`, and skips
//! the files where `function` is only followed by `(`, `<T>` or prose. The next sibling's
//! text may be a needle leaf as above, or its first leaf if that is a keyword or an opening
//! bracket.
//!
//! Pairs hold in syntax trees without errors. Error recovery wraps the tokens it skips in an
//! ERROR node that ast-grep skips like a comment, so in a file with a syntax error any text may
//! stand between two leaves of a match (`util 1 .deprecate(x)` matches `util.deprecate($A)`),
//! and a token it inserts has no text at all. [`ErrorTrees`] says what becomes of such files:
//! `ast_edit` skips them, so every pair holds (the prefilter's only effect on such a file is
//! that, when it cannot match, its syntax error is not reported); `ast_grep` searches them but
//! leaves out a match that spans skipped text (its text is not what the pattern says), so the
//! pairs whose second text is a named leaf hold (an inserted named leaf has no text, so no
//! text needle matches it); `ast_edit` with `include_parse_errors` counts every match in
//! them, so no pair holds there.
//!
//! A warm index answers the pair question for files it knows without reading them: see
//! [`adjacencies`] (names between aside: those are left to the cold scan).
//!
//! Skipping a file therefore never changes the replacements found; the only visible effect is
//! that a file which cannot match is not parsed, so its syntax errors are not reported.
//!
//! The same argument holds inside a file: the node a match starts at spans the leaf that
//! matched each needle, so a subtree whose byte range holds no occurrence of a needle cannot
//! contain a match, and the engine does not walk it ([`Occurrences`]). (The known span bug of
//! tree-sitter-typescript, tree-sitter/tree-sitter-typescript#306, makes spans too wide, with
//! leading whitespace; that only weakens the pruning.) The property tests in
//! `tests/prefilter.rs` and `bench/compare.sh`'s "same edits without prefilter" column compare
//! every result with the prefilter off.

use std::{
    borrow::Cow,
    collections::HashMap,
    sync::{Arc, Mutex, OnceLock, PoisonError},
};

use rustc_hash::FxHashSet;

use ast_grep_core::{
    Pattern,
    matcher::PatternNode,
    meta_var::MetaVariable,
    tree_sitter::{LanguageExt, TSLanguage},
};

use crate::{lang::Lang, params::Strictness};

/// Literal texts all of which a file must contain, and pairs of them that must occur with
/// only trivia between them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Needles {
    texts: Vec<Needle>,
    pairs: Vec<Pair>,
    /// What may stand between the two texts of a pair.
    gap: Option<Arc<Gap>>,
}

/// Two named leaves of one pattern node's children with only unnamed leaves between them,
/// as in `util.deprecate` or `mem::forget`: in a match, the candidate's text between them is
/// whitespace, comments and unnamed tokens only (see the module documentation). Or a keyword,
/// a name, and what follows it, as in `function $F(`: then one word (the name) stands
/// between them too.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pair {
    first: String,
    /// `first` is a keyword: only its occurrences no word character touches count.
    first_keyword: bool,
    /// One name stands between the two texts: `first` is a keyword that [`name_after_keyword`]
    /// lists for the pattern node, followed by a single metavariable.
    name_between: bool,
    second: String,
    /// `second` is a keyword: only its occurrences no word character touches count.
    second_keyword: bool,
    /// `second` is an unnamed token (a keyword or an opening bracket), not a named leaf.
    second_token: bool,
}

/// What becomes of files whose syntax tree has errors, which decides the pairs that hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorTrees {
    /// They are skipped (`ast_edit`): every pair holds.
    Skipped,
    /// They are searched, but a match that spans text the parser skipped is left out
    /// (`ast_grep`): the pairs whose second text is a named leaf hold.
    SearchedWithoutSkippedText,
    /// Every match in them counts (`ast_edit` with `include_parse_errors`): no pair holds.
    Searched,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Needle {
    text: String,
    /// A keyword: only occurrences not touching a word character count.
    whole_word: bool,
}

/// Where one needle occurs in a file (overlapping occurrences included), to prune subtrees
/// that hold none.
#[derive(Debug, Clone)]
pub(crate) struct Occurrences {
    starts: Vec<usize>,
    len: usize,
}

impl Occurrences {
    /// Where the first occurrence that starts at `at` or after starts.
    pub(crate) fn first_from(&self, at: usize) -> Option<usize> {
        self.starts.get(self.starts.partition_point(|&s| s < at)).copied()
    }

    /// Whether an occurrence lies wholly inside `range`.
    pub(crate) fn within(&self, range: std::ops::Range<usize>) -> bool {
        let first = self.starts.partition_point(|&s| s < range.start);
        self.starts.get(first).is_some_and(|&s| s + self.len <= range.end)
    }
}

/// What the needles say about one file.
#[derive(Debug)]
pub(crate) enum Located {
    /// A needle is missing: the rule cannot match.
    Missing,
    /// Every needle is present; the rarest one, if any, to prune subtrees with.
    Present(Option<Occurrences>),
}

impl Needles {
    /// The needles of a compiled pattern; none (match everything) for `signature`. Which
    /// pairs hold depends on what becomes of files with syntax errors (see the module
    /// documentation).
    pub(crate) fn of(
        pattern: &Pattern,
        lang: Lang,
        strictness: Strictness,
        error_trees: ErrorTrees,
    ) -> Needles {
        if strictness == Strictness::Signature {
            return Needles::default();
        }
        let ts_lang = lang.get_ts_language();
        let keywords = matches!(strictness, Strictness::Smart | Strictness::Cst)
            && KEYWORD_NEEDLE_LANGS.contains(&lang);
        let mut texts = Vec::new();
        let mut pairs = Vec::new();
        let found = Found { lang, ts_lang: &ts_lang };
        collect(&pattern.node, &found, keywords, &mut texts, &mut pairs);
        match error_trees {
            ErrorTrees::Skipped => {}
            ErrorTrees::SearchedWithoutSkippedText => pairs.retain(|p| !p.second_token),
            ErrorTrees::Searched => pairs.clear(),
        }
        pairs.dedup();
        pairs.truncate(4);
        let gap = (!pairs.is_empty()).then(|| Gap::of(lang));
        texts.sort();
        // A text that is both a plain needle and a keyword counts as plain (the weaker test).
        texts.dedup_by(|later, earlier| later.text == earlier.text);
        texts.sort_by_key(|t| std::cmp::Reverse(t.text.len()));
        texts.truncate(4);
        Needles { texts, pairs, gap }
    }

    /// Whether a text whose trigrams are `grams` may contain every needle (and both texts of
    /// every pair): `false` only when one cannot occur in it, so the file cannot match.
    pub(crate) fn may_occur_in(&self, grams: &crate::grams::Grams) -> bool {
        // The pairs first: they rule out the most files (`mem` then `take`, where `mem` and
        // `take` alone are in most).
        self.pairs.iter().all(|p| {
            // The index keeps which word follows which, not what follows the word after.
            let adjacent = || {
                self.gap.as_ref().is_none_or(|gap| grams.may_follow(gap.lang, &p.first, &p.second))
            };
            (p.name_between || adjacent())
                && grams.may_contain(p.first.as_bytes())
                && grams.may_contain(p.second.as_bytes())
        }) && self.texts.iter().all(|n| grams.may_contain(n.text.as_bytes()))
    }

    /// Whether `haystack` contains every needle, and where the rarest one is.
    pub(crate) fn locate(&self, haystack: &[u8]) -> Located {
        let mut found: Vec<(&Needle, Vec<usize>)> = Vec::with_capacity(self.texts.len());
        for needle in &self.texts {
            let starts = occurrences(haystack, &needle.text, needle.whole_word);
            if starts.is_empty() {
                return Located::Missing;
            }
            found.push((needle, starts));
        }
        if let Some(gap) = &self.gap {
            // A pair's texts are usually needles already: reuse their occurrences.
            let starts_of = |text: &str, whole_word: bool| match found
                .iter()
                .find(|(n, _)| n.whole_word == whole_word && n.text == text)
            {
                Some((_, starts)) => Cow::Borrowed(starts.as_slice()),
                None => Cow::Owned(occurrences(haystack, text, whole_word)),
            };
            for pair in &self.pairs {
                let firsts = starts_of(&pair.first, pair.first_keyword);
                let seconds = starts_of(&pair.second, pair.second_keyword);
                let occurs = match pair.name_between {
                    false => gap.pair_occurs(haystack, &firsts, pair.first.len(), &seconds),
                    true => {
                        gap.pair_occurs_past_name(haystack, &firsts, pair.first.len(), &seconds)
                    }
                };
                if !occurs {
                    return Located::Missing;
                }
            }
        }
        let rarest = found.into_iter().min_by_key(|(_, starts)| starts.len());
        Located::Present(rarest.map(|(n, starts)| Occurrences { starts, len: n.text.len() }))
    }
}

/// Where `text` starts in `haystack`, overlapping occurrences included; with `whole_word`,
/// only those no word character touches.
fn occurrences(haystack: &[u8], text: &str, whole_word: bool) -> Vec<usize> {
    let bytes = text.as_bytes();
    let finder = memchr::memmem::Finder::new(bytes);
    let mut starts = Vec::new();
    let mut from = 0;
    while let Some(at) = haystack.get(from..).and_then(|rest| finder.find(rest)) {
        let start = from + at;
        from = start + 1;
        if whole_word && !stands_alone(haystack, start, bytes.len()) {
            continue;
        }
        starts.push(start);
    }
    starts
}

/// How a language spells what may stand between two tokens: whitespace, comments, and the
/// unnamed tokens of its grammar.
#[derive(Debug, Clone)]
struct Gap {
    lang: Lang,
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
    fn of(lang: Lang) -> Arc<Gap> {
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
    /// first `first_len` bytes long) with only whitespace, comments and unnamed tokens between.
    fn pair_occurs(
        &self,
        haystack: &[u8],
        firsts: &[usize],
        first_len: usize,
        seconds: &[usize],
    ) -> bool {
        !seconds.is_empty()
            && firsts.iter().any(|&start| self.reaches(haystack, start + first_len, seconds))
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

    /// Whether one of `seconds` follows one of `firsts` with one name between them, and
    /// otherwise only whitespace, comments and unnamed tokens: as [`Gap::pair_occurs`], where
    /// the scan may also step over one word of any kind. The name may be missing (a zero-width
    /// node that error recovery inserts), and a word the scan could step over anyway (`get`
    /// in `function get(`) may be the name: both are tried.
    fn pair_occurs_past_name(
        &self,
        haystack: &[u8],
        firsts: &[usize],
        first_len: usize,
        seconds: &[usize],
    ) -> bool {
        !seconds.is_empty()
            && firsts.iter().any(|&start| {
                let mut at = start + first_len;
                if self.reaches(haystack, at, seconds) {
                    return true;
                }
                // The words the scan would step over before the name are unnamed tokens':
                // a few at most. Past this many, give up and assume the pair occurs.
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
            })
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

/// How many places before the name [`Gap::pair_occurs_past_name`] tries the name at, from
/// one occurrence of the keyword, before it assumes the pair occurs.
const PAST_NAME_TRIES: usize = 64;

/// How far past a word the warm index follows the gap scan; beyond, anything may follow it.
/// (This bounds the work per word, so that no text makes indexing quadratic.)
const REACH: usize = 512;

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

/// Languages whose keyword leaves are needles (see the module documentation). Each has a
/// prefilter property test.
const KEYWORD_NEEDLE_LANGS: &[Lang] = &[
    Lang::Rust,
    Lang::JavaScript,
    Lang::TypeScript,
    Lang::Tsx,
    Lang::Python,
    Lang::Go,
    Lang::Java,
];

/// What [`collect`] needs to know besides the pattern.
struct Found<'l> {
    lang: Lang,
    ts_lang: &'l TSLanguage,
}

fn collect(
    node: &PatternNode,
    found: &Found<'_>,
    keywords: bool,
    out: &mut Vec<Needle>,
    pairs: &mut Vec<Pair>,
) {
    let ts_lang = found.ts_lang;
    match node {
        PatternNode::MetaVar { .. } => {}
        PatternNode::Terminal { text, is_named: true, kind_id } => {
            if let Some(text) = plain_needle(text, *kind_id, ts_lang) {
                out.push(Needle { text: text.to_owned(), whole_word: false });
            }
        }
        PatternNode::Terminal { text, is_named: false, kind_id } => {
            if keywords && is_keyword_leaf(text, *kind_id, ts_lang) {
                out.push(Needle { text: text.clone(), whole_word: true });
            }
        }
        PatternNode::Internal { children, kind_id } => {
            let kind = ts_lang.node_kind_for_id(*kind_id).unwrap_or_default();
            // After an ellipsis, unnamed leaves may be skipped: stop using them.
            let mut after_ellipsis = false;
            for (i, child) in children.iter().enumerate() {
                if let PatternNode::MetaVar {
                    meta_var: MetaVariable::Multiple | MetaVariable::MultiCapture(_),
                } = child
                {
                    after_ellipsis = true;
                }
                let keywords = keywords && !after_ellipsis;
                if keywords && let Some(pair) = pair_at(children, i, kind, found) {
                    pairs.push(pair);
                }
                collect(child, found, keywords, out, pairs);
            }
        }
    }
}

/// The text of a named leaf that is a needle: not a comment, not blank.
fn plain_needle<'t>(text: &'t str, kind_id: u16, ts_lang: &TSLanguage) -> Option<&'t str> {
    let is_comment = ts_lang.node_kind_for_id(kind_id).is_some_and(|k| k.contains("comment"));
    (!is_comment && !text.trim().is_empty()).then_some(text)
}

/// The pair that `children[i]` (of a pattern node of kind `kind`) ends and a later sibling
/// starts: a needle leaf (or a node of a [`closed_kind`] that ends with one, as `std::mem`
/// ends with `mem`), then unnamed leaves only, then another needle leaf (or a node that
/// starts with one after unnamed leaves only). So `std::mem::take` gives `std mem` and
/// `mem take`, and prunes at least as well as `mem::take`.
///
/// Or a keyword that [`name_after_keyword`] lists for `kind`, then a metavariable (which
/// binds the name), then what the next sibling starts with: a needle leaf as above, or else
/// its first leaf if that is a keyword or an opening bracket: `function $F($$$P): $R;` gives
/// `function`, a name, then `(`.
fn pair_at(children: &[PatternNode], i: usize, kind: &str, found: &Found<'_>) -> Option<Pair> {
    let (lang, ts_lang) = (found.lang, found.ts_lang);
    let (first, first_keyword) = match &children[i] {
        // A required keyword leaf is matched by a leaf of its kind, so it starts a pair as a
        // named leaf does (`interface` and `Foo` in `interface Foo { $$$B }`).
        PatternNode::Terminal { text, is_named: false, kind_id }
            if is_keyword_leaf(text, *kind_id, ts_lang) =>
        {
            (text.as_str(), true)
        }
        node => (last_needle(node, lang, ts_lang)?, false),
    };
    let rest = &children[i + 1..];
    let next = rest.iter().position(|c| !is_unnamed_leaf(c))?;
    let name = matches!(
        rest[next],
        PatternNode::MetaVar {
            meta_var: MetaVariable::Capture(_, true) | MetaVariable::Dropped(true)
        }
    );
    if first_keyword && name && name_after_keyword(lang, kind, first) {
        let after = &rest[next + 1..];
        let (second, second_keyword, second_token) = after
            .iter()
            .position(|c| !is_unnamed_leaf(c))
            .and_then(|next| first_needle(&after[next], ts_lang))
            .map(|text| (text, false, false))
            .or_else(|| {
                first_token(after.first()?, ts_lang).map(|(text, keyword)| (text, keyword, true))
            })?;
        return Some(Pair {
            first: first.to_owned(),
            first_keyword,
            name_between: true,
            second: second.to_owned(),
            second_keyword,
            second_token,
        });
    }
    let second = first_needle(&rest[next], ts_lang)?;
    Some(Pair {
        first: first.to_owned(),
        first_keyword,
        name_between: false,
        second: second.to_owned(),
        second_keyword: false,
        second_token: false,
    })
}

fn is_unnamed_leaf(node: &PatternNode) -> bool {
    matches!(node, PatternNode::Terminal { is_named: false, .. })
}

/// The first leaf of `node`, if it is an unnamed token usable as a pair's second text: a
/// keyword (`true`), or an opening bracket (no grammar with keyword needles lexes one in
/// its external scanner or aliases another token as one: `bench/closed_kinds.py`).
fn first_token<'p>(node: &'p PatternNode, ts_lang: &TSLanguage) -> Option<(&'p str, bool)> {
    match node {
        PatternNode::Internal { children, .. } => first_token(children.first()?, ts_lang),
        PatternNode::Terminal { text, is_named: false, kind_id } => {
            if is_keyword_leaf(text, *kind_id, ts_lang) {
                Some((text, true))
            } else {
                let opener = matches!(text.as_str(), "(" | "[" | "{");
                (opener && ts_lang.node_kind_for_id(*kind_id) == Some(text))
                    .then_some((text, false))
            }
        }
        _ => None,
    }
}

/// Pattern node kinds in which a keyword is always followed by one name: the first named
/// child after the keyword (comments aside) is an identifier, a single token, so in a
/// candidate only whitespace, comments and that name stand between the keyword and the next
/// child. (A metavariable there binds the name: it matches neither an unnamed leaf nor
/// anything past the name.) Checked against the grammars of the pinned
/// `ast-grep-language` by `bench/closed_kinds.py`.
fn name_after_keyword(lang: Lang, kind: &str, keyword: &str) -> bool {
    let listed: &[(&str, &str)] = match lang {
        Lang::Rust => &[
            ("function_item", "fn"),
            ("function_signature_item", "fn"),
            ("struct_item", "struct"),
            ("enum_item", "enum"),
            ("union_item", "union"),
            ("trait_item", "trait"),
            ("mod_item", "mod"),
            ("type_item", "type"),
            ("const_item", "const"),
        ],
        Lang::JavaScript => &[
            ("function_declaration", "function"),
            ("generator_function_declaration", "function"),
            ("class_declaration", "class"),
        ],
        Lang::TypeScript | Lang::Tsx => &[
            ("function_declaration", "function"),
            ("generator_function_declaration", "function"),
            ("function_signature", "function"),
            ("class_declaration", "class"),
            ("abstract_class_declaration", "class"),
            ("interface_declaration", "interface"),
            ("enum_declaration", "enum"),
            ("type_alias_declaration", "type"),
        ],
        Lang::Python => &[("function_definition", "def"), ("class_definition", "class")],
        Lang::Go => &[("function_declaration", "func")],
        Lang::Java => &[
            ("class_declaration", "class"),
            ("interface_declaration", "interface"),
            ("enum_declaration", "enum"),
            ("record_declaration", "record"),
        ],
        _ => &[],
    };
    listed.contains(&(kind, keyword))
}

/// The text of a needle leaf.
fn leaf_needle<'p>(node: &'p PatternNode, ts_lang: &TSLanguage) -> Option<&'p str> {
    match node {
        PatternNode::Terminal { text, is_named: true, kind_id } => {
            plain_needle(text, *kind_id, ts_lang)
        }
        _ => None,
    }
}

/// The needle leaf a candidate node matching `node` ends with: `node` itself, or the last
/// child of a node of a [`closed_kind`], down to a leaf. (A candidate may have children after
/// those its pattern node matched, which `smart` skips, except in a closed kind.)
fn last_needle<'p>(node: &'p PatternNode, lang: Lang, ts_lang: &TSLanguage) -> Option<&'p str> {
    match node {
        PatternNode::Internal { kind_id, children }
            if ts_lang.node_kind_for_id(*kind_id).is_some_and(|kind| closed_kind(lang, kind)) =>
        {
            last_needle(children.last()?, lang, ts_lang)
        }
        _ => leaf_needle(node, ts_lang),
    }
}

/// The needle leaf a candidate node matching `node` starts with, after unnamed leaves only:
/// `node` itself, or the first child of a node that is not an unnamed leaf, down to a leaf.
/// (Before the child that matches a pattern node's first one, a candidate may hold only
/// unnamed nodes and extras, which `smart` skips.)
fn first_needle<'p>(node: &'p PatternNode, ts_lang: &TSLanguage) -> Option<&'p str> {
    match node {
        PatternNode::Internal { children, .. } => {
            let first = children.iter().find(|c| !is_unnamed_leaf(c))?;
            first_needle(first, ts_lang)
        }
        _ => leaf_needle(node, ts_lang),
    }
}

/// Node kinds whose every grammar rule (aliases included) ends with one mandatory symbol, so
/// that the child a pattern's last child matches is the candidate's last (comments aside):
/// paths and member accesses. Checked against the grammars of the pinned
/// `ast-grep-language` by `bench/closed_kinds.py`.
fn closed_kind(lang: Lang, kind: &str) -> bool {
    let kinds: &[&str] = match lang {
        Lang::Rust => &["scoped_identifier", "scoped_type_identifier", "field_expression"],
        Lang::JavaScript => &["member_expression"],
        Lang::TypeScript | Lang::Tsx => &["member_expression", "nested_type_identifier"],
        Lang::Python => &["attribute"],
        Lang::Go => &["selector_expression", "qualified_type"],
        Lang::Java => &["field_access", "scoped_identifier", "scoped_type_identifier"],
        _ => &[],
    };
    kinds.contains(&kind)
}

/// Whether `haystack[start..start + len]` may be a keyword token: no ASCII word character
/// follows it, and the ASCII word characters before it, if any, start with a digit (a number
/// glued to a keyword, as Python lexes `1if`, not an identifier such as `unused`). (Only ASCII
/// counts as a word character here, a subset of every grammar's identifier characters, so a
/// real keyword token always passes.)
fn stands_alone(haystack: &[u8], start: usize, len: usize) -> bool {
    let is_word = |b: &u8| is_word_byte(*b);
    let before = haystack[..start].iter().rev().take_while(|b| is_word(b)).count();
    let glued_to_name = before > 0 && !haystack[start - before].is_ascii_digit();
    !(glued_to_name || haystack.get(start + len).is_some_and(is_word))
}

/// The length of the UTF-8 sequence that `lead` starts.
fn utf8_width(lead: u8) -> usize {
    match lead {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

/// Whitespace, or a zero-width character grammars treat as whitespace.
fn is_trivia_char(ch: char) -> bool {
    ch.is_whitespace() || matches!(ch, '\u{FEFF}' | '\u{2060}' | '\u{200B}')
}

/// An ASCII letter, digit or `_`.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// A word-like keyword: `[A-Za-z_][A-Za-z0-9_]+`.
/// Whether an unnamed pattern leaf is a keyword needle: word-like, and its kind is its text.
fn is_keyword_leaf(text: &str, kind_id: u16, ts_lang: &TSLanguage) -> bool {
    is_keyword(text) && ts_lang.node_kind_for_id(kind_id) == Some(text)
}

fn is_keyword(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && text.len() >= 2
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occurrences_must_lie_wholly_inside_the_range() {
        let occ = Occurrences { starts: vec![4, 10], len: 3 };
        assert!(occ.within(0..7));
        assert!(!occ.within(0..6), "4..7 sticks out of 0..6");
        assert!(!occ.within(5..12), "10..13 sticks out of 5..12");
        assert!(occ.within(5..13));
        assert!(!occ.within(14..20));
    }

    /// The pieces the texts of the adjacency property are made of: the pair texts, words
    /// holding them, unnamed tokens' words (`in`, `as`, `if`), comments of every kind the
    /// scanner knows, punctuation and odd characters.
    const PIECES: &[&str] = &[
        "std",
        "mem",
        "take",
        "util",
        "deprecate",
        "path",
        "join",
        "os",
        "xmem",
        "memtake",
        "takeit",
        "stdin",
        "mein",
        "memas",
        "in",
        "as",
        "if",
        "get",
        "static",
        "mut",
        "ref",
        "fn",
        "function",
        "functions",
        "x",
        "r#",
        "\\u0066",
        "::",
        ".",
        "?.",
        "(",
        ")",
        ";",
        ",",
        " ",
        "  ",
        "\n",
        "\t",
        "\r",
        "//",
        "// c\n",
        "/* c */",
        "/*",
        "*/",
        "/* /* n */ */",
        "#",
        "# c\n",
        "<!--",
        "-->",
        "\u{a0}",
        "\u{e9}",
        "\u{2028}",
        "'",
        "\"",
        "$",
        "@",
        "1",
        "0x",
        "_",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// The warm index never rules out a file the cold prefilter would read: whenever
        /// [`Needles::locate`] finds every needle and pair in a text, [`Needles::may_occur_in`]
        /// says the text's filters may hold them.
        #[test]
        fn adjacencies_never_contradict_the_cold_prefilter(
            pieces in proptest::collection::vec(0..PIECES.len(), 0..40),
            which in 0usize..11,
        ) {
            let (pattern, lang) = [
                ("function $F() {}", Lang::JavaScript),
                ("fn $F(x: u8) {}", Lang::Rust),
                ("fn take() {}", Lang::Rust),
                ("static mem: u8 = 1;", Lang::Rust),
                ("function join() {}", Lang::JavaScript),
                ("std::mem::take($A)", Lang::Rust),
                ("mem::take($A)", Lang::Rust),
                ("util.deprecate($$$A)", Lang::JavaScript),
                ("util.deprecate($$$A)", Lang::TypeScript),
                ("os.path.join($A)", Lang::Python),
                ("mem.take()", Lang::Go),
            ][which];
            let text: String = pieces.iter().map(|&i| PIECES[i]).collect();
            let needles = Needles::of(&Pattern::new(pattern, lang), lang, Strictness::Smart, ErrorTrees::Skipped);
            let grams = crate::grams::Grams::of(text.as_bytes(), Some(lang));
            if matches!(needles.locate(text.as_bytes()), Located::Present(_)) {
                proptest::prop_assert!(needles.may_occur_in(&grams), "{text:?}");
            }
        }
    }

    #[test]
    fn adjacencies_rule_out_a_pair_apart() {
        let needles = |pattern: &str| {
            Needles::of(
                &Pattern::new(pattern, Lang::Rust),
                Lang::Rust,
                Strictness::Smart,
                ErrorTrees::Skipped,
            )
        };
        let take = needles("std::mem::take($A)");
        let grams = |text: &str| crate::grams::Grams::of(text.as_bytes(), Some(Lang::Rust));
        assert!(take.may_occur_in(&grams("fn f() { std::mem::take(&mut x); }")));
        assert!(take.may_occur_in(&grams("std :: mem /* c */ :: take(x)")));
        assert!(take.may_occur_in(&grams("std::mem::takeover(x)")), "the cold scan reads it");
        // Every text is there, never as the pair.
        let apart = "use std::mem; fn f() { mem::swap(a, b); x.take() }";
        assert!(!take.may_occur_in(&grams(apart)));
        // Another language's adjacencies say nothing.
        let js = crate::grams::Grams::of(apart.as_bytes(), Some(Lang::JavaScript));
        assert!(take.may_occur_in(&js));
        // Past the reach, anything may follow.
        let far = format!("std::mem::{}take(x); use std::mem; take", " ".repeat(REACH));
        assert!(take.may_occur_in(&grams(&far)));
    }

    #[test]
    fn overlapping_occurrences_are_all_found() {
        let pattern = Pattern::new("aa", Lang::JavaScript);
        let needles =
            Needles::of(&pattern, Lang::JavaScript, Strictness::Smart, ErrorTrees::Skipped);
        let Located::Present(Some(occ)) = needles.locate(b"x aaa") else {
            panic!("`aa` is in `x aaa`");
        };
        assert_eq!(occ.starts, vec![2, 3]);
        assert!(matches!(needles.locate(b"x a a"), Located::Missing));
    }

    #[test]
    fn keywords_count_only_as_whole_words() {
        let pattern = Pattern::new("use $A;", Lang::Rust);
        let needles = Needles::of(&pattern, Lang::Rust, Strictness::Smart, ErrorTrees::Skipped);
        assert!(matches!(needles.locate(b"// unused, because reuse_it"), Located::Missing));
        let Located::Present(Some(occ)) = needles.locate(b"fn unused() {}\nuse a;\n(use)") else {
            panic!("`use` stands alone twice");
        };
        assert_eq!(occ.starts, vec![15, 23]);
        // Not a keyword under `ast`: no needle at all.
        let relaxed = Needles::of(&pattern, Lang::Rust, Strictness::Ast, ErrorTrees::Skipped);
        assert!(matches!(relaxed.locate(b"unused"), Located::Present(None)));
    }

    fn located(pattern: &str, lang: Lang, text: &str) -> bool {
        let needles =
            Needles::of(&Pattern::new(pattern, lang), lang, Strictness::Smart, ErrorTrees::Skipped);
        matches!(needles.locate(text.as_bytes()), Located::Present(_))
    }

    #[test]
    fn pairs_need_only_trivia_between_them() {
        let js = |text| located("util.deprecate($$$A)", Lang::JavaScript, text);
        assert!(js("util.deprecate(f)"));
        assert!(js("util\n  . /* a\n comment */ deprecate(f)"));
        assert!(js("util // a comment\n.deprecate(f)"));
        assert!(js("util?.deprecate(f)"));
        assert!(!js("util.inspect(x); deprecate(f)"), "`inspect` is no unnamed token");
        assert!(!js("utility.deprecate(f)"));
        assert!(
            !js("util.warn(f) // util. other deprecate"),
            "a comment starts at `//`, not before"
        );
        assert!(!js("const s = 'util' + x; deprecate(f)"), "`x` is no unnamed token");
        // Keywords may stand between (harmless: the file is parsed), and so may anything the
        // scanner cannot be sure of.
        assert!(js("util.get.deprecate(f)"));
        assert!(js("util. <!-- html comment\n deprecate(f)"));
        assert!(js("util. // odd\u{2028} deprecate(f)"));
        assert!(js("util.\u{00A0}deprecate(f)"));
        assert!(!js("util.\u{00E9}deprecate(f)"), "a letter, not whitespace");

        let rust = |text| located("mem::forget($A)", Lang::Rust, text);
        assert!(rust("mem :: /* c */ forget(x)"));
        assert!(rust("mem /* a /* nested */ comment */ ::forget(x)"));
        assert!(!rust("mem::take(x); forget(y)"));

        let py = |text| located("os.path", Lang::Python, text);
        assert!(py("os . path"));
        assert!(py("os.\\\n    path"));
        assert!(!py("os.environ // path"), "`//` is floor division in Python, not a comment");
        assert!(py("(os # comment\n .path)"));

        // A keyword and the name after it.
        let ts =
            |text| located("interface ErrnoException extends $B { $$$C }", Lang::TypeScript, text);
        assert!(ts("interface /* c */ ErrnoException extends Error {}"));
        assert!(!ts("interface Other { err: NodeJS.ErrnoException; extends: 1 }"));
    }

    #[test]
    fn a_keyword_a_name_and_what_follows_are_a_pair() {
        let ts = |text| located("function $F($$$P): $R;", Lang::TypeScript, text);
        assert!(ts("declare function f(x: number): string;"));
        assert!(ts("function /* c */ f /* d */\n (x): T;"));
        assert!(ts("function get(): void;"), "a keyword's word may be the name");
        assert!(ts("function $f(): T;"));
        assert!(ts("function \u{e9}t\u{e9}(): T;"));
        assert!(ts("function f\u{a0}(): T;"));
        assert!(ts("function \\u0066(): T;"), "an escape: the scanner cannot tell");
        // A missing name (a zero-width node error recovery inserts) counts too.
        assert!(ts("const g = function (x) { };"));
        assert!(ts("function f\u{7f}g(x): T;"), "DEL is an identifier character in JavaScript");
        assert!(!ts("function f<T>(x: T): T;"), "type parameters are no name");
        assert!(!ts("function f.g(x): T;"));
        assert!(!ts("/** the function the caller passes */ f(x);"));
        assert!(!ts("functions f(x): T;"));
        assert!(!ts("function f\n  <T>(x: T): T;"));
        let rust = |text| located("fn $F($$$P) {}", Lang::Rust, text);
        assert!(rust("fn r#type() {}"));
        assert!(!rust("fn g<T>() {}"));
        // Not in a kind whose keyword is always followed by a name: a function expression's
        // name is optional.
        let pairs = |pattern: &str, lang, error_trees| {
            let error_trees = match error_trees {
                false => ErrorTrees::Skipped,
                true => ErrorTrees::SearchedWithoutSkippedText,
            };
            let needles =
                Needles::of(&Pattern::new(pattern, lang), lang, Strictness::Smart, error_trees);
            needles.pairs.iter().map(|p| format!("{} {}", p.first, p.second)).collect::<Vec<_>>()
        };
        assert_eq!(pairs("function $F($$$P): $R;", Lang::TypeScript, false), ["function ("]);
        assert_eq!(pairs("class $C extends $B {}", Lang::Java, false), ["class extends"]);
        assert_eq!(
            pairs("class $C extends Base {}", Lang::Java, false),
            ["class Base", "extends Base"]
        );
        assert_eq!(pairs("def $F($$$A): pass", Lang::Python, false), ["def ("]);
        assert!(pairs("x = function $F() {}", Lang::JavaScript, false).is_empty());
        // Where trees with errors are searched, an unnamed token may be missing from the text.
        assert!(pairs("function $F($$$P): $R;", Lang::TypeScript, true).is_empty());
        assert!(pairs("class $C extends $B {}", Lang::Java, true).is_empty());
        assert_eq!(
            pairs("class $C extends Base {}", Lang::Java, true),
            ["class Base", "extends Base"]
        );
        assert_eq!(pairs("util.deprecate($A)", Lang::JavaScript, true), ["util deprecate"]);
        let every = Needles::of(
            &Pattern::new("util.deprecate($A)", Lang::JavaScript),
            Lang::JavaScript,
            Strictness::Smart,
            ErrorTrees::Searched,
        );
        assert!(every.pairs.is_empty(), "where every match counts, no pair holds");
    }

    #[test]
    fn pairs_are_siblings_with_only_unnamed_leaves_between() {
        let pairs = |pattern: &str, lang| {
            let needles = Needles::of(
                &Pattern::new(pattern, lang),
                lang,
                Strictness::Smart,
                ErrorTrees::Skipped,
            );
            needles.pairs.iter().map(|p| format!("{} {}", p.first, p.second)).collect::<Vec<_>>()
        };
        assert_eq!(pairs("util.deprecate($$$A)", Lang::JavaScript), ["util deprecate"]);
        assert_eq!(pairs("mem::forget($A)", Lang::Rust), ["mem forget"]);
        assert!(pairs("foo($A, bar)", Lang::JavaScript).is_empty(), "a metavariable between");
        assert!(pairs("a.b.c", Lang::JavaScript).contains(&"a b".to_owned()));
        // Only under `smart` and `cst`, and only in the allow-listed languages.
        let ast = Needles::of(
            &Pattern::new("util.deprecate", Lang::JavaScript),
            Lang::JavaScript,
            Strictness::Ast,
            ErrorTrees::Skipped,
        );
        assert!(ast.pairs.is_empty());
    }

    #[test]
    fn a_longer_path_has_the_pairs_of_its_tail() {
        let pairs = |pattern: &str, lang| {
            let needles = Needles::of(
                &Pattern::new(pattern, lang),
                lang,
                Strictness::Smart,
                ErrorTrees::Skipped,
            );
            let mut found: Vec<String> =
                needles.pairs.iter().map(|p| format!("{} {}", p.first, p.second)).collect();
            found.sort();
            found
        };
        assert_eq!(pairs("std::mem::take($A)", Lang::Rust), ["mem take", "std mem"]);
        assert_eq!(pairs("a.b.c($A)", Lang::JavaScript), ["a b", "b c"]);
        assert_eq!(pairs("a.b.c", Lang::TypeScript), ["a b", "b c"]);
        assert_eq!(pairs("os.path.join($A)", Lang::Python), ["os path", "path join"]);
        assert_eq!(pairs("x.y.z()", Lang::Go), ["x y", "y z"]);
        assert_eq!(pairs("a.b.c()", Lang::Java), ["a b", "b c"]);
        // A call's arguments end it: `f(x).y` has no pair `x y` (a call is not a closed kind).
        assert!(!pairs("f(x).y", Lang::JavaScript).contains(&"x y".to_owned()));
        // The tail is needed: `std::mem::take` prunes files that lack `mem::take`.
        let rust = |text: &str| located("std::mem::take($A)", Lang::Rust, text);
        assert!(rust("fn f() { std::mem::take(&mut x); }"));
        assert!(rust("fn f() { std :: mem /* c */ :: take(&mut x); }"));
        assert!(!rust("use std::mem; fn f() { mem::swap(a, b); x.take() }"));
        assert!(!rust("fn f() { std::mem::swap(a, b); take(x) }"));
    }
}
