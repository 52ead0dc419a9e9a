"""A staged plugin in Python: `rename_files` stages renaming files inside the workspace.

Nothing moves until `resolve apply`: then the `_apply_rename` callback renames each file,
after checking again that every source still exists and no target does. A discard runs
`_reject_rename`, which only reports; `staged undo` runs `_undo_rename`, which moves the files
back (and forward again for a redo) only if nothing moved them since. Run from the workspace root (staged does that).
"""

from __future__ import annotations

import os
from pathlib import Path

from staged_plugin import StagedPlugin

plugin = StagedPlugin("rename")
ROOT = Path.cwd().resolve()


def inside(path: str) -> Path:
    """`path` under the workspace root, refusing anything that leaves it."""
    full = (ROOT / path).resolve()
    if full != ROOT and ROOT not in full.parents:
        raise ValueError(f"{path} is outside the workspace")
    return full


def check(renames: list[dict]) -> None:
    for item in renames:
        src, dst = inside(item["from"]), inside(item["to"])
        if not src.is_file():
            raise ValueError(f"{item['from']} does not exist")
        if dst.exists():
            raise ValueError(f"{item['to']} already exists")


@plugin.callback
def apply_rename(payload, reason, extra, pending_id):
    renames = payload["renames"]
    done = all(not inside(r["from"]).exists() and inside(r["to"]).is_file() for r in renames)
    if done:
        # The pending id is an idempotency key: a retried apply changes nothing twice.
        return f"Already renamed ({pending_id}). Reason: {reason}"
    check(renames)
    for item in renames:
        dst = inside(item["to"])
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.rename(inside(item["from"]), dst)
    count = len(renames)
    return f"Renamed {count} file{'s' if count != 1 else ''}. Reason: {reason}"


@plugin.callback
def undo_rename(payload, reason, extra, pending_id):
    """`staged undo`: moves the files back, only if every renamed file is still where the apply
    put it and nothing has taken its old name; a redo moves them forward again, under the same
    rule."""
    redo = extra["staged/undo"]["redo"]
    moves = [(r["to"], r["from"]) if not redo else (r["from"], r["to"]) for r in payload["renames"]]
    for src, dst in moves:
        if not inside(src).is_file():
            raise ValueError(f"{src} is no longer there; nothing was moved")
        if inside(dst).exists():
            raise ValueError(f"{dst} exists again; nothing was moved")
    for src, dst in moves:
        target = inside(dst)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(inside(src), target)
    count = len(moves)
    verb = "Renamed again" if redo else "Moved back"
    return f"{verb} {count} file{'s' if count != 1 else ''}. Reason: {reason}"


@plugin.callback
def reject_rename(payload, reason, extra, pending_id):
    return f"Discarded the rename of {len(payload['renames'])} file(s). Reason: {reason}"


@plugin.tool(description="Stage renaming files (a list of {from, to} paths relative to the workspace root). Nothing moves until `resolve` applies it.")
def rename_files(renames: list[dict[str, str]]) -> str:
    if not renames:
        raise ValueError("renames must not be empty")
    check(renames)
    count = len(renames)
    lines = [f"  {r['from']} -> {r['to']}" for r in renames]
    plugin.push_pending_action(
        f"Rename: {count} file{'s' if count != 1 else ''}",
        apply=apply_rename,
        reject=reject_rename,
        undo=undo_rename,
        payload={"renames": renames},
        details={"renames": renames},
    )
    return "Preview (nothing moved yet):\n" + "\n".join(lines) + "\nCall resolve to apply or discard it."


if __name__ == "__main__":
    plugin.run()
