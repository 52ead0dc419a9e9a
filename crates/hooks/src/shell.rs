//! A patch sent through the shell: Codex models also run `apply_patch` as a command
//! (`apply_patch <<'EOF'` ... `EOF`, optionally after `cd <dir> &&`), which Codex's hooks see as
//! a `Bash` tool call with the whole script as its `command`.

/// The patch an `apply_patch` shell command carries, and the folder it runs in (`cd <dir> &&`),
/// if the command is exactly that: one `apply_patch` (or `applypatch`) with a heredoc, or with
/// the patch as its one quoted argument. Anything else is not a patch.
pub fn apply_patch_in(script: &str) -> Option<(String, Option<String>)> {
    let script = script.trim_start();
    let (dir, rest) = match script.strip_prefix("cd ") {
        Some(rest) => {
            let (dir, after) = rest.split_once("&&")?;
            (Some(unquote(dir.trim())?), after.trim_start())
        }
        None => (None, script),
    };
    let rest = rest.strip_prefix("apply_patch").or_else(|| rest.strip_prefix("applypatch"))?;
    let rest = rest.strip_prefix(|c: char| c == ' ' || c == '\t')?.trim_start();
    if let Some(heredoc) = rest.strip_prefix("<<") {
        let heredoc = heredoc.strip_prefix('-').unwrap_or(heredoc).trim_start();
        let (first, body) = heredoc.split_once('\n')?;
        let delimiter = unquote(first.trim())?;
        if delimiter.is_empty() {
            return None;
        }
        // The body runs to the line that is the delimiter; only blank space may follow it.
        let mut patch = String::new();
        let mut lines = body.split_inclusive('\n');
        for line in lines.by_ref() {
            if line.trim_end_matches(['\n', '\r']) == delimiter {
                let tail: String = lines.collect();
                return tail.trim().is_empty().then_some((patch, dir));
            }
            patch.push_str(line);
        }
        return None;
    }
    // `apply_patch '<patch>'` or `apply_patch "<patch>"`.
    let arg = unquote(rest.trim_end())?;
    arg.trim_start().starts_with("*** Begin Patch").then_some((arg, dir))
}

/// A shell word: as is, or without its quotes (single: literal; double: `\"` and `\\`
/// unescaped). `None` for anything a shell would expand or split.
fn unquote(word: &str) -> Option<String> {
    if let Some(inner) = word.strip_prefix('\'') {
        let inner = inner.strip_suffix('\'')?;
        return (!inner.contains('\'')).then(|| inner.to_owned());
    }
    if let Some(inner) = word.strip_prefix('"') {
        let inner = inner.strip_suffix('"')?;
        let mut res = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next()? {
                    c @ ('"' | '\\' | '$' | '`') => res.push(c),
                    c => {
                        res.push('\\');
                        res.push(c);
                    }
                },
                '$' | '`' | '"' => return None,
                c => res.push(c),
            }
        }
        return Some(res);
    }
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+@%:,".contains(c);
    (!word.is_empty() && word.chars().all(plain)).then(|| word.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "*** Begin Patch\n*** Add File: b.ts\n+b\n*** End Patch\n";

    #[test]
    fn heredocs_with_any_delimiter_and_a_cd() {
        let script = format!("apply_patch <<'EOF'\n{PATCH}EOF\n");
        assert_eq!(apply_patch_in(&script), Some((PATCH.to_owned(), None)));
        let script = format!("cd src/app && applypatch <<\"PATCH\"\n{PATCH}PATCH");
        assert_eq!(apply_patch_in(&script), Some((PATCH.to_owned(), Some("src/app".to_owned()))));
        let script = format!("apply_patch <<EOF\n{PATCH}EOF\n");
        assert_eq!(apply_patch_in(&script), Some((PATCH.to_owned(), None)));
    }

    #[test]
    fn a_quoted_argument() {
        let script = format!("apply_patch '{PATCH}'");
        assert_eq!(apply_patch_in(&script), Some((PATCH.to_owned(), None)));
    }

    #[test]
    fn other_commands_are_not_patches() {
        for script in [
            "ls -la",
            "echo apply_patch",
            "apply_patchx <<'EOF'\nx\nEOF",
            "apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF\nrm -rf /",
            "cd $HOME && apply_patch <<'EOF'\nx\nEOF",
            "apply_patch <<'EOF'\nno end",
        ] {
            assert_eq!(apply_patch_in(script), None, "{script}");
        }
    }
}
