//! A patch sent through the shell: Codex models also run `apply_patch` as a command
//! (`apply_patch <<'EOF'` ... `EOF`, optionally after `cd <dir> &&`), which Codex's hooks see as
//! a `Bash` tool call with the whole script as its `command`.
//!
//! Codex applies such a command itself, without the shell, when it is exactly that form (and
//! is lenient about spacing: `apply_patch<<'EOF'` is one too); any other command that runs
//! `apply_patch` goes to the shell. In Codex 0.171's shell there is no `apply_patch` on `PATH`
//! (measured: `command -v apply_patch` finds nothing, and `timeout 10 apply_patch < f` ends in
//! "No such file or directory"), but a person's own `PATH` may hold one. So a gate stages the
//! one form and refuses every other command that runs `apply_patch` or carries a patch, whole:
//! it cannot run the other commands and hold the patch.
//!
//! A run is found by lexing the script as a shell does ([`lexed_runs`]): words unquoted
//! (`"apply_patch"`, `\apply_patch`, `apply_pat''ch` are all `apply_patch`), split into simple
//! commands at the operators, redirections and heredoc bodies set aside; a command runs
//! `apply_patch` when its command word is it, after assignments, keywords and wrappers
//! (`env`, `timeout 10`, `nice -n 5`, `stdbuf -oL`, `time -p`, `xargs`, `sudo`, ...), or when it
//! is a shell's `-c` script, `eval`'s words or a `find -exec` command that do. An older look-back scan
//! ([`runs_apply_patch`]) also counts, for what the lexer does not open (a `$(...)` inside
//! double quotes). Both take time linear in the script.

/// What a shell command is to a gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ShellPatch {
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
pub(crate) fn shell_patch(script: &str) -> ShellPatch {
    if let Some((patch, dir)) = alone(script) {
        return ShellPatch::Alone { patch, dir };
    }
    if script.contains("*** Begin Patch") || runs_apply_patch(script) || lexed_runs(script, 0) {
        ShellPatch::Entangled
    } else {
        ShellPatch::None
    }
}

/// What a command given as words is: `["apply_patch", patch]`, `["bash", "-lc", script]`,
/// or anything else (joined, it can only be entangled or nothing).
pub(crate) fn shell_patch_argv(argv: &[&str]) -> ShellPatch {
    match argv {
        [command, patch] if is_apply_patch(command) => {
            ShellPatch::Alone { patch: (*patch).to_owned(), dir: None }
        }
        [shell, flag, script] if is_shell(shell) && matches!(*flag, "-c" | "-lc") => {
            shell_patch(script)
        }
        _ => {
            let words: Vec<String> = argv.iter().map(|w| (*w).to_owned()).collect();
            if command_runs(&words, 0) {
                return ShellPatch::Entangled;
            }
            match shell_patch(&argv.join(" ")) {
                ShellPatch::None => ShellPatch::None,
                _ => ShellPatch::Entangled,
            }
        }
    }
}

fn is_apply_patch(word: &str) -> bool {
    matches!(word, "apply_patch" | "applypatch")
}

fn is_shell(word: &str) -> bool {
    matches!(base_name(word), "bash" | "sh" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "busybox")
}

/// The last part of a path (`/usr/bin/apply_patch` is `apply_patch`).
fn base_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// How deep shell scripts in shell scripts (`sh -c`, `eval`) are opened; a deeper one that
/// mentions `apply_patch` counts as running it.
const MAX_DEPTH: usize = 4;

/// Whether `script`, lexed as a shell lexes it, runs `apply_patch` (or `applypatch`) as a
/// command: see the module's documentation. `depth` is how many `sh -c` or `eval` it is in.
fn lexed_runs(script: &str, depth: usize) -> bool {
    if !(script.contains("apply") || script.contains('\\') || script.contains(['\'', '"'])) {
        // No way to spell the name: no run (the quick answer for most commands).
        return false;
    }
    if depth > MAX_DEPTH {
        return true;
    }
    let mut runs = false;
    lex(script, &mut |words| {
        runs = runs || command_runs(words, depth);
    });
    runs
}

/// Reserved words and operators-as-words that may come before a command's name.
const KEYWORDS: &[&str] =
    &["if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "coproc"];

/// Whether the simple command `words` (unquoted, redirections left out) runs `apply_patch`.
fn command_runs(words: &[String], depth: usize) -> bool {
    let mut rest = words;
    // Bounded: each turn drops at least one word.
    while let Some((first, tail)) = rest.split_first() {
        let word = first.as_str();
        let assignment = word.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if assignment || KEYWORDS.contains(&word) {
            rest = tail;
            continue;
        }
        let name = base_name(word);
        if is_apply_patch(name) {
            return true;
        }
        if is_shell(word) {
            return shell_script_runs(tail, depth);
        }
        if name == "eval" {
            return lexed_runs(&tail.join(" "), depth + 1);
        }
        if name == "find" {
            return find_runs(tail, depth);
        }
        match wrapped(name, tail) {
            Some(next) => rest = next,
            None => return false,
        }
    }
    false
}

/// Whether `find`'s arguments run `apply_patch`: each `-exec` (`-execdir`, `-ok`, `-okdir`)
/// runs the words up to its `;` or `+` (or the next `-exec`, so that each word is looked at
/// once: the `-exec` of a `find` run by an `-exec` is then looked at as the outer one's).
fn find_runs(args: &[String], depth: usize) -> bool {
    let is_exec = |word: &String| matches!(word.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir");
    let mut rest = args;
    while let Some(at) = rest.iter().position(is_exec) {
        let command = &rest[at + 1..];
        let end = command
            .iter()
            .position(|word| matches!(word.as_str(), ";" | "+") || is_exec(word))
            .unwrap_or(command.len());
        if command_runs(&command[..end], depth + 1) {
            return true;
        }
        rest = &command[end..];
    }
    false
}

/// Whether a shell's arguments (`-c script`, `-lc script`, `-e -c script`) run `apply_patch`;
/// a shell that reads its script from a file or stdin is not looked into.
fn shell_script_runs(args: &[String], depth: usize) -> bool {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let Some(flags) = arg.strip_prefix('-') else { return false };
        if flags.starts_with('-') {
            continue;
        }
        if flags.contains('c') {
            return args.next().is_some_and(|script| lexed_runs(script, depth + 1));
        }
        if flags.contains('o') {
            // `-o pipefail`
            args.next();
        }
    }
    false
}

/// The command a wrapper runs: what follows `name` and its options in `args`; `None` when
/// `name` is not a wrapper (or is one asked only to look: `command -v`).
fn wrapped<'a>(name: &str, args: &'a [String]) -> Option<&'a [String]> {
    // Options that take a value as the next word, by wrapper.
    let valued: &[&str] = match name {
        "env" => &["-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-P"],
        "exec" => &["-a"],
        "command" | "builtin" | "nohup" | "setsid" | "unbuffer" | "time" | "doas" => &[],
        "sudo" => &["-u", "-g", "-C", "-D", "-h", "-p", "-R", "-T", "-U", "-r", "-t"],
        "nice" => &["-n", "--adjustment"],
        "ionice" => &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
        "timeout" => &["-s", "--signal", "-k", "--kill-after"],
        "stdbuf" => &["-i", "-o", "-e", "--input", "--output", "--error"],
        "xargs" => &[
            "-I",
            "-i",
            "-n",
            "-L",
            "-l",
            "-P",
            "-d",
            "-E",
            "-e",
            "-s",
            "-a",
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--replace",
        ],
        "chrt" | "taskset" | "flock" | "watch" | "strace" | "ltrace" => {
            &["-p", "-n", "-o", "-e", "-w", "-E"]
        }
        _ => return None,
    };
    let mut rest = args;
    while let Some((first, tail)) = rest.split_first() {
        let word = first.as_str();
        if word == "--" {
            rest = tail;
            break;
        }
        if name == "command" && matches!(word, "-v" | "-V") {
            return None;
        }
        if name == "env" && word.contains('=') && !word.starts_with('-') {
            rest = tail;
            continue;
        }
        if !word.starts_with('-') || word == "-" {
            break;
        }
        rest = if valued.contains(&word) { tail.get(1..).unwrap_or_default() } else { tail };
    }
    match name {
        // `timeout DURATION command`, `chrt PRIORITY command`, `taskset MASK command`,
        // `flock FILE command`.
        "timeout" | "chrt" | "taskset" | "flock" => rest.get(1..),
        _ => Some(rest),
    }
}

/// A simple command being read.
#[derive(Default)]
struct Command {
    words: Vec<String>,
    word: String,
    in_word: bool,
    /// The next word is a redirection's target (dropped): `Some(true)` for a heredoc's
    /// delimiter (kept, to skip its body), with whether it was `<<-`.
    target: Option<(bool, bool)>,
    heredocs: Vec<(String, bool)>,
}

impl Command {
    fn end_word(&mut self) {
        if !self.in_word {
            return;
        }
        let done = std::mem::take(&mut self.word);
        self.in_word = false;
        match self.target.take() {
            Some((true, dash)) => self.heredocs.push((done, dash)),
            Some((false, _)) => {}
            None => self.words.push(done),
        }
    }

    fn end(&mut self, each: &mut dyn FnMut(&[String])) {
        self.end_word();
        if !self.words.is_empty() {
            each(&self.words);
            self.words.clear();
        }
        self.target = None;
    }
}

/// Lexes `script` into simple commands, as a shell does, and hands each one's words (quotes
/// removed, escapes resolved) to `each`. Operators (`;`, `&`, `|`, `(`, `)`, `` ` ``, `$(`,
/// newlines) end a command; a redirection (`<`, `>`, `2>&1`, `<<<`, `&>`, ...) and its target
/// are left out; a heredoc's body is skipped. One pass over the script.
fn lex(script: &str, each: &mut dyn FnMut(&[String])) {
    let chars: Vec<char> = script.chars().collect();
    let mut cmd = Command::default();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' => {
                cmd.end_word();
                i += 1;
            }
            '&' if chars.get(i + 1) == Some(&'>') => {
                // `&>file`, `&>>file`
                cmd.end_word();
                i += 1;
                while chars.get(i) == Some(&'>') {
                    i += 1;
                }
                cmd.target = Some((false, false));
            }
            '\n' | ';' | '&' | '|' | '(' | ')' | '`' => {
                cmd.end(each);
                i += 1;
                if c == '\n' && !cmd.heredocs.is_empty() {
                    i = skip_heredocs(&chars, i, &mut cmd.heredocs);
                }
            }
            '<' | '>' => {
                // A word of digits just before is the descriptor, not a word.
                if cmd.in_word
                    && cmd.target.is_none()
                    && cmd.word.chars().all(|d| d.is_ascii_digit())
                {
                    cmd.word.clear();
                    cmd.in_word = false;
                }
                cmd.end_word();
                let start = i;
                while i < chars.len()
                    && i - start < 3
                    && matches!(chars[i], '<' | '>' | '&' | '|' | '-')
                {
                    i += 1;
                }
                let op: String = chars[start..i].iter().collect();
                let heredoc = op.starts_with("<<") && !op.starts_with("<<<");
                cmd.target = Some((heredoc, op.starts_with("<<-")));
                if op.ends_with('&') {
                    // `2>&1`, `>&2`: a descriptor is the target.
                    while chars.get(i).is_some_and(|d| d.is_ascii_digit() || *d == '-') {
                        i += 1;
                    }
                    cmd.target = None;
                }
            }
            '#' if !cmd.in_word => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '\'' => {
                cmd.in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    cmd.word.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                cmd.in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        match chars[i + 1] {
                            d @ ('"' | '\\' | '$' | '`') => cmd.word.push(d),
                            '\n' => {}
                            d => {
                                cmd.word.push('\\');
                                cmd.word.push(d);
                            }
                        }
                        i += 2;
                        continue;
                    }
                    cmd.word.push(chars[i]);
                    i += 1;
                }
                i += 1;
            }
            '\\' => {
                if let Some(d) = chars.get(i + 1).filter(|d| **d != '\n') {
                    cmd.in_word = true;
                    cmd.word.push(*d);
                }
                i += 2;
            }
            '$' if chars.get(i + 1) == Some(&'(') => {
                // A command substitution: what follows is a command of its own.
                cmd.end(each);
                i += 2;
            }
            '$' if chars.get(i + 1) == Some(&'\'') => {
                cmd.in_word = true;
                i = ansi_c(&chars, i + 2, &mut cmd.word);
            }
            _ => {
                cmd.in_word = true;
                cmd.word.push(c);
                i += 1;
            }
        }
    }
    cmd.end(each);
}

/// Reads the body of a `$'...'` word that starts at `at` onto `word`, its escapes as C writes
/// them (`\x61`, `\141`, `\n`, `\'`); returns where the word goes on.
fn ansi_c(chars: &[char], at: usize, word: &mut String) -> usize {
    let mut i = at;
    while i < chars.len() && chars[i] != '\'' {
        if chars[i] != '\\' || i + 1 >= chars.len() {
            word.push(chars[i]);
            i += 1;
            continue;
        }
        let (radix, max, skip) = match chars[i + 1] {
            'x' => (16, 2, 2),
            'u' => (16, 4, 2),
            'U' => (16, 8, 2),
            '0'..='7' => (8, 3, 1),
            e => {
                word.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    other => other,
                });
                i += 2;
                continue;
            }
        };
        let start = i + skip;
        let mut end = start;
        while end < chars.len() && end - start < max && chars[end].is_digit(radix) {
            end += 1;
        }
        let digits: String = chars[start..end].iter().collect();
        if let Some(decoded) = u32::from_str_radix(&digits, radix).ok().and_then(char::from_u32) {
            word.push(decoded);
        }
        i = end.max(i + 2);
    }
    i + 1
}

/// Skips the bodies of the heredocs `heredocs` opened on the line that ended before `at`:
/// each runs to a line that is its delimiter (with tabs before it for `<<-`). Returns where
/// the next command starts.
fn skip_heredocs(chars: &[char], at: usize, heredocs: &mut Vec<(String, bool)>) -> usize {
    let mut i = at;
    for (delimiter, dash) in heredocs.drain(..) {
        while i < chars.len() {
            let start = i;
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            let line: String = chars[start..i].iter().collect();
            i = (i + 1).min(chars.len());
            let line = if dash { line.trim_start_matches('\t') } else { line.as_str() };
            if line.trim_end_matches('\r') == delimiter {
                break;
            }
        }
    }
    i
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
            // Wrappers, redirections first, quoted or escaped names (issue 32).
            "timeout 10 apply_patch < f".to_owned(),
            "timeout -s KILL 10s apply_patch < f".to_owned(),
            "nice -n 5 apply_patch < f".to_owned(),
            "nice -5 applypatch < f".to_owned(),
            "stdbuf -oL apply_patch < f".to_owned(),
            "stdbuf -o L apply_patch < f".to_owned(),
            "time -p apply_patch < f".to_owned(),
            "< f apply_patch".to_owned(),
            "2>/dev/null apply_patch < f".to_owned(),
            "\"apply_patch\" < f".to_owned(),
            "\\apply_patch < f".to_owned(),
            "apply_pat''ch < f".to_owned(),
            "'apply'\"_patch\" < f".to_owned(),
            "$'\\x61pply_patch' < f".to_owned(),
            "$'\\141pply_patch' < f".to_owned(),
            "a\\pply_patch < f".to_owned(),
            "env -i PATH=/x sudo -u root nice -n 1 timeout 5 apply_patch < f".to_owned(),
            "xargs -I{} apply_patch {} < list".to_owned(),
            "find . -name '*.patch' -exec apply_patch {} \\;".to_owned(),
            "find . -exec find {} -exec timeout 1 apply_patch \\; \\;".to_owned(),
            "sh -c 'find . -execdir apply_patch {} +'".to_owned(),
            "exec apply_patch < f".to_owned(),
            "{ apply_patch < f; }".to_owned(),
            "! apply_patch < f".to_owned(),
            "sh -c \"timeout 1 'apply_patch' < f\"".to_owned(),
            "bash -e -o pipefail -c 'nice apply_patch < f'".to_owned(),
            "eval 'time apply_patch' < f".to_owned(),
            "cat <<'X'\napply_patch is here only as text\nX\n\\apply_patch < f".to_owned(),
            "echo $(\"apply_patch\" < f)".to_owned(),
        ] {
            assert_eq!(shell_patch(&script), ShellPatch::Entangled, "{script}");
        }
        // Each mention is looked at against all that comes before it: so many that looking
        // would take minutes are a run, and are refused.
        let many = format!("echo a/{}", "apply_patch/".repeat(200_000));
        assert_eq!(shell_patch(&many), ShellPatch::Entangled);
        let many = format!("echo {}", "x=1 apply_patch=1 ".repeat(100_000));
        assert_eq!(shell_patch(&many), ShellPatch::Entangled);
        for words in [
            &["timeout", "10", "apply_patch"][..],
            &["\\apply_patch", "x", "y"],
            &["nice", "-n", "5", "/usr/bin/applypatch"],
        ] {
            assert_eq!(shell_patch_argv(words), ShellPatch::Entangled, "{words:?}");
        }
        assert_eq!(shell_patch_argv(&["timeout", "10", "ls"]), ShellPatch::None);
        // A hostile script of a hundred thousand words is lexed in one pass.
        let many =
            format!("{}apply_patch < f", "timeout 1 nice -n 5 env A='a'\\b\"c\" ".repeat(100_000));
        assert_eq!(shell_patch(&many), ShellPatch::Entangled);
        let many = "echo 'x' \"y\" \\z; ".repeat(100_000);
        assert_eq!(shell_patch(&many), ShellPatch::None);
        let many = format!("find {}", "-exec find -exec x ".repeat(100_000));
        assert_eq!(shell_patch(&many), ShellPatch::None);
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
            "timeout 10 cargo test apply_patch",
            "echo 'apply_patch' \"apply_patch\" \\apply_patch",
            "cat <<-X\n\tnot apply_patch < f\n\tX\necho done",
            "git log --grep apply_patch > out.txt 2>&1",
            "nice -n 5 grep apply_patch src",
            "find . -name apply_patch -exec cat {} \\;",
            "sh -c 'find . -name apply_patch'",
        ] {
            assert_eq!(shell_patch(script), ShellPatch::None, "{script}");
        }
    }
}
