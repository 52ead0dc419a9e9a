//! Colouring a unified diff for a terminal.

use std::borrow::Cow;

/// Colours `diff` line by line: headers bold, hunks cyan, additions green, removals red;
/// without colour, `diff` itself.
pub(crate) fn colorize(diff: &str, color: bool) -> Cow<'_, str> {
    if !color {
        return Cow::Borrowed(diff);
    }
    let mut res = String::with_capacity(diff.len() + diff.len() / 4);
    for line in diff.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        let code =
            if body.starts_with("+++") || body.starts_with("---") || body.starts_with("diff ") {
                Some("1")
            } else if body.starts_with("@@") {
                Some("36")
            } else if body.starts_with('+') {
                Some("32")
            } else if body.starts_with('-') {
                Some("31")
            } else {
                None
            };
        match code {
            Some(code) => res.push_str(&format!("\x1b[{code}m{body}\x1b[0m{newline}")),
            None => res.push_str(line),
        }
    }
    Cow::Owned(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_each_kind_of_line_and_leaves_plain_output_alone() {
        let diff = "--- a/x.ts\n+++ b/x.ts\n@@ -1 +1 @@\n-old\n+new\n ctx\n";
        assert_eq!(colorize(diff, false), diff);
        let coloured = colorize(diff, true);
        assert!(coloured.contains("\x1b[31m-old\x1b[0m\n"));
        assert!(coloured.contains("\x1b[32m+new\x1b[0m\n"));
        assert!(coloured.contains("\x1b[36m@@ -1 +1 @@\x1b[0m\n"));
        assert!(coloured.ends_with(" ctx\n"));
    }
}
