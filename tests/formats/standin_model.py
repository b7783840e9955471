"""A stand-in model server on 127.0.0.1 for driving real agents (Gemini CLI, OpenCode)
offline: OpenAI Chat Completions (`POST …/chat/completions`, streamed or not) and the
Gemini API (`POST …/models/<model>:streamGenerateContent` / `:generateContent`).

It answers deterministically: a prompt containing `/tool NAME {json}` gets a call of that
tool with those arguments (once: after the tool's result comes back, a text answer);
anything else gets `Answer: <the prompt's first words>`.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_TOOL = re.compile(r"/tool (\S+) (\{.*\})", re.S)


def _reply(prompt: str, answered_tool: bool) -> tuple[str, tuple[str, dict[str, Any]] | None]:
    match = _TOOL.search(prompt)
    if match and not answered_tool:
        try:
            return "", (match.group(1), json.loads(match.group(2)))
        except json.JSONDecodeError:
            pass
    words = " ".join(prompt.split()[:8])
    return f"Answer: {words}", None


class StandInModel:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                body = json.dumps({"object": "list", "data": [{"id": "standin", "object": "model"}]})
                self._send(200, body.encode(), "application/json")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                data = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append({"path": self.path, "body": data})
                if "chat/completions" in self.path:
                    self._openai(data)
                elif "generatecontent" in self.path.lower() or "countTokens" in self.path:
                    self._gemini(data)
                else:
                    self._send(404, b"{}", "application/json")

            def _send(self, code: int, body: bytes, kind: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            # -- OpenAI Chat Completions -------------------------------------------------

            def _openai(self, data: dict[str, Any]) -> None:
                msgs = data.get("messages") or []
                prompt = ""
                for m in msgs:
                    if m.get("role") == "user":
                        content = m.get("content")
                        if isinstance(content, list):
                            content = " ".join(
                                str(c.get("text", "")) for c in content if isinstance(c, dict)
                            )
                        prompt = str(content or "")
                answered = bool(msgs) and msgs[-1].get("role") == "tool"
                text, call = _reply(prompt, answered)
                usage = {"prompt_tokens": 50, "completion_tokens": 7, "total_tokens": 57}
                base = {"id": "chatcmpl-standin", "object": "chat.completion.chunk",
                        "created": 1767225600, "model": data.get("model", "standin")}
                if call is not None:
                    delta: dict[str, Any] = {"role": "assistant", "tool_calls": [
                        {"index": 0, "id": f"call_{len(server.requests)}", "type": "function",
                         "function": {"name": call[0], "arguments": json.dumps(call[1])}}]}
                    finish = "tool_calls"
                else:
                    delta = {"role": "assistant", "content": text}
                    finish = "stop"
                if not data.get("stream"):
                    message = {"role": "assistant", "content": delta.get("content"),
                               "tool_calls": delta.get("tool_calls")}
                    body = {**base, "object": "chat.completion",
                            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                            "usage": usage}
                    self._send(200, json.dumps(body).encode(), "application/json")
                    return
                chunks = [
                    {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                    {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                    {**base, "choices": [], "usage": usage},
                ]
                out = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
                self._send(200, out + b"data: [DONE]\n\n", "text/event-stream")

            # -- Gemini API ------------------------------------------------------------

            def _gemini(self, data: dict[str, Any]) -> None:
                if "countTokens" in self.path:
                    self._send(200, b'{"totalTokens": 10}', "application/json")
                    return
                contents = data.get("contents") or []
                prompt, answered = "", False
                for c in contents:
                    for part in c.get("parts") or []:
                        if c.get("role") == "user" and isinstance(part.get("text"), str):
                            prompt = part["text"]
                            answered = False
                        if "functionResponse" in part:
                            answered = True
                text, call = _reply(prompt, answered)
                if "generationConfig" in data and "responseJsonSchema" in str(data["generationConfig"]):
                    text = json.dumps({"reasoning": "stand-in", "model_choice": "flash"})
                parts = [{"functionCall": {"name": call[0], "args": call[1]}}] if call else [{"text": text}]
                body = {
                    "candidates": [{"content": {"role": "model", "parts": parts},
                                    "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 7,
                                      "totalTokenCount": 57},
                    "modelVersion": "gemini-2.5-flash",
                }
                if "alt=sse" in self.path:
                    self._send(200, b"data: " + json.dumps(body).encode() + b"\r\n\r\n", "text/event-stream")
                else:
                    self._send(200, json.dumps(body).encode(), "application/json")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
