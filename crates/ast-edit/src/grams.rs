//! What the warm index keeps of each file's text, so a query can skip the files that cannot
//! hold its prefilter needles without reading them: the file's trigrams and, in a language
//! whose needles come in pairs, its words' adjacencies. Both are Bloom filters.
//!
//! Trigrams. Every needle of the prefilter is a substring of any file that matches (see the
//! prefilter module), and every three-byte window of a substring is a window of the file. So a
//! file whose filter lacks one window of a needle cannot match. Needles shorter than three
//! bytes say nothing.
//!
//! Adjacencies. The prefilter also asks for pairs of needles with only trivia between them
//! (`mem` then `take` in `std::mem::take($A)`), which trigrams cannot express: `mem` and `take`
//! are each in most Rust files. So the filter also holds, for each word of the text, its last
//! three bytes with the first three of every word the prefilter's gap scan reaches after it
//! ([`crate::prefilter::adjacencies`]). A file the prefilter would read finds its pair there.
//!
//! A Bloom filter can only answer "maybe" for a key the file lacks, never "no" for one it has:
//! a false answer keeps a file that could have been skipped, nothing more.

use crate::{lang::Lang, prefilter};

/// What the warm index knows of one file's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grams {
    /// Its distinct three-byte windows.
    windows: Bloom,
    /// Its words' adjacencies, under the gap rules of the language it was read as.
    pairs: Option<(Lang, Bloom)>,
}

/// Bits per distinct key: about 3% of absent keys answer "maybe" with three bits in one
/// 64-bit word.
const BITS_PER_KEY: usize = 8;

impl Grams {
    /// The filters of `text`; its adjacencies too when `lang` has pairs of needles.
    pub(crate) fn of(text: &[u8], lang: Option<Lang>) -> Grams {
        thread_local! {
            /// One bit per possible window (2 MiB), all clear between calls.
            static SEEN: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        // Distinct windows first, so the filter is sized for them (a 24-bit key each).
        let keys = SEEN.with(|seen| {
            let mut seen = seen.borrow_mut();
            seen.resize((1 << 24) / 64, 0);
            let mut keys: Vec<u64> = Vec::new();
            for window in text.windows(3) {
                let key = window_key(window);
                let (word, bit) = ((key >> 6) as usize, key & 63);
                if seen[word] & (1 << bit) == 0 {
                    seen[word] |= 1 << bit;
                    keys.push(key);
                }
            }
            for &key in &keys {
                seen[(key >> 6) as usize] = 0;
            }
            keys
        });
        let pairs = lang.filter(|lang| prefilter::pairs_indexed(*lang)).map(|lang| {
            let mut keys = Vec::new();
            prefilter::adjacencies(lang, text, |key| keys.push(key));
            keys.sort_unstable();
            keys.dedup();
            (lang, Bloom::with_keys(&keys))
        });
        Grams { windows: Bloom::with_keys(&keys), pairs }
    }

    /// Whether `needle` may occur in the text: `false` only when it cannot.
    pub(crate) fn may_contain(&self, needle: &[u8]) -> bool {
        needle.windows(3).all(|window| self.windows.may_have(window_key(window)))
    }

    /// Whether `first` followed by `second` may occur in the text (each is three bytes or
    /// more): [`Grams::may_contain`] of the two joined, without joining them.
    fn may_contain_joined(&self, first: &[u8], second: &[u8]) -> bool {
        let (a, b) = (&first[first.len() - 2..], &second[..2]);
        self.may_contain(&[a[0], a[1], b[0]])
            && self.may_contain(&[a[1], b[0], b[1]])
            && self.may_contain(first)
            && self.may_contain(second)
    }

    /// Whether the prefilter's gap scan, in a text of `lang`, may reach an occurrence of
    /// `second` from the end of one of `first` (see [`crate::prefilter::adjacencies`]):
    /// `false` only when it cannot. Says nothing (`true`) for another language, or texts that
    /// are not words of three bytes or more.
    pub(crate) fn may_follow(&self, lang: Lang, first: &str, second: &str) -> bool {
        let Some((indexed, bloom)) = &self.pairs else { return true };
        let (first, second) = (first.as_bytes(), second.as_bytes());
        if *indexed != lang
            || !prefilter::is_indexed_word(first)
            || !prefilter::is_indexed_word(second)
        {
            return true;
        }
        let tail = &first[first.len() - 3..];
        bloom.may_have(prefilter::pair_key(tail, Some(&second[..3])))
            || bloom.may_have(prefilter::pair_key(tail, None))
            // `second` right after `first`, inside one word.
            || self.may_contain_joined(first, second)
    }

    /// The filters' size in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.windows.bytes() + self.pairs.as_ref().map_or(0, |(_, pairs)| pairs.bytes())
    }
}

/// A blocked Bloom filter of 64-bit keys: each key sets three bits of one 64-bit word, so
/// that a lookup touches one word of memory (a query looks up keys in every file's filters,
/// and each lookup elsewhere in memory is a cache miss).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Bloom {
    words: Box<[u64]>,
}

impl Bloom {
    /// The filter of `keys` (distinct, so that it is sized for them).
    fn with_keys(keys: &[u64]) -> Bloom {
        let words = (keys.len() * BITS_PER_KEY / 64).max(1).next_power_of_two();
        let mut bloom = Bloom { words: vec![0u64; words].into_boxed_slice() };
        for &key in keys {
            let (word, bits) = bloom.place(key);
            bloom.words[word] |= bits;
        }
        bloom
    }

    fn may_have(&self, key: u64) -> bool {
        let (word, bits) = self.place(key);
        self.words[word] & bits == bits
    }

    /// The word a key lives in and the three bits it sets there.
    fn place(&self, key: u64) -> (usize, u64) {
        // SplitMix64's finalizer: every bit of the key moves every bit of the hash.
        let mut h = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
        h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^= h >> 31;
        let word = (h >> 32) as usize & (self.words.len() - 1);
        let bits = (1 << (h & 63)) | (1 << ((h >> 6) & 63)) | (1 << ((h >> 12) & 63));
        (word, bits)
    }

    fn bytes(&self) -> usize {
        self.words.len() * 8
    }
}

/// The key of three bytes (the first three of `window`).
pub(crate) fn window_key(window: &[u8]) -> u64 {
    (u64::from(window[0]) << 16) | (u64::from(window[1]) << 8) | u64::from(window[2])
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::Grams;

    proptest! {
        /// Never a false "no": every substring of the text may be contained.
        #[test]
        fn every_substring_may_be_contained(
            text in proptest::collection::vec(any::<u8>(), 0..400),
            start in 0usize..400,
            len in 0usize..40,
        ) {
            let grams = Grams::of(&text, None);
            let start = start.min(text.len());
            let end = (start + len).min(text.len());
            prop_assert!(grams.may_contain(&text[start..end]));
        }
    }

    #[test]
    fn absent_words_are_mostly_ruled_out() {
        let text = "fn main() { let value = compute(42); println!(\"{value}\"); }".repeat(20);
        let grams = Grams::of(text.as_bytes(), None);
        assert!(grams.may_contain(b"compute"));
        assert!(grams.may_contain(b"ue = com"));
        let absent = ["tokio", "spawn", "unwrap", "mem::take", "baseFlatten", "Debug.assert"];
        let kept = absent.iter().filter(|w| grams.may_contain(w.as_bytes())).count();
        assert_eq!(kept, 0, "absent words kept: {kept}");
    }

    #[test]
    fn short_needles_say_nothing() {
        let grams = Grams::of(b"abc", None);
        assert!(grams.may_contain(b"zz"));
        assert!(grams.may_contain(b""));
    }
}
