//! `staged ui` end to end: the real binary serves the page; a plain HTTP client (raw
//! HTTP/1.1 over a socket, so every header is exactly what the test sends) logs in with the
//! printed token, and the page's endpoints apply, discard, apply one hunk, undo and redo. What
//! they write is compared with what the CLI writes for the same request, and every refusal is
//! checked to have written nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::TcpStream,
    path::Path,
    process::{Child, Command, Stdio},
    time::Duration,
};

use common::{code, json, pending_ids, read, staged, stderr, stdout, workspace};
use serde_json::{Value, json};

/// A running `staged ui --no-open`, killed when dropped.
struct Page {
    child: Child,
    url: String,
    port: u16,
}

impl Drop for Page {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Page {
    fn start(dir: &Path) -> Page {
        let mut child = Command::new(common::staged_bin())
            .args(["ui", "--no-open"])
            .current_dir(dir)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start staged ui");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.trim().to_owned();
        let rest = url.strip_prefix("http://127.0.0.1:").unwrap_or_else(|| panic!("{url}"));
        let port = rest.split('/').next().unwrap().parse().unwrap();
        assert!(url.contains("/?token="), "{url}");
        Page { child, url, port }
    }

    fn token(&self) -> &str {
        self.url.split("token=").nth(1).unwrap()
    }

    /// One request; `headers` come after `Host` (unless they set it) and `Connection: close`.
    fn raw(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Response {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut req = format!("{method} {path} HTTP/1.1\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            req.push_str(&format!("Host: 127.0.0.1:{}\r\n", self.port));
        }
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()));
        stream.write_all(req.as_bytes()).unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        Response::parse(&raw)
    }

    /// Exchanges the token for the cookie; returns the `Cookie` header value.
    fn login(&self) -> String {
        let res = self.raw("GET", &format!("/?token={}", self.token()), &[], "");
        assert_eq!(res.status, 303, "{}", res.body);
        assert_eq!(res.header("location"), Some("/"));
        let cookie = res.header("set-cookie").unwrap().to_owned();
        assert!(cookie.contains("HttpOnly"), "{cookie}");
        assert!(cookie.contains("SameSite=Strict"), "{cookie}");
        cookie.split(';').next().unwrap().to_owned()
    }

    /// The CSRF token the page carries.
    fn csrf(&self, cookie: &str) -> String {
        let res = self.raw("GET", "/", &[("Cookie", cookie)], "");
        assert_eq!(res.status, 200, "{}", res.body);
        let at = res.body.find("name=\"staged-csrf\" content=\"").unwrap();
        let rest = &res.body[at + "name=\"staged-csrf\" content=\"".len()..];
        rest[..rest.find('"').unwrap()].to_owned()
    }

    fn get(&self, cookie: &str, path: &str) -> Value {
        let res = self.raw("GET", path, &[("Cookie", cookie)], "");
        assert_eq!(res.status, 200, "{path}: {}", res.body);
        serde_json::from_str(&res.body).unwrap()
    }

    fn post(&self, cookie: &str, csrf: &str, path: &str, body: &Value) -> Response {
        let origin = format!("http://127.0.0.1:{}", self.port);
        self.raw(
            "POST",
            path,
            &[
                ("Cookie", cookie),
                ("X-Staged-CSRF", csrf),
                ("Origin", &origin),
                ("Content-Type", "application/json"),
            ],
            &body.to_string(),
        )
    }
}

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Response {
    fn parse(raw: &[u8]) -> Response {
        let text = String::from_utf8_lossy(raw).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let mut lines = head.lines();
        let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        Response { status, headers, body: body.to_owned() }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|_| panic!("not JSON: {}", self.body))
    }
}

const TEXT: &str = "fn a() {\n    let x = 1;\n}\n\nfn b() {}\nfn c() {}\nfn d() {}\nfn e() {}\nfn f() {\n    let y = 2;\n}\n";
const NEW: &str = "fn a() {\n    let x = 10;\n}\n\nfn b() {}\nfn c() {}\nfn d() {}\nfn e() {}\nfn f() {\n    let y = 20;\n}\n";

/// A workspace with `a.rs` and a pending `write` of it that changes two hunks.
fn two_hunks() -> tempfile::TempDir {
    let dir = workspace(&[("a.rs", TEXT), ("new.txt", NEW)]);
    let out = staged(dir.path(), &["write", "a.rs", "new.txt"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    dir
}

/// The log's entries as `staged log --json` prints them, less what differs between two
/// workspaces (time, front end, hashes are kept: same bytes, same hashes).
fn log_of(dir: &Path) -> Vec<Value> {
    let out = staged(dir, &["--json", "log"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    json(&out)["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e.as_object_mut().unwrap().remove("at");
            e.as_object_mut().unwrap().remove("frontEnd");
            e
        })
        .collect()
}

#[test]
fn the_token_becomes_a_cookie_and_everything_else_is_refused() {
    let dir = two_hunks();
    let page = Page::start(dir.path());
    // Without the cookie: nothing.
    for path in ["/", "/api/state", "/app.js"] {
        let res = page.raw("GET", path, &[], "");
        assert_eq!(res.status, 401, "{path}");
        assert!(res.body.contains("open the address `staged ui` printed"), "{}", res.body);
    }
    let res = page.raw("GET", "/?token=0123456789abcdef0123456789abcdef", &[], "");
    assert_eq!(res.status, 401);
    assert_eq!(res.header("set-cookie"), None);
    let cookie = page.login();
    // The cookie is not the token: the address's secret is not what the browser keeps.
    assert!(!cookie.contains(page.token()), "{cookie}");
    let csrf = page.csrf(&cookie);
    let state = page.get(&cookie, "/api/state");
    assert_eq!(state["pending"][0]["id"], "pending-action:write:0");
    // A forged cookie.
    let forged = format!(
        "staged_ui_{}=0000000000000000000000000000000000000000000000000000000000000000",
        page.port
    );
    assert_eq!(page.raw("GET", "/api/state", &[("Cookie", &forged)], "").status, 401);
    // DNS rebinding: another Host, even with the cookie.
    let res = page.raw("GET", "/api/state", &[("Host", "evil.example"), ("Cookie", &cookie)], "");
    assert_eq!(res.status, 403);
    assert_eq!(res.body, "Forbidden: the Host header does not name this server");
    // Another site's page.
    let apply = json!({"id": "pending-action:write:0", "action": "apply", "reason": "r"});
    let res = page.raw(
        "POST",
        "/api/resolve",
        &[
            ("Cookie", &cookie),
            ("X-Staged-CSRF", &csrf),
            ("Origin", "http://evil.example"),
            ("Content-Type", "application/json"),
        ],
        &apply.to_string(),
    );
    assert_eq!(res.status, 403);
    assert_eq!(res.body, "Forbidden: the Origin is not this server's");
    // A cross-site form post: no CSRF header, a form body.
    let res = page.raw(
        "POST",
        "/api/resolve",
        &[("Cookie", &cookie), ("Content-Type", "application/x-www-form-urlencoded")],
        "id=pending-action%3Awrite%3A0&action=apply&reason=r",
    );
    assert_eq!(res.status, 403);
    assert!(res.body.contains("CSRF token"), "{}", res.body);
    // A wrong CSRF token.
    let res = page.raw(
        "POST",
        "/api/resolve",
        &[("Cookie", &cookie), ("X-Staged-CSRF", "nope"), ("Content-Type", "application/json")],
        &apply.to_string(),
    );
    assert_eq!(res.status, 403);
    // The CSRF token in a form body, without the header's content type.
    let res = page.raw(
        "POST",
        "/api/resolve",
        &[("Cookie", &cookie), ("X-Staged-CSRF", &csrf), ("Content-Type", "text/plain")],
        &apply.to_string(),
    );
    assert_eq!(res.status, 415);
    // No cookie, with the CSRF token.
    let res = page.raw(
        "POST",
        "/api/resolve",
        &[("X-Staged-CSRF", &csrf), ("Content-Type", "application/json")],
        &apply.to_string(),
    );
    assert_eq!(res.status, 401);
    // Nothing was written, nothing resolved, nothing logged.
    assert_eq!(read(dir.path(), "a.rs"), TEXT);
    assert_eq!(pending_ids(dir.path()), ["pending-action:write:0"]);
    assert!(log_of(dir.path()).is_empty());
    // Every response forbids framing and caching.
    let res = page.raw("GET", "/api/state", &[("Cookie", &cookie)], "");
    assert_eq!(res.header("x-frame-options"), Some("DENY"));
    assert_eq!(res.header("cache-control"), Some("no-store"));
}

#[test]
fn hunks_are_numbered_as_staged_show_numbers_them() {
    let dir = two_hunks();
    let page = Page::start(dir.path());
    let cookie = page.login();
    let preview = page.get(&cookie, "/api/preview?id=pending-action%3Awrite%3A0");
    assert_eq!(preview["partial"], true);
    let file = &preview["files"][0];
    assert_eq!(file["path"], "a.rs");
    let headers: Vec<&str> =
        file["hunks"].as_array().unwrap().iter().map(|h| h["header"].as_str().unwrap()).collect();
    let shown = stdout(&staged(dir.path(), &["show", "--hunks"]));
    let cli: Vec<&str> = shown.lines().filter(|l| l.starts_with("@@ ")).collect();
    assert_eq!(headers, cli);
    assert_eq!(headers[1], "@@ -7,5 +7,5 @@ [hunk 2 of 2]");
    // Highlighted and escaped on the server.
    let html: Vec<&str> = file["hunks"][0]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["html"].as_str().unwrap())
        .collect();
    assert!(
        html.contains(&"    <span class=\"k\">let</span> x = <span class=\"n\">10</span>;"),
        "{html:?}"
    );
}

#[test]
fn applying_one_hunk_on_the_page_is_what_the_cli_does() {
    let cli = two_hunks();
    let out = staged(cli.path(), &["resolve", "apply", "--only", "a.rs:2", "--reason", "just y"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));

    let dir = two_hunks();
    let page = Page::start(dir.path());
    let cookie = page.login();
    let csrf = page.csrf(&cookie);
    // A blank reason is refused, as the CLI refuses it.
    let res = page.post(
        &cookie,
        &csrf,
        "/api/resolve",
        &json!({"id": "pending-action:write:0", "action": "apply", "reason": "  ", "hunks": {"a.rs": [2]}}),
    );
    assert_eq!(res.status, 400);
    assert!(res.json()["error"].as_str().unwrap().contains("reason is required"));
    // A hunk the file does not have.
    let res = page.post(
        &cookie,
        &csrf,
        "/api/resolve",
        &json!({"id": "pending-action:write:0", "action": "apply", "reason": "r", "hunks": {"a.rs": [3]}}),
    );
    assert_eq!(res.status, 400, "{}", res.body);
    assert_eq!(read(dir.path(), "a.rs"), TEXT);
    assert!(log_of(dir.path()).is_empty());
    let res = page.post(
        &cookie,
        &csrf,
        "/api/resolve",
        &json!({"id": "pending-action:write:0", "action": "apply", "reason": "just y", "files": [], "hunks": {"a.rs": [2]}}),
    );
    assert_eq!(res.status, 200, "{}", res.body);
    assert_eq!(res.json()["isError"], false, "{}", res.body);

    assert_eq!(read(dir.path(), "a.rs"), read(cli.path(), "a.rs"));
    assert!(read(dir.path(), "a.rs").contains("let y = 20;"));
    assert!(read(dir.path(), "a.rs").contains("let x = 1;"));
    assert_eq!(log_of(dir.path()), log_of(cli.path()));
    assert_eq!(pending_ids(dir.path()), pending_ids(cli.path()));
    // The rest: the same preview (its age aside).
    let remaining = |d: &Path| {
        let mut shown = json(&staged(d, &["--json", "show"]));
        for key in ["createdAt", "ageSeconds"] {
            shown.as_object_mut().unwrap().remove(key);
        }
        shown
    };
    assert_eq!(remaining(dir.path()), remaining(cli.path()));
    assert!(remaining(dir.path())["diff"].as_str().unwrap().contains("+    let x = 10;"));
    // The log says the page decided.
    let out = staged(dir.path(), &["--json", "log"]);
    assert_eq!(json(&out)["entries"][0]["frontEnd"], "ui");
}

#[test]
fn discard_apply_undo_and_redo_through_the_page() {
    let dir = two_hunks();
    let page = Page::start(dir.path());
    let cookie = page.login();
    let csrf = page.csrf(&cookie);
    // Part of a preview is never a discard.
    let res = page.post(
        &cookie,
        &csrf,
        "/api/resolve",
        &json!({"id": "pending-action:write:0", "action": "discard", "reason": "r", "hunks": {"a.rs": [1]}}),
    );
    assert_eq!(res.status, 400);
    let res = page.post(
        &cookie,
        &csrf,
        "/api/resolve",
        &json!({"id": "pending-action:write:0", "action": "discard", "reason": "not now"}),
    );
    assert_eq!(res.json()["isError"], false, "{}", res.body);
    assert!(pending_ids(dir.path()).is_empty());
    assert_eq!(read(dir.path(), "a.rs"), TEXT);

    let out = staged(dir.path(), &["write", "a.rs", "new.txt"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let state = page.get(&cookie, "/api/state");
    assert_eq!(state["pending"][0]["id"], "pending-action:write:1");
    // Resolving a preview that is gone says so and changes nothing.
    let res = page.post(
        &cookie,
        &csrf,
        "/api/resolve",
        &json!({"id": "pending-action:write:0", "action": "apply", "reason": "r"}),
    );
    assert_eq!(res.json()["isError"], true, "{}", res.body);
    assert_eq!(read(dir.path(), "a.rs"), TEXT);
    let res = page.post(
        &cookie,
        &csrf,
        "/api/resolve",
        &json!({"id": "pending-action:write:1", "action": "apply", "reason": "both"}),
    );
    assert_eq!(res.json()["isError"], false, "{}", res.body);
    assert_eq!(read(dir.path(), "a.rs"), NEW);

    let state = page.get(&cookie, "/api/state");
    let applied = state["log"][0]["entry"].as_u64().unwrap();
    assert_eq!(state["log"][0]["outcome"], "applied");
    assert_eq!(state["log"][0]["undoable"], true);
    let entry = page.get(&cookie, &format!("/api/log?entry={applied}"));
    assert_eq!(entry["files"][0]["path"], "a.rs");
    assert_eq!(entry["files"][0]["hunks"].as_array().unwrap().len(), 2);

    let res = page.post(&cookie, &csrf, "/api/undo", &json!({"entry": applied, "reason": "oops"}));
    assert_eq!(res.json()["isError"], false, "{}", res.body);
    assert_eq!(read(dir.path(), "a.rs"), TEXT);
    let state = page.get(&cookie, "/api/state");
    assert_eq!(state["log"][0]["outcome"], "undone");
    assert!(state["redo"].is_u64(), "{state}");

    let res = page.post(&cookie, &csrf, "/api/redo", &json!({"reason": ""}));
    assert_eq!(res.json()["isError"], false, "{}", res.body);
    assert_eq!(read(dir.path(), "a.rs"), NEW);
    // The writes without the CSRF token are refused.
    let res = page.raw(
        "POST",
        "/api/undo",
        &[("Cookie", &cookie), ("Content-Type", "application/json")],
        "{}",
    );
    assert_eq!(res.status, 403);
    assert_eq!(read(dir.path(), "a.rs"), NEW);
}

/// While it serves, the page records its port in `.staged/ui.json`, and the approval question
/// of `staged mcp --approve human` finds it there (`staged_mcp::running_page` believes the
/// record only because the page answers as `staged ui` does); stopped, it is not found.
#[test]
fn a_running_page_is_found_for_the_approval_questions_link() {
    let dir = two_hunks();
    let state_dir = dir.path().join(".staged");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let page = Page::start(dir.path());
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(state_dir.join("ui.json")).unwrap()).unwrap();
    assert_eq!(record["port"], page.port, "{record}");
    assert_eq!(runtime.block_on(staged_mcp::running_page(&state_dir)), Some(page.port));
    let port = page.port;
    drop(page);
    // Killed: the record stays, but no page answers there.
    assert!(state_dir.join("ui.json").exists());
    assert_eq!(runtime.block_on(staged_mcp::running_page(&state_dir)), None, "port {port}");
}
