//! A patch sent through the shell: Codex models also run `apply_patch` as a command
//! (`apply_patch <<'EOF'` ... `EOF`, optionally after `cd <dir> &&`), which Codex's hooks see as
//! a `Bash` tool call with the whole script as its `command`.
//!
//! Codex applies such a command itself, without the shell, when it is exactly that form (and
//! is lenient about spacing: `apply_patch<<'EOF'` is one too); any other command that runs
//! `apply_patch` goes to the shell, where Codex puts an `apply_patch` of its own on `PATH`. So
//! a gate stages the one form and refuses every other command that runs `apply_patch` or
//! carries a patch, whole: it cannot run the other commands and hold the patch.

/// What a shell command is to a gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellPatch {
    /// Exactly one `apply_patch` (or `applypatch`) with a heredoc, or with the patch as its one
    /// quoted argument, optionally after `cd <dir> &&`: the patch, and that folder.
    Alone {
        /// The patch text.
        patch: String,
        /// The folder of a leading `cd`.
        dir: Option<String>,
    },
    /// A command that runs `apply_patch` or carries a patch (`*** Begin Patch`) in any other
    /// way: among other commands, with a redirect or a pipe, in a subshell, ...
    Entangled,
    /// Not a patch.
    None,
}

/// What `script` is: a patch staged can stage, a command that runs one some other way, or
/// neither.
pub fn shell_patch(script: &str) -> ShellPatch {
    if let Some((patch, dir)) = alone(script) {
        return ShellPatch::Alone { patch, dir };
    }
    if script.contains("*** Begin Patch") || runs_apply_patch(script) {
        ShellPatch::Entangled
    } else {
        ShellPatch::None
    }
}

/// What a command given as words is: `["apply_patch", patch]`, `["bash", "-lc", script]`,
/// or anything else (joined, it can only be entangled or nothing).
pub fn shell_patch_argv(argv: &[&str]) -> ShellPatch {
    match argv {
        [command, patch] if is_apply_patch(command) => {
            ShellPatch::Alone { patch: (*patch).to_owned(), dir: None }
        }
        [shell, flag, script] if is_shell(shell) && matches!(*flag, "-c" | "-lc") => {
            shell_patch(script)
        }
        _ => match shell_patch(&argv.join(" ")) {
            ShellPatch::None => ShellPatch::None,
            _ => ShellPatch::Entangled,
        },
    }
}

fn is_apply_patch(word: &str) -> bool {
    matches!(word, "apply_patch" | "applypatch")
}

fn is_shell(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    matches!(name, "bash" | "sh" | "zsh")
}

/// The patch and folder of a command that is exactly one `apply_patch`.
fn alone(script: &str) -> Option<(String, Option<String>)> {
    let script = script.trim_start();
    let (dir, rest) = match script.strip_prefix("cd ") {
        Some(rest) => {
            let (dir, after) = rest.split_once("&&")?;
            (Some(unquote(dir.trim())?), after.trim_start())
        }
        None => (None, script),
    };
    let rest = rest.strip_prefix("apply_patch").or_else(|| rest.strip_prefix("applypatch"))?;
    let spaced = rest.starts_with([' ', '\t']);
    let rest = rest.trim_start_matches([' ', '\t']);
    if let Some(heredoc) = rest.strip_prefix("<<") {
        let heredoc = heredoc.strip_prefix('-').unwrap_or(heredoc).trim_start_matches([' ', '\t']);
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
    if !spaced {
        return None;
    }
    // `apply_patch '<patch>'` or `apply_patch "<patch>"`.
    let arg = unquote(rest.trim_end())?;
    arg.trim_start().starts_with("*** Begin Patch").then_some((arg, dir))
}

/// Whether `apply_patch` (or `applypatch`) is run anywhere in `script`: as a command, at the
/// start of a line or after `;`, `&`, `|`, `(`, `{`, `` ` `` or `!`, by a path
/// (`/usr/bin/apply_patch`), after assignments or a word that runs what follows (`env`,
/// `exec`, `xargs`, `then`, ...), or as the script of `sh -c '...'` or `eval "..."`. A mere
/// mention (`grep -rn apply_patch src`) is not a run.
///
/// Each look back is as long as the script, so a script that names it more than
/// [`MAX_MENTIONS`] times counts as a run: no command needs that many, and a hook must answer
/// long before the client gives up on it.
fn runs_apply_patch(script: &str) -> bool {
    let mut mentions = 0;
    ["apply_patch", "applypatch"].iter().any(|name| {
        script.match_indices(name).any(|(at, _)| {
            let ends_word = !script[at + name.len()..]
                .starts_with(|c: char| c.is_ascii_alphanumeric() || "_.-".contains(c));
            if !ends_word {
                return false;
            }
            mentions += 1;
            mentions > MAX_MENTIONS || in_command_position(&script[..at])
        })
    })
}

/// How many mentions of `apply_patch` a script may hold before it counts as running it.
const MAX_MENTIONS: usize = 64;

/// Words that run the command that follows them.
const RUNNERS: &[&str] = &[
    "if", "then", "else", "elif", "do", "while", "until", "exec", "command", "builtin", "env",
    "sudo", "nohup", "time", "nice", "xargs", "eval",
];

/// Whether a word that follows `before` is a command's name.
fn in_command_position(before: &str) -> bool {
    let mut before = before;
    // A path to it: `/usr/bin/apply_patch`, `./apply_patch`.
    if before.ends_with('/') {
        before =
            before.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || "_./~-".contains(c));
    }
    loop {
        let trimmed = before.trim_end_matches([' ', '\t']);
        let Some(last) = trimmed.chars().next_back() else { return true };
        if ";&|({`!\n".contains(last) {
            return true;
        }
        if last == '\'' || last == '"' {
            // The script of `sh -c '...'` or `eval "..."`.
            let before_quote = trimmed[..trimmed.len() - 1].trim_end_matches([' ', '\t']);
            let word = last_word(before_quote);
            if word == "eval" {
                return true;
            }
            let shell = last_word(before_quote[..before_quote.len() - word.len()].trim_end());
            return matches!(word, "-c" | "-lc" | "-ic" | "-ec") && is_shell(shell);
        }
        let word = last_word(trimmed);
        let assignment = word.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if word.is_empty() || !(RUNNERS.contains(&word) || assignment) {
            return false;
        }
        before = &trimmed[..trimmed.len() - word.len()];
    }
}

/// The last word of `text` (up to a blank or a shell operator).
fn last_word(text: &str) -> &str {
    let start = text
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace() || ";&|(){}`!".contains(*c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    &text[start..]
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

    fn alone(patch: &str, dir: Option<&str>) -> ShellPatch {
        ShellPatch::Alone { patch: patch.to_owned(), dir: dir.map(str::to_owned) }
    }

    #[test]
    fn heredocs_with_any_delimiter_and_a_cd() {
        let script = format!("apply_patch <<'EOF'\n{PATCH}EOF\n");
        assert_eq!(shell_patch(&script), alone(PATCH, None));
        let script = format!("cd src/app && applypatch <<\"PATCH\"\n{PATCH}PATCH");
        assert_eq!(shell_patch(&script), alone(PATCH, Some("src/app")));
        let script = format!("apply_patch <<EOF\n{PATCH}EOF\n");
        assert_eq!(shell_patch(&script), alone(PATCH, None));
        // Codex applies these itself too: no blank before the heredoc, or after `&&`.
        let script = format!("apply_patch<<'EOF'\n{PATCH}EOF\n");
        assert_eq!(shell_patch(&script), alone(PATCH, None));
        let script = format!("cd src&&apply_patch\t<<'EOF'\n{PATCH}EOF\n");
        assert_eq!(shell_patch(&script), alone(PATCH, Some("src")));
    }

    #[test]
    fn a_quoted_argument() {
        let script = format!("apply_patch '{PATCH}'");
        assert_eq!(shell_patch(&script), alone(PATCH, None));
        assert_eq!(shell_patch_argv(&["apply_patch", PATCH]), alone(PATCH, None));
        let script = format!("apply_patch <<'EOF'\n{PATCH}EOF\n");
        assert_eq!(shell_patch_argv(&["/bin/bash", "-lc", &script]), alone(PATCH, None));
    }

    #[test]
    fn a_patch_run_with_anything_else_is_entangled() {
        for script in [
            format!("apply_patch <<'EOF'\n{PATCH}EOF\n; rm -rf x"),
            format!("apply_patch <<'EOF'\n{PATCH}EOF\nrm -rf x"),
            format!("echo hi; apply_patch <<'EOF'\n{PATCH}EOF\n"),
            format!("(cd src && apply_patch <<'EOF'\n{PATCH}EOF\n)"),
            format!("bash -lc \"apply_patch <<'EOF'\n{PATCH}EOF\n\""),
            format!("apply_patch <<'EOF'\n{PATCH}EOF\napply_patch <<'EOF'\n{PATCH}EOF\n"),
            format!("cd src && cd .. && apply_patch <<'EOF'\n{PATCH}EOF\n"),
            format!("apply_patch <<'EOF' && rm -rf x\n{PATCH}EOF\n"),
            format!("apply_patch <<'EOF' 2>&1\n{PATCH}EOF\n"),
            format!("# apply it\napply_patch <<'EOF'\n{PATCH}EOF\n"),
            format!("cat > p.txt <<'EOF'\n{PATCH}EOF\n"),
            format!("apply_patch '{PATCH}' && rm -rf /"),
            "cd $HOME && apply_patch <<'EOF'\nx\nEOF".to_owned(),
            "cat p.patch | apply_patch".to_owned(),
            "apply_patch < p.patch".to_owned(),
            "/usr/local/bin/apply_patch < p.patch".to_owned(),
            "FOO=1 applypatch < p.patch".to_owned(),
            "find . -name '*.patch' | xargs apply_patch".to_owned(),
            "sh -c 'apply_patch < p'".to_owned(),
            "if true; then apply_patch < p; fi".to_owned(),
            "x=$(apply_patch < p)".to_owned(),
            "apply_patch <<'EOF'\nno end".to_owned(),
        ] {
            assert_eq!(shell_patch(&script), ShellPatch::Entangled, "{script}");
        }
        // Each mention is looked at against all that comes before it: so many that looking
        // would take minutes are a run, and are refused.
        let many = format!("echo a/{}", "apply_patch/".repeat(200_000));
        assert_eq!(shell_patch(&many), ShellPatch::Entangled);
        let many = format!("echo {}", "x=1 apply_patch=1 ".repeat(100_000));
        assert_eq!(shell_patch(&many), ShellPatch::Entangled);
        assert_eq!(
            shell_patch_argv(&["env", "apply_patch", PATCH]),
            ShellPatch::Entangled,
            "words that are not exactly apply_patch and its patch"
        );
    }

    #[test]
    fn other_commands_are_not_patches() {
        for script in [
            "ls -la",
            "echo apply_patch",
            "grep -rn apply_patch src",
            "rg -c 'apply_patch' crates/",
            "git commit -m \"use apply_patch\"",
            "cat docs/apply_patch.md",
            "cargo test apply_patch_",
            "apply_patchx <<'EOF'\nx\nEOF",
            "command -v apply_patch",
        ] {
            assert_eq!(shell_patch(script), ShellPatch::None, "{script}");
        }
    }
}
