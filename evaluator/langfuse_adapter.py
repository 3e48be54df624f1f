"""The one module that imports `langfuse`: the client, built from configuration and injected.

Two modes, one code path:

- Embedded (no Langfuse keys): the real SDK instrumentation runs on an isolated TracerProvider, its span
  exporter discards (nothing leaves the process), and the `SpanCollector` beside it captures every span.
  The client gets a unique throwaway key because the SDK keeps one resource manager per public key for
  the whole process: a reused key would silently reuse another client's exporter.
- Connected (LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY / LANGFUSE_BASE_URL): the SDK's own OTLP exporter
  sends the spans to Langfuse and the collector still captures them, so validation never waits for
  ingestion. Scores do NOT go through the SDK's `create_score` queue (it logs and drops failures): they
  are posted synchronously through the SDK's API client, so every rejection and outage is seen and
  the score stays in the local outbox (see `delivery.py`).

Langfuse's failures become `LangfuseAuthError` (wrong keys: retrying cannot help) or
`LangfuseUnavailableError` (network, 5xx, 429 with its Retry-After): never a log line and a drop.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import threading
import urllib.parse
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx
from langfuse import Langfuse, propagate_attributes
from langfuse.api import CreateScoreBatchResults, CreateScoreRequest, ScoreConfigDataType, ScoreDataType
from langfuse.api.core.api_error import ApiError
from langfuse.langchain import CallbackHandler
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from pydantic import SecretStr

from evaluator.capture import SpanCollector, trace_from_spans
from evaluator.errors import ConfigError, LangfuseAuthError, LangfuseUnavailableError
from evaluator.prompts import ChatMessage, Prompt
from evaluator.scores import Score, ScoreDefinition
from evaluator.span_outbox import Keep, KeepingExporter
from evaluator.trace import Trace

DEFAULT_BASE_URL = "https://cloud.langfuse.com"
_EMBEDDED_BASE_URL = "http://127.0.0.1:9"  # never contacted: spans go to the discarding exporter
_METADATA_VALUE_LIMIT = 200  # Langfuse keeps trace metadata values up to 200 characters
_NO_SDK_RETRIES: Any = {"max_retries": 0}
_OBSERVATION_FIELDS = (
    "core,basic,io,metadata,prompt,time"  # retries are ours (delivery.py), so they are counted
)


@dataclass(frozen=True, kw_only=True)
class LangfuseSettings:
    """Where Langfuse is and the keys for it: from the environment only, never from files in the repo."""

    public_key: str
    secret_key: SecretStr
    base_url: str = DEFAULT_BASE_URL
    timeout_seconds: int = 10

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LangfuseSettings | None:
        """None when no key is set (embedded mode); ConfigError when only one of the two is."""
        env = os.environ if env is None else env
        public, secret = env.get("LANGFUSE_PUBLIC_KEY", ""), env.get("LANGFUSE_SECRET_KEY", "")
        if not public and not secret:
            return None
        if not public or not secret:
            missing = "LANGFUSE_SECRET_KEY" if public else "LANGFUSE_PUBLIC_KEY"
            raise ConfigError(
                f"{missing} is not set, but the other Langfuse key is. Fix: set both "
                "(Langfuse > Settings > API keys), or neither for the embedded mode."
            )
        base_url = env.get("LANGFUSE_BASE_URL") or env.get("LANGFUSE_HOST") or DEFAULT_BASE_URL
        timeout = env.get("LANGFUSE_TIMEOUT", "10")
        if not timeout.isdigit() or int(timeout) < 1:
            raise ConfigError(f'LANGFUSE_TIMEOUT="{timeout}" is not a whole number of seconds. Fix: e.g. 10.')
        return cls(
            public_key=public,
            secret_key=SecretStr(secret),
            base_url=base_url.rstrip("/"),
            timeout_seconds=int(timeout),
        )

    def __repr__(self) -> str:
        return f"LangfuseSettings(base_url={self.base_url!r}, public_key={self.public_key[:8]!r}...)"


@dataclass(frozen=True)
class _Capture:
    provider: TracerProvider
    collector: SpanCollector
    exporter: KeepingExporter


_capture_lock = threading.Lock()
_capture_by_key: dict[str, _Capture] = {}


def _capture_for(settings: LangfuseSettings) -> _Capture:
    """The TracerProvider, span collector and span exporter for a public key, made once per process.

    The SDK keeps one resource manager per public key for the whole process, and a second client with
    the same key silently keeps the first one's TracerProvider and exporter; capture has to follow it,
    or a second adapter (e.g. `prompts push` then `run` in one process) would capture nothing.
    """
    with _capture_lock:
        if settings.public_key not in _capture_by_key:
            provider, collector = TracerProvider(), SpanCollector()
            provider.add_span_processor(collector)
            _capture_by_key[settings.public_key] = _Capture(
                provider,
                collector,
                KeepingExporter(
                    OTLPSpanExporter(
                        endpoint=_otlp_endpoint(settings),
                        headers=_otlp_headers(settings),
                        timeout=settings.timeout_seconds,
                        compression=Compression.Gzip,
                    )
                ),
            )
        return _capture_by_key[settings.public_key]


def _otlp_endpoint(settings: LangfuseSettings) -> str:
    return f"{settings.base_url}/api/public/otel/v1/traces"


def _otlp_headers(settings: LangfuseSettings) -> dict[str, str]:
    """What the SDK's own exporter sends: Basic auth, and ingestion version 4 for real-time processing."""
    token = base64.b64encode(f"{settings.public_key}:{settings.secret_key.get_secret_value()}".encode())
    return {
        "Authorization": f"Basic {token.decode('ascii')}",
        "x-langfuse-ingestion-version": "4",
        "x-langfuse-public-key": settings.public_key,
    }


class _DiscardingExporter(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


@dataclass
class ScenarioSpan:
    """The evaluator's root observation (a SPAN) for one scenario run."""

    span: Any
    trace_id: str

    def set_output(self, output: object) -> None:
        self.span.update(output=output)

    def set_error(self, message: str) -> None:
        self.span.update(level="ERROR", status_message=message)


class LangfuseAdapter:
    """Tracing, scores, prompts and read-back through one injected Langfuse client."""

    def __init__(
        self,
        *,
        client: Langfuse,
        public_key: str,
        provider: TracerProvider,
        collector: SpanCollector,
        settings: LangfuseSettings | None,
    ) -> None:
        self.client = client
        self.settings = settings
        self._public_key = public_key
        self._provider = provider
        self._collector = collector
        self._project_id: str | None = None
        self._exporter: KeepingExporter | None = None

    @property
    def connected(self) -> bool:
        return self.settings is not None

    @classmethod
    def embedded(cls) -> LangfuseAdapter:
        """Real SDK instrumentation, spans captured in-process, no network."""
        public_key = f"pk-lf-embedded-{uuid.uuid4().hex}"
        provider, collector = TracerProvider(), SpanCollector()
        provider.add_span_processor(collector)
        client = Langfuse(
            public_key=public_key,
            secret_key="sk-lf-embedded",  # noqa: S106 - placeholder
            base_url=_EMBEDDED_BASE_URL,
            tracer_provider=provider,
            span_exporter=_DiscardingExporter(),
            tracing_enabled=True,
        )
        return cls(
            client=client, public_key=public_key, provider=provider, collector=collector, settings=None
        )

    @classmethod
    def connect(cls, settings: LangfuseSettings) -> LangfuseAdapter:
        """Spans exported to Langfuse and captured in-process."""
        capture = _capture_for(settings)
        client = Langfuse(
            public_key=settings.public_key,
            secret_key=settings.secret_key.get_secret_value(),
            base_url=settings.base_url,
            tracer_provider=capture.provider,
            span_exporter=capture.exporter,  # the OTLP exporter, keeping what it cannot deliver
            timeout=settings.timeout_seconds,
            tracing_enabled=True,
        )
        adapter = cls(
            client=client,
            public_key=settings.public_key,
            provider=capture.provider,
            collector=capture.collector,
            settings=settings,
        )
        adapter._exporter = capture.exporter
        return adapter

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LangfuseAdapter:
        settings = LangfuseSettings.from_env(env)
        return cls.connect(settings) if settings else cls.embedded()

    # --- tracing -------------------------------------------------------------------------------------

    @staticmethod
    def trace_id_for(run_id: str, scenario_id: str) -> str:
        """Deterministic: the same (run id, scenario id) always names the same trace."""
        return Langfuse.create_trace_id(seed=f"{run_id}/{scenario_id}")

    def callbacks(self) -> list[Any]:
        """LangChain callback handlers recording runs (tools as TOOL observations) in this client."""
        return [CallbackHandler(public_key=self._public_key)]

    @contextmanager
    def scenario_run(
        self, *, trace_id: str, scenario_id: str, run_id: str, tags: Sequence[str], input: object
    ) -> Iterator[ScenarioSpan]:
        """The root SPAN of one scenario's trace, with its trace attributes; spans are captured."""
        self._collector.open(trace_id)
        with (
            self.client.start_as_current_observation(
                name=scenario_id, as_type="span", input=input, trace_context={"trace_id": trace_id}
            ) as span,
            propagate_attributes(
                trace_name=scenario_id,
                session_id=run_id,
                tags=[*tags, run_id],
                metadata={
                    "scenario_id": scenario_id[:_METADATA_VALUE_LIMIT],
                    "run_id": run_id[:_METADATA_VALUE_LIMIT],
                },
            ),
        ):
            yield ScenarioSpan(span=span, trace_id=trace_id)

    def keep_undelivered_spans(self, keep: Keep | None) -> None:
        """Where span batches the exporter could not deliver go (the store), instead of being dropped."""
        if self._exporter is not None:
            self._exporter.keep_with(keep)

    def resend_spans(self, payload: bytes) -> None:
        """Post one kept OTLP request body again; raise our exceptions on failure."""
        if self.settings is None:
            raise ConfigError(
                "re-sending spans needs Langfuse keys. Fix: set LANGFUSE_PUBLIC_KEY, "
                "LANGFUSE_SECRET_KEY and LANGFUSE_BASE_URL."
            )
        headers = {
            **_otlp_headers(self.settings),
            "Content-Type": "application/x-protobuf",
            "Content-Encoding": "gzip",
        }
        try:
            response = httpx.post(
                _otlp_endpoint(self.settings),
                content=gzip.compress(payload),
                headers=headers,
                timeout=self._timeout(),
            )
        except httpx.HTTPError as exc:
            raise LangfuseUnavailableError(f"Langfuse at {self._base_url()} is unreachable ({exc})") from None
        if response.status_code >= 300:
            failure = _api_failure(
                "re-sending spans",
                ApiError(
                    status_code=response.status_code, headers=dict(response.headers), body=response.text
                ),
                self._base_url(),
            )
            raise failure

    def take_trace(self, trace_id: str) -> Trace:
        """The normalized trace of a finished scenario run, from the captured spans."""
        return trace_from_spans(trace_id, self._collector.take(trace_id))

    def flush(self, timeout_seconds: float) -> bool:
        """Push out queued spans, waiting at most `timeout_seconds` (the SDK's flush has no bound).
        False when it did not finish in time."""
        return _bounded(self.client.flush, timeout_seconds)

    def shutdown(self, timeout_seconds: float = 10.0) -> bool:
        """Flush and stop the SDK's threads, waiting at most `timeout_seconds`."""
        return _bounded(self.client.shutdown, timeout_seconds)

    # --- the Langfuse API ---------------------------------------------------------------------------

    def _call(self, what: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        """Run one API call without the SDK's own retries (ours are counted), translating failures."""
        options = {**_NO_SDK_RETRIES, "timeout_in_seconds": self._timeout()}
        return self._translated(what, call, *args, request_options=options, **kwargs)

    def _translated(self, what: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        """Run `call`, turning every Langfuse or network failure into one of our two exceptions."""
        try:
            return call(*args, **kwargs)
        except ApiError as exc:
            raise _api_failure(what, exc, self._base_url()) from None
        except httpx.HTTPError as exc:
            raise LangfuseUnavailableError(
                f"Langfuse at {self._base_url()} is unreachable ({what}: {type(exc).__name__}: {exc})"
            ) from None

    def _timeout(self) -> int:
        return self.settings.timeout_seconds if self.settings else 10

    def _base_url(self) -> str:
        return self.settings.base_url if self.settings else _EMBEDDED_BASE_URL

    def project_id(self) -> str:
        """The keys' project (checks the keys too: a wrong key raises LangfuseAuthError)."""
        if self._project_id is None:
            projects = self._call("checking the keys", self.client.api.projects.get)
            if not projects.data:
                raise LangfuseAuthError(
                    "Langfuse accepted the keys but shows no project for them. "
                    "Fix: use a project-scoped API key."
                )
            self._project_id = str(projects.data[0].id)
        return self._project_id

    def trace_url(self, trace_id: str) -> str | None:
        if not self.connected or self._project_id is None:
            return None
        return f"{self._base_url()}/project/{self._project_id}/traces/{trace_id}"

    def ensure_score_configs(self, definitions: Sequence[ScoreDefinition]) -> list[str]:
        """Create a score config for each name Langfuse has none for; returns the names created."""
        existing: set[str] = set()
        page = 1
        while True:
            configs = self._call(
                "listing score configs", self.client.api.score_configs.get, page=page, limit=100
            )
            existing.update(c.name for c in configs.data)
            if page >= (configs.meta.total_pages or 1):
                break
            page += 1
        created = []
        for definition in definitions:
            if definition.name in existing:
                continue
            bounds = {"min_value": 0.0, "max_value": 1.0} if definition.data_type == "NUMERIC" else {}
            self._call(
                "creating a score config",
                self.client.api.score_configs.create,
                name=definition.name,
                data_type=ScoreConfigDataType(definition.data_type),
                description=definition.description,
                **bounds,
            )
            created.append(definition.name)
        return created

    @property
    def destination(self) -> str:
        """Where this adapter's scores go: the base URL and the project's public key (not a secret)."""
        return f"{self._base_url()} {self._public_key}"

    def post_scores(self, scores: Sequence[Score]) -> dict[str, str]:
        """Post one batch; returns {score id: reason} for scores Langfuse rejected (empty: all accepted).

        A 207 names no ids, and a 400 or 413 refuses the whole batch for what may be one score, so such
        a batch is re-posted one score at a time to learn which; re-posting is safe because ids and
        timestamps are deterministic (Langfuse updates, never duplicates).
        """
        if not scores:
            return {}
        try:
            response = self._call(
                "posting scores", self.client.api.scores.create, request=[_score_request(s) for s in scores]
            )
        except LangfuseUnavailableError as exc:
            if exc.status not in (400, 413):
                raise
            if len(scores) == 1:
                return {scores[0].id: str(exc)}
            return self._post_one_by_one(scores)
        if isinstance(response, CreateScoreBatchResults) and response.rejected:
            if len(scores) == 1:
                return {scores[0].id: "; ".join(e.message for e in response.errors) or "rejected"}
            return self._post_one_by_one(scores)
        return {}

    def _post_one_by_one(self, scores: Sequence[Score]) -> dict[str, str]:
        rejected: dict[str, str] = {}
        for score in scores:
            rejected.update(self.post_scores([score]))
        return rejected

    # --- reading traces back ------------------------------------------------------------------------

    def observation_pages(self, trace_id: str) -> list[dict[str, Any]]:
        """Every page of `GET /api/public/v2/observations?traceId=...` (cursor pagination), as JSON."""
        pages: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = self._call(
                "reading observations",
                self.client.api.observations.get_many,
                trace_id=trace_id,
                fields=_OBSERVATION_FIELDS,
                limit=1000,
                cursor=cursor,
            )
            pages.append(json.loads(page.json()))
            cursor = page.meta.cursor if page.meta else None
            if not cursor or not page.data:
                return pages

    def trace_body(self, trace_id: str) -> dict[str, Any] | None:
        """`GET /api/public/traces/{id}` (no longer in the SDK's client, still served): None on 404."""
        if self.settings is None:
            raise ConfigError(
                "reading a trace from Langfuse needs its keys. Fix: set LANGFUSE_PUBLIC_KEY, "
                "LANGFUSE_SECRET_KEY and LANGFUSE_BASE_URL."
            )
        try:
            response = httpx.get(
                f"{self.settings.base_url}/api/public/traces/{urllib.parse.quote(trace_id, safe='')}",
                auth=(self.settings.public_key, self.settings.secret_key.get_secret_value()),
                timeout=self._timeout(),
            )
        except httpx.HTTPError as exc:
            raise LangfuseUnavailableError(f"Langfuse at {self._base_url()} is unreachable ({exc})") from None
        if response.status_code == 404:
            return None
        if response.status_code in (401, 403):
            raise _api_failure(
                "reading a trace", ApiError(status_code=response.status_code), self._base_url()
            )
        if response.status_code >= 400:
            raise LangfuseUnavailableError(
                f"Langfuse answered HTTP {response.status_code} while reading trace {trace_id}",
                status=response.status_code,
                retry_after=_retry_after(response.headers),
            )
        try:
            body: dict[str, Any] = response.json()
        except ValueError:
            raise LangfuseUnavailableError(f"Langfuse sent a trace that is not JSON ({trace_id})") from None
        return body

    # --- prompt management -------------------------------------------------------------------------

    def remote_prompt(self, name: str, version: int) -> Prompt | None:
        """One stored version (None when Langfuse has no such version)."""
        try:
            raw = self._call(
                f"reading prompt {name} v{version}",
                self.client.api.prompts.get,
                urllib.parse.quote(name, safe=""),
                version=version,
            )
        except LangfuseUnavailableError as exc:
            if exc.status == 404:
                return None
            raise
        return _prompt_from_api(raw, link=None)

    def latest_remote_version(self, name: str) -> int:
        """The highest version Langfuse has of `name` (0: none)."""
        listing = self._call(f"listing prompt {name}", self.client.api.prompts.list, name=name, limit=50)
        versions = [v for meta in listing.data if meta.name == name for v in meta.versions]
        return max(versions, default=0)

    def create_prompt(self, prompt: Prompt) -> int:
        """Create the next version of `prompt.name` with this content and labels; its version number."""
        body: Any = (
            prompt.text
            if prompt.type == "text"
            else [{"role": m.role, "content": m.content} for m in prompt.messages]
        )
        created = self._translated(
            f"creating prompt {prompt.ref}",
            self.client.create_prompt,
            name=prompt.name,
            prompt=body,
            labels=list(prompt.labels),
            type=prompt.type,
            config=dict(prompt.config),
            commit_message=prompt.commit_message,
        )
        return int(created.version)

    def add_labels(self, name: str, version: int, labels: Sequence[str]) -> None:
        self._translated(
            f"labelling prompt {name} v{version}",
            self.client.update_prompt,
            name=name,
            version=version,
            new_labels=list(labels),
        )

    def fetch_prompt(self, local: Prompt, version: int | None, label: str | None) -> Prompt:
        """The version Langfuse serves (by version, else by label, default `production`), linked:
        generations that use it count toward that version's metrics in Langfuse."""
        selector: dict[str, Any] = (
            {"version": version} if version is not None else {"label": label or "production"}
        )
        try:
            served = self.client.get_prompt(
                local.name,
                type=local.type,
                cache_ttl_seconds=60,
                max_retries=0,
                fetch_timeout_seconds=self._timeout(),
                **selector,
            )
        except Exception as exc:  # noqa: BLE001 - the SDK raises ApiError, httpx errors and others here
            reason = f"HTTP {exc.status_code}" if isinstance(exc, ApiError) else type(exc).__name__
            raise LangfuseUnavailableError(
                f"Langfuse did not serve prompt {local.name} ({_selector_text(selector)}: {reason})"
            ) from None
        if served.is_fallback:
            raise LangfuseUnavailableError(
                f"Langfuse did not serve prompt {local.name} ({_selector_text(selector)})"
            )
        body = served.prompt
        return Prompt(
            name=local.name,
            version=int(served.version),
            type=local.type,
            text=body if isinstance(body, str) else "",
            messages=() if isinstance(body, str) else tuple(_chat_message(m) for m in body),
            config=dict(served.config or {}),
            labels=tuple(served.labels),
            source="langfuse",
            link=served,
        )


def _bounded(work: Any, timeout_seconds: float) -> bool:
    """Run `work()` in a daemon thread and wait at most `timeout_seconds`; False if it is still running.
    (A daemon thread cannot keep the process alive, so a hung Langfuse cannot hold the evaluator.)"""
    worker = threading.Thread(target=work, daemon=True, name="langfuse-bounded")
    worker.start()
    worker.join(timeout_seconds)
    return not worker.is_alive()


def _selector_text(selector: Mapping[str, Any]) -> str:
    return ", ".join(f"{key} {value}" for key, value in selector.items())


def _chat_message(message: Any) -> ChatMessage:
    if isinstance(message, Mapping):
        return ChatMessage(role=message["role"], content=message["content"])
    return ChatMessage(role=message.role, content=message.content)


def _prompt_from_api(raw: Any, *, link: Any) -> Prompt:
    body = raw.prompt
    return Prompt(
        name=raw.name,
        version=int(raw.version),
        type="text" if isinstance(body, str) else "chat",
        text=body if isinstance(body, str) else "",
        messages=() if isinstance(body, str) else tuple(_chat_message(m) for m in body),
        config=dict(raw.config or {}),
        labels=tuple(raw.labels),
        commit_message=raw.commit_message,
        source="langfuse",
        link=link,
    )


def _api_failure(what: str, exc: ApiError, base_url: str) -> Exception:
    status = exc.status_code or 0
    if status in (401, 403):
        return LangfuseAuthError(
            f"Langfuse at {base_url} rejected the API keys (HTTP {status}) while {what}. Fix: check "
            "LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_BASE_URL (keys belong to one "
            "project and one region)."
        )
    retry_after = _retry_after(exc.headers or {})
    body = str(exc.body)[:300]
    return LangfuseUnavailableError(
        f"Langfuse at {base_url} answered HTTP {status} while {what}: {body}",
        status=status,
        retry_after=retry_after,
    )


def _retry_after(headers: Mapping[str, str]) -> float | None:
    lowered = {k.lower(): v for k, v in headers.items()}
    value = lowered.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _score_request(score: Score) -> CreateScoreRequest:
    return CreateScoreRequest(
        id=score.id,
        trace_id=score.trace_id,
        name=score.name,
        value=score.value,
        data_type=ScoreDataType(score.data_type),
        comment=score.comment,
        metadata=dict(score.metadata),
        timestamp=datetime.fromisoformat(score.timestamp),
    )
