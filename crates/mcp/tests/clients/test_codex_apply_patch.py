"""`staged patch` against the real Codex CLI's own `apply_patch`, on the same patches.

For each scenario, the same input files go into two folders. In one, the pinned Codex CLI
(`codex --codex-run-as-apply-patch PATCH`, the entry point Codex itself runs for the
`apply_patch` tool) applies the patch; in the other, `staged patch` stages it and
`staged resolve apply` writes it. The two trees must then be identical, byte for byte: a
patch Codex applies applies here too, with the same result.

Where Codex refuses a patch, staged must refuse it too, and write nothing. Codex is not
atomic: a patch that fails in its third file leaves the first two written. staged writes all
or nothing, so there the trees differ on purpose, and the test checks that staged's is
untouched.

Codex comes from `STAGED_CLIENTS_BIN` (the pinned `node_modules/.bin` that `scripts/test`
installs); `staged` from `STAGED_BIN`. A missing client fails the test: it is never skipped.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from test_real_clients import client_bin, staged_bin

SCENARIOS = {
    "add_file": (
        {},
        "*** Begin Patch\n*** Add File: bar.md\n+This is a new file\n*** End Patch\n",
    ),
    "multiple_operations": (
        {"delete.txt": "obsolete\n", "modify.txt": "line1\nline2\n"},
        "*** Begin Patch\n*** Add File: nested/new.txt\n+created\n*** Delete File: delete.txt\n"
        "*** Update File: modify.txt\n@@\n-line2\n+changed\n*** End Patch\n",
    ),
    "multiple_chunks": (
        {"multi.txt": "line1\nline2\nline3\nline4\n"},
        "*** Begin Patch\n*** Update File: multi.txt\n@@\n-line2\n+changed2\n@@\n-line4\n+changed4\n*** End Patch\n",
    ),
    "move_to_new_directory": (
        {"old/name.txt": "old content\n", "old/other.txt": "unrelated file\n"},
        "*** Begin Patch\n*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n@@\n-old content\n+new content\n*** End Patch\n",
    ),
    "move_overwrites_existing_destination": (
        {"old/name.txt": "from\n", "renamed/dir/name.txt": "existing\n"},
        "*** Begin Patch\n*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n@@\n-from\n+new\n*** End Patch\n",
    ),
    "add_overwrites_existing_file": (
        {"duplicate.txt": "old content\n"},
        "*** Begin Patch\n*** Add File: duplicate.txt\n+new content\n*** End Patch\n",
    ),
    "update_appends_trailing_newline": (
        {"no_newline.txt": "no newline at end"},
        "*** Begin Patch\n*** Update File: no_newline.txt\n@@\n-no newline at end\n+first line\n+second line\n*** End Patch\n",
    ),
    "untouched_last_line_gets_a_newline": (
        {"tail.txt": "first\nlast"},
        "*** Begin Patch\n*** Update File: tail.txt\n@@\n-first\n+FIRST\n last\n*** End Patch\n",
    ),
    "pure_addition_chunk": (
        {"input.txt": "line1\nline2\n"},
        "*** Begin Patch\n*** Update File: input.txt\n@@\n+added line 1\n+added line 2\n*** End Patch\n",
    ),
    "addition_before_a_last_blank_line": (
        {"blank.txt": "a\n\n"},
        "*** Begin Patch\n*** Update File: blank.txt\n@@\n+b\n*** End Patch\n",
    ),
    "whitespace_padded_markers": (
        {"file.txt": "one\n"},
        "  *** Begin Patch  \n*** Update File: file.txt\n@@\n-one\n+two\n  *** End Patch  \n",
    ),
    "deletion_only_chunk": (
        {"lines.txt": "line1\nline2\nline3\n"},
        "*** Begin Patch\n*** Update File: lines.txt\n@@\n line1\n-line2\n line3\n*** End Patch\n",
    ),
    "end_of_file_marker": (
        {"tail.txt": "first\nsecond\nlast\n"},
        "*** Begin Patch\n*** Update File: tail.txt\n@@\n-last\n+end\n*** End of File\n*** End Patch\n",
    ),
    "unicode": (
        {"foo.txt": "café\n🎉 ünïcödé\n"},
        "*** Begin Patch\n*** Update File: foo.txt\n@@\n-🎉 ünïcödé\n+🎉 unicode\n*** End Patch\n",
    ),
    "context_line_narrows_the_search": (
        {"m.py": "class A:\n    def run(self):\n        return 1\nclass B:\n    def run(self):\n        return 1\n"},
        "*** Begin Patch\n*** Update File: m.py\n@@ class B:\n     def run(self):\n-        return 1\n+        return 2\n*** End Patch\n",
    ),
    "trailing_whitespace_ignored": (
        {"ws.txt": "keep   \nchange me\t\n"},
        "*** Begin Patch\n*** Update File: ws.txt\n@@\n keep\n-change me\n+changed\n*** End Patch\n",
    ),
    "surrounding_whitespace_ignored": (
        {"ws.txt": "    indented\n"},
        "*** Begin Patch\n*** Update File: ws.txt\n@@\n-indented\n+    reindented\n*** End Patch\n",
    ),
    "unicode_punctuation_as_ascii": (
        {"q.txt": "say \u201chi\u201d \u2014 ok\n"},
        "*** Begin Patch\n*** Update File: q.txt\n@@\n-say \"hi\" - ok\n+say hello\n*** End Patch\n",
    ),
    "crlf_kept": (
        {"w.txt": "alpha\r\nbeta\r\ngamma\r\n"},
        "*** Begin Patch\n*** Update File: w.txt\n@@\n alpha\n-beta\n+BETA\n+beta2\n gamma\n*** End Patch\n",
    ),
    "first_chunk_without_marker": (
        {"f.py": "import foo\n"},
        "*** Begin Patch\n*** Update File: f.py\n import foo\n+bar\n*** End Patch\n",
    ),
    "pure_addition_after_a_context_line": (
        {"f.rs": "fn a() {}\nfn b() {}\n"},
        "*** Begin Patch\n*** Update File: f.rs\n@@ fn a() {}\n+fn inserted() {}\n*** End Patch\n",
    ),
    "moved_crlf_file": (
        {"a.txt": "one\r\ntwo\r\n"},
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: sub/b.txt\n@@\n-one\n+uno\n two\n*** End Patch\n",
    ),
    "mixed_line_endings": (
        {"m.txt": "a\r\nb\nc\r\n"},
        "*** Begin Patch\n*** Update File: m.txt\n@@\n a\n-b\n+B\n+B2\n c\n*** End Patch\n",
    ),
    "patch_context_with_trailing_spaces": (
        {"k.txt": "keep\nchange\n"},
        "*** Begin Patch\n*** Update File: k.txt\n@@\n keep   \n-change\n+changed\n*** End Patch\n",
    ),
    "several_files_and_context_markers": (
        {"a.py": "def f():\n    return 1\n\ndef g():\n    return 1\n", "b.py": "x = 1\n"},
        "*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    return 1\n+    return 10\n@@ def g():\n-    return 1\n+    return 20\n*** Update File: b.py\n@@\n-x = 1\n+x = 2\n*** Add File: c.py\n+print('c')\n*** End Patch\n",
    ),
    "empty_lines_in_a_chunk": (
        {"e.txt": "a\n\nb\n"},
        "*** Begin Patch\n*** Update File: e.txt\n@@\n a\n\n-b\n+B\n*** End Patch\n",
    ),
    "heredoc_around_the_patch": (
        {"h.txt": "x\n"},
        "<<'EOF'\n*** Begin Patch\n*** Update File: h.txt\n@@\n-x\n+y\n*** End Patch\nEOF\n",
    ),
}

# Patches Codex refuses: staged refuses them too, writing nothing.
REFUSED = {
    "missing_context": (
        {"modify.txt": "line1\nline2\n"},
        "*** Begin Patch\n*** Update File: modify.txt\n@@\n-missing\n+changed\n*** End Patch\n",
    ),
    "missing_file_delete": (
        {"foo.txt": "stable\n"},
        "*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch\n",
    ),
    "empty_update_hunk": (
        {"foo.txt": "stable\n"},
        "*** Begin Patch\n*** Update File: foo.txt\n*** End Patch\n",
    ),
    "update_of_a_missing_file": (
        {"foo.txt": "stable\n"},
        "*** Begin Patch\n*** Update File: missing.txt\n@@\n-a\n+b\n*** End Patch\n",
    ),
    "delete_a_directory": (
        {"dir/foo.txt": "stable\n"},
        "*** Begin Patch\n*** Delete File: dir\n*** End Patch\n",
    ),
    "invalid_hunk_header": (
        {"foo.txt": "stable\n"},
        "*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch\n",
    ),
    "failure_after_partial_success": (
        {"keep.txt": "one\n"},
        "*** Begin Patch\n*** Add File: created.txt\n+hello\n*** Update File: keep.txt\n@@\n-absent\n+x\n*** End Patch\n",
    ),
}


def write_tree(root, files):
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode())


def read_tree(root):
    res = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.split("/")[0] in (".staged", ".git"):
            continue
        res[rel] = None if path.is_dir() else path.read_bytes()
    return res


def codex_apply(root, patch):
    codex = client_bin("codex")
    return subprocess.run(
        [codex, "--codex-run-as-apply-patch", patch],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
    )


def staged_apply(root, patch):
    staged = staged_bin()
    (root / ".git").mkdir(exist_ok=True)
    staged_env = {**os.environ, "NO_COLOR": "1"}
    stage = subprocess.run(
        [staged, "patch"], cwd=root, input=patch, capture_output=True, text=True, timeout=60, env=staged_env
    )
    if stage.returncode != 0:
        return stage
    return subprocess.run(
        [staged, "resolve", "apply", "--reason", "same as codex"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        env=staged_env,
    )


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_staged_applies_what_codex_applies_with_the_same_result(name, tmp_path):
    files, patch = SCENARIOS[name]
    theirs, ours = tmp_path / "codex", tmp_path / "staged"
    for root in (theirs, ours):
        root.mkdir()
        write_tree(root, files)
    codex = codex_apply(theirs, patch)
    assert codex.returncode == 0, f"codex refused {name}: {codex.stdout}{codex.stderr}"
    res = staged_apply(ours, patch)
    assert res.returncode == 0, f"staged refused {name}: {res.stdout}{res.stderr}"
    assert read_tree(ours) == read_tree(theirs), name


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_staged_refuses_what_codex_refuses_and_writes_nothing(name, tmp_path):
    files, patch = REFUSED[name]
    theirs, ours = tmp_path / "codex", tmp_path / "staged"
    for root in (theirs, ours):
        root.mkdir()
        write_tree(root, files)
    codex = codex_apply(theirs, patch)
    assert codex.returncode != 0, f"codex applied {name}: {codex.stdout}"
    before = read_tree(ours)
    res = staged_apply(ours, patch)
    assert res.returncode == 2, f"staged did not refuse {name}: {res.stdout}{res.stderr}"
    assert res.stderr.startswith("error: "), res.stderr
    assert read_tree(ours) == before, f"staged wrote something for {name}"


def random_case(rng):
    """A file and a patch in Codex's format that changes it: hunks in order, each with up to
    three context lines around it, sometimes an `@@ <line>` marker, on text with repeated
    lines (so the search order matters), CRLF endings or no final line ending."""
    words = ["alpha", "beta", "gamma", "delta", "  indented", "", "}", "return x;"]
    n = rng.randint(1, 30)
    lines = [rng.choice(words) + (str(rng.randint(0, 3)) if rng.random() < 0.5 else "") for _ in range(n)]
    ending = "\r\n" if rng.random() < 0.2 else "\n"
    text = ending.join(lines) + (ending if rng.random() < 0.8 else "")
    chunks = []
    at = 0
    while at < n and len(chunks) < 3:
        start = rng.randint(at, n - 1)
        removed = rng.randint(0, min(3, n - start))
        added = [rng.choice(words) + "!" for _ in range(rng.randint(0 if removed else 1, 3))]
        before = lines[max(at, start - rng.randint(0, 3)):start]
        after = lines[start + removed:start + removed + rng.randint(0, 3)]
        body = [" " + l for l in before] + ["-" + l for l in lines[start:start + removed]]
        body += ["+" + l for l in added] + [" " + l for l in after]
        marker = "@@"
        if before and rng.random() < 0.3:
            marker = "@@ " + lines[max(at, start - len(before)) - 1] if start - len(before) - 1 >= at else "@@"
        chunks.append(marker + "\n" + "\n".join(body))
        at = start + removed + len(after) + 1
    patch = "*** Begin Patch\n*** Update File: f.txt\n" + "\n".join(chunks) + "\n*** End Patch\n"
    return {"f.txt": text}, patch


def test_random_patches_give_what_codex_gives(tmp_path):
    import random

    rng = random.Random(20261201)
    agreed = refused = 0
    for case in range(150):
        files, patch = random_case(rng)
        theirs, ours = tmp_path / f"codex{case}", tmp_path / f"staged{case}"
        for root in (theirs, ours):
            root.mkdir()
            write_tree(root, files)
        codex = codex_apply(theirs, patch)
        before = read_tree(ours)
        res = staged_apply(ours, patch)
        if codex.returncode != 0:
            assert res.returncode == 2, f"case {case}: codex refused, staged applied:\n{patch}"
            assert read_tree(ours) == before, f"case {case}"
            refused += 1
            continue
        assert res.returncode == 0, f"case {case}: staged refused what codex applied:\n{patch}\n{res.stderr}"
        assert read_tree(ours) == read_tree(theirs), f"case {case}:\n{files}\n{patch}"
        agreed += 1
    assert agreed > 100, (agreed, refused)
