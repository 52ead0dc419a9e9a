"""The scripted model as the OpenAI chat completions API (`POST /v1/chat/completions`), as
opencode's `@ai-sdk/openai-compatible` provider speaks it: streamed as `chat.completion.chunk`
server-sent events ending with `data: [DONE]`, or one JSON object when `stream` is false.

`ScriptedChat` plays `ScriptedTurns`' script (turn N is the model's reply once the main
conversation holds N assistant messages): `("mcp", name, args)` calls the staged MCP tool
`name` as the client names it (`mcp_prefix` + name: opencode's `staged_resolve`),
`("tool", name, args)` the client's own tool, `("text", text)` ends the turn. The main
conversation is a request that offers a staged tool; any other request (a title) gets
`FINAL_TEXT`.
"""

import json

from scripted_model import FINAL_TEXT, SERVER, ScriptedTurns


class ScriptedChat(ScriptedTurns):
    """`ScriptedTurns` over chat completions; `mcp_prefix` is how the client prefixes MCP tools."""

    def __init__(self, script, mcp_prefix=f"{SERVER}_"):
        super().__init__(script)
        self.mcp_prefix = mcp_prefix

    def chat_main_requests(self):
        return [r["body"] for r in self.requests if r["method"] == "POST"
                and r["path"].split("?")[0].endswith("/chat/completions") and self._offers_staged(r["body"])]

    def _offers_staged(self, body):
        return any(t.get("function", {}).get("name", "").startswith(self.mcp_prefix)
                   for t in body.get("tools") or [])

    def _chat_json(self, body):
        return self._chat(body)

    def _chat(self, body):
        messages = body.get("messages", [])
        _check_chat_pairs(messages)
        step = sum(1 for m in messages if m.get("role") == "assistant")
        main = self._offers_staged(body)
        turn = self.script[step] if main and step < len(self.script) else ("text", FINAL_TEXT)
        if turn[0] in ("mcp", "tool"):
            name = f"{self.mcp_prefix}{turn[1]}" if turn[0] == "mcp" else turn[1]
            call = {"index": 0, "id": f"call_{step}", "type": "function",
                    "function": {"name": name, "arguments": json.dumps(turn[2])}}
            delta = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        else:
            delta = {"role": "assistant", "content": turn[1]}
            finish = "stop"
        chunk_id = f"chatcmpl-{len(self.requests)}"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        model = body.get("model", "scripted")
        if not body.get("stream"):
            message = {k: v for k, v in delta.items() if k != "tool_calls"}
            if "tool_calls" in delta:
                message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in delta["tool_calls"]]
            return json.dumps({"id": chunk_id, "object": "chat.completion", "created": 0, "model": model,
                               "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                               "usage": usage}).encode()
        chunks = [
            {"id": chunk_id, "object": "chat.completion.chunk", "created": 0, "model": model,
             "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {"id": chunk_id, "object": "chat.completion.chunk", "created": 0, "model": model,
             "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage},
        ]
        return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"


def _check_chat_pairs(messages):
    """Every tool message answers a tool call the model made."""
    calls = {c.get("id") for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or []}
    for m in messages:
        if m.get("role") == "tool" and m.get("tool_call_id") not in calls:
            raise AssertionError(f"tool message without a tool call: {m.get('tool_call_id')}")


def tool_results_chat(body):
    """`[(tool name, what the model was shown, False)]` in the order the calls were made."""
    messages = body.get("messages", [])
    names = {c["id"]: c["function"]["name"] for m in messages if m.get("role") == "assistant"
             for c in m.get("tool_calls") or []}
    res = []
    for m in messages:
        if m.get("role") != "tool":
            continue
        content = m.get("content")
        if isinstance(content, list):
            content = "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
        res.append((names.get(m.get("tool_call_id")), content or "", False))
    return res
