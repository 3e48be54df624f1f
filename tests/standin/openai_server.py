"""A tiny OpenAI-compatible chat completions server on loopback, scripted by a reply function. A
request with `stream: true` is answered as OpenAI streams: the message in one chunk, the finish reason
in the next, and the usage in a last chunk only when `stream_options.include_usage` asks for it."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[dict[str, Any]], dict[str, Any]]  # request body -> the assistant message


@dataclass
class StandIn:
    base_url: str
    requests: list[tuple[str, dict[str, str], dict[str, Any]]] = field(default_factory=list)

    def bodies(self) -> list[dict[str, Any]]:
        return [body for _, _, body in self.requests]


def completion(message: dict[str, Any], model: str) -> dict[str, Any]:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-standin",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def chunks(message: dict[str, Any], model: str, include_usage: bool) -> list[dict[str, Any]]:
    """The streamed chunks of one reply."""
    whole = completion(message, model)
    base = {k: whole[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    delta = {"role": "assistant", **message}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
    finish = whole["choices"][0]["finish_reason"]
    found = [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
    ]
    return [*found, {**base, "choices": [], "usage": whole["usage"]}] if include_usage else found


@contextmanager
def openai_standin(reply: Reply) -> Iterator[StandIn]:
    """Serve `POST /v1/chat/completions` until the block ends; every request is recorded."""
    recorded: list[tuple[str, dict[str, str], dict[str, Any]]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            recorded.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            if body.get("stream"):
                self._stream(body)
                return
            data = json.dumps(completion(reply(body), model=body["model"])).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, body: dict[str, Any]) -> None:
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for chunk in chunks(reply(body), body["model"], include_usage):
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield StandIn(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", requests=recorded)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
