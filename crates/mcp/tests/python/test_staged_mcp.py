"""End-to-end test of `staged mcp` with the official MCP Python SDK (a client nobody here wrote).

It spawns the server over stdio in a fresh temporary workspace, lists the tools, stages an
`ast_edit` preview, sees the resolve reminder on another tool's result, resolves with apply
and with discard, and checks the files on disk. Each flow runs twice: with the SDK's default
negotiation (protocol 2026-07-28 via `server/discover`) and with the legacy `initialize`
handshake. Every result must tell the same thing in its text blocks and in its
`structuredContent` (`{"text", "isError", "details", "pending"}`, the `--json` shape, which each
tool declares as its `outputSchema`). With `--approve human` it also answers the approval
question through the SDK's elicitation callback. It then serves streamable HTTP on 127.0.0.1
behind the bearer token (the generated token file, or `--token-file`), runs the flow over it
with the token in the SDK client's headers, checks with raw requests that a missing or wrong
token gets 401 and a foreign `Origin` 403, and that a non-loopback `--http` address, or
`--allow-remote` without a token, is refused.

The server command comes from `STAGED_MCP_CMD` (a shell-split string, default
`target/debug/staged mcp`); `--workspace <tmp>` is appended and the server runs in `<tmp>`.
"""

import asyncio
import http.client
import json
import os
import shlex
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp import types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

REMINDER = (
    "<system-reminder>\n"
    "This is a preview. Call the `resolve` tool to apply or discard these changes.\n"
    "</system-reminder>"
)
SOURCE = "oldApi(1);\nconst x = oldApi(2, 3);\n"
RENAMED = "newApi(1);\nconst x = newApi(2, 3);\n"
EDIT = {"ops": [{"pat": "oldApi($$$ARGS)", "out": "newApi($$$ARGS)"}], "paths": ["src"]}
MODES = ["auto", "legacy"]


def server_command():
    command = shlex.split(os.environ.get("STAGED_MCP_CMD", "target/debug/staged mcp"))
    # The server runs in the temporary workspace, so a relative program path is resolved
    # against the directory pytest was started in.
    if os.sep in command[0]:
        command[0] = os.path.abspath(command[0])
    return command


def connect(workspace, mode, extra_args=(), elicitation_callback=None):
    command = server_command()
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "--workspace", str(workspace), *extra_args],
        cwd=str(workspace),
    )
    return Client(params, mode=mode, elicitation_callback=elicitation_callback)


def texts(result):
    """The text blocks, after checking that `structuredContent` says the same."""
    parts = [part.text for part in result.content if isinstance(part, types.TextContent)]
    structured = result.structured_content
    assert set(structured) == {"text", "isError", "details", "pending"}, structured
    assert structured["text"] == "\n".join(parts), structured
    assert structured["isError"] == result.is_error, structured
    assert isinstance(structured["details"], dict), structured
    return parts


def details(result):
    return result.structured_content["details"]


def head(result):
    return result.structured_content["pending"]


def new_workspace(tmp):
    root = Path(tmp)
    (root / "src").mkdir()
    (root / "src" / "a.ts").write_text(SOURCE)
    return root


@pytest.mark.parametrize("mode", MODES)
def test_tools_are_listed_with_annotations(mode):
    async def scenario():
        with tempfile.TemporaryDirectory() as tmp:
            async with connect(new_workspace(tmp), mode) as client:
                assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
                tools = {tool.name: tool for tool in (await client.list_tools()).tools}
                assert sorted(tools) == ["apply_patch", "ast_edit", "ast_grep", "edit", "pending", "resolve", "write"]
                assert tools["ast_grep"].annotations.read_only_hint is True
                assert tools["pending"].annotations.read_only_hint is True
                assert tools["resolve"].annotations.destructive_hint is True
                assert tools["ast_edit"].annotations.read_only_hint is False
                schema = tools["ast_edit"].input_schema
                assert schema["required"] == ["ops", "paths"]
                assert schema["properties"]["ops"]["items"]["required"] == ["pat", "out"]
                assert set(tools["resolve"].input_schema["properties"]) == {"action", "reason", "extra"}
                for tool in tools.values():
                    assert tool.output_schema["type"] == "object", tool.name
                    assert tool.output_schema["required"] == ["text", "isError", "details", "pending"]

    asyncio.run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_stage_remind_apply_then_discard(mode):
    async def scenario():
        with tempfile.TemporaryDirectory() as tmp:
            root = new_workspace(tmp)
            target = root / "src" / "a.ts"
            async with connect(root, mode) as client:
                staged = await client.call_tool("ast_edit", EDIT)
                assert not staged.is_error, texts(staged)
                assert texts(staged)[-1] == REMINDER
                model_text = staged.structured_content["text"]
                assert model_text.startswith("Preview only: files are NOT modified yet."), model_text
                assert model_text.endswith("\n" + REMINDER), model_text
                assert details(staged)["totalReplacements"] == 2
                assert head(staged) == {"id": details(staged)["pendingId"], "label": "AST Edit: 2 replacements in 1 file"}
                assert target.read_text() == SOURCE, "a preview writes nothing"

                grep = await client.call_tool("ast_grep", {"pattern": "oldApi($$$A)", "paths": ["src"]})
                assert not grep.is_error, texts(grep)
                assert texts(grep)[-1] == REMINDER

                pending = await client.call_tool("pending", {})
                assert details(pending)["count"] == 1
                assert details(pending)["pending"][0]["source"] == "ast_edit"
                assert texts(pending)[-1] == REMINDER
                assert pending.structured_content["text"].endswith(REMINDER)

                applied = await client.call_tool("resolve", {"action": "apply", "reason": "rename"})
                assert not applied.is_error, texts(applied)
                assert texts(applied) == ["Applied 2 replacements in 1 file."]
                assert applied.structured_content["text"] == "Applied 2 replacements in 1 file."
                assert head(applied) is None
                assert target.read_text() == RENAMED

                back = {"ops": [{"pat": "newApi($$$ARGS)", "out": "oldApi($$$ARGS)"}], "paths": ["src"]}
                staged = await client.call_tool("ast_edit", back)
                assert texts(staged)[-1] == REMINDER
                discarded = await client.call_tool("resolve", {"action": "discard", "reason": "keep it"})
                assert not discarded.is_error, texts(discarded)
                assert texts(discarded)[0].startswith("Discarded: ")
                assert REMINDER not in texts(discarded)
                assert target.read_text() == RENAMED

                pending = await client.call_tool("pending", {})
                assert texts(pending) == ["No pending actions."]

                nothing = await client.call_tool("resolve", {"action": "apply", "reason": "again"})
                assert nothing.is_error
                assert texts(nothing) == ["No pending action to resolve. Nothing to apply or discard."]

                outside = await client.call_tool("ast_edit", {**EDIT, "paths": ["../elsewhere.ts"]})
                assert outside.is_error
                assert texts(outside)[0].startswith("Path is outside the workspace: ../elsewhere.ts")

    asyncio.run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_human_approval_through_elicitation(mode):
    answers = []
    asked = []

    async def answer(context, params):
        asked.append(params.message)
        return answers.pop(0)

    async def scenario():
        with tempfile.TemporaryDirectory() as tmp:
            root = new_workspace(tmp)
            target = root / "src" / "a.ts"
            async with connect(root, mode, ["--approve", "human"], answer) as client:
                staged = await client.call_tool("ast_edit", EDIT)
                assert not staged.is_error, texts(staged)

                answers.append(types.ElicitResult(action="decline"))
                declined = await client.call_tool("resolve", {"action": "apply", "reason": "rename"})
                assert declined.is_error
                assert "declined" in texts(declined)[0]
                assert target.read_text() == SOURCE
                pending = await client.call_tool("pending", {})
                assert details(pending)["count"] == 1

                answers.append(types.ElicitResult(action="accept", content={"approve": True}))
                applied = await client.call_tool("resolve", {"action": "apply", "reason": "rename"})
                assert not applied.is_error, texts(applied)
                assert target.read_text() == RENAMED
                assert len(asked) == 2
                assert "src/a.ts: 2 replacements" in asked[-1]
                assert "+newApi(1);" in asked[-1]

    asyncio.run(scenario())


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port, proc, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited early with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("the server did not start listening")


def start_http(root, *extra_args, env=None):
    """`staged mcp --http 127.0.0.1:PORT` in `root`; returns (process, port) once it listens."""
    port = free_port()
    command = server_command()
    proc = subprocess.Popen(
        [*command, "--workspace", str(root), "--http", f"127.0.0.1:{port}", *extra_args],
        cwd=str(root),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    wait_for_port(port, proc)
    return proc, port


def stop(proc):
    proc.terminate()
    _, stderr = proc.communicate(timeout=30)
    return stderr


def raw_post(port, headers):
    """One raw POST of an `initialize` request; returns (status, body)."""
    body = json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}},
    })
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", "/mcp", body=body, headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        })
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def http_client(port, token):
    headers = {"Authorization": f"Bearer {token}"}
    return Client(
        streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=create_mcp_http_client(headers=headers)),
        mode=MODES[0],
    )


async def http_flow(port, token, mode, target):
    headers = {"Authorization": f"Bearer {token}"}
    transport = streamable_http_client(
        f"http://127.0.0.1:{port}/mcp", http_client=create_mcp_http_client(headers=headers)
    )
    async with Client(transport, mode=mode) as client:
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
        assert names == ["apply_patch", "ast_edit", "ast_grep", "edit", "pending", "resolve", "write"]
        staged = await client.call_tool("ast_edit", EDIT)
        assert texts(staged)[-1] == REMINDER
        pending = await client.call_tool("pending", {})
        assert texts(pending)[-1] == REMINDER
        applied = await client.call_tool("resolve", {"action": "apply", "reason": "rename"})
        assert texts(applied) == ["Applied 2 replacements in 1 file."]
    assert target.read_text() == RENAMED


@pytest.mark.parametrize("mode", MODES)
def test_streamable_http_with_the_generated_token(mode):
    with tempfile.TemporaryDirectory() as tmp:
        root = new_workspace(tmp)
        target = root / "src" / "a.ts"
        proc, port = start_http(root)
        token_file = root / ".staged" / f"mcp-{port}.token"
        try:
            assert token_file.stat().st_mode & 0o777 == 0o600
            token = token_file.read_text().strip()
            assert len(token) == 64
            asyncio.run(http_flow(port, token, mode, target))
        finally:
            stderr = stop(proc)
        assert f"serving MCP at http://127.0.0.1:{port}/mcp" in stderr, stderr
        assert str(token_file) in stderr, stderr
        assert token not in stderr, "the token itself is never printed"
        assert not token_file.exists(), "the token file is removed when the server stops"


def test_streamable_http_with_a_token_file_and_the_gates():
    token = "a-token-chosen-by-the-user-42"
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as secrets:
        root = new_workspace(tmp)
        target = root / "src" / "a.ts"
        token_path = Path(secrets) / "token"
        token_path.write_text(token + "\n")
        proc, port = start_http(root, "--token-file", str(token_path))
        try:
            assert not list((root / ".staged").glob("*.token")), "a given token is not written"
            auth = {"Authorization": f"Bearer {token}"}
            status, body = raw_post(port, {})
            assert status == 401, body
            status, body = raw_post(port, {"Authorization": "Bearer not-the-token-at-all"})
            assert status == 401, body
            status, body = raw_post(port, {**auth, "Origin": "http://evil.example"})
            assert status == 403, body
            status, body = raw_post(port, {"Origin": "http://evil.example"})
            assert status == 403, body
            status, body = raw_post(port, {**auth, "Host": "evil.example"})
            assert status == 403, body
            status, body = raw_post(port, {**auth, "Origin": f"http://localhost:{port}"})
            assert status == 200, body

            async def refused():
                with pytest.raises(Exception):
                    async with http_client(port, "not-the-token-at-all") as client:
                        await client.list_tools()

            asyncio.run(refused())
            asyncio.run(http_flow(port, token, "auto", target))
        finally:
            stderr = stop(proc)
        assert str(token_path) in stderr, stderr


def test_http_refuses_a_non_loopback_address_and_remote_without_a_token():
    with tempfile.TemporaryDirectory() as tmp:
        command = server_command()
        for extra, message in [
            ([], "not a loopback address"),
            (["--allow-remote"], "--allow-remote needs a token you chose"),
        ]:
            env = {key: value for key, value in os.environ.items() if key != "STAGED_MCP_TOKEN"}
            proc = subprocess.run(
                [*command, "--workspace", tmp, "--http", "0.0.0.0:0", *extra],
                cwd=tmp,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=60,
                env=env,
            )
            assert proc.returncode == 2, proc.stderr
            assert message in proc.stderr, proc.stderr
            assert proc.stdout == ""
        assert not (Path(tmp) / ".staged").exists(), "a refused start touches nothing"


def cli_command():
    """The `staged` binary for the terminal side, from `STAGED_CLI` or the server command."""
    explicit = os.environ.get("STAGED_CLI")
    if explicit:
        return os.path.abspath(explicit)
    command = server_command()
    if os.path.basename(command[0]) != "staged":
        pytest.skip("STAGED_MCP_CMD is not the staged binary and STAGED_CLI is unset")
    return command[0]


def test_one_stack_is_shared_with_the_terminal():
    """Staged over MCP, resolved by a person with the CLI; and the reverse."""
    staged_cli = cli_command()

    def terminal(root, *args):
        return subprocess.run(
            [staged_cli, "--workspace", str(root), "--json", *args],
            capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"},
        )

    async def scenario():
        with tempfile.TemporaryDirectory() as tmp:
            root = new_workspace(tmp)
            target = root / "src" / "a.ts"
            async with connect(root, "auto") as client:
                staged = await client.call_tool("ast_edit", EDIT)
                assert not staged.is_error, texts(staged)

                listed = terminal(root, "pending")
                assert listed.returncode == 0, listed.stderr
                assert '"source":"ast_edit"' in listed.stdout
                applied = terminal(root, "resolve", "apply", "--reason", "approved at the terminal")
                assert applied.returncode == 0, applied.stdout + applied.stderr
                assert target.read_text() == RENAMED

                pending = await client.call_tool("pending", {})
                assert texts(pending) == ["No pending actions."]

                back = terminal(root, "ast-edit", "--op", "newApi($$$ARGS)", "oldApi($$$ARGS)", "src")
                assert back.returncode == 0, back.stderr
                pending = await client.call_tool("pending", {})
                assert details(pending)["count"] == 1
                assert texts(pending)[-1] == REMINDER
                discarded = await client.call_tool("resolve", {"action": "discard", "reason": "not now"})
                assert not discarded.is_error, texts(discarded)
                assert terminal(root, "pending").stdout.strip() == '{"pending":[]}'
                assert target.read_text() == RENAMED

    asyncio.run(scenario())
