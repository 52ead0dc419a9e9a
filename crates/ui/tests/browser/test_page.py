"""`staged ui` in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`),
driven over WebDriver by plain HTTP requests, against the real `staged` binary; axe-core audits
the preview and the log view (no serious or critical violation).

The page is opened from the address `staged ui --no-open` prints; a preview the CLI stages
appears without a reload; hunk 2 of a file is applied alone, with a reason, and the file, the
log entry and the remaining preview are exactly what `staged resolve apply --only FILE:2`
gives in a twin workspace; a preview resolved by the CLI meanwhile is marked stale; the apply
is undone from the log view. A screenshot of each state is written to
`target/ui-screenshots/` for a person to look at.

`staged` comes from `STAGED_BIN`, the browser from `CHROMIUM` and `CHROMEDRIVER` (defaults:
`/usr/bin/chromium`, `/usr/bin/chromedriver`); a missing one fails the test, never skips it.
"""

import base64
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]
# axe-core, pinned in package.json (and its lock) beside this file: `npm ci --prefix
# crates/ui/tests/browser` (scripts/test does it).
AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
SHOTS = REPO / "target" / "ui-screenshots"
WAIT_SECONDS = 20

TEXT = "fn a() {\n    let x = 1;\n}\n\nfn b() {}\nfn c() {}\nfn d() {}\nfn e() {}\nfn f() {\n    let y = 2;\n}\n"
NEW = TEXT.replace("let x = 1;", "let x = 10;").replace("let y = 2;", "let y = 20;")


def staged_bin():
    path = os.environ.get("STAGED_BIN", str(REPO / "target" / "debug" / "staged"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"no staged binary at {path} (set STAGED_BIN)")
    return path


def staged(root, *args, stdin=None):
    return subprocess.run([staged_bin(), "--workspace", str(root), *args], capture_output=True, text=True,
                          input=stdin, timeout=60)


def workspace(tmp, name):
    root = Path(tmp) / name
    root.mkdir()
    (root / ".git").mkdir()
    (root / "a.rs").write_text(TEXT)
    return root


def stage_two_hunks(root):
    proc = staged(root, "write", "a.rs", stdin=NEW)
    assert proc.returncode == 0, proc.stderr


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Driver:
    """A WebDriver session on a chromedriver child."""

    def __init__(self, profile):
        chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        chromedriver = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
        for path in (chromium, chromedriver):
            if not shutil.which(path):
                pytest.fail(f"{path} is missing: apt-get install chromium chromium-driver")
        self.port = free_port()
        self.proc = subprocess.Popen([chromedriver, f"--port={self.port}"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.time() + WAIT_SECONDS
        while True:
            try:
                if self._call("GET", "/status")["value"]["ready"]:
                    break
            except (urllib.error.URLError, ConnectionError, KeyError):
                pass
            if time.time() > deadline:
                self.proc.kill()
                pytest.fail("chromedriver did not start")
            time.sleep(0.1)
        options = {"binary": chromium, "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                                                "--window-size=1400,1100", f"--user-data-dir={profile}"]}
        caps = {"capabilities": {"alwaysMatch": {"goog:chromeOptions": options}}}
        self.session = self._call("POST", "/session", caps)["value"]["sessionId"]

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as res:
                return json.loads(res.read())
        except urllib.error.HTTPError as err:
            return json.loads(err.read())

    def call(self, method, path, body=None):
        return self._call(method, f"/session/{self.session}{path}", body)

    def go(self, url):
        self.call("POST", "/url", {"url": url})

    def url(self):
        return self.call("GET", "/url")["value"]

    def find(self, css, timeout=WAIT_SECONDS):
        """The element `css` selects, waited for."""
        deadline = time.time() + timeout
        while True:
            res = self.call("POST", "/element", {"using": "css selector", "value": css})
            value = res.get("value", {})
            if isinstance(value, dict) and value:
                key = next((k for k in value if k.startswith("element-")), None)
                if key:
                    return value[key]
            if time.time() > deadline:
                pytest.fail(f"no element {css!r} on the page:\n{self.text('body')}")
            time.sleep(0.1)

    def click(self, css):
        # The page redraws a view when what it shows changed: an element found just before
        # may be replaced; find it again.
        for _ in range(20):
            res = self.call("POST", f"/element/{self.find(css)}/click", {})
            value = res.get("value")
            if not (isinstance(value, dict) and value.get("error") == "stale element reference"):
                break
            time.sleep(0.1)
        self.ok(res, css)

    def keys(self, text):
        """Presses each key of `text` on whatever has the focus, as a person at the keyboard."""
        steps = [step for key in text for step in ({"type": "keyDown", "value": key}, {"type": "keyUp", "value": key})]
        self.ok(self.call("POST", "/actions", {"actions": [{"type": "key", "id": "keyboard", "actions": steps}]}), text)
        self.call("DELETE", "/actions")

    def type(self, css, text):
        self.ok(self.call("POST", f"/element/{self.find(css)}/value", {"text": text}), css)

    @staticmethod
    def ok(res, what):
        value = res.get("value")
        if isinstance(value, dict) and "error" in value:
            pytest.fail(f"{what}: {value['error']}: {value.get('message', '')[:300]}")

    def text(self, css):
        res = self.call("POST", "/element", {"using": "css selector", "value": css})
        value = res.get("value", {})
        key = next((k for k in value if k.startswith("element-")), None) if isinstance(value, dict) else None
        if not key:
            return ""
        return self.call("GET", f"/element/{value[key]}/text")["value"]

    def wait_text(self, css, needle):
        deadline = time.time() + WAIT_SECONDS
        while needle not in self.text(css):
            if time.time() > deadline:
                pytest.fail(f"{needle!r} never showed in {css}:\n{self.text(css)}")
            time.sleep(0.1)

    def script(self, source):
        return self.call("POST", "/execute/sync", {"script": source, "args": []})["value"]

    def audit(self):
        """axe-core's violations on the page as it is: `(id, impact, nodes, help)`."""
        if not AXE.exists():
            pytest.fail(f"{AXE} is missing: npm ci --prefix crates/ui/tests/browser")
        self.script(AXE.read_text() + "\n;return typeof window.axe;")
        res = self.call("POST", "/execute/async", {"script": """
            const done = arguments[arguments.length - 1];
            axe.run(document, {resultTypes: ['violations']})
              .then(r => done(r.violations.map(v => [v.id, v.impact, v.nodes.length, v.help, v.nodes.map(n => n.target.join(" ") + ": " + n.failureSummary)])))
              .catch(e => done(['error', String(e)]));""", "args": []})
        value = res["value"]
        assert not (value and value[0] == "error"), value
        return value

    def shot(self, name):
        SHOTS.mkdir(parents=True, exist_ok=True)
        png = self.call("GET", "/screenshot")["value"]
        (SHOTS / f"{name}.png").write_bytes(base64.b64decode(png))

    def quit(self):
        try:
            self.call("DELETE", "")
        finally:
            self.proc.kill()
            self.proc.wait()


def log_of(root):
    proc = staged(root, "--json", "log")
    assert proc.returncode == 0, proc.stderr
    entries = json.loads(proc.stdout)["entries"]
    for e in entries:
        e.pop("at")
        e.pop("frontEnd")
    return entries


def test_the_page_applies_one_hunk_as_the_cli_does_and_undoes_it():
    with tempfile.TemporaryDirectory() as tmp:
        twin = workspace(tmp, "twin")
        stage_two_hunks(twin)
        proc = staged(twin, "resolve", "apply", "--only", "a.rs:2", "--reason", "just y")
        assert proc.returncode == 0, proc.stderr

        root = workspace(tmp, "repo")
        page = subprocess.Popen([staged_bin(), "--workspace", str(root), "ui", "--no-open"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        driver = None
        try:
            url = page.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:") and "/?token=" in url, url
            driver = Driver(Path(tmp) / "profile")
            driver.go(url)
            driver.find("#pending")
            # The token left the address bar.
            assert "token=" not in driver.url(), driver.url()
            driver.wait_text("#pending", "None.")
            driver.shot("1-empty")

            # Staged by the CLI: it appears without a reload.
            stage_two_hunks(root)
            driver.wait_text("#pending", "pending-action:write:0")
            # Drawn at once, then highlighted.
            driver.find('#main[data-lit="yes"]')
            driver.find('input[aria-label="hunk 2 of 2 of a.rs"]')
            headers = driver.script(
                "return [...document.querySelectorAll('.hunk-head')].map(h => h.textContent)")
            assert headers == ["@@ -1,5 +1,5 @@ [hunk 1 of 2]", "@@ -7,5 +7,5 @@ [hunk 2 of 2]"], headers
            driver.shot("2-preview")
            # No serious or critical accessibility violation (axe-core).
            serious = [v for v in driver.audit() if v[1] in ("serious", "critical")]
            assert serious == [], serious

            # Hunk 2 alone, with a reason.
            driver.click('input[aria-label="hunk 1 of 2 of a.rs"]')
            driver.type("#reason", "just y")
            driver.shot("3-hunk-2-picked")
            driver.click("#apply")
            driver.wait_text("#message", "Applied")
            assert (root / "a.rs").read_text() == (twin / "a.rs").read_text()
            assert "let y = 20;" in (root / "a.rs").read_text()
            assert log_of(root) == log_of(twin)
            rest = {k: v for k, v in json.loads(staged(root, "--json", "show").stdout).items()
                    if k not in ("createdAt", "ageSeconds")}
            twin_rest = {k: v for k, v in json.loads(staged(twin, "--json", "show").stdout).items()
                         if k not in ("createdAt", "ageSeconds")}
            assert rest == twin_rest, rest
            front = json.loads(staged(root, "--json", "log").stdout)["entries"][0]["frontEnd"]
            assert front == "ui"
            driver.shot("4-applied")

            # The rest, resolved by the CLI while the page shows it: marked stale.
            driver.wait_text("#pending", "pending-action:write:1")
            driver.click('#pending button[data-id="pending-action:write:1"]')
            driver.find('#main[data-lit="yes"]')
            driver.find("#apply")
            proc = staged(root, "resolve", "discard", "--reason", "not x")
            assert proc.returncode == 0, proc.stderr
            driver.wait_text("#stale", "no longer pending")
            assert driver.script("return document.getElementById('apply').disabled") is True
            driver.shot("5-stale")

            # Undo the hunk's apply from the log view.
            applied = next(e for e in json.loads(staged(root, "--json", "log").stdout)["entries"]
                           if e["outcome"] == "applied")
            driver.click(f'#log button[data-entry="{applied["entry"]}"]')
            driver.wait_text("#main", f"Log entry {applied['entry']}: applied")
            driver.shot("6-log-entry")
            serious = [v for v in driver.audit() if v[1] in ("serious", "critical")]
            assert serious == [], serious
            driver.click("#undo")
            driver.wait_text("#message", "Undid")
            assert (root / "a.rs").read_text() == TEXT
            driver.wait_text("#log", "undone")
            driver.shot("7-undone")
        finally:
            if driver:
                driver.quit()
            page.kill()
            page.wait()


def test_a_ten_thousand_line_diff_is_drawn_in_pages():
    """A preview whose diff has 20,000 lines: the page draws the first 3,000 and offers the
    rest, so it stays usable; each click draws 10,000 more. Then the keys discard it."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        (root / ".git").mkdir()
        old = "".join(f"line {i}\n" for i in range(10_000))
        (root / "big.txt").write_text(old)
        proc = staged(root, "write", "big.txt", stdin=old.replace("line", "LINE"))
        assert proc.returncode == 0, proc.stderr
        page = subprocess.Popen([staged_bin(), "--workspace", str(root), "ui", "--no-open"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        driver = None
        try:
            url = page.stdout.readline().strip()
            driver = Driver(Path(tmp) / "profile")
            driver.go(url)
            driver.find('#main[data-lit="yes"]', timeout=120)
            driver.find("#more")
            rows = driver.script("return document.querySelectorAll('table.diff tr').length")
            assert rows == 3000, rows
            driver.wait_text("#more", "(17000 not drawn)")
            driver.shot("8-big-diff")
            driver.click("#more")
            driver.wait_text("#more", "(7000 not drawn)")
            rows = driver.script("return document.querySelectorAll('table.diff tr').length")
            assert rows == 13000, rows
            # The keys of `staged review`: d, a reason, Enter.
            driver.call("POST", "/actions", {"actions": [{"type": "key", "id": "keys", "actions": [
                {"type": "keyDown", "value": "d"}, {"type": "keyUp", "value": "d"}]}]})
            driver.wait_text("#message", "Type a reason, then Enter to discard")
            driver.type("#reason", "too big\ue007")
            driver.wait_text("#message", "Discarded")
            assert json.loads(staged(root, "--json", "pending").stdout)["pending"] == []
            assert (root / "big.txt").read_text() == old
        finally:
            if driver:
                driver.quit()
            page.kill()
            page.wait()


RECORD = ["hook", "claude-code", "--mode", "record"]
# Twenty numbered lines; the session changes lines 2 and 15: two hunks.
SESSION_BEFORE = "".join(f"line {n}\n" for n in range(1, 21))
SESSION_AFTER = SESSION_BEFORE.replace("line 2\n", "two, by the agent\n").replace(
    "line 15\n", "fifteen, by the agent\n")


def hook(root, event):
    proc = subprocess.run([staged_bin(), *RECORD], cwd=root, input=json.dumps(event), capture_output=True,
                          text=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1", "CODEX_HOME": str(root / ".no-codex-home")})
    assert proc.returncode == 0, proc.stderr


def recorded_write(root, path, text):
    """Claude Code's Write of `text` to `path` in session `claude-1`, recorded by staged's
    record-mode hook: PreToolUse, the client's write, PostToolUse."""
    file = root / path
    tool_input = {"file_path": str(file), "content": text}
    base = {"session_id": "claude-1", "cwd": str(root), "tool_name": "Write", "tool_input": tool_input,
            "tool_use_id": "t1", "permission_mode": "acceptEdits"}
    hook(root, {**base, "hook_event_name": "PreToolUse"})
    original = file.read_text()
    file.write_text(text)
    hook(root, {**base, "hook_event_name": "PostToolUse",
                "tool_response": {"type": "update", "filePath": str(file), "content": text,
                                  "structuredPatch": [], "originalFile": original}})


def test_the_page_reverts_a_session_hunk_as_the_cli_does_and_undoes_it():
    """A record-mode session appears without a reload; hunk 2 of its file is reverted from the
    page with a reason, and the file and the log are exactly what `staged session revert
    --only FILE:2` gives in a twin workspace; the revert is undone from the log view, as
    `staged undo` does; a hunk reverted by the CLI while the page shows it is named as changed
    under the person, and a keep of what they saw is refused, writing nothing."""
    with tempfile.TemporaryDirectory() as tmp:
        twin = workspace(tmp, "twin")
        (twin / "b.txt").write_text(SESSION_BEFORE)
        recorded_write(twin, "b.txt", SESSION_AFTER)
        proc = staged(twin, "session", "revert", "--only", "b.txt:2", "--reason", "line 15 stays")
        assert proc.returncode == 0, proc.stdout + proc.stderr

        root = workspace(tmp, "repo")
        (root / "b.txt").write_text(SESSION_BEFORE)
        page = subprocess.Popen([staged_bin(), "--workspace", str(root), "ui", "--no-open"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        driver = None
        try:
            url = page.stdout.readline().strip()
            driver = Driver(Path(tmp) / "profile")
            driver.go(url)
            driver.wait_text("#sessions", "None.")

            # Recorded by the hook: the session appears without a reload.
            recorded_write(root, "b.txt", SESSION_AFTER)
            driver.wait_text("#sessions", "S1 claude-code")
            driver.wait_text("#sessions", "0 of 2 hunks reviewed")
            title = driver.script(
                "return document.querySelector('#sessions button[data-session=\"S1\"]').title")
            assert title == "client id: claude-1", title
            driver.click('#sessions button[data-session="S1"]')
            driver.find('#main[data-lit="yes"]')
            driver.wait_text("#main", "client id: claude-1")
            driver.find('input[aria-label="hunk 2 of 2 of b.txt"]')
            headers = driver.script(
                "return [...document.querySelectorAll('.hunk-head')].map(h => h.textContent)")
            assert headers == ["@@ -1,5 +1,5 @@ [hunk 1 of 2]", "@@ -12,7 +12,7 @@ [hunk 2 of 2]"], headers
            names = driver.script(
                "return [...document.querySelectorAll('#main button')].map(b => b.textContent)")
            assert names == ["Keep", "Revert"], names
            driver.shot("9-session")
            serious = [v for v in driver.audit() if v[1] in ("serious", "critical")]
            assert serious == [], serious

            # A revert needs a reason, as `staged session revert` does: nothing is written.
            driver.click('input[aria-label="hunk 2 of 2 of b.txt"]')
            driver.click("#revert")
            driver.wait_text("#message", "Type a reason first")
            assert (root / "b.txt").read_text() == SESSION_AFTER

            driver.type("#reason", "line 15 stays")
            driver.shot("10-session-hunk-2-picked")
            driver.click("#revert")
            driver.wait_text("#message", "Reverted 1 hunk of S1 (b.txt (hunk 2))")
            assert (root / "b.txt").read_bytes() == (twin / "b.txt").read_bytes()
            assert log_of(root) == log_of(twin)
            revert = json.loads(staged(root, "--json", "log").stdout)["entries"][0]
            assert revert["frontEnd"] == "ui", revert
            driver.wait_text("#main", "0 of 1 hunk reviewed")
            driver.shot("11-session-hunk-reverted")

            # Undone from the log view, as `staged undo ENTRY` does in the twin.
            proc = staged(twin, "undo", str(revert["entry"]))
            assert proc.returncode == 0, proc.stdout + proc.stderr
            driver.click(f'#log button[data-entry="{revert["entry"]}"]')
            driver.wait_text("#main", f"Log entry {revert['entry']}: applied")
            driver.shot("12-session-revert-in-log")
            driver.click("#undo")
            driver.wait_text("#message", "Undid")
            assert (root / "b.txt").read_bytes() == SESSION_AFTER.encode()
            assert (root / "b.txt").read_bytes() == (twin / "b.txt").read_bytes()
            assert log_of(root) == log_of(twin)
            driver.wait_text("#log", "undone")
            driver.shot("13-session-revert-undone")

            # Changed under the person: the CLI reverts hunk 1 while the page shows it.
            driver.click('#sessions button[data-session="S1"]')
            driver.find('#main[data-lit="yes"]')
            driver.click('input[aria-label="hunk 1 of 2 of b.txt"]')
            seen = driver.script("return state.shown.files[0].keys")
            assert len(seen) == 2, seen
            proc = staged(root, "session", "revert", "--only", "b.txt:1", "--reason", "line 2 stays")
            assert proc.returncode == 0, proc.stdout + proc.stderr
            after_cli = (root / "b.txt").read_bytes()
            driver.wait_text("#changed", "hunk 1 of 2 of b.txt")
            driver.wait_text("#changed", "no longer what you saw")
            driver.shot("14-session-changed-under")
            # A keep of the hunk as the person saw it is refused, and nothing is written.
            res = driver.call("POST", "/execute/async", {"script": """
                const done = arguments[arguments.length - 1];
                post('/api/session', {session: 'S1', action: 'keep', reason: '', files: [],
                  hunks: {'b.txt': [1]}, seen: {'b.txt': arguments[0]}}).then(done);""", "args": [seen]})
            answer = res["value"]
            assert answer["isError"] is True, answer
            assert "Hunk 1 of b.txt changed since you looked at it" in answer["text"], answer
            assert "Nothing was written" in answer["text"], answer
            assert (root / "b.txt").read_bytes() == after_cli
            shown = json.loads(staged(root, "--json", "session", "show", "S1").stdout)
            assert [h["review"] for f in shown["files"] for h in f["hunks"]] == [None], shown

            # The approval question's link (`/?preview=ID`) opens that preview, not the newest.
            for name in ("c.txt", "d.txt"):
                proc = staged(root, "write", name, stdin="new\n")
                assert proc.returncode == 0, proc.stderr
            ids = [p["id"] for p in json.loads(staged(root, "--json", "pending").stdout)["pending"]]
            older = ids[-1]
            base = url.split("/?")[0]
            driver.go(f"{base}/?preview={older}")
            driver.wait_text("#main", f"({older})")
            driver.wait_text("#stale", "A newer preview is pending")
            assert driver.url() == base + "/", driver.url()

            # Keys as in `staged review`'s sessions view: with a hunk ticked (the focus on its
            # box), `K` opens the reason and Enter keeps it.
            driver.click('#sessions button[data-session="S1"]')
            driver.find('#main[data-lit="yes"]')
            driver.click('input[aria-label="hunk 1 of 1 of b.txt"]')
            driver.keys("K")
            driver.wait_text("#message", "Type a reason, then Enter to keep")
            driver.keys("\ue007")
            driver.wait_text("#message", "Kept 1 hunk of S1")
            shown = json.loads(staged(root, "--json", "session", "show", "S1").stdout)
            assert [h["review"] for f in shown["files"] for h in f["hunks"]] == ["kept"], shown
        finally:
            if driver:
                driver.quit()
            page.kill()
            page.wait()
