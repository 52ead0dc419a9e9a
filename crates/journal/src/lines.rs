//! `LineIndex`: where each line of a text starts, to turn byte offsets into lines and columns
//! and to cut a text into whole lines (the unified diff walks it line by line).

/// Line starts of a text, to turn byte offsets into 1-based lines and columns.
#[derive(Debug)]
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str) -> LineIndex<'a> {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineIndex { text, starts }
    }

    /// 1-based line and character column of a byte offset.
    pub fn position(&self, offset: usize) -> (usize, usize) {
        let line_idx = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let line_start = self.starts[line_idx];
        let col = self.text.get(line_start..offset).map_or(0, |s| s.chars().count());
        (line_idx + 1, col + 1)
    }

    /// The text of a 1-based line, without its line ending.
    pub fn line(&self, line: usize) -> &'a str {
        let Some(&start) = self.starts.get(line.wrapping_sub(1)) else {
            return "";
        };
        let end = self.starts.get(line).map_or(self.text.len(), |&e| e);
        self.text.get(start..end).unwrap_or("").trim_end_matches(['\n', '\r'])
    }

    /// Number of lines (a final line ending does not start another line).
    pub fn len(&self) -> usize {
        if self.text.ends_with('\n') { self.starts.len() - 1 } else { self.starts.len() }
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The indexed text.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// Number of lines, 0 for an empty text (a final line ending does not start another
    /// line).
    pub fn count(&self) -> usize {
        if self.text.is_empty() { 0 } else { self.len() }
    }

    /// The 0-based line holding byte `offset`. An offset at the end of a text that ends with a
    /// line ending (or is empty) gives [`LineIndex::count`]: the line that would start there.
    pub fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&start| start <= offset).saturating_sub(1)
    }

    /// The first byte of 0-based line `idx`; the text's length past the last line.
    pub fn start_of(&self, idx: usize) -> usize {
        self.starts.get(idx).copied().unwrap_or(self.text.len()).min(self.text.len())
    }

    /// 0-based line `idx` with its line ending, if it has one.
    pub(crate) fn full_line(&self, idx: usize) -> &'a str {
        self.text.get(self.start_of(idx)..self.start_of(idx + 1)).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_positions() {
        let idx = LineIndex::new("ab\ncdé\nx");
        assert_eq!(idx.position(0), (1, 1));
        assert_eq!(idx.position(3), (2, 1));
        assert_eq!(idx.position(8), (3, 1));
        assert_eq!(idx.line(2), "cdé");
        assert_eq!(idx.count(), 3);
        assert_eq!(idx.full_line(1), "cdé\n");
        assert_eq!(LineIndex::new("").count(), 0);
        assert_eq!(LineIndex::new("a\n").count(), 1);
    }
}
