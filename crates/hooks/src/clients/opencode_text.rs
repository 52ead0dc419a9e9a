//! opencode's text formats the gate reads: its config's JSON with comments and trailing commas
//! ([`parse_jsonc`]), the globs of its permission rules ([`glob`]), and a shell command's words
//! ([`shell_words`]).

use serde_json::Value;

/// JSON with comments (`//`, `/* */`) and trailing commas, as opencode reads its config.
pub(crate) fn parse_jsonc(text: &str) -> Result<Value, String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => {
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            (',', _) => {
                // A comma before a closing bracket is dropped.
                let rest: String = chars.clone().collect();
                let next = rest.trim_start().chars().next();
                if !matches!(next, Some('}' | ']')) {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    let value: Value =
        serde_json::from_str(&out).map_err(|err| format!("not valid JSON: {err}"))?;
    if value.is_object() { Ok(value) } else { Err("not a JSON object".to_owned()) }
}

/// Whether `text` matches the glob `pattern` (`*` any run of characters, `?` one), as
/// opencode matches a rule's permission.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some(pi);
                mark = ti;
                pi += 1;
            }
            Some(c) if *c == '?' || Some(c) == t.get(ti) => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some(s) => {
                    pi = s + 1;
                    mark += 1;
                    ti = mark;
                }
                None => return false,
            },
        }
    }
    p.get(pi..).is_some_and(|rest| rest.iter().all(|c| *c == '*'))
}

/// The words of `command`, split at blanks and at `;&|()<>\`=` outside quotes, each without
/// its quotes.
pub(crate) fn shell_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    for c in command.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => word.push(c),
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c.is_whitespace() || ";&|()<>`=".contains(c) => {
                words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
            }
            None => word.push(c),
        }
    }
    words.extend((!word.is_empty()).then_some(word));
    words
}
