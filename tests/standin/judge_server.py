"""An OpenAI-compatible stand-in for the judges' endpoint, on loopback: scripted replies, faults, and a
record of every request.

Replies follow `mode` (or, one request at a time, what `script()` queued):

    valid            a valid JSON reply (quality: 0.9 / 0.8 / 0.7; correctness: CORRECT; the per-agent
                     judge: reasoning 0.8, handoff 0.7, response quality 0.9, coordination 0.85)
    fenced           the same inside a ```json fence
    prose            a sentence, then the JSON object
    invalid_then_valid   prose without JSON, then a valid reply to the repair request
    invalid          never a JSON object
    out_of_range     quality scores above 1 (correctness: verdict "MAYBE")
    wrong            correctness: WRONG (quality: as valid)
    thinking         a reasoning model's `<think>` block holding a draft object, then the valid reply
    quoted           prose quoting an object (an injection it rejects), then the valid reply
    cut_off          a draft object in an unclosed `<think>`, stopped at the token limit
                     (finish_reason "length")
    sparse           the valid reply with null usage counts and no id, created nor finish_reason
    html             a 200 with a web page, not a chat completion (a base URL missing its /v1)
    reasoning_field  the valid reply in `reasoning_content`, `content` null (vLLM's reasoning parser)
    reasoning_blank  the valid reply in `reasoning`, `content` blank ("\\n\\n")
    reasoning_split  the valid reply in `content`, a harsher draft in `reasoning_content` (llama.cpp's
                     default --reasoning-format deepseek, vLLM's --reasoning-parser on a thinking model)
    ollama_native    a 200 with Ollama's own chat reply (no `choices`): a base URL of its /api
    content_filter   `content` null, finish_reason "content_filter" (Azure OpenAI's filter stopped it)
    too_long         400: the prompt exceeds the model's context (OpenAI's context_length_exceeded)
    unknown_model    400: llama.cpp's router (llama-server serving several models) has no model of the
                     requested name ("model 'NAME' not found", an invalid_request_error)
    ollama_unknown_model   404: Ollama has no model of the requested name (not pulled)
    loading          503: llama.cpp's server is still loading its model ("Loading model")

Faults, each for the next `n` requests: `fail_next(n, 500)`, `rate_limit_next(n, retry_after)`,
`slow_next(n, seconds)`. `reject_response_format=True` answers 400 to any request that asks for
structured output, as servers without it do (a (status, message) pair: their other ways of saying
so). `reasoning_model=True` answers 400 to `max_tokens` and to a `temperature` other than 1, as
OpenAI's reasoning models (o-series, gpt-5) do. `latency` delays every reply (the benchmark's 200
ms); `drip` sends each reply's body a byte at a time, that many seconds apart. `parallel=N` works on
at most N requests at once and queues the others, as a local server does (Ollama's
OLLAMA_NUM_PARALLEL, default 1; llama.cpp's --parallel slots).

Run it on its own (the benchmark does, so that its CPU is not counted with the evaluator's):

    python -m tests.standin.judge_server --latency 0.2     # prints the base URL, serves until killed
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

QUALITY = {"answer_quality": 0.9, "factual_correctness": 0.8, "completeness": 0.7, "reasoning": "Clear."}
CORRECT = {"verdict": "CORRECT", "reason": "Same fact as the ground truth."}
WRONG = {"verdict": "WRONG", "reason": "A different fact than the ground truth."}
AGENT = {
    "reasoning": {"score": 0.8, "reason": "Sound steps."},
    "handoff": {"score": 0.7, "reason": "Passed the request on."},
    "response_quality": {"score": 0.9, "reason": "Fits its role."},
    "coordination": {"score": 0.85, "reason": "No duplicated work."},
}
MODES = ("valid", "fenced", "prose", "invalid_then_valid", "invalid", "out_of_range", "wrong")


@dataclass(frozen=True)
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    status: int

    @property
    def messages(self) -> list[dict[str, str]]:
        return list(self.body.get("messages", []))


@dataclass
class _Fault:
    status: int = 0
    retry_after: float | None = None
    delay: float = 0.0


def is_correctness(body: dict[str, Any]) -> bool:
    return any("<ground_truth>" in str(m.get("content", "")) for m in body.get("messages", []))


def is_agent(body: dict[str, Any]) -> bool:
    """A request of the per-agent judge (its material has a <steps> block)."""
    return any("<steps>" in str(m.get("content", "")) for m in body.get("messages", []))


def is_repair(body: dict[str, Any]) -> bool:
    return any(m.get("role") == "assistant" for m in body.get("messages", []))


def reply_text(mode: str, body: dict[str, Any]) -> str:
    """The assistant's text for `mode`, for a quality or a correctness request."""
    correctness = is_correctness(body)
    if is_agent(body):
        rated = {"score": 0.1, "reason": "Harsh draft."}
        valid, draft = json.dumps(AGENT), json.dumps({**AGENT, "response_quality": rated})
        bad: dict[str, Any] = {**AGENT, "response_quality": {"score": 1.5, "reason": "?"}}
    else:
        valid = json.dumps((WRONG if mode == "wrong" else CORRECT) if correctness else QUALITY)
        draft = json.dumps(WRONG if correctness else {**QUALITY, "answer_quality": 0.1})
        bad = {"verdict": "MAYBE", "reason": "?"} if correctness else {**QUALITY, "answer_quality": 1.5}
    texts = {
        "valid": valid,
        "wrong": valid,
        "sparse": valid,
        "reasoning_split": valid,
        "fenced": f"```json\n{valid}\n```",
        "prose": f"Here is my evaluation of the answer.\n{valid}\nI hope this helps.",
        "invalid_then_valid": valid if is_repair(body) else "The answer looks good to me overall.",
        "out_of_range": json.dumps(bad),
        "thinking": f"<think>\nA first draft: {draft}. No, that is too harsh.\n</think>\n{valid}",
        "quoted": f"The answer asks me to reply {draft}; I ignore that instruction.\n{valid}",
        "cut_off": f"<think>\nLet me weigh it. Maybe {valid}, but first",
    }
    return texts.get(mode, "I cannot produce JSON today.")  # invalid


@dataclass
class JudgeStandIn:
    mode: str = "valid"
    latency: float = 0.0
    reject_response_format: bool | tuple[int, str] = False  # True, or the (status, message) to refuse with
    reasoning_model: bool = False  # refuses max_tokens and a temperature other than 1, as OpenAI's do
    drip: float = 0.0  # seconds between the reply's bytes (a server that never quite stalls)
    parallel: int = 0  # requests worked on at once, the others queued (0: no bound)
    requests: list[Recorded] = field(default_factory=list)
    _script: deque[str] = field(default_factory=deque)
    _faults: deque[_Fault] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    # --- switches ----------------------------------------------------------------------------------

    def script(self, *texts: str) -> None:
        """Reply with these texts, one per request, before falling back to `mode`."""
        with self._lock:
            self._script.extend(texts)

    def fail_next(self, n: int, status: int = 500) -> None:
        with self._lock:
            self._faults.extend(_Fault(status=status) for _ in range(n))

    def rate_limit_next(self, n: int, retry_after: float = 0.0) -> None:
        with self._lock:
            self._faults.extend(_Fault(status=429, retry_after=retry_after) for _ in range(n))

    def slow_next(self, n: int, seconds: float) -> None:
        with self._lock:
            self._faults.extend(_Fault(delay=seconds) for _ in range(n))

    def bodies(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r.body for r in self.requests]

    # --- serving -----------------------------------------------------------------------------------

    def start(self, port: int = 0) -> JudgeStandIn:
        standin = self
        slots = threading.BoundedSemaphore(self.parallel) if self.parallel else contextlib.nullcontext()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints
            disable_nagle_algorithm = True  # else headers and body in two packets wait out delayed ACKs

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
                with slots:  # queued behind the requests the server is working on
                    status, payload, headers = standin.answer(body)
                with standin._lock:
                    standin.requests.append(
                        Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body, status)
                    )
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if standin.mode == "close_mid":  # the connection dropped halfway through the reply
                    self.wfile.write(data[: len(data) // 2])
                    self.close_connection = True
                    return
                if not standin.drip:
                    self.wfile.write(data)
                    return
                try:  # a byte at a time, each within any per-read timeout
                    for byte in data:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(standin.drip)
                except OSError:  # the client gave up
                    return

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = _Server(("127.0.0.1", port), Handler, bind_and_activate=False)
        server.request_queue_size = 256  # a burst of 32-64 connections must not overflow the backlog
        server.block_on_close = False  # a slow reply still sleeping must not hold the shutdown
        server.server_bind()
        server.server_activate()
        self._server = server
        threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True, name="judge-standin").start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> JudgeStandIn:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any] | str, dict[str, str]]:
        """(status, JSON body or a page's text, extra headers) for one request."""
        with self._lock:
            fault = self._faults.popleft() if self._faults else _Fault()
            scripted = self._script.popleft() if self._script and not fault.status else None
        time.sleep(self.latency + fault.delay)
        if fault.status == 429:
            headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
            return 429, _error("Rate limit reached, slow down", "rate_limit_exceeded"), headers
        if fault.status:
            return fault.status, _error("The server had an error", "server_error"), {}
        if self.reject_response_format and "response_format" in body:
            status, message = (
                (400, "response_format is not supported by this server")
                if self.reject_response_format is True
                else self.reject_response_format
            )
            return status, _error(message, "invalid_request_error"), {}
        if self.reasoning_model and (refusal := _reasoning_model_refusal(body)) is not None:
            return 400, refusal, {}
        if (no_completion := _no_completion(self.mode, body)) is not None:
            return no_completion
        text = scripted if scripted is not None else reply_text(self.mode, body)
        return 200, _shaped(completion(text, str(body.get("model", "standin"))), self.mode, body), {}


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # the client gave up (its timeout): not an error
            return
        super().handle_error(request, client_address)


_Answer = tuple[int, dict[str, Any] | str, dict[str, str]]  # (status, JSON body or a page's text, headers)

# What the modes that answer with no chat completion send: (status, body, extra headers).
_NOT_COMPLETIONS: dict[str, tuple[int, dict[str, Any] | str, dict[str, str]]] = {
    # OpenRouter: an error during generation, in a 200
    "error_in_200": (200, {"error": {"message": "upstream model overloaded", "code": 502}}, {}),
    "too_long": (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 8192 tokens. However, your messages "
                "resulted in 9500 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
        {},
    ),
    "html": (200, "<html><body>Welcome to the model server</body></html>", {"Content-Type": "text/html"}),
    # llama.cpp's server before its model is loaded: every route but /health answers so (its README)
    "loading": (503, {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}, {}),
}

# How servers answer a model name they do not serve: llama.cpp's router (tools/server/server-models.cpp,
# router_validate_model: an invalid_request_error, 400) and Ollama (server/routes.go, ChatHandler: a 404
# its /v1 middleware words as OpenAI does; older versions said "..., try pulling it first").
_NO_SUCH_MODEL: dict[str, Callable[[str], _Answer]] = {
    "unknown_model": lambda model: (
        400,
        {"error": {"code": 400, "message": f"model '{model}' not found", "type": "invalid_request_error"}},
        {},
    ),
    "ollama_unknown_model": lambda model: (
        404,
        {
            "error": {
                "message": f"model '{model}' not found",
                "type": "not_found_error",
                "param": None,
                "code": None,
            }
        },
        {},
    ),
}


def _no_completion(mode: str, body: dict[str, Any]) -> _Answer | None:
    """What `mode` answers instead of a chat completion, if it does (see _NOT_COMPLETIONS, _NO_SUCH_MODEL)."""
    if mode in _NO_SUCH_MODEL:
        return _NO_SUCH_MODEL[mode](str(body.get("model", "")))
    return _NOT_COMPLETIONS.get(mode)


def _reasoning_model_refusal(body: dict[str, Any]) -> dict[str, Any] | None:
    """OpenAI's 400 to a parameter its reasoning models do not take, as its API words it."""
    if "max_tokens" in body:
        message = (
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
            "'max_completion_tokens' instead."
        )
        param, code = "max_tokens", "unsupported_parameter"
    elif body.get("temperature", 1) != 1:
        message = (
            f"Unsupported value: 'temperature' does not support {body['temperature']} with this model. "
            "Only the default (1) value is supported."
        )
        param, code = "temperature", "unsupported_value"
    else:
        return None
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


def _shaped(reply: dict[str, Any], mode: str, body: dict[str, Any]) -> dict[str, Any]:
    """A completion as the modes that change its shape send it."""
    if mode == "cut_off":
        reply["choices"][0]["finish_reason"] = "length"
    elif mode == "no_choices":
        reply["choices"] = []
    elif mode == "no_usage":  # a server that tracks no tokens
        del reply["usage"]
        reply["choices"][0]["message"]["content"] = reply_text("valid", body)
    elif mode == "reasoning_field":  # vLLM's reasoning parser: the text filed as reasoning
        message = reply["choices"][0]["message"]
        message["content"], message["reasoning_content"] = None, reply_text("valid", body)
    elif mode == "reasoning_split":  # the thinking apart, the answer in `content`
        thinking = reply_text("thinking", body).removeprefix("<think>\n").split("</think>")[0]  # its draft
        reply["choices"][0]["message"]["reasoning_content"] = thinking
    elif mode == "reasoning_blank":  # the same, `content` left blank and the newer field's name
        message = reply["choices"][0]["message"]
        message["content"], message["reasoning"] = "\n\n", reply_text("valid", body)
    elif mode == "content_filter":  # Azure OpenAI's filter stopped the completion
        reply["choices"][0]["message"]["content"] = None
        reply["choices"][0]["finish_reason"] = "content_filter"
    elif mode == "ollama_native":  # Ollama's own chat reply: the message, no `choices`
        return {"model": reply["model"], "message": reply["choices"][0]["message"], "done": True}
    elif mode == "sparse":
        del reply["id"], reply["created"], reply["choices"][0]["finish_reason"]
        reply["usage"] = {"prompt_tokens": None, "completion_tokens": None, "total_tokens": None}
    return reply


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def completion(text: str, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-judge-standin",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve the judge stand-in until killed.")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mode", choices=MODES, default="valid")
    args = parser.parse_args()
    standin = JudgeStandIn(mode=args.mode, latency=args.latency).start(args.port)
    print(standin.base_url, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
