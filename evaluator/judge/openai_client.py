"""The real judge model: the `openai` client against any OpenAI-compatible endpoint (OpenAI, Azure, vLLM,
Ollama, llama.cpp's server...).

`complete` uses one sync client, shared by every thread that calls it (its connection pool is
thread-safe); `acomplete`, what a run's judge stage uses, one `AsyncOpenAI` on the run's event loop (no
thread per judgement: a thread per call cost more CPU than the call). The clients' own retries are off:
`retry.RetryPolicy` owns retries, so every failure surfaces here as a `JudgeUnavailableError` with the
status and Retry-After the caller needs. The key is never put into a message.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import ssl
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

import httpx2
import openai
from openai import AsyncOpenAI, DefaultHttpxClient, OpenAI

from evaluator._reply_bound import achunks_within, chunks_within, reply_deadline, stamp_start
from evaluator._secrets import redact
from evaluator._tls import shared_context
from evaluator.config import LLMEndpoint, shown_url
from evaluator.errors import (
    JudgeUnavailableError,
    ModelNotServedError,
    ParameterRejectedError,
    ResponseFormatRejectedError,
)
from evaluator.judge.async_transport import JudgeHttpClient
from evaluator.judge.model import ModelReply, TokenUsage
from evaluator.prompts import ChatMessage

__all__ = ["OpenAIJudgeModel"]

_BODY_EXCERPT = 300


class OpenAIJudgeModel:
    def __init__(self, endpoint: LLMEndpoint, *, timeout: float = 60.0) -> None:
        self.endpoint = endpoint
        self._where = shown_url(endpoint.base_url or "https://api.openai.com/v1")  # no password in messages
        self._timeout = timeout
        self._sync: OpenAI | None = None  # made at the first `complete`: a run asks with `acomplete`
        self._async: tuple[asyncio.AbstractEventLoop, AsyncOpenAI] | None = None  # see _async_client
        self._lock = threading.Lock()

    @property
    def _client(self) -> OpenAI:
        with self._lock:
            if self._sync is None:
                self._sync = OpenAI(
                    api_key=self.endpoint.api_key.get_secret_value(),
                    base_url=self.endpoint.base_url,
                    timeout=self._timeout,
                    max_retries=0,
                    http_client=DefaultHttpxClient(
                        verify=_tls_context(),
                        event_hooks={"request": [stamp_start], "response": [_bound_whole_reply]},
                    ),
                )
            return self._sync

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        model: str,
        temperature: float | None,
        response_format: Mapping[str, Any] | None,
        timeout: float,
        max_tokens: int | None = None,
        max_completion_tokens: int | None = None,
    ) -> ModelReply:
        body = _body(
            messages,
            model=model,
            temperature=temperature,
            response_format=response_format,
            max_tokens=max_tokens,
            max_completion_tokens=max_completion_tokens,
        )
        try:
            completion = self._client.post(
                "/chat/completions", body=body, cast_to=bytes, options={"timeout": timeout}
            )
        except (openai.APIConnectionError, openai.APIStatusError) as exc:
            raise self._unavailable(exc, timeout, sent=body) from None
        return self._read(completion, model)

    async def acomplete(
        self,
        messages: Sequence[ChatMessage],
        *,
        model: str,
        temperature: float | None,
        response_format: Mapping[str, Any] | None,
        timeout: float,
        max_tokens: int | None = None,
        max_completion_tokens: int | None = None,
    ) -> ModelReply:
        """`complete`, on the running event loop (its own client: see `_async_client`)."""
        body = _body(
            messages,
            model=model,
            temperature=temperature,
            response_format=response_format,
            max_tokens=max_tokens,
            max_completion_tokens=max_completion_tokens,
        )
        try:
            completion = await self._async_client().post(
                "/chat/completions", body=body, cast_to=bytes, options={"timeout": timeout}
            )
        except (openai.APIConnectionError, openai.APIStatusError) as exc:
            raise self._unavailable(exc, timeout, sent=body) from None
        return self._read(completion, model)

    def _async_client(self) -> AsyncOpenAI:
        """The async client of the running loop: an async client's connections belong to the loop that
        opened them, so another loop (another run) gets a client of its own; `aclose` closes it."""
        loop = asyncio.get_running_loop()
        if self._async is None or self._async[0] is not loop:
            endpoint = self.endpoint
            client = AsyncOpenAI(
                api_key=endpoint.api_key.get_secret_value(),
                base_url=endpoint.base_url,
                timeout=self._timeout,
                max_retries=0,
                http_client=JudgeHttpClient(
                    verify=_tls_context(),
                    event_hooks={"request": [_astamp_start], "response": [_abound_whole_reply]},
                ),
            )
            self._async = (loop, client)
        return self._async[1]

    async def aclose(self) -> None:
        """Close the running loop's async client (call it on that loop before the loop ends)."""
        if self._async is not None and self._async[0] is asyncio.get_running_loop():
            client, self._async = self._async[1], None
            await client.close()

    def _unavailable(
        self,
        exc: openai.APIConnectionError | openai.APIStatusError,
        timeout: float,
        *,
        sent: Mapping[str, Any],
    ) -> JudgeUnavailableError:
        if isinstance(exc, openai.APITimeoutError):
            return JudgeUnavailableError(
                f"the judge endpoint {self._where} did not answer within {timeout:g} s. Fix: raise [judge] "
                "timeout_seconds, or lower --judge-concurrency (of `evaluator run`; [judge] concurrency: "
                "`validate` asks one judgement at a time) to the requests the server works on at once: a "
                "local server queues the others, and their wait counts (Ollama: OLLAMA_NUM_PARALLEL, default "
                "1; llama.cpp: --parallel)"
            )
        if isinstance(exc, openai.APIConnectionError) and isinstance(
            exc.__cause__, httpx2.RemoteProtocolError
        ):
            return JudgeUnavailableError(  # it was reached, and answered in part
                f"the judge endpoint {self._where} closed the connection before its reply ended "
                f"({exc.__cause__})"
            )
        if isinstance(exc, openai.APIConnectionError):
            return JudgeUnavailableError(f"the judge endpoint {self._where} is unreachable ({exc})")
        return self._status_error(exc, sent=sent)

    def _read(self, body: bytes, model: str) -> ModelReply:
        try:
            return _reply(json.loads(body), model)
        except _ErrorReplyError as exc:
            raise JudgeUnavailableError(
                f"the judge endpoint {self._where} answered HTTP 200 with an error and no answer: "
                f"{self._excerpt(str(exc))}",
                status=exc.status,
            ) from None
        except _NoChoiceError:
            raise JudgeUnavailableError(
                f"the judge endpoint {self._where} replied with no choice (`choices` is empty): no answer "
                "to read"
            ) from None
        except (ValueError, TypeError, IndexError, KeyError) as exc:  # not a chat completion
            began = self._excerpt(body.decode(errors="replace")) if isinstance(body, bytes) else ""
            raise JudgeUnavailableError(
                f"the judge endpoint {self._where} answered with something that is not a chat completion "
                f"({type(exc).__name__}: {exc}; it began {began!r}). Fix: check EVALUATOR_JUDGE_BASE_URL "
                "(an OpenAI-compatible API, usually ending in /v1), or the proxy in front of it."
            ) from None

    def _excerpt(self, text: str) -> str:
        """The start of what the endpoint said, as a message quotes it: redacted before it is cut (an
        error echoing the request's Authorization header holds the key, whole or cut at the end)."""
        return redact(text, also=[self.endpoint.api_key.get_secret_value()])[:_BODY_EXCERPT]

    def _status_error(self, exc: openai.APIStatusError, *, sent: Mapping[str, Any]) -> JudgeUnavailableError:
        status = exc.status_code
        body = self._excerpt(exc.response.text if exc.response is not None else str(exc))
        message = f"the judge endpoint {self._where} answered HTTP {status}: {body}"
        if "response_format" in sent and _refuses_structured_output(status, body):
            return ResponseFormatRejectedError(message, status=status)
        param = _refused_parameter(exc) if status == 400 else None
        if param is not None and param in sent:
            return ParameterRejectedError(message, param=param)
        if status in (401, 403):
            message += " Fix: check EVALUATOR_JUDGE_API_KEY (or OPENAI_API_KEY) and EVALUATOR_JUDGE_BASE_URL."
        elif status == 404:
            message += " Fix: check [judge] model in evaluator.toml and the endpoint's base URL."
        elif status == 400 and _NO_SUCH_MODEL.search(body):
            return ModelNotServedError(
                f"{message} Fix: check [judge] model in evaluator.toml (a model the endpoint serves) and the "
                "endpoint's base URL.",
                status=status,
            )
        elif status == 503 and _LOADING.search(body):
            message += (
                " Fix: the judge endpoint is still loading its model: wait until it is ready (llama.cpp's "
                "server: until GET /health answers 200), then run again."
            )
        elif status in (400, 413) and _TOO_LONG.search(body):
            message += (
                " Fix: the judge prompt is longer than the model's context: lower [judge] "
                "source_budget_chars in evaluator.toml (the tool output shown to the judges) or max_tokens "
                "in the judge prompt's config, or use a model with a longer context (llama.cpp: a larger "
                "--ctx-size)."
            )
        return JudgeUnavailableError(message, status=status, retry_after=_retry_after(exc.response))

    def close(self) -> None:
        with self._lock:
            client, self._sync = self._sync, None
        if client is not None:
            client.close()


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The TLS settings httpx makes for each client (the system's trust store, or SSL_CERT_FILE and
    SSL_CERT_DIR), made once per process, and shared with Langfuse's clients when the environment names
    the trust store."""
    return shared_context(httpx2.create_ssl_context)


def _body(
    messages: Sequence[ChatMessage],
    *,
    model: str,
    temperature: float | None,
    response_format: Mapping[str, Any] | None,
    max_tokens: int | None,
    max_completion_tokens: int | None = None,
) -> dict[str, Any]:
    """The request's JSON, as `chat.completions.create()` would send it. Posted as it is: create()
    first runs the client's typed transform over every argument, which for these plain values (str
    keys, str, float and int values) changes nothing, yet costs about 1 ms of CPU a request, more
    than the rest of a judgement together (benchmarks/bench_judges.py). A None is not sent."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in messages],
    }
    if temperature is not None:
        body["temperature"] = temperature
    if response_format is not None:
        body["response_format"] = dict(response_format)
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if max_completion_tokens is not None:
        body["max_completion_tokens"] = max_completion_tokens
    return body


def _reply(completion: object, model: str) -> ModelReply:
    """The reply's text, usage and model, read leniently from the completion's JSON: servers leave out
    or null what they do not track (`usage`, its counts, the model name, a choice's message). Read as
    JSON, not built into the client's typed `ChatCompletion` (which cost more CPU than the rest of the
    judgement: benchmarks/bench_judges.py)."""
    choices = _object(completion, "the reply").get("choices")
    if isinstance(choices, list) and not choices:
        raise _NoChoiceError
    error = _object(completion, "the reply").get("error")
    if choices is None and error:  # a 200 carrying the error (OpenRouter's, mid-generation)
        raise _ErrorReplyError(error)
    if not isinstance(choices, list):  # Ollama's own /api/chat, say: not an empty reply to repair
        raise TypeError("it has no `choices`" if choices is None else "its `choices` is not a list")
    choice = _object(choices[0], "a choice")
    message = _object(choice.get("message") or {}, "a choice's message")
    text = message.get("content") or message.get("refusal") or ""
    elsewhere = None
    if not (text.strip() if isinstance(text, str) else text):  # vLLM's parser may leave "\n\n" there
        elsewhere = next(
            (k for k in _REASONING_FIELDS if isinstance(message.get(k), str) and message[k]), None
        )
        text = message[elsewhere] if elsewhere else text
    usage = _object(_object(completion, "the reply").get("usage") or {}, "usage")
    counts = (usage.get("prompt_tokens"), usage.get("completion_tokens"))
    return ModelReply(
        elsewhere=elsewhere,
        text=text if isinstance(text, str) else str(text),
        usage=None
        if counts == (None, None)
        else TokenUsage(input=int(counts[0] or 0), output=int(counts[1] or 0)),
        model=str(_object(completion, "the reply").get("model") or model),
        cut_off=choice.get("finish_reason") == "length",
        filtered=choice.get("finish_reason") == "content_filter",
    )


class _NoChoiceError(Exception):
    """A chat completion whose `choices` is empty: the server gave no answer (not one to repair)."""


class _ErrorReplyError(Exception):
    """A 200 whose body is an error object, with no choices: the server's error, not an answer."""

    def __init__(self, error: object) -> None:
        detail = error.get("message") if isinstance(error, Mapping) else None
        code = error.get("code") if isinstance(error, Mapping) else None
        super().__init__(str(detail if detail else error))
        self.status = code if isinstance(code, int) and 400 <= code < 600 else None


# Where reasoning parsers put the text when `content` is empty (vLLM's, llama.cpp's; newer servers'
# `reasoning`): the model's thinking, or its answer misfiled with it.
_REASONING_FIELDS = ("reasoning_content", "reasoning")


def _object(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} is {type(value).__name__}, not an object")
    return value


# How servers say the prompt and the reply's tokens do not fit the model's context: OpenAI's and
# vLLM's "maximum context length", OpenAI's code context_length_exceeded, llama.cpp's "exceeds the
# available context size".
_TOO_LONG = re.compile(r"context[\W_]+(?:length|size|window)|too[\W_]+many[\W_]+tokens", re.IGNORECASE)

# How a server still loading its model says so, with a 503: llama.cpp's "Loading model" (its README, GET
# /health), answered to every request until the model is loaded.
_LOADING = re.compile(r"\bloading[\W_]+(?:the[\W_]+)?model\b", re.IGNORECASE)

# How servers that answer a model name they do not serve with a 400, not a 404, say so: llama.cpp's router
# ("model 'NAME' not found", "model is not loaded"), LiteLLM ("Invalid model name passed in model=NAME").
_NO_SUCH_MODEL = re.compile(
    r"\bmodel\b[^\n]{0,100}?\b(?:not[\W_]+found|does[\W_]+not[\W_]+exist|is[\W_]+not[\W_]+loaded)"
    r"|\b(?:invalid|unknown)[\W_]+model\b",
    re.IGNORECASE,
)

# How servers that cannot give structured output say so: OpenAI-compatible 400s naming the field,
# vLLM's guided decoding refusing the schema's features, llama.cpp and its forks naming the field, the
# type or the JSON schema they could not convert, in a 400 or a 500 (a 500 about anything else is a
# server error, retried as such).
_REFUSAL_WORDS = ("response_format", "xgrammar", "grammar", "guided", "structured")
# A schema the server could not turn into a grammar, however it spells it: "JSON schema", json_schema,
# JSONSchema; llama.cpp's "JSON schema conversion failed" and "Unrecognized schema" (a 400 since its PR
# 17572, a 500 before), "failed to parse grammar" and the like.
_SCHEMA_FAILURE = re.compile(
    r"json[\W_]*schema|unrecognized[\W_]+schema"
    r"|(?:schema|grammar)[\W_]+(?:conversion|parsing|parse)[\W_]+(?:failed|error)"
    r"|failed[\W_]+to[\W_]+(?:convert|parse|compile)[\W_]+(?:\w+[\W_]+){0,3}?(?:schema|grammar)",
    re.IGNORECASE,
)


def _refuses_structured_output(status: int, body: str) -> bool:
    if _SCHEMA_FAILURE.search(body) and status in (400, 422, 500):
        return True
    lowered = body.lower()
    words = _REFUSAL_WORDS if status in (400, 422) else ("response_format",) if status == 500 else ()
    return any(word in lowered for word in words)


# The parameters OpenAI's reasoning models (o1 and later, gpt-5...; Azure OpenAI's too) refuse with a
# 400 naming them in `param`: `temperature` other than their default ("Unsupported value: 'temperature'
# does not support 0 with this model. Only the default (1) value is supported.", code unsupported_value)
# and `max_tokens` ("Unsupported parameter: 'max_tokens' is not supported with this model. Use
# 'max_completion_tokens' instead.", code unsupported_parameter). Read from `param` and `code`, or, from
# a proxy that keeps the message only, its words.
_ADAPTABLE = ("temperature", "max_tokens")
_UNSUPPORTED = re.compile(
    r"unsupported[\W_]+(?:value|parameter)\W+'?(temperature|max_tokens)\b", re.IGNORECASE
)


def _refused_parameter(exc: openai.APIStatusError) -> str | None:
    """The parameter a 400 says the model does not take (one the judges can do without), if it does."""
    if exc.param in _ADAPTABLE and exc.code in ("unsupported_value", "unsupported_parameter"):
        return exc.param
    found = _UNSUPPORTED.search(exc.response.text if exc.response is not None else exc.message)
    return found.group(1).lower() if found else None


def _retry_after(response: Any) -> float | None:
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


# The request's read timeout bounds its whole reply, not each read (evaluator/_reply_bound.py): a server
# that sends a byte now and then (a stalled proxy, keep-alive whitespace) would otherwise hold a judge
# for ever.
def _bound_whole_reply(response: httpx2.Response) -> None:
    if (deadline := reply_deadline(response)) is not None:
        response.stream = _Bounded(response.stream, *deadline)


class _Bounded(httpx2.SyncByteStream):
    def __init__(self, stream: Any, ends: float, seconds: float) -> None:
        self._stream, self._ends, self._seconds = stream, ends, seconds

    def __iter__(self) -> Iterator[bytes]:
        return chunks_within(self._stream, self._ends, self._seconds, httpx2.ReadTimeout)

    def close(self) -> None:
        self._stream.close()


async def _astamp_start(request: httpx2.Request) -> None:
    stamp_start(request)


async def _abound_whole_reply(response: httpx2.Response) -> None:
    if (deadline := reply_deadline(response)) is not None:
        response.stream = _AsyncBounded(response.stream, *deadline)


class _AsyncBounded(httpx2.AsyncByteStream):
    def __init__(self, stream: Any, ends: float, seconds: float) -> None:
        self._stream, self._ends, self._seconds = stream, ends, seconds

    def __aiter__(self) -> AsyncIterator[bytes]:
        return achunks_within(self._stream, self._ends, self._seconds, httpx2.ReadTimeout)

    async def aclose(self) -> None:
        await self._stream.aclose()
