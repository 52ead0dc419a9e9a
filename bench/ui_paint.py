#!/usr/bin/env python3
"""The review page of `staged ui` on a 10,000-line diff, against the same diff rendered as
static HTML by diff2html (bench/ui, pinned), in the same headless Chromium run.

For each page, RUNS times, interleaved: the time from the navigation's start to the first
frame after the first diff row is in the document (a MutationObserver installed before the
page's own scripts, then two animation frames), and, once the page settled, the JS heap in
use and the number of DOM nodes (DevTools' Performance.getMetrics, after a garbage
collection). The page is opened logged in (the token was exchanged for the cookie first), so
both navigations are one request for the document.

Usage: python3 bench/ui_paint.py STAGED [RUNS]
Needs Debian's chromium and chromium-driver, and `npm ci --prefix bench/ui`.
"""
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "crates" / "ui" / "tests" / "browser"))
from test_page import Driver  # noqa: E402

LINES = 5_000  # every line changed: 10,000 diff lines in one hunk

# Records, before the page's own scripts, when the first diff row is painted.
PROBE = """
window.__firstRow = null;
new MutationObserver((_, obs) => {
  if (document.querySelector('table.diff tr, .d2h-diff-tbody tr')) {
    obs.disconnect();
    requestAnimationFrame(() => requestAnimationFrame(() => { window.__firstRow = performance.now(); }));
  }
}).observe(document, { childList: true, subtree: true });
"""


def cdp(driver, cmd, params=None):
    return driver.call("POST", "/goog/cdp/execute", {"cmd": cmd, "params": params or {}})["value"]


def measure(driver, url):
    driver.go("about:blank")
    driver.go(url)
    deadline = time.time() + 120
    while True:
        at = driver.script("return window.__firstRow")
        if at is not None:
            break
        if time.time() > deadline:
            sys.exit(f"no diff row on {url}")
        time.sleep(0.05)
    time.sleep(1)
    cdp(driver, "HeapProfiler.collectGarbage")
    metrics = {m["name"]: m["value"] for m in cdp(driver, "Performance.getMetrics")["metrics"]}
    return at, metrics["JSHeapUsedSize"] / 1e6, metrics["Nodes"]


def main():
    staged = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        (root / ".git").mkdir()
        old = "".join(f"const value{i} = compute({i}, 'x');\n" for i in range(LINES))
        (root / "big.ts").write_text(old)
        proc = subprocess.run([staged, "--workspace", str(root), "write", "big.ts"],
                              input=old.replace("compute", "computeAll"), capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        diff = json.loads(subprocess.run([staged, "--workspace", str(root), "--json", "show"],
                                         capture_output=True, text=True).stdout)["diff"]
        static = Path(tmp) / "diff2html.html"
        static.write_text(subprocess.run(["node", str(HERE / "ui" / "render.js")], input=diff,
                                         capture_output=True, text=True, check=True).stdout)
        page = subprocess.Popen([staged, "--workspace", str(root), "ui", "--no-open"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        driver = None
        try:
            url = page.stdout.readline().strip()
            driver = Driver(Path(tmp) / "profile")
            driver.go(url)  # the token, for the cookie
            cdp(driver, "Page.addScriptToEvaluateOnNewDocument", {"source": PROBE})
            cdp(driver, "Performance.enable")
            home = url.split("/?token=")[0] + "/"
            rows = {"staged ui": [], "diff2html": []}
            for _ in range(runs):
                rows["staged ui"].append(measure(driver, home))
                rows["diff2html"].append(measure(driver, static.as_uri()))
        finally:
            if driver:
                driver.quit()
            page.kill()
            page.wait()
    print(f"{len(diff.splitlines())} diff lines, {runs} runs each, interleaved; medians")
    print(f"{'page':<10} {'first diff row painted (ms)':>28} {'JS heap (MB)':>13} {'DOM nodes':>10}")
    medians = {}
    for name, values in rows.items():
        paint, heap, nodes = (statistics.median(v[i] for v in values) for i in range(3))
        medians[name] = paint
        print(f"{name:<10} {paint:>28.0f} {heap:>13.1f} {nodes:>10.0f}")
    print(f"ratio (staged ui / diff2html), first diff row: {medians['staged ui'] / medians['diff2html']:.2f}")


if __name__ == "__main__":
    main()
