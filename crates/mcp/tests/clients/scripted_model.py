"""A scripted model on 127.0.0.1 that speaks the wire formats real clients use.

Claude Code talks to it as the Anthropic Messages API (`POST /v1/messages`, streamed as
server-sent events: `message_start`, `content_block_start`, `content_block_delta` with
`input_json_delta` or `text_delta`, `content_block_stop`, `message_delta`, `message_stop`).
Codex talks to it as the OpenAI Responses API (`POST /v1/responses`, streamed as
`response.created`, `response.output_item.done`, `response.completed`).
Gemini CLI talks to it as Gemini's `generateContent` (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`,
streamed as `GenerateContentResponse` chunks; `:generateContent` and `:countTokens` unstreamed).
Qwen Code, Copilot CLI and Cline talk to it as OpenAI Chat Completions (`POST /v1/chat/completions`,
streamed as `chat.completion.chunk` deltas, a tool call's arguments in one delta, then `data: [DONE]`,
or one JSON object when `stream` is false); each client names the staged MCP tools its own way
(`mcp__staged__resolve`, `staged-resolve`, `staged__resolve`). opencode's is `scripted_chat.ScriptedChat`.

The script is a list of MCP tool calls. In the main conversation (the request that offers the
staged tools), the model makes call number N once the conversation holds N tool results, then
ends its turn with a short text. Side requests (a title, a quota probe) get that text too.
Every request is recorded, so a test can read what the client sent the model: the tool
results are what the model saw.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SERVER = "staged"
FINAL_TEXT = "Done."
# The model id the Chat Completions clients are pointed at.
CHAT_MODEL = "scripted-model"


class ScriptedModel:
    """Serves the script on 127.0.0.1 until `stop()`; `requests` holds every request."""

    def __init__(self, script):
        self.script = list(script)
        self.requests = []
        self.errors = []
        self._lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                model._record("GET", self.path, dict(self.headers), None)
                if self.path.split("?")[0].endswith("/models"):
                    models = {"object": "list", "data": [{"id": CHAT_MODEL, "object": "model", "owned_by": "staged"}]}
                    self._send(200, "application/json", json.dumps(models).encode())
                    return
                self._send(404, "application/json", json.dumps({"error": "not found"}).encode())

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                model._record("POST", self.path, dict(self.headers), body)
                path = self.path.split("?")[0]
                try:
                    if path.endswith(":countTokens"):
                        self._send(200, "application/json", b'{"totalTokens": 10}')
                    elif path.endswith(":streamGenerateContent") and isinstance(body, dict):
                        self._send(200, "text/event-stream", model._gemini(body, stream=True))
                    elif path.endswith(":generateContent") and isinstance(body, dict):
                        self._send(200, "application/json", model._gemini(body, stream=False))
                    elif path.endswith("/messages/count_tokens"):
                        self._send(200, "application/json", b'{"input_tokens": 10}')
                    elif path.endswith("/messages") and isinstance(body, dict):
                        self._send(200, "text/event-stream", model._anthropic(body))
                    elif path.endswith("/responses") and isinstance(body, dict):
                        self._send(200, "text/event-stream", model._responses(body))
                    elif path.endswith("/chat/completions") and isinstance(body, dict):
                        if body.get("stream"):
                            self._send(200, "text/event-stream", model._chat(body))
                        else:
                            self._send(200, "application/json", model._chat_json(body))
                    else:
                        self._send(404, "application/json", json.dumps({"error": f"no route {path}"}).encode())
                except Exception as err:  # a bug in the script: fail the test, answer 500
                    model.errors.append(f"{path}: {err!r}")
                    self._send(500, "application/json", json.dumps({"error": repr(err)}).encode())

            def _send(self, status, content_type, payload):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self):
        return self._server.server_address[1]

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._server.shutdown()
        self._server.server_close()

    def _record(self, method, path, headers, body):
        with self._lock:
            self.requests.append({"method": method, "path": path, "headers": headers, "body": body})

    # --- Anthropic Messages -------------------------------------------------------------

    def anthropic_main_requests(self):
        return [r["body"] for r in self.requests if r["method"] == "POST"
                and r["path"].split("?")[0].endswith("/messages") and _offers_staged_anthropic(r["body"])]

    def _anthropic(self, body):
        messages = body.get("messages", [])
        _check_anthropic_pairs(messages)
        step = sum(1 for block in _anthropic_blocks(messages) if block.get("type") == "tool_result")
        message = {
            "id": f"msg_{len(self.requests)}", "type": "message", "role": "assistant",
            "model": body.get("model", "scripted"), "content": [], "stop_reason": None,
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        events = [("message_start", {"type": "message_start", "message": message})]
        if _offers_staged_anthropic(body) and step < len(self.script):
            name, args = self.script[step]
            block = {"type": "tool_use", "id": f"toolu_{step}", "name": f"mcp__{SERVER}__{name}", "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
            stop_reason = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": FINAL_TEXT}
            stop_reason = "end_turn"
        events += [
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        return _sse(events)

    # --- OpenAI Responses ---------------------------------------------------------------

    def responses_main_requests(self):
        return [r["body"] for r in self.requests if r["method"] == "POST"
                and r["path"].split("?")[0].endswith("/responses") and _staged_function_names(r["body"])]

    def _responses(self, body):
        items = body.get("input", [])
        _check_responses_pairs(items)
        step = sum(1 for item in items if item.get("type") == "function_call_output")
        response_id = f"resp_{len(self.requests)}"
        names = _staged_function_names(body)
        if names and step < len(self.script):
            name, args = self.script[step]
            item = {"type": "function_call", "id": f"fc_{step}", "call_id": f"call_{step}",
                    "arguments": json.dumps(args), **names[name]}
        else:
            item = {"type": "message", "id": f"msg_{step}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": FINAL_TEXT, "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        events = [
            (None, {"type": "response.created", "response": {"id": response_id}}),
            (None, {"type": "response.output_item.done", "output_index": 0, "item": item}),
            (None, {"type": "response.completed", "response": {"id": response_id, "usage": usage}}),
        ]
        return _sse(events)

    # --- OpenAI Chat Completions --------------------------------------------------------

    def chat_main_requests(self):
        return _chat_main_requests(self)

    def _chat(self, body):
        return _chat_stream(self, body)

    def _chat_json(self, body):
        return _chat_json(self, body)


def _chat_sse(body, delta, finish):
    """One chat completion streamed: `delta` (content or tool calls), then the finish reason
    and usage, then `[DONE]`."""
    base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0,
            "model": body.get("model", "scripted")}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    chunks = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", **delta}, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage},
    ]
    return ("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n").encode()


def chat_function_names(body):
    """The function tools a chat completions request offers."""
    return [t.get("function", {}).get("name") for t in body.get("tools") or [] if t.get("type") == "function"]


def tool_results_chat(body):
    """`[(tool name, what the model was shown, False)]` from a chat completions request's
    messages, in the order the calls were made."""
    names = {}
    for message in body.get("messages", []):
        for call in message.get("tool_calls") or []:
            names[call.get("id")] = call.get("function", {}).get("name")
    res = []
    for message in body.get("messages", []):
        if message.get("role") != "tool":
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
        res.append((names.get(message.get("tool_call_id")), content or "", False))
    return res


def gemini_function_names(body):
    """The function declarations a generateContent request offers."""
    return [f.get("name") for tool in body.get("tools") or [] for f in tool.get("functionDeclarations") or []]


def _gemini_parts(body):
    for content in body.get("contents", []):
        for part in content.get("parts") or []:
            if isinstance(part, dict):
                yield content.get("role"), part


def tool_results_gemini(body):
    """`[(tool name, what the model was shown, is_error)]` from a generateContent request's
    contents, in the order the calls were made."""
    res = []
    for _, part in _gemini_parts(body):
        response = part.get("functionResponse")
        if not response:
            continue
        out = response.get("response") or {}
        text = out.get("output", out.get("error", ""))
        if not isinstance(text, str):
            text = json.dumps(text)
        res.append((response.get("name"), text, "error" in out))
    return res


def _gemini_reply(turn, step):
    """One `GenerateContentResponse` for `turn`: a function call or text."""
    if turn[0] in ("mcp", "tool"):
        name = f"mcp_{SERVER}_{turn[1]}" if turn[0] == "mcp" else turn[1]
        part = {"functionCall": {"name": name, "args": turn[2], "id": f"call_{step}"}}
    else:
        part = {"text": turn[1]}
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "scripted",
    }


def _sse(events):
    out = []
    for name, data in events:
        if name:
            out.append(f"event: {name}\n")
        out.append(f"data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


def _offers_staged_anthropic(body):
    return any(tool.get("name", "").startswith(f"mcp__{SERVER}__") for tool in body.get("tools", []))


def _anthropic_blocks(messages):
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            yield from (block for block in content if isinstance(block, dict))


def _check_anthropic_pairs(messages):
    """Every tool result answers a tool use the model made."""
    used = {b["id"] for b in _anthropic_blocks(messages) if b.get("type") == "tool_use"}
    for block in _anthropic_blocks(messages):
        if block.get("type") == "tool_result" and block.get("tool_use_id") not in used:
            raise AssertionError(f"tool_result without a tool_use: {block.get('tool_use_id')}")


def _staged_function_names(body):
    """How each staged tool is called in this request's tool list: `{"name", "namespace"}` when
    the MCP server's tools are a namespace, `{"name": "mcp__staged__X"}` when they are flat."""
    names = {}
    for tool in body.get("tools", []):
        if tool.get("type") == "namespace" and tool.get("name") == f"mcp__{SERVER}":
            for inner in tool.get("tools", []):
                names[inner["name"]] = {"name": inner["name"], "namespace": tool["name"]}
        elif tool.get("type") == "function" and tool.get("name", "").startswith(f"mcp__{SERVER}__"):
            names[tool["name"].removeprefix(f"mcp__{SERVER}__")] = {"name": tool["name"]}
    return names


def _check_responses_pairs(items):
    calls = {item.get("call_id") for item in items if item.get("type") in ("function_call", "custom_tool_call")}
    for item in items:
        if item.get("type") in ("function_call_output", "custom_tool_call_output") and item.get("call_id") not in calls:
            raise AssertionError(f"function_call_output without a call: {item.get('call_id')}")


def tool_results_anthropic(body):
    """`[(tool name, what the model was shown, is_error)]` in the order the calls were made."""
    names = {b["id"]: b["name"] for b in _anthropic_blocks(body.get("messages", [])) if b.get("type") == "tool_use"}
    res = []
    for block in _anthropic_blocks(body.get("messages", [])):
        if block.get("type") != "tool_result":
            continue
        content = block.get("content")
        if isinstance(content, list):
            content = "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
        res.append((names.get(block.get("tool_use_id")), content or "", bool(block.get("is_error"))))
    return res


def tool_results_responses(body):
    """`[(tool name, what the model was shown, False)]` from a Responses request's input (it
    has no error flag), function and freeform (`apply_patch`) calls alike."""
    items = body.get("input", [])
    names = {}
    for item in items:
        if item.get("type") in ("function_call", "custom_tool_call"):
            names[item["call_id"]] = item["name"]
    res = []
    for item in items:
        if item.get("type") not in ("function_call_output", "custom_tool_call_output"):
            continue
        output = item.get("output")
        if isinstance(output, list):
            output = "\n".join(part.get("text", "") for part in output if isinstance(part, dict))
        res.append((names.get(item.get("call_id")), output or "", False))
    return res


class ScriptedTurns(ScriptedModel):
    """A model whose script is a list of turns, played in order in the main conversation: its
    N-th reply (counted by the assistant turns the conversation already holds) is turn N, then
    `FINAL_TEXT` once the script is done. A turn is one of

    * `("mcp", name, args)`: a call of the staged MCP tool `name`;
    * `("tool", name, args)`: a call of the client's own tool `name` (Claude Code's `Read`,
      `Edit`, `Write`; a Codex function tool such as `exec_command`);
    * `("custom", name, text)`: a Codex freeform tool call (`apply_patch`) with `text` as input;
    * `("text", text)`: the turn ends with `text`.
    """

    def _anthropic(self, body):
        messages = body.get("messages", [])
        _check_anthropic_pairs(messages)
        step = sum(1 for m in messages if m.get("role") == "assistant")
        message = {
            "id": f"msg_{len(self.requests)}", "type": "message", "role": "assistant",
            "model": body.get("model", "scripted"), "content": [], "stop_reason": None,
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        turn = self.script[step] if _offers_staged_anthropic(body) and step < len(self.script) else ("text", FINAL_TEXT)
        if turn[0] in ("mcp", "tool"):
            name = f"mcp__{SERVER}__{turn[1]}" if turn[0] == "mcp" else turn[1]
            block = {"type": "tool_use", "id": f"toolu_{step}", "name": name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(turn[2])}
            stop_reason = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": turn[1]}
            stop_reason = "end_turn"
        events = [
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        return _sse(events)

    def _responses(self, body):
        items = body.get("input", [])
        _check_responses_pairs(items)
        step = sum(1 for item in items if item.get("type") in ("function_call", "custom_tool_call")
                   or (item.get("type") == "message" and item.get("role") == "assistant"))
        response_id = f"resp_{len(self.requests)}"
        names = _staged_function_names(body)
        turn = self.script[step] if names and step < len(self.script) else ("text", FINAL_TEXT)
        if turn[0] == "mcp":
            item = {"type": "function_call", "id": f"fc_{step}", "call_id": f"call_{step}",
                    "arguments": json.dumps(turn[2]), **names[turn[1]]}
        elif turn[0] == "tool":
            item = {"type": "function_call", "id": f"fc_{step}", "call_id": f"call_{step}",
                    "name": turn[1], "arguments": json.dumps(turn[2])}
        elif turn[0] == "custom":
            item = {"type": "custom_tool_call", "id": f"ctc_{step}", "call_id": f"call_{step}",
                    "name": turn[1], "input": turn[2], "status": "completed"}
        else:
            item = {"type": "message", "id": f"msg_{step}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": turn[1], "annotations": []}]}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        events = [
            (None, {"type": "response.created", "response": {"id": response_id}}),
            (None, {"type": "response.output_item.done", "output_index": 0, "item": item}),
            (None, {"type": "response.completed", "response": {"id": response_id, "usage": usage}}),
        ]
        return _sse(events)

    # --- OpenAI chat completions ----------------------------------------------------------

    # Qwen Code hides staged's MCP tools until the model calls `tool_search`: a model for it
    # takes every request that offers tools as the main conversation (`chat_any_tools`), where
    # Copilot CLI's and Cline's main conversation is the one that offers a staged tool.
    chat_any_tools = False

    def chat_main_requests(self):
        if not self.chat_any_tools:
            return _chat_main_requests(self)
        return [r["body"] for r in self.requests if r["method"] == "POST"
                and r["path"].split("?")[0].endswith("/chat/completions") and chat_function_names(r["body"])]

    def _chat(self, body):
        """The main conversation is a request that offers tools; a turn's `("mcp", name,
        args)` calls `mcp__staged__<name>` (`("tool", ...)` the client's own tool)."""
        if not self.chat_any_tools:
            return _chat_stream(self, body)
        messages = body.get("messages", [])
        step = sum(1 for m in messages if m.get("role") == "assistant")
        main = bool(chat_function_names(body))
        turn = self.script[step] if main and step < len(self.script) else ("text", FINAL_TEXT)
        if turn[0] in ("mcp", "tool"):
            name = f"mcp__{SERVER}__{turn[1]}" if turn[0] == "mcp" else turn[1]
            call = {"index": 0, "id": f"call_{step}", "type": "function",
                    "function": {"name": name, "arguments": json.dumps(turn[2])}}
            return _chat_sse(body, {"content": None, "tool_calls": [call]}, "tool_calls")
        return _chat_sse(body, {"content": turn[1]}, "stop")

    # --- Gemini generateContent -----------------------------------------------------------

    def gemini_main_requests(self):
        return [r["body"] for r in self.requests if r["method"] == "POST"
                and r["path"].split("?")[0].endswith(":streamGenerateContent") and gemini_function_names(r["body"])]

    def _gemini(self, body, stream):
        """The main conversation is a streamed request that offers function declarations; a
        turn's `("mcp", name, args)` calls `mcp_staged_<name>` (`("tool", ...)` Gemini CLI's own
        tool). Side requests (unstreamed: a routing or a next-speaker check) get `{}` as text,
        which reads as JSON and as prose."""
        if not stream:
            return json.dumps(_gemini_reply(("text", "{}"), 0)).encode()
        step = sum(1 for c in body.get("contents", []) if c.get("role") == "model")
        main = bool(gemini_function_names(body))
        turn = self.script[step] if main and step < len(self.script) else ("text", FINAL_TEXT)
        return f"data: {json.dumps(_gemini_reply(turn, step))}\n\n".encode()

# --- OpenAI Chat Completions (Copilot CLI, Cline) ----------------------------------------


def _chat_staged_names(body):
    """`{staged tool: the name this request offers it under}`: `staged-X` (Copilot CLI),
    `staged__X` (Cline) or `mcp__staged__X`."""
    names = {}
    for tool in body.get("tools") or []:
        name = (tool.get("function") or {}).get("name", "")
        for prefix in (f"mcp__{SERVER}__", f"{SERVER}__", f"{SERVER}-"):
            if name.startswith(prefix):
                names[name.removeprefix(prefix)] = name
                break
    return names


def _check_chat_pairs(messages):
    calls = {call.get("id") for m in messages if m.get("role") == "assistant" for call in m.get("tool_calls") or []}
    for m in messages:
        if m.get("role") == "tool" and m.get("tool_call_id") not in calls:
            raise AssertionError(f"tool message without a tool call: {m.get('tool_call_id')}")


def _chat_turn(model, body):
    """The message a Chat Completions request gets: `(tool_call or None, text)`."""
    messages = body.get("messages", [])
    _check_chat_pairs(messages)
    names = _chat_staged_names(body)
    step = sum(1 for m in messages if m.get("role") == "assistant")
    script = model.script
    if isinstance(model, ScriptedTurns):
        turn = script[step] if names and step < len(script) else ("text", FINAL_TEXT)
    else:
        step = sum(1 for m in messages if m.get("role") == "tool")
        turn = ("mcp", *script[step]) if names and step < len(script) else ("text", FINAL_TEXT)
    if turn[0] in ("mcp", "tool"):
        name = names[turn[1]] if turn[0] == "mcp" else turn[1]
        call = {"id": f"call_{step}", "type": "function", "function": {"name": name, "arguments": json.dumps(turn[2])}}
        return call, None
    return None, turn[1]


def _chat_message(call, text):
    if call:
        return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    return {"role": "assistant", "content": text}, "stop"


_CHAT_USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def _chat_stream(model, body):
    call, text = _chat_turn(model, body)
    base = {"id": f"chatcmpl-{len(model.requests)}", "object": "chat.completion.chunk", "created": 1,
            "model": body.get("model", CHAT_MODEL)}
    if call:
        delta = {"role": "assistant", "content": None,
                 "tool_calls": [{"index": 0, **call}]}
        finish = "tool_calls"
    else:
        delta = {"role": "assistant", "content": text}
        finish = "stop"
    events = [
        (None, {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
        (None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
        (None, {**base, "choices": [], "usage": _CHAT_USAGE}),
    ]
    return _sse(events) + b"data: [DONE]\n\n"


def _chat_json(model, body):
    call, text = _chat_turn(model, body)
    message, finish = _chat_message(call, text)
    return json.dumps({"id": f"chatcmpl-{len(model.requests)}", "object": "chat.completion", "created": 1,
                       "model": body.get("model", CHAT_MODEL),
                       "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                       "usage": _CHAT_USAGE}).encode()


def _chat_main_requests(model):
    return [r["body"] for r in model.requests if r["method"] == "POST"
            and r["path"].split("?")[0].endswith("/chat/completions") and _chat_staged_names(r["body"])]

