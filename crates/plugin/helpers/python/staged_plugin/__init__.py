"""Write staged plugins in Python, on the official MCP SDK (``mcp`` 2.x).

A staged plugin is an MCP server that staged starts as a child process. A tool stages a
preview with :meth:`StagedPlugin.push_pending_action`, shaped like the reference's
``pushPendingAction({label, apply, reject})``; staged keeps it on the workspace's durable
stack, and ``resolve`` later calls the ``apply`` or ``reject`` callback, perhaps in another
process and after a restart. This module hides the ``_meta["staged/pending"]`` convention
(``crates/plugin/PROTOCOL.md``, version 1)::

    from staged_plugin import StagedPlugin

    plugin = StagedPlugin("rename")

    @plugin.callback
    def apply_rename(payload, reason, extra, pending_id):
        os.rename(payload["src"], payload["dst"])
        return f"Renamed. Reason: {reason}"

    @plugin.tool(description="Stage renaming a file.")
    def rename_file(src: str, dst: str) -> str:
        plugin.push_pending_action(f"Rename: {src}", apply=apply_rename, payload={"src": src, "dst": dst})
        return "Staged the rename. Call resolve to apply or discard it."

    plugin.run()

Callbacks are tools named ``_<function name>``: staged calls them, and never offers them to a
model or an MCP client. A callback receives the payload the tool pushed, the resolve reason,
``extra`` (a dict or None) and the pending id. It returns the resolve result's text (a
``str``), a ``CallToolResult``, or ``None`` (for a reject: staged's default ``Discarded: ...``
text); an exception becomes an error result, which keeps the preview pending.

The pending id is an idempotency key, and this helper honours it for you: a callback that
returned a result for a pending id is not run again for that id. staged may call it again
when it could not see the answer (the plugin was stopped after a timeout, or staged itself was
killed, after the callback had done its work); the helper then answers with the result
recorded the first time, in the folder staged names in ``STAGED_PLUGIN_STATE``
(``.staged/plugins/<plugin>/``). Two runs for the same id never overlap. A run that was
stopped half-way is run again: write callbacks so that finishing an interrupted run is safe.

Set ``STAGED_PLUGIN_LOG`` to a file path to append one JSON line per callback run (with
``"replayed": true`` when the recorded result was returned).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import hashlib
import inspect
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable

try:
    import fcntl
except ImportError:  # not POSIX: runs are recorded, but not locked against each other
    fcntl = None

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

__all__ = ["StagedPlugin", "Callback", "PROTOCOL_VERSION", "PENDING_META_KEY", "STATE_ENV"]

PROTOCOL_VERSION = 1
PENDING_META_KEY = "staged/pending"

#: The pending action pushed during the current tool call.
_current: contextvars.ContextVar[list | None] = contextvars.ContextVar("staged_pending", default=None)


@dataclass(frozen=True)
class Callback:
    """A registered callback: its tool name is what staged stores and calls."""

    name: str
    fn: Callable[..., Any] = field(repr=False)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


#: The environment variable naming the plugin's state folder (set by staged).
STATE_ENV = "STAGED_PLUGIN_STATE"

#: Records older than this are removed when a new one is written.
_RECORD_DAYS = 30


class _Ledger:
    """The callback runs already done, one JSON file per idempotency key, in the folder staged
    names in ``STAGED_PLUGIN_STATE``."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    @staticmethod
    def key(callback: str, pending_id: str, extra: dict | None) -> str:
        # An undo (and its redo) is keyed by the log entry it reverts too: undo, redo and undo
        # again of one apply are three runs.
        undo = (extra or {}).get("staged/undo")
        entry = undo.get("entry") if isinstance(undo, dict) else None
        text = json.dumps([callback, pending_id, entry])
        return hashlib.sha256(text.encode()).hexdigest()

    def _path(self, key: str, suffix: str) -> str:
        return os.path.join(self.folder, key + suffix)

    def _ready(self) -> bool:
        if os.path.islink(self.folder):
            raise RuntimeError(f"{self.folder} is a symlink; the plugin state folder must be a real folder")
        os.makedirs(self.folder, exist_ok=True)
        return True

    @contextlib.asynccontextmanager
    async def hold(self, key: str):
        """Holds the key's lock while a run for it is in progress (an OS lock: it dies with
        the process that held it)."""
        self._ready()
        fd = os.open(self._path(key, ".lock"), os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            if fcntl is not None:
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        await asyncio.sleep(0.05)
            yield
        finally:
            os.close(fd)

    def get(self, key: str) -> dict | None:
        try:
            with open(self._path(key, ".json"), encoding="utf-8") as f:
                return json.load(f)
        except FileNotFoundError:
            return None

    def put(self, key: str, record: dict) -> None:
        fd, temp = tempfile.mkstemp(dir=self.folder, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(record, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, self._path(key, ".json"))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        self._prune()

    def _prune(self) -> None:
        cutoff = time.time() - _RECORD_DAYS * 86400
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.folder):
                if entry.name.endswith((".json", ".lock")) and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)


def _ledger() -> _Ledger | None:
    folder = os.environ.get(STATE_ENV)
    return _Ledger(folder) if folder else None


def _text_result(value: Any, *, is_error: bool = False) -> CallToolResult:
    if isinstance(value, CallToolResult):
        return value
    if value is None:
        return CallToolResult(content=[], is_error=is_error)
    return CallToolResult(content=[TextContent(type="text", text=str(value))], is_error=is_error)


class StagedPlugin:
    """An MCP server whose tools may stage previews. ``mcp`` is the underlying ``MCPServer``."""

    def __init__(self, name: str, **server_options: Any) -> None:
        self.mcp = MCPServer(name, **server_options)

    def callback(self, fn: Callable[..., Any]) -> Callback:
        """Registers ``fn(payload, reason, extra, pending_id)`` as the callback ``_<name>``."""
        name = "_" + fn.__name__.lstrip("_")
        log = os.environ.get("STAGED_PLUGIN_LOG")

        def note(pending_id: str | None, reason: str, replayed: bool = False) -> None:
            if log:
                line: dict[str, Any] = {"callback": name, "pendingId": pending_id, "reason": reason}
                if replayed:
                    line["replayed"] = True
                with open(log, "a", encoding="utf-8") as out:
                    out.write(json.dumps(line) + "\n")

        async def call(payload: Any, reason: str, extra: dict | None, pending_id: str | None) -> CallToolResult:
            note(pending_id, reason)
            try:
                res = fn(payload, reason, extra, pending_id)
                if inspect.isawaitable(res):
                    res = await res
            except Exception as exc:  # the text is what the model reads
                return _text_result(str(exc) or type(exc).__name__, is_error=True)
            return _text_result(res)

        async def run(payload: Any = None, reason: str = "", extra: dict | None = None, pendingId: str | None = None) -> CallToolResult:
            ledger = _ledger()
            if ledger is None or not pendingId:
                return await call(payload, reason, extra, pendingId)
            key = _Ledger.key(name, pendingId, extra)
            try:
                async with ledger.hold(key):
                    done = ledger.get(key)
                    if done is not None:
                        note(pendingId, reason, replayed=True)
                        return CallToolResult.model_validate(done["result"])
                    res = await call(payload, reason, extra, pendingId)
                    if not res.is_error:
                        record = {"callback": name, "pendingId": pendingId, "result": res.model_dump(mode="json", by_alias=True, exclude_none=True)}
                        try:
                            ledger.put(key, record)
                        except OSError as exc:
                            print(f"staged_plugin: could not record the run of {name} for {pendingId}: {exc}", file=sys.stderr)
                    return res
            except (OSError, RuntimeError, ValueError, KeyError, TypeError) as exc:
                return _text_result(f"{name} was not run: its idempotency record for {pendingId} is unusable ({exc})", is_error=True)

        self.mcp.tool(name=name, description=f"staged callback ({fn.__name__})", structured_output=False)(run)
        return Callback(name, fn)

    def tool(self, name: str | None = None, *, description: str | None = None, title: str | None = None, **options: Any) -> Callable:
        """Registers a tool (as ``MCPServer.tool``) during which ``push_pending_action`` stages."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            if inspect.iscoroutinefunction(fn):

                @functools.wraps(fn)
                async def wrapper(*args: Any, **kwargs: Any) -> CallToolResult:
                    token = _current.set([])
                    try:
                        try:
                            res = await fn(*args, **kwargs)
                        except Exception as exc:
                            return _text_result(str(exc) or type(exc).__name__, is_error=True)
                        return self._finish(res)
                    finally:
                        _current.reset(token)

            else:

                @functools.wraps(fn)
                def wrapper(*args: Any, **kwargs: Any) -> CallToolResult:
                    token = _current.set([])
                    try:
                        try:
                            res = fn(*args, **kwargs)
                        except Exception as exc:
                            return _text_result(str(exc) or type(exc).__name__, is_error=True)
                        return self._finish(res)
                    finally:
                        _current.reset(token)

            wrapper.__annotations__ = {**getattr(fn, "__annotations__", {}), "return": CallToolResult}
            self.mcp.tool(name=name, description=description or inspect.getdoc(fn), title=title, structured_output=False, **options)(wrapper)
            return fn

        return register

    def push_pending_action(
        self,
        label: str,
        apply: Callback | str,
        reject: Callback | str | None = None,
        *,
        undo: Callback | str | None = None,
        payload: Any = None,
        details: Any = None,
    ) -> None:
        """Stages a preview from inside a tool: ``resolve`` will call ``apply(payload, ...)``
        or, on discard, ``reject`` (when given). With ``undo``, ``staged undo`` can revert the
        apply: it calls ``undo(payload, reason, extra, pending_id)`` with
        ``extra["staged/undo"] == {"redo": bool, "applied": <apply's structured content>,
        "entry": <log entry>}``; ``redo`` is true when it should apply again. Call it at most
        once per tool call."""
        pending = _current.get()
        if pending is None:
            raise RuntimeError("push_pending_action must be called while a @plugin.tool runs")
        if pending:
            raise RuntimeError("a tool call stages at most one preview")
        if not label:
            raise ValueError("label must not be empty")
        entry: dict[str, Any] = {
            "version": PROTOCOL_VERSION,
            "label": label,
            "apply": apply.name if isinstance(apply, Callback) else apply,
            "payload": payload,
        }
        if reject is not None:
            entry["reject"] = reject.name if isinstance(reject, Callback) else reject
        if undo is not None:
            entry["undo"] = undo.name if isinstance(undo, Callback) else undo
        if details is not None:
            entry["details"] = details
        pending.append(entry)

    def _finish(self, res: Any) -> CallToolResult:
        result = _text_result(res)
        pending = _current.get() or []
        if pending and not result.is_error:
            meta = dict(result.meta or {})
            meta[PENDING_META_KEY] = pending[0]
            result = result.model_copy(update={"meta": meta})
        return result

    def run(self) -> None:
        """Serves over stdio, as staged expects."""
        self.mcp.run("stdio")
