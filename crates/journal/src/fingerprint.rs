//! File fingerprints: a SHA-256 of the bytes a preview read, and the 4-hex-digit tag shown in
//! headings, derived from it.

use sha2::{Digest, Sha256};

/// Lower-case hex SHA-256 of `bytes`.
pub fn fingerprint(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The 4 upper-case hex digits shown after a file name, e.g. `root.ts#3FA2`.
pub fn tag(fingerprint: &str) -> String {
    fingerprint.chars().take(4).collect::<String>().to_uppercase()
}

/// An incremental SHA-256, for digests over many parts.
#[derive(Debug, Default)]
pub struct Hasher(Sha256);

impl Hasher {
    /// Feeds a length-prefixed part, so that part boundaries are part of the digest.
    pub fn part(&mut self, bytes: &[u8]) {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }

    /// Lower-case hex digest.
    pub fn finish(self) -> String {
        hex(&self.0.finalize())
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut res = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        res.push(char::from(DIGITS[usize::from(b >> 4)]));
        res.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digest() {
        assert_eq!(
            fingerprint(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(tag(&fingerprint(b"abc")), "BA78");
    }
}
