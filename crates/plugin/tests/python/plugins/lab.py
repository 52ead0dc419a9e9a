"""A test plugin on the Python helper: `stage_note` stages appending a line to notes.txt, and
the payload's `mode` decides how its apply behaves: `ok`, `slow` (sleeps 1 s first), `error`
(an error result), `crash` (the process dies), `hang` (never answers). With `reject: true` a
discard runs `_reject_note`. Every callback run is logged to STAGED_PLUGIN_LOG by the helper.
"""

import os
import time
from pathlib import Path

from staged_plugin import StagedPlugin

plugin = StagedPlugin("lab")


@plugin.callback
def apply_note(payload, reason, extra, pending_id):
    mode = payload["mode"]
    if mode == "slow":
        time.sleep(1)
    elif mode == "error":
        raise RuntimeError(f"the note was refused: {payload['text']}")
    elif mode == "crash":
        os._exit(7)
    elif mode == "hang":
        time.sleep(3600)
    with open("notes.txt", "a", encoding="utf-8") as out:
        out.write(payload["text"] + "\n")
    return f"Noted {payload['text']!r} ({pending_id}). Reason: {reason}. Extra: {extra}"


@plugin.callback
def reject_note(payload, reason, extra, pending_id):
    return f"Dropped the note {payload['text']!r}. Reason: {reason}"


@plugin.callback
def reject_silently(payload, reason, extra, pending_id):
    return None


@plugin.tool(description="Stage appending a line to notes.txt.")
def stage_note(text: str, mode: str = "ok", reject: str = "none") -> str:
    rejecter = {"none": None, "report": reject_note, "silent": reject_silently}[reject]
    plugin.push_pending_action(f"Note: {text}", apply=apply_note, reject=rejecter, payload={"text": text, "mode": mode})
    return f"Staged the note {text!r}."


@plugin.tool(description="Echo, staging nothing.")
def echo(text: str) -> str:
    return text


if __name__ == "__main__":
    plugin.run()
