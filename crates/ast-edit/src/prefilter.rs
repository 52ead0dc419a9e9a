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
//! TypeScript `function_signature`, `fn` in a Rust `function_item`; [`name_after_keyword`](pattern::name_after_keyword)),
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

use std::{borrow::Cow, sync::Arc};

use ast_grep_core::{Pattern, tree_sitter::LanguageExt};

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
    /// One name stands between the two texts: `first` is a keyword that [`name_after_keyword`](pattern::name_after_keyword)
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
                let occurs = gap.pair_occurs(
                    haystack,
                    &firsts,
                    pair.first.len(),
                    &seconds,
                    pair.name_between,
                );
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

mod gap;
mod pattern;

use gap::Gap;
pub(crate) use gap::{adjacencies, is_indexed_word, pair_key, pairs_indexed};
use pattern::{Found, KEYWORD_NEEDLE_LANGS, collect};

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

#[cfg(test)]
mod tests {
    use super::{gap::REACH, *};

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
