"""A test plugin without any SDK: a line-by-line MCP server that lists one good tool beside
invalid ones (a name taken by a built-in, a name with a space, one without a description), and
whose `_apply_raw` answers garbage (a result that is not a tool result).
"""

import json
import sys

TOOLS = [
    {"name": "stage_raw", "description": "Stage something.", "inputSchema": {"type": "object"}},
    {"name": "_apply_raw", "inputSchema": {"type": "object"}},
    {"name": "ast_edit", "description": "Clash with a built-in.", "inputSchema": {"type": "object"}},
    {"name": "bad tool", "description": "A space in the name.", "inputSchema": {"type": "object"}},
    {"name": "nodesc", "inputSchema": {"type": "object"}},
]


def reply(msg_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    method, msg_id = msg.get("method"), msg.get("id")
    if method == "initialize":
        reply(msg_id, {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "0"},
        })
    elif method == "tools/list":
        reply(msg_id, {"tools": TOOLS})
    elif method == "tools/call" and msg["params"]["name"] == "stage_raw":
        pending = {"version": 1, "label": "Raw thing", "apply": "_apply_raw", "payload": {"n": 1}}
        reply(msg_id, {"content": [{"type": "text", "text": "Staged."}], "_meta": {"staged/pending": pending}})
    elif method == "tools/call":
        reply(msg_id, {"content": "this is not a list of content blocks", "isError": "maybe"})
    elif msg_id is not None:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": "no"}}) + "\n")
        sys.stdout.flush()
