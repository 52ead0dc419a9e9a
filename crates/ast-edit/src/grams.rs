//! A file's trigrams, as a Bloom filter: what the warm index keeps of each file's text, so a
//! query can skip the files that cannot hold its prefilter needles without reading them.
//!
//! Every needle of the prefilter is a substring of any file that matches (see the prefilter
//! module), and every three-byte window of a substring is a window of the file. So a file
//! whose filter lacks one window of a needle cannot match. A Bloom filter can only answer
//! "maybe" for a window the file lacks, never "no" for one it has: a false answer keeps a
//! file that could have been skipped, nothing more. Needles shorter than three bytes say
//! nothing.

/// The Bloom filter of a text's distinct three-byte windows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grams {
    bits: Box<[u64]>,
    /// The number of bits, less one (a power of two, less one).
    mask: u64,
}

/// Bits per distinct window: about 2% of absent windows answer "maybe" with three probes.
const BITS_PER_GRAM: usize = 8;
/// Probes per window.
const PROBES: u64 = 3;

impl Grams {
    /// The filter of `text`'s windows.
    pub(crate) fn of(text: &[u8]) -> Grams {
        thread_local! {
            /// One bit per possible window (2 MiB), all clear between calls.
            static SEEN: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        // Distinct windows first, so the filter is sized for them (a 24-bit key each).
        let keys = SEEN.with(|seen| {
            let mut seen = seen.borrow_mut();
            seen.resize((1 << 24) / 64, 0);
            let mut keys: Vec<u32> = Vec::new();
            for window in text.windows(3) {
                let key = key(window);
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
        let bits = (keys.len() * BITS_PER_GRAM).max(64).next_power_of_two();
        let mut grams =
            Grams { bits: vec![0u64; bits / 64].into_boxed_slice(), mask: bits as u64 - 1 };
        for key in keys {
            let probes: [u64; PROBES as usize] =
                std::array::from_fn(|i| probe(grams.mask, key, i as u64));
            for at in probes {
                grams.bits[(at >> 6) as usize] |= 1 << (at & 63);
            }
        }
        grams
    }

    /// Whether `needle` may occur in the text: `false` only when it cannot.
    pub(crate) fn may_contain(&self, needle: &[u8]) -> bool {
        needle.windows(3).all(|window| {
            self.probes(key(window)).all(|at| self.bits[(at >> 6) as usize] & (1 << (at & 63)) != 0)
        })
    }

    /// The filter's size in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.bits.len() * 8
    }

    fn probes(&self, key: u32) -> impl Iterator<Item = u64> + use<'_> {
        (0..PROBES).map(move |i| probe(self.mask, key, i))
    }
}

/// The `i`th bit a key sets: two hashes of it, combined (Kirsch and Mitzenmacher's double
/// hashing).
fn probe(mask: u64, key: u32, i: u64) -> u64 {
    let h = u64::from(key).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let (h1, h2) = (h >> 32, (h & 0xFFFF_FFFF) | 1);
    h1.wrapping_add(i.wrapping_mul(h2)) & mask
}

fn key(window: &[u8]) -> u32 {
    (u32::from(window[0]) << 16) | (u32::from(window[1]) << 8) | u32::from(window[2])
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
            let grams = Grams::of(&text);
            let start = start.min(text.len());
            let end = (start + len).min(text.len());
            prop_assert!(grams.may_contain(&text[start..end]));
        }
    }

    #[test]
    fn absent_words_are_mostly_ruled_out() {
        let text = "fn main() { let value = compute(42); println!(\"{value}\"); }".repeat(20);
        let grams = Grams::of(text.as_bytes());
        assert!(grams.may_contain(b"compute"));
        assert!(grams.may_contain(b"ue = com"));
        let absent = ["tokio", "spawn", "unwrap", "mem::take", "baseFlatten", "Debug.assert"];
        let kept = absent.iter().filter(|w| grams.may_contain(w.as_bytes())).count();
        assert_eq!(kept, 0, "absent words kept: {kept}");
    }

    #[test]
    fn short_needles_say_nothing() {
        let grams = Grams::of(b"abc");
        assert!(grams.may_contain(b"zz"));
        assert!(grams.may_contain(b""));
    }
}
