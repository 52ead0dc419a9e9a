"""Big previews, resources and change notifications of `staged mcp`, through the official MCP
Python SDK (`docs/contract/mcp.md`).

An `ast_edit` whose diff is over 200 KB comes back as a summary and a `resource_link`; reading
the link with `resources/read` gives the whole diff, byte for byte the diff `staged show` prints
from another process; once the preview is applied the link says so. A `staged` process that
stages a preview in the same workspace, and then discards it, brings
`notifications/resources/list_changed`: on a `subscriptions/listen` stream (protocol
2026-07-28, the SDK's default) and through the message handler (the legacy `initialize`
handshake). The tools are listed with their titles and all four hints.

The server command comes from `STAGED_MCP_CMD` (default `target/debug/staged mcp`); its
program is also the `staged` CLI of the other process.
"""

import asyncio
import json
import os
import shlex
import subprocess
import tempfile
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp import types
from mcp.client.subscriptions import ResourcesListChanged
from mcp.shared.exceptions import MCPError

PREVIEW_HEADER = (
    "Preview only: files are NOT modified yet. Call `resolve` with action \"apply\" to write "
    "these changes, or action \"discard\" to drop them."
)
REMINDER = (
    "<system-reminder>\n"
    "This is a preview. Call the `resolve` tool to apply or discard these changes.\n"
    "</system-reminder>"
)
MAX_INLINE_RESULT_BYTES = 20_000
FILES = 40
CALLS = 30
EDIT = {"ops": [{"pat": "oldApi($$$ARGS)", "out": "newApi($$$ARGS)"}], "paths": ["src"]}
MODES = ["auto", "legacy"]


def server_command():
    command = shlex.split(os.environ.get("STAGED_MCP_CMD", "target/debug/staged mcp"))
    if os.sep in command[0]:
        command[0] = os.path.abspath(command[0])
    return command


def staged_cli():
    explicit = os.environ.get("STAGED_CLI")
    if explicit:
        return os.path.abspath(explicit)
    program = server_command()[0]
    if os.path.basename(program) != "staged":
        pytest.skip("STAGED_MCP_CMD is not the staged binary and STAGED_CLI is unset")
    return program


def terminal(root, *args):
    """`staged --workspace ROOT --json ARGS...`, as another process."""
    proc = subprocess.run(
        [staged_cli(), "--workspace", str(root), "--json", *args],
        capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def connect(root, mode, message_handler=None):
    command = server_command()
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "--workspace", str(root)],
        cwd=str(root),
    )
    return Client(params, mode=mode, message_handler=message_handler)


def big_workspace(tmp):
    """FILES files of CALLS `oldApi` calls each, far enough apart to be hunks of their own, with
    non-ASCII text and tabs, so that the rename's diff is over 200 KB."""
    root = Path(tmp)
    (root / "src").mkdir()
    for f in range(FILES):
        lines = []
        for c in range(CALLS):
            lines.append(f'const v{c} = oldApi({f}, {c}, "é\tünïcödé → {c} ✓");\n')
            lines.append("// filler line\n" * 7)
        (root / "src" / f"f{f:02}.ts").write_text("".join(lines), encoding="utf-8")
    return root


def small_workspace(tmp):
    root = Path(tmp)
    (root / "src").mkdir()
    (root / "src" / "a.ts").write_text("oldApi(1);\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("mode", MODES)
def test_a_200_kb_diff_is_a_resource_link_whose_read_is_the_whole_diff(mode):
    async def scenario():
        with tempfile.TemporaryDirectory() as tmp:
            root = big_workspace(tmp)
            async with connect(root, mode) as client:
                staged = await client.call_tool("ast_edit", EDIT)
                assert not staged.is_error, staged.content[:1]
                details = staged.structured_content["details"]
                pending_id = details["pendingId"]
                uri = f"staged://preview/{pending_id}.diff"

                # The diff another process reads from the store.
                shown = json.loads(terminal(root, "show", pending_id))
                diff = shown["diff"]
                assert len(diff.encode("utf-8")) >= 200 * 1024, len(diff)

                links = [block for block in staged.content if isinstance(block, types.ResourceLink)]
                assert len(links) == 1, staged.content
                link = links[0]
                assert link.uri == uri
                assert link.mime_type == "text/x-diff"
                assert link.size == len(diff.encode("utf-8"))

                # The model is told what it must be told, in a result far below the limit.
                text = staged.structured_content["text"]
                label = f"AST Edit: {FILES * CALLS} replacements in {FILES} files"
                assert text.startswith(f"{PREVIEW_HEADER}\n\nStaged {pending_id}: {label}\n\n"), text[:400]
                assert f"The whole diff is the resource {uri} (linked below;" in text
                assert f"{FILES} files, {FILES * CALLS} hunks, +{FILES * CALLS} -{FILES * CALLS} lines" in text
                assert text.endswith("\n" + REMINDER)
                assert staged.structured_content["pending"] == {"id": pending_id, "label": label}
                assert len(json.dumps(staged.structured_content)) < MAX_INLINE_RESULT_BYTES
                assert "diff" in details["omitted"] and "diff" not in details

                # The whole diff, byte for byte.
                read = await client.read_resource(uri)
                assert len(read.contents) == 1
                body = read.contents[0]
                assert isinstance(body, types.TextResourceContents)
                assert body.uri == uri and body.mime_type == "text/x-diff"
                assert body.text.encode("utf-8") == diff.encode("utf-8")
                assert "é\tünïcödé → 0 ✓" in body.text

                listed = await client.list_resources()
                assert [r.uri for r in listed.resources] == [uri]

                # Applied, the link says what became of the preview; nothing is read from a path.
                applied = await client.call_tool("resolve", {"action": "apply", "reason": "rename"})
                assert not applied.is_error, applied.content
                with pytest.raises(MCPError) as gone:
                    await client.read_resource(uri)
                assert f"{pending_id} is no longer pending: it was applied (log entry 1)" in str(gone.value)
                with pytest.raises(MCPError) as hostile:
                    await client.read_resource(f"file://{root}/src/f00.ts")
                assert "Unknown resource" in str(hostile.value)
                assert "newApi" not in str(hostile.value)

    asyncio.run(scenario())


async def run_terminal(root, *args):
    return await asyncio.to_thread(terminal, root, *args)


def test_list_changed_arrives_on_a_listen_stream_when_another_process_stages():
    async def scenario():
        with tempfile.TemporaryDirectory() as tmp:
            root = small_workspace(tmp)
            async with connect(root, "auto") as client:
                assert client.protocol_version == "2026-07-28"
                assert client.server_capabilities.resources.list_changed is True
                async with client.listen(resources_list_changed=True) as sub:
                    assert sub.honored.resources_list_changed is True
                    await run_terminal(root, "ast-edit", "--op", "oldApi($$$A)", "newApi($$$A)", "src")
                    event = await asyncio.wait_for(sub.__anext__(), 15)
                    assert isinstance(event, ResourcesListChanged), event
                    listed = await client.list_resources()
                    assert len(listed.resources) == 1, listed

                    await run_terminal(root, "resolve", "discard", "--reason", "not now")
                    event = await asyncio.wait_for(sub.__anext__(), 15)
                    assert isinstance(event, ResourcesListChanged), event
                    assert (await client.list_resources()).resources == []

    asyncio.run(scenario())


def test_list_changed_reaches_a_legacy_client_when_another_process_stages():
    async def scenario():
        changed = asyncio.Queue()

        async def handler(message):
            if isinstance(message, types.ResourceListChangedNotification):
                changed.put_nowait(message)

        with tempfile.TemporaryDirectory() as tmp:
            root = small_workspace(tmp)
            async with connect(root, "legacy", handler) as client:
                assert client.protocol_version == "2025-11-25"
                assert client.server_capabilities.resources.list_changed is True
                await asyncio.sleep(1)
                assert changed.empty(), "nothing changed yet"
                await run_terminal(root, "ast-edit", "--op", "oldApi($$$A)", "newApi($$$A)", "src")
                await asyncio.wait_for(changed.get(), 15)
                assert len((await client.list_resources()).resources) == 1

                await run_terminal(root, "resolve", "discard", "--reason", "not now")
                await asyncio.wait_for(changed.get(), 15)
                assert (await client.list_resources()).resources == []

    asyncio.run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_every_tool_has_a_title_and_its_four_hints(mode):
    expected = {
        # name: (title, readOnly, destructive, idempotent, openWorld)
        "ast_grep": ("AST Grep", True, False, True, False),
        "ast_edit": ("AST Edit", False, False, True, False),
        "edit": ("Edit", False, False, True, False),
        "write": ("Write", False, False, True, False),
        "apply_patch": ("Apply Patch", False, False, True, False),
        "resolve": ("Resolve", False, True, False, False),
        "pending": ("Pending", True, False, True, False),
    }

    async def scenario():
        with tempfile.TemporaryDirectory() as tmp:
            async with connect(small_workspace(tmp), mode) as client:
                tools = {tool.name: tool for tool in (await client.list_tools()).tools}
                assert set(tools) == set(expected)
                for name, (title, read_only, destructive, idempotent, open_world) in expected.items():
                    tool = tools[name]
                    hints = tool.annotations
                    got = (tool.title, hints.title, hints.read_only_hint, hints.destructive_hint,
                           hints.idempotent_hint, hints.open_world_hint)
                    assert got == (title, title, read_only, destructive, idempotent, open_world), name

    asyncio.run(scenario())
