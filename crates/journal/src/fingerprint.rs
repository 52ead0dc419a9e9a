//! File fingerprints: a SHA-256 of the bytes a preview read, and the 4-hex-digit tag shown in
//! headings, derived from it.

use sha2::{Digest, Sha256};

/// Lower-case hex SHA-256 of `bytes`.
pub fn fingerprint(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lower-case hex SHA-256 of what `reader` yields, read 1 MiB at a time: a file of any size
/// is hashed without being held in memory.
///
/// # Errors
/// The read error.
pub fn fingerprint_reader(mut reader: impl std::io::Read) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(buf.get(..n).unwrap_or_default()),
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(hex(&hasher.finalize()))
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
        let big = vec![7u8; (3 << 20) + 5];
        assert_eq!(fingerprint_reader(&big[..]).unwrap(), fingerprint(&big));
    }
}
