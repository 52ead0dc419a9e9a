//! Which client process a hook or an MCP server runs under: what ties a client's MCP server to
//! the hook events of the same client, for a client that does not say which session its server
//! serves (and for one whose session id changes under a running server).
//!
//! A client starts its MCP server itself, and runs each hook through a shell (`sh -c`), so the
//! client is the nearest ancestor that is not a shell. It is named by its pid and its start
//! time (so that a pid the system reuses is not taken for the same process). Linux only (read
//! from `/proc`); elsewhere there is no tie, and the caller falls back to the rules for an
//! untied server.

/// The names of programs that only pass a command on: the client is above them.
const PASS_THROUGH: &[&str] =
    &["sh", "bash", "dash", "zsh", "ksh", "fish", "env", "timeout", "nice"];

/// How far up to look.
const MAX_DEPTH: usize = 16;

/// A process, as `/proc/<pid>/stat` gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Its pid.
    pub pid: u32,
    /// Its name (`comm`).
    pub name: String,
    /// Its parent's pid.
    pub parent: u32,
    /// When it started, in clock ticks since boot.
    pub start: u64,
}

impl ProcessInfo {
    /// `<pid>:<start>`: the process's name in the store.
    pub fn key(&self) -> String {
        format!("{}:{}", self.pid, self.start)
    }
}

/// Reads a `/proc/<pid>/stat` line: the name is between the first `(` and the last `)` (it may
/// hold spaces and parentheses), then the state, the parent, and (field 22) the start time.
pub(crate) fn parse_stat(pid: u32, stat: &str) -> Option<ProcessInfo> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_owned();
    let rest: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is the state (field 3); field N is rest[N - 3].
    let parent = rest.get(1)?.parse().ok()?;
    let start = rest.get(19)?.parse().ok()?;
    Some(ProcessInfo { pid, name, parent, start })
}

/// The process `pid`, if it can be read.
pub fn process(pid: u32) -> Option<ProcessInfo> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(pid, &stat)
}

/// The client above the process `pid` (for the tests, which pass over nothing else).
#[cfg(test)]
fn client_above(pid: u32) -> Option<ProcessInfo> {
    client_above_skipping(pid, None)
}

/// The client above the process `pid`: its nearest ancestor that is not a shell or a command
/// that only passes a command on, also passing over ancestors that run the program `skip`.
fn client_above_skipping(pid: u32, skip: Option<std::path::PathBuf>) -> Option<ProcessInfo> {
    let ours = skip;
    let mut at = process(process(pid)?.parent)?;
    for _ in 0..MAX_DEPTH {
        let is_staged =
            ours.is_some() && std::fs::read_link(format!("/proc/{}/exe", at.pid)).ok() == ours;
        if !PASS_THROUGH.contains(&at.name.as_str()) && !is_staged {
            return Some(at);
        }
        if at.parent <= 1 {
            return None;
        }
        at = process(at.parent)?;
    }
    None
}

/// The client above this process, passing over staged's own processes (a hook's supervisor
/// above its work).
pub fn client_of_this_process() -> Option<ProcessInfo> {
    client_above_skipping(std::process::id(), std::fs::read_link("/proc/self/exe").ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_with_spaces_and_parentheses_in_the_name() {
        let stat = "4242 (my (odd) name) S 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10 18446744073709551615";
        let info = parse_stat(4242, stat).unwrap();
        assert_eq!(info.name, "my (odd) name");
        assert_eq!(info.parent, 17);
        assert_eq!(info.start, 987654);
        assert_eq!(info.key(), "4242:987654");
        assert_eq!(parse_stat(1, "garbage"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_two_shells_down_finds_this_process() {
        use std::io::BufRead;
        // The inner shell prints its pid and becomes `sleep` (so killing that pid leaves no
        // process behind holding the test's pipe); its parent is the outer shell, whose
        // parent is this test process: the client of both.
        let mut outer = std::process::Command::new("sh")
            .arg("-c")
            .arg("sh -c 'echo $$; exec sleep 30' & wait")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(outer.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let inner: u32 = line.trim().parse().unwrap();
        let me = process(std::process::id()).unwrap();
        assert_eq!(process(inner).unwrap().parent, outer.id());
        assert_eq!(client_above(inner).map(|c| c.key()), Some(me.key()));
        assert_eq!(client_above(outer.id()).map(|c| c.key()), Some(me.key()));
        let _ = std::process::Command::new("kill").arg(inner.to_string()).status();
        let _ = outer.wait();
    }
}
