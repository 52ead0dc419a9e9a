"""A plugin without any SDK, for the Rust tests: a line-by-line MCP server (plain Python 3).

`stage_note {text, mode}` stages a note whose apply (`_apply_note`) appends the text to
notes.txt (mode `ok`), answers an error result (`error`) or exits (`crash`); `_reject_note`
answers no content. Every callback's arguments are appended, as JSON, to calls.jsonl.
"""

import json
import sys

TOOLS = [
    {"name": "stage_note", "description": "Stage a note.", "inputSchema": {"type": "object"}},
    {"name": "_apply_note", "inputSchema": {"type": "object"}},
    {"name": "_reject_note", "inputSchema": {"type": "object"}},
]


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def text(value, is_error=False):
    return {"content": [{"type": "text", "text": value}], "isError": is_error}


for line in sys.stdin:
    msg = json.loads(line)
    method, msg_id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
    if msg_id is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "note", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        name, args = params["name"], params.get("arguments") or {}
        if name == "stage_note":
            pending = {"version": 1, "label": f"Note: {args['text']}", "apply": "_apply_note",
                       "reject": "_reject_note", "payload": args, "details": {"chars": len(args["text"])}}
            result = {**text("staged"), "structuredContent": {"ok": True}, "_meta": {"staged/pending": pending}}
        else:
            with open("calls.jsonl", "a") as log:
                log.write(json.dumps({"tool": name, **args}) + "\n")
            mode = (args.get("payload") or {}).get("mode")
            if name == "_reject_note":
                result = {"content": []}
            elif mode == "crash":
                sys.stderr.write("the note plugin fell over\n")
                sys.stderr.flush()
                sys.exit(5)
            elif mode == "error":
                result = text("refused", is_error=True)
            else:
                with open("notes.txt", "a") as notes:
                    notes.write(args["payload"]["text"] + "\n")
                result = text(f"noted: {args['reason']}")
    else:
        send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": "unknown method"}})
        continue
    send({"jsonrpc": "2.0", "id": msg_id, "result": result})
