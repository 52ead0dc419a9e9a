//! The file names of a diff's headers: quoted, dated, prefixed (`a/`, `b/`), or `-p N`
//! stripped.

/// The name of a `---`/`+++` line as written (`None` for `/dev/null`), unquoted, without the
/// time after a tab; and whether that time is the epoch (`1970-01-01 00:00:00 +0000`, or the
/// same instant in another zone), which GNU `diff -N` gives a file that is not there.
pub(super) fn raw_file_name(raw: &str) -> (Option<String>, bool) {
    let (name, time) = raw.split_once('\t').unwrap_or((raw, ""));
    let name = unquote(name.trim_end());
    let epoch = is_epoch(time.trim());
    if name == "/dev/null" { (None, epoch) } else { (Some(name), epoch) }
}

/// Whether `time` (`YYYY-MM-DD HH:MM:SS[.fraction] [+-]HHMM`) is 1970-01-01 00:00:00 UTC.
pub(super) fn is_epoch(time: &str) -> bool {
    let mut parts = time.split(' ');
    let (Some(date), Some(clock)) = (parts.next(), parts.next()) else { return false };
    let zone = parts.next().unwrap_or("+0000");
    let num = |s: &str| s.parse::<i64>().ok();
    let date: Vec<Option<i64>> = date.split('-').map(num).collect();
    let (clock, fraction) = clock.split_once('.').unwrap_or((clock, "0"));
    let clock: Vec<Option<i64>> = clock.split(':').map(num).collect();
    let (&[Some(y), Some(m), Some(d)], &[Some(h), Some(mi), Some(sec)]) =
        (date.as_slice(), clock.as_slice())
    else {
        return false;
    };
    if !fraction.bytes().all(|b| b == b'0') || zone.len() != 5 {
        return false;
    }
    let sign = match zone.as_bytes()[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return false,
    };
    let (Some(zh), Some(zm)) = (num(&zone[1..3]), num(&zone[3..])) else { return false };
    // Days from 1970-01-01 to y-m-d (the proleptic Gregorian calendar's civil-day count).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    days * 86_400 + h * 3_600 + mi * 60 + sec - sign * (zh * 3_600 + zm * 60) == 0
}

/// The paths of a `---`/`+++` pair. When the two names differ only in their first folder
/// (`a/f.txt` and `b/f.txt`; `old/f.txt` and `new/f.txt` of `diff -ruN old new`), that
/// folder is dropped, as `git apply` and `patch -p1` do; otherwise a leading `a/` or `b/` is
/// dropped, as before.
pub(super) fn strip_header_names(
    old: Option<String>,
    new: Option<String>,
) -> (Option<String>, Option<String>) {
    if let (Some(a), Some(b)) = (&old, &new)
        && let (Some((a_dir, a_rest)), Some((b_dir, b_rest))) =
            (a.split_once('/'), b.split_once('/'))
        && a_dir != b_dir
        && a_rest == b_rest
        && !a_dir.is_empty()
        && !a_rest.is_empty()
    {
        return (Some(a_rest.to_owned()), Some(b_rest.to_owned()));
    }
    (old.map(|n| strip_prefix_component(&n)), new.map(|n| strip_prefix_component(&n)))
}

/// The path of a `---`/`+++` name: `None` for `/dev/null`; `a/` and `b/` dropped; a
/// timestamp after a tab dropped; a quoted name unquoted.
#[cfg(test)]
pub(super) fn file_name(raw: &str) -> Option<String> {
    raw_file_name(raw).0.map(|n| strip_prefix_component(&n))
}

/// `name` without its first `n` folders (`-p n`; repeated slashes count as one), or `None`
/// when it has no more than `n` parts.
pub(super) fn strip_folders(name: &str, n: usize) -> Option<String> {
    let mut rest = name;
    for _ in 0..n {
        let (_, after) = rest.split_once('/')?;
        rest = after.trim_start_matches('/');
    }
    (!rest.is_empty()).then(|| rest.to_owned())
}

/// `a/x` and `b/x` as `x` (git's `-p1`); other names as they are.
pub(super) fn strip_prefix_component(name: &str) -> String {
    name.strip_prefix("a/").or_else(|| name.strip_prefix("b/")).unwrap_or(name).to_owned()
}

/// The two names of a `diff --git a/x b/x` line (either may be quoted).
pub(super) fn split_git_names(rest: &str) -> Option<(String, String)> {
    if rest.starts_with('"') {
        let (a, tail) = read_quoted(rest)?;
        let tail = tail.strip_prefix(' ')?;
        let b = if tail.starts_with('"') { read_quoted(tail)?.0 } else { tail.to_owned() };
        return Some((a, b));
    }
    if let Some(idx) = rest.find(" \"") {
        let b = read_quoted(&rest[idx + 1..])?.0;
        return Some((rest[..idx].to_owned(), b));
    }
    // Unquoted: the names are the same length when nothing was renamed; otherwise split at
    // ` b/`.
    let bytes = rest.len();
    if bytes % 2 == 1 {
        let half = bytes / 2;
        let (a, b) = (&rest[..half], &rest[half + 1..]);
        if rest.as_bytes()[half] == b' ' && a.get(2..) == b.get(2..) {
            return Some((a.to_owned(), b.to_owned()));
        }
    }
    let idx = rest.find(" b/")?;
    Some((rest[..idx].to_owned(), rest[idx + 1..].to_owned()))
}

/// A name as written: unquoted C-style when it is quoted.
pub(super) fn unquote(name: &str) -> String {
    if name.starts_with('"')
        && let Some((res, _)) = read_quoted(name)
    {
        return res;
    }
    name.to_owned()
}

/// A C-style quoted string at the start of `s`, and what follows it.
pub(super) fn read_quoted(s: &str) -> Option<(String, &str)> {
    let bytes = s.as_bytes();
    if bytes.first() != Some(&b'"') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return Some((String::from_utf8(out).ok()?, &s[i + 1..])),
            b'\\' => {
                i += 1;
                let c = *bytes.get(i)?;
                match c {
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b't' => out.push(b'\t'),
                    b'n' => out.push(b'\n'),
                    b'v' => out.push(11),
                    b'f' => out.push(12),
                    b'r' => out.push(b'\r'),
                    b'0'..=b'7' => {
                        let digits = s.get(i..i + 3)?;
                        out.push(u8::from_str_radix(digits, 8).ok()?);
                        i += 2;
                    }
                    other => out.push(other),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    None
}
