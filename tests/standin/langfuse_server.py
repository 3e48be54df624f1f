"""A local stand-in for a Langfuse server, for tests that run the real Langfuse Python SDK (5.x).

`LangfuseStandIn` is a `ThreadingHTTPServer` on 127.0.0.1 (ephemeral port, daemon thread) speaking
the subset of Langfuse's public HTTP API that the SDK and this project use:

    POST  /api/public/otel/v1/traces                 OTLP protobuf (gzip), every span stored
    POST  /api/public/scores                         JSON list -> 202 / 207 (single object -> 200)
    GET   /api/public/v3/scores                      what `api.scores.get_many` reads
    POST  /api/public/v2/prompts                     next version of a name, `latest` label managed
    GET   /api/public/v2/prompts                     list (PromptMetaListResponse)
    GET   /api/public/v2/prompts/{name}              `version=` or `label=` (default production)
    PATCH /api/public/v2/prompts/{name}/versions/{v} `newLabels`, moved off other versions
    GET   /api/public/v2/observations                observations built from the received spans
    GET   /api/public/traces/{traceId}               legacy trace view with observations + scores
    GET   /api/public/health, /api/public/projects
    GET/POST /api/public/score-configs, GET /api/public/score-configs/{id}
    GET/POST /api/public/v2/datasets, GET /api/public/v2/datasets/{name}
    GET/POST /api/public/dataset-items, GET /api/public/dataset-items/{id}   items upserted on their id
    GET   /api/public/experiments                    experiments (v4), derived from the received spans
    GET   /api/public/experiment-items               their items (`experiments` says how)

The dataset-run endpoints Langfuse Cloud removed on 2026-11-16 (`/api/public/dataset-run-items`,
`/api/public/datasets/{name}/runs[/{runName}]`) answer 404 with a message, as Cloud does now, and each
call is recorded in `.removed_calls`, a problem the test fails on: Langfuse v4 records experiments from
the span attributes the SDK's `run_experiment` writes (`langfuse.experiment.*`), nothing else.

Every request needs HTTP Basic auth with a registered key pair (health excepted, as on the real
server); every JSON response is validated against Langfuse's openapi.yml (`openapi_contract`) and a
mismatch is recorded in `.schema_errors` and answered with a 500.

Fault switches, all thread-safe: `go_down()` / `come_back()` (listening socket closed, so
connections are refused, then re-opened on the same port), `slow` (seconds added to every request, or
only to those whose path starts with one of `slow_paths`),
`fail_next(n, status)`, `rate_limit_next(n, retry_after)`, `reject_scores(predicate, status=)` (207
per-item errors; `score_errors` says how an error names its score: by id in the message, as `id` with
`status` as the ingestion API's IngestionError does, by `index`, or not at all), `visibility_delay`
(ingestion lag before the read APIs return data), and `duplicate_observations` (rows returned more
than once until "merged", as ClickHouse does).

A score with `datasetRunId` must name an experiment the stand-in received spans of.

Not emulated: the legacy `/api/public/ingestion` batch API, dataset versions, media,
sessions, comments, metrics, annotation queues, prompt dependencies (`resolve`), structured `filter` queries,
model price matching (costs are echoed, never computed), and OTLP/JSON request bodies. A request
to anything not emulated gets a 404/400 and is recorded in `.not_emulated`, so the test fails
loudly rather than quietly testing nothing. Trace-level metadata is not merged into observation
metadata. The `resourceAttributes`/`scope` metadata keys the real server adds are not added.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Literal
from urllib.parse import parse_qs, unquote, urlsplit

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from . import experiments, views
from .openapi_contract import ResponseContract, SchemaMismatchError, load_contract
from .otlp import ReceivedSpan, decode_export_request, decompress
from .views import PromptVersion, StoredScore, TraceSummary

SERVER_VERSION = "4.16.0"  # the server release openapi.yml was taken from
MAX_SCORES_BODY_BYTES = 1024 * 1024  # Next.js's default body limit on POST /api/public/scores
MAX_OBSERVATIONS_LIMIT = 1000
MAX_SCORES_LIMIT = 100
MAX_EXPERIMENTS_LIMIT = 100  # experiments and experiment items per page
MAX_EXPERIMENT_SCORES_LIMIT = 50  # scores per experiment (item) with fields=scores
REMOVED_DATASET_RUNS = (
    "Dataset runs were removed from Langfuse Cloud on November 16, 2026 (Langfuse v4): experiments are "
    "recorded from OpenTelemetry span attributes (POST /api/public/otel/v1/traces, as the SDK's "
    "run_experiment writes them) and read with GET /api/public/experiments and "
    "GET /api/public/experiment-items."
)
DEFAULT_PAGE_SIZE = 50
PROTOBUF = "application/x-protobuf"

JsonObject = dict[str, Any]
ScorePredicate = Callable[[JsonObject], bool]


class ApiError(Exception):
    """Answer the request with an error status and `{"message": ..., "error": ...}`."""

    def __init__(self, status: int, message: str, error: str = "BadRequest") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.error = error


def not_found(message: str) -> ApiError:
    return ApiError(404, message, "LangfuseNotFoundError")


@dataclass(frozen=True)
class Request:
    method: str
    target: str  # raw request target, percent-encoding intact
    headers: Message
    body: bytes
    params: tuple[str, ...] = ()  # percent-decoded path parameters of the matched route

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> dict[str, str]:
        pairs = parse_qs(urlsplit(self.target).query, keep_blank_values=True)
        return {key: values[-1] for key, values in pairs.items()}

    def json(self) -> Any:
        try:
            return json.loads(self.body or b"null")
        except ValueError as error:
            raise ApiError(400, f"Invalid JSON body: {error}") from error

    def int_param(self, name: str, default: int | None = None) -> int | None:
        raw = self.query.get(name)
        if raw in (None, ""):
            return default
        try:
            return int(raw)
        except ValueError as error:
            raise ApiError(400, f"Query parameter {name} must be an integer") from error


@dataclass(frozen=True)
class Response:
    status: int
    body: Any = None  # a JSON body, validated against openapi.yml
    raw: bytes | None = None  # a non-JSON body (the OTLP protobuf reply), sent as is
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()

    @classmethod
    def error(cls, status: int, message: str, error: str | None = None, **headers: str) -> Response:
        body = {"message": message} | ({"error": error} if error else {})
        return cls(status, body, headers=tuple(headers.items()))


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    status: int | None  # None when the connection was dropped (server down)
    at: float  # time.monotonic()
    headers: dict[str, str] = field(default_factory=dict)  # names lower-cased


@dataclass
class _Fault:
    remaining: int
    status: int
    path_prefix: str | None
    retry_after: float | None = None

    def matches(self, request: Request) -> bool:
        return self.remaining > 0 and (self.path_prefix is None or request.path.startswith(self.path_prefix))


Handler = Callable[["LangfuseStandIn", Request], Response]


@dataclass(frozen=True)
class Route:
    method: str
    pattern: re.Pattern[str]
    template: str  # the operation's path in openapi.yml
    handler: Handler


@dataclass
class _Store:
    """Everything the stand-in received; guarded by LangfuseStandIn._lock."""

    spans: list[ReceivedSpan] = field(default_factory=list)
    score_rows: dict[tuple[str, str, str], StoredScore] = field(default_factory=dict)
    score_posts: Counter[str] = field(default_factory=Counter)
    prompts: dict[str, list[PromptVersion]] = field(default_factory=dict)
    prompt_tags: dict[str, list[str]] = field(default_factory=dict)
    score_configs: dict[str, JsonObject] = field(default_factory=dict)
    datasets: dict[str, JsonObject] = field(default_factory=dict)  # by name
    dataset_items: dict[str, JsonObject] = field(default_factory=dict)  # by id, in creation order
    requests: list[RecordedRequest] = field(default_factory=list)


class LangfuseStandIn:
    """A Langfuse server stand-in; use as a context manager or call start() / stop()."""

    routes: ClassVar[list[Route]] = []

    def __init__(
        self,
        *,
        public_key: str | None = None,
        secret_key: str | None = None,
        contract: ResponseContract | None = None,
        keep_alive: bool = False,
    ) -> None:
        """`keep_alive`: answer over HTTP/1.1 keep-alive connections, as Langfuse does (benchmarks, which
        would otherwise measure a new connection per request). Off by default: one request per
        connection, so that `go_down()` leaves no connection open."""
        self.public_key = public_key or f"pk-lf-{uuid.uuid4().hex}"
        self._handler = _KeepAliveRequestHandler if keep_alive else _RequestHandler
        self.secret_key = secret_key or f"sk-lf-{uuid.uuid4().hex}"
        self.contract = contract or load_contract()
        # Plain switches: assign at any time.
        self.slow: float = 0.0
        self.slow_paths: tuple[str, ...] = ()  # `slow` only for paths starting with one of these
        self.visibility_delay: float = 0.0
        self.duplicate_observations: int = 0  # extra copies of each observation row ...
        self.merge_after: float | None = None  # ... until it has been visible this long
        # Problems a test must not ignore (the conftest fixture fails on any of them).
        self.schema_errors: list[str] = []
        self.not_emulated: list[str] = []
        self.internal_errors: list[str] = []
        self.removed_calls: list[str] = []  # requests to the endpoints Langfuse Cloud removed

        self._keys = {self.public_key: self.secret_key}
        self._lock = threading.RLock()
        self._store = _Store()
        self._faults: list[_Fault] = []
        self._score_rejector: tuple[ScorePredicate, str, int | None] | None = None
        # How a 207's errors name the score they refuse: "message" ("Score 3 (id=...): why"), "id"
        # ({"id", "status", "message"}), "index" ({"index", "message"}), or "nothing" ({"message"}).
        self.score_errors: Literal["message", "id", "index", "nothing"] = "message"
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0
        self._down = False

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> LangfuseStandIn:
        with self._lock:
            if self._server is None and not self._down:
                self._listen(self._port)
        return self

    def stop(self) -> None:
        with self._lock:
            self._close_listener()
            self._down = False

    def __enter__(self) -> LangfuseStandIn:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def revoke_keys(self, public_key: str) -> str:
        """Refuse the pair of `public_key` from now on (401), as Langfuse does once keys are deleted;
        returns its secret key, for `grant_keys`."""
        with self._lock:
            return self._keys.pop(public_key)

    def grant_keys(self, public_key: str, secret_key: str) -> None:
        with self._lock:
            self._keys[public_key] = secret_key

    def new_keys(self) -> tuple[str, str]:
        """Register and return a further (public, secret) key pair for the same project.

        The SDK keeps one resource manager per public key for the whole process, so every client a
        test builds needs a key of its own.
        """
        keys = (f"pk-lf-{uuid.uuid4().hex}", f"sk-lf-{uuid.uuid4().hex}")
        with self._lock:
            self._keys[keys[0]] = keys[1]
        return keys

    def _listen(self, port: int) -> None:
        server = _Server(("127.0.0.1", port), self._handler)
        server.standin = self
        self._server = server
        self._port = server.server_address[1]
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"langfuse-standin-{self._port}",
            daemon=True,
        )
        self._thread.start()

    def _close_listener(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    # -- fault switches -----------------------------------------------------------------------

    def go_down(self) -> None:
        """Close the listening socket: new connections are refused until come_back()."""
        with self._lock:
            self._down = True
            self._close_listener()

    def come_back(self) -> None:
        """Listen again, on the same port."""
        with self._lock:
            if self._down:
                self._listen(self._port)
                self._down = False

    @property
    def down(self) -> bool:
        return self._down

    def fail_next(self, n: int, status: int = 500, *, path: str | None = None) -> None:
        """Answer the next `n` requests (only those under `path`, if given) with `status`: a 5xx, or a
        400, 404 or 413 as the server answers a body it refuses."""
        if not (500 <= status <= 599 or status in (400, 404, 413)):
            raise ValueError("fail_next injects 5xx, 400, 404 or 413; use rate_limit_next for 429")
        with self._lock:
            self._faults.append(_Fault(n, status, path))

    def rate_limit_next(self, n: int, retry_after: float = 1, *, path: str | None = None) -> None:
        """Answer the next `n` requests with 429 and `Retry-After: <seconds, rounded up>`."""
        with self._lock:
            self._faults.append(_Fault(n, 429, path, retry_after))

    def reject_scores(
        self,
        predicate: ScorePredicate | None,
        message: str = "Rejected by the stand-in",
        *,
        status: int | None = None,
    ) -> None:
        """Reject score items for which `predicate(item)` is true (207), their errors carrying
        `status` when given (a 5xx says the item may go next time); None turns it off."""
        with self._lock:
            self._score_rejector = None if predicate is None else (predicate, message, status)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()
            self._score_rejector = None
            self.slow = 0.0
            self.slow_paths = ()

    # -- what arrived ---------------------------------------------------------------------------

    @property
    def spans(self) -> list[ReceivedSpan]:
        """Every span received, in arrival order; a re-posted span appears again."""
        with self._lock:
            return list(self._store.spans)

    def spans_for(self, trace_id: str) -> list[ReceivedSpan]:
        return [span for span in self.spans if span.trace_id == trace_id]

    @property
    def scores(self) -> dict[str, JsonObject]:
        """The latest stored body of every score id."""
        with self._lock:
            rows = sorted(self._store.score_rows.values(), key=lambda row: row.updated_at)
            return {row.id: dict(row.body) for row in rows}

    @property
    def prompt_versions(self) -> dict[str, list[PromptVersion]]:
        """Every stored prompt version, by name, oldest first."""
        with self._lock:
            return {name: list(versions) for name, versions in self._store.prompts.items()}

    @property
    def score_configs(self) -> list[JsonObject]:
        with self._lock:
            return [dict(config) for config in self._store.score_configs.values()]

    @property
    def score_rows(self) -> list[StoredScore]:
        """Score rows as Langfuse keys them: (id, name, date of timestamp)."""
        with self._lock:
            return list(self._store.score_rows.values())

    @property
    def score_posts(self) -> Counter[str]:
        """How many times each score id was posted (accepted)."""
        with self._lock:
            return Counter(self._store.score_posts)

    @property
    def datasets(self) -> dict[str, JsonObject]:
        with self._lock:
            return {name: dict(d) for name, d in self._store.datasets.items()}

    @property
    def dataset_items(self) -> dict[str, JsonObject]:
        with self._lock:
            return {item_id: dict(item) for item_id, item in self._store.dataset_items.items()}

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._store.requests)

    def requests_to(self, path: str, method: str | None = None) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == path and (method is None or r.method == method)]

    def problems(self) -> list[str]:
        """Schema mismatches, requests to things not emulated or removed, and stand-in crashes."""
        with self._lock:
            return [
                *(f"schema: {p}" for p in self.schema_errors),
                *(f"not emulated: {p}" for p in self.not_emulated),
                *(f"removed endpoint called: {p}" for p in self.removed_calls),
                *(f"stand-in error: {p}" for p in self.internal_errors),
            ]

    def wait_for(self, condition: Callable[[], bool], timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            time.sleep(0.02)
        return condition()

    # -- request pipeline ---------------------------------------------------------------------

    def dispatch(self, request: Request) -> Response | None:
        """The response to one request; None means drop the connection (the server is down)."""
        if self._down:
            self._record(request, None)
            return None
        if self.slow > 0 and (not self.slow_paths or request.path.startswith(self.slow_paths)):
            time.sleep(self.slow)
        response = self._injected_fault(request) or self._unauthorized(request)
        if response is None:
            response = self._route(request)
        response = self._checked(request, response)
        self._record(request, response.status)
        return response

    def _record(self, request: Request, status: int | None) -> None:
        headers = {name.lower(): value for name, value in request.headers.items()}
        headers.pop("authorization", None)
        entry = RecordedRequest(
            request.method, request.path, request.query, status, time.monotonic(), headers
        )
        with self._lock:
            self._store.requests.append(entry)

    def _injected_fault(self, request: Request) -> Response | None:
        with self._lock:
            fault = next((f for f in self._faults if f.matches(request)), None)
            if fault is None:
                return None
            fault.remaining -= 1
        if fault.status == 429:
            seconds = str(math.ceil(fault.retry_after or 0))
            return Response.error(429, "Rate limit exceeded", "TooManyRequests", **{"Retry-After": seconds})
        kind = {400: "BadRequest", 404: "NotFound", 413: "PayloadTooLarge"}.get(
            fault.status, "InternalServerError"
        )
        return Response.error(fault.status, f"Injected failure ({fault.status})", kind)

    def _unauthorized(self, request: Request) -> Response | None:
        if request.path == "/api/public/health":
            return None  # the health endpoint has no security requirement in openapi.yml
        public_key, secret_key = _basic_credentials(request.headers.get("Authorization"))
        with self._lock:
            if public_key is not None and self._keys.get(public_key) == secret_key:
                return None
        return Response.error(
            401,
            "Invalid credentials. Confirm that you've configured the correct host.",
            "UnauthorizedError",
        )

    def _route(self, request: Request) -> Response:
        path = request.path
        allowed = [route for route in self.routes if route.pattern.fullmatch(path)]
        route = next((r for r in allowed if r.method == request.method), None)
        if route is None:
            if allowed:
                return Response.error(405, f"Method {request.method} not allowed", "MethodNotAllowed")
            with self._lock:
                self.not_emulated.append(f"{request.method} {path}")
            return Response.error(404, f"Not found: {path}", "NotFound")
        match = route.pattern.fullmatch(path)
        assert match is not None
        bound = replace(request, params=tuple(unquote(group) for group in match.groups()))
        try:
            return route.handler(self, bound)
        except ApiError as error:
            return Response.error(error.status, error.message, error.error)
        except Exception as error:  # noqa: BLE001 (a stand-in bug: recorded, fails the test)
            with self._lock:
                self.internal_errors.append(f"{request.method} {path}: {error!r}")
            return Response.error(500, f"Stand-in error: {error!r}", "InternalServerError")

    def _template_for(self, request: Request) -> str | None:
        return next((r.template for r in self.routes if r.pattern.fullmatch(request.path)), None)

    def _checked(self, request: Request, response: Response) -> Response:
        if response.raw is not None:
            return response  # the OTLP protobuf reply: openapi.yml documents only a JSON `{}`
        template = self._template_for(request)
        try:
            self.contract.check_response(request.method, template, response.status, response.body)
        except SchemaMismatchError as mismatch:
            with self._lock:
                self.schema_errors.append(str(mismatch))
            return Response(500, {"message": f"Stand-in schema mismatch: {mismatch}"})
        return response

    def _check_request_body(self, request: Request, template: str) -> Any:
        body = request.json()
        problems = self.contract.request_problems(request.method, template, body)
        if problems:
            raise ApiError(400, "Invalid request body: " + "; ".join(problems))
        return body

    # -- time and visibility --------------------------------------------------------------------

    def _visible_at(self) -> float:
        return time.monotonic() + max(self.visibility_delay, 0.0)

    def _visible_spans(self) -> list[ReceivedSpan]:
        """Readable spans, one per span id (the last one received wins)."""
        now = time.monotonic()
        latest: dict[str, ReceivedSpan] = {}
        for span in self.spans:
            if span.visible_at <= now:
                latest[span.span_id] = span
        return list(latest.values())

    def _copies(self, span: ReceivedSpan) -> int:
        if self.duplicate_observations <= 0:
            return 1
        merged = self.merge_after is not None and time.monotonic() - span.visible_at >= self.merge_after
        return 1 if merged else 1 + self.duplicate_observations

    # -- endpoints: ingestion -----------------------------------------------------------------

    def _post_otel_traces(self, request: Request) -> Response:
        content_type = (request.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != PROTOBUF:
            with self._lock:
                self.not_emulated.append(f"OTLP request body of type {content_type!r}")
            raise ApiError(400, f"The stand-in accepts only {PROTOBUF} OTLP bodies")
        try:
            payload = decompress(request.body, request.headers.get("Content-Encoding"))
            spans = decode_export_request(payload, received_at=time.time(), visible_at=self._visible_at())
        except (OSError, ValueError) as error:
            raise ApiError(400, f"Undecodable OTLP body: {error}") from error
        with self._lock:
            self._store.spans.extend(spans)
        reply = ExportTraceServiceResponse().SerializeToString()
        return Response(200, raw=reply, content_type=PROTOBUF)

    def _post_scores(self, request: Request) -> Response:
        if len(request.body) > MAX_SCORES_BODY_BYTES:
            raise ApiError(413, "Body exceeded 1mb limit", "PayloadTooLarge")
        body = request.json()
        if isinstance(body, dict):  # the single-score form openapi.yml documents
            problem = self._score_problem(body)
            if problem:
                raise ApiError(400, problem)
            return Response(200, {"id": self._store_score(body)})
        if not isinstance(body, list):
            raise ApiError(400, "Expected a JSON list of scores")
        errors = []
        for index, item in enumerate(body):
            refusal = self._score_refusal(item)
            if refusal:
                errors.append(self._score_error(index, item, *refusal))
            else:
                self._store_score(item)
        if not errors:
            return Response(202, {"message": "Accepted"})
        accepted = len(body) - len(errors)
        return Response(207, {"accepted": accepted, "rejected": len(errors), "errors": errors})

    def _score_problem(self, item: Any) -> str | None:
        refusal = self._score_refusal(item)
        return refusal[0] if refusal else None

    def _score_refusal(self, item: Any) -> tuple[str, int | None] | None:
        """Why the item is refused, and the status its error carries (None: the stand-in's default)."""
        problem = score_item_problem(item)
        if problem is None and item.get("configId"):
            problem = self._config_problem(item)
        if problem is None:
            problem = self._experiment_problem(item)
        if problem is not None:
            return problem, None
        with self._lock:
            rejector = self._score_rejector
        if rejector is not None and rejector[0](item):
            return rejector[1], rejector[2]
        return None

    def _score_error(self, index: int, item: Any, problem: str, status: int | None) -> JsonObject:
        """One error of a 207, naming its score as `score_errors` says."""
        extra: JsonObject = {} if status is None else {"status": status}
        if self.score_errors == "id":
            return {"id": str(_item_id(item)), "status": status or 400, "message": problem}
        if self.score_errors == "index":
            return {"index": index, "message": problem, **extra}
        if self.score_errors == "nothing":
            return {"message": problem, **extra}
        return {"message": f"Score {index} (id={_item_id(item)}): {problem}", **extra}

    def _experiment_problem(self, item: JsonObject) -> str | None:
        """A run-level score names its experiment by `datasetRunId` (the experiment id, as the SDK's
        run_experiment posts them); Langfuse v4 knows an experiment once spans carrying its id arrived."""
        run_id = item.get("datasetRunId")
        if not run_id:
            return None
        known = any(experiments.experiment_id_of(span) == run_id for span in self.spans)
        return None if known else f"Experiment (dataset run) {run_id} not found"

    def _config_problem(self, item: JsonObject) -> str | None:
        with self._lock:
            config = self._store.score_configs.get(str(item["configId"]))
        if config is None:
            return f"Score config {item['configId']} not found"
        if config["name"] != item["name"]:
            return f"Score name {item['name']!r} does not match config name {config['name']!r}"
        if item.get("dataType") and item["dataType"] != config["dataType"]:
            return f"dataType {item['dataType']} does not match config dataType {config['dataType']}"
        return None

    def _store_score(self, item: JsonObject) -> str:
        score_id = str(item.get("id") or uuid.uuid4())
        now = views.iso_from_seconds(time.time())
        timestamp = views.normalize_iso(item["timestamp"]) if item.get("timestamp") else now
        body = {**item, "id": score_id, "timestamp": timestamp, "dataType": views.infer_data_type(item)}
        key = (score_id, str(item["name"]), timestamp[:10])
        with self._lock:
            previous = self._store.score_rows.get(key)
            self._store.score_rows[key] = StoredScore(
                body=body,
                created_at=previous.created_at if previous else now,
                updated_at=now,
                visible_at=previous.visible_at if previous else self._visible_at(),
            )
            self._store.score_posts[score_id] += 1
        return score_id

    # -- endpoints: reading ---------------------------------------------------------------------

    def _get_observations(self, request: Request) -> Response:
        query = request.query
        groups = _field_groups(query.get("fields"))
        limit = _limit(request, MAX_OBSERVATIONS_LIMIT)
        if query.get("parseIoAsJson", "").lower() == "true":
            raise ApiError(400, "parseIoAsJson=true is no longer supported")
        if query.get("filter"):
            with self._lock:
                self.not_emulated.append("GET /api/public/v2/observations?filter=")
            raise ApiError(400, "The stand-in does not emulate the `filter` parameter")
        expand: Container[str] = frozenset(filter(None, query.get("expandMetadata", "").split(",")))
        if "io" in groups or expand:
            # The server reads metadata from its full events table then, whole; only metadata asked for
            # alone comes from the compact table, cut (the v2 observations query since February 2026).
            expand = views.EVERY_KEY
        rows = [
            (row, copy)
            for row, span in self._observation_rows(expand)
            if _matches(row, query)
            for copy in range(self._copies(span))
        ]
        rows.sort(key=_row_order, reverse=True)
        after = _decode_cursor(query.get("cursor"))
        if after is not None:
            rows = [item for item in rows if _row_order(item) < after]
        page = rows[:limit]
        meta = {"cursor": _encode_cursor(_row_order(page[-1]))} if len(rows) > limit else {}
        data = [_stale_copy(views.select_groups(row, groups), copy) for row, copy in page]
        return Response(200, {"data": data, "meta": meta})

    def _observation_rows(self, expand: Container[str] | None) -> list[tuple[JsonObject, ReceivedSpan]]:
        spans = self._visible_spans()
        by_trace: dict[str, list[ReceivedSpan]] = {}
        for span in spans:
            by_trace.setdefault(span.trace_id, []).append(span)
        traces = {trace_id: TraceSummary.of(trace_id, group) for trace_id, group in by_trace.items()}
        return [
            (views.observation_row(span, traces[span.trace_id], self._prompt_id(span), expand), span)
            for span in spans
        ]

    def _prompt_id(self, span: ReceivedSpan) -> str | None:
        name = span.attributes.get(views.OBS + "prompt.name")
        version = span.attributes.get(views.OBS + "prompt.version")
        with self._lock:
            versions = self._store.prompts.get(str(name), [])
            return next((v.id for v in versions if v.version == version), None)

    def _get_trace(self, request: Request) -> Response:
        (trace_id,) = request.params
        spans = [span for span in self._visible_spans() if span.trace_id == trace_id]
        if not spans:
            raise not_found(f"Trace {trace_id} not found within authorized project")
        trace = TraceSummary.of(trace_id, spans)
        observations = [
            views.observation_v1(views.observation_row(span, trace, self._prompt_id(span), None))
            for span in sorted(spans, key=lambda s: (s.start_time_ns, s.span_id))
        ]
        scores = [
            view
            for row in self._visible_scores()
            if row.body.get("traceId") == trace_id and (view := views.score_v1(row)) is not None
        ]
        return Response(200, views.trace_view(trace, observations, scores))

    def _visible_scores(self) -> list[StoredScore]:
        now = time.monotonic()
        return [row for row in self.score_rows if row.visible_at <= now]

    def _get_scores_v3(self, request: Request) -> Response:
        query = request.query
        limit = _limit(request, MAX_SCORES_LIMIT)
        groups = frozenset(filter(None, query.get("fields", "").split(",")))
        if not groups <= views.SCORE_FIELD_GROUPS:
            raise ApiError(400, f"Unknown field groups: {sorted(groups - views.SCORE_FIELD_GROUPS)}")
        rows = sorted(
            (row for row in self._visible_scores() if _score_matches(row.body, query)),
            key=lambda row: (row.body["timestamp"], row.id),
            reverse=True,
        )
        after = _decode_cursor(query.get("cursor"))
        if after is not None:
            rows = [row for row in rows if [row.body["timestamp"], row.id] < after]
        page = rows[:limit]
        meta: JsonObject = {"limit": limit}
        if len(rows) > limit:
            meta["cursor"] = _encode_cursor([page[-1].body["timestamp"], page[-1].id])
        return Response(200, {"data": [views.score_v3(r, groups) for r in page], "meta": meta})

    # -- endpoints: prompts ---------------------------------------------------------------------

    def _create_prompt(self, request: Request) -> Response:
        body = self._check_request_body(request, "/api/public/v2/prompts")
        name = body["name"]
        prompt_type = body.get("type") or "text"
        labels = _unique(label for label in body.get("labels") or [] if label != "latest")
        now = views.iso_from_seconds(time.time())
        with self._lock:
            versions = self._store.prompts.setdefault(name, [])
            if versions and versions[-1].type != prompt_type:
                raise ApiError(400, f"Previous versions of {name!r} have type {versions[-1].type}")
            for version in versions:  # a label (and `latest`) lives on one version only
                version.labels = [lb for lb in version.labels if lb not in {*labels, "latest"}]
            created = PromptVersion(
                name=name,
                version=len(versions) + 1,
                type=prompt_type,
                prompt=body["prompt"],
                config=body.get("config") if body.get("config") is not None else {},
                labels=[*labels, "latest"],
                commit_message=body.get("commitMessage"),
                id=str(uuid.uuid4()),
                updated_at=now,
            )
            versions.append(created)
            if body.get("tags") is not None:  # tags belong to the prompt, i.e. to every version
                self._store.prompt_tags[name] = _unique(body["tags"])
            return Response(200, self._prompt_view(created))

    def _prompt_view(self, version: PromptVersion) -> JsonObject:
        return views.prompt_view(version, self._store.prompt_tags.get(version.name, []))

    def _get_prompt(self, request: Request) -> Response:
        (name,) = request.params
        version_number = request.int_param("version")
        label = request.query.get("label")
        if version_number is not None and label:
            raise ApiError(400, "Cannot specify both version and label")
        with self._lock:
            versions = self._store.prompts.get(name, [])
            if version_number is not None:
                found = next((v for v in versions if v.version == version_number), None)
            else:
                wanted = label or "production"
                found = next((v for v in versions if wanted in v.labels), None)
            if found is None:
                raise not_found("Prompt not found")
            return Response(200, self._prompt_view(found))

    def _update_prompt_labels(self, request: Request) -> Response:
        name, raw_version = request.params
        body = self._check_request_body(request, "/api/public/v2/prompts/{name}/versions/{version}")
        new_labels = _unique(body["newLabels"])
        if "latest" in new_labels:
            raise ApiError(400, "The 'latest' label is reserved and managed by Langfuse")
        with self._lock:
            versions = self._store.prompts.get(name, [])
            target = next((v for v in versions if str(v.version) == raw_version), None)
            if target is None:
                raise not_found(f"Prompt {name!r} version {raw_version} not found")
            for version in versions:
                if version is not target:
                    version.labels = [lb for lb in version.labels if lb not in new_labels]
            target.labels = _unique([*target.labels, *new_labels])  # added, never removed
            target.updated_at = views.iso_from_seconds(time.time())
            return Response(200, self._prompt_view(target))

    def _list_prompts(self, request: Request) -> Response:
        query = request.query
        page = request.int_param("page", 1) or 1
        limit = request.int_param("limit", DEFAULT_PAGE_SIZE) or DEFAULT_PAGE_SIZE
        with self._lock:
            metas = [
                views.prompt_meta(versions, self._store.prompt_tags.get(name, []))
                for name, versions in sorted(self._store.prompts.items())
            ]
        metas = [m for m in metas if _prompt_meta_matches(m, query)]
        data = metas[(page - 1) * limit : page * limit]
        return Response(200, {"data": data, "meta": views.page_meta(page, limit, len(metas))})

    # -- endpoints: project, health, score configs -----------------------------------------------

    def _health(self, request: Request) -> Response:
        return Response(200, {"status": "OK", "version": SERVER_VERSION})

    def _projects(self, request: Request) -> Response:
        project = {
            "id": views.PROJECT_ID,
            "name": "Stand-in project",
            "organization": {"id": "standin-org", "name": "Stand-in organization"},
            "metadata": {},
        }
        return Response(200, {"data": [project]})

    def _create_score_config(self, request: Request) -> Response:
        body = self._check_request_body(request, "/api/public/score-configs")
        now = views.iso_from_seconds(time.time())
        categories = body.get("categories")
        if body["dataType"] == "BOOLEAN":
            categories = [{"value": 1, "label": "True"}, {"value": 0, "label": "False"}]
        config = {
            "id": str(uuid.uuid4()),
            "name": body["name"],
            "createdAt": now,
            "updatedAt": now,
            "projectId": views.PROJECT_ID,
            "dataType": body["dataType"],
            "isArchived": False,
            "minValue": body.get("minValue"),
            "maxValue": body.get("maxValue"),
            "categories": categories,
            "description": body.get("description"),
        }
        with self._lock:
            self._store.score_configs[config["id"]] = config
        return Response(200, config)

    def _list_score_configs(self, request: Request) -> Response:
        page = request.int_param("page", 1) or 1
        limit = request.int_param("limit", DEFAULT_PAGE_SIZE) or DEFAULT_PAGE_SIZE
        with self._lock:
            configs = list(self._store.score_configs.values())
        data = configs[(page - 1) * limit : page * limit]
        return Response(200, {"data": data, "meta": views.page_meta(page, limit, len(configs))})

    def _get_score_config(self, request: Request) -> Response:
        (config_id,) = request.params
        with self._lock:
            config = self._store.score_configs.get(config_id)
        if config is None:
            raise not_found(f"Score config {config_id} not found")
        return Response(200, config)

    # -- endpoints: datasets ---------------------------------------------------------------------

    def _create_dataset(self, request: Request) -> Response:
        body = self._check_request_body(request, "/api/public/v2/datasets")
        now = views.iso_from_seconds(time.time())
        with self._lock:
            dataset = self._store.datasets.get(body["name"])
            if dataset is None:
                dataset = {"id": str(uuid.uuid4()), "name": body["name"], "projectId": views.PROJECT_ID,
                           "inputSchema": None, "expectedOutputSchema": None, "createdAt": now}  # fmt: skip
                self._store.datasets[body["name"]] = dataset
            dataset |= {"description": body.get("description"), "metadata": body.get("metadata"),
                        "updatedAt": now}  # fmt: skip
            return Response(200, dict(dataset))

    def _dataset(self, name: str) -> JsonObject:
        with self._lock:
            dataset = self._store.datasets.get(name)
        if dataset is None:
            raise not_found(f"Dataset {name} not found")
        return dataset

    def _get_dataset(self, request: Request) -> Response:
        return Response(200, dict(self._dataset(request.params[0])))

    def _list_datasets(self, request: Request) -> Response:
        with self._lock:
            datasets = [dict(d) for d in self._store.datasets.values()]
        return _page_of(request, datasets)

    def _create_dataset_item(self, request: Request) -> Response:
        body = self._check_request_body(request, "/api/public/dataset-items")
        dataset = self._dataset(body["datasetName"])
        item_id = body.get("id") or str(uuid.uuid4())
        now = views.iso_from_seconds(time.time())
        with self._lock:
            item = self._store.dataset_items.get(item_id)
            if item is not None and item["datasetId"] != dataset["id"]:
                raise ApiError(409, f"Dataset item id {item_id} is already used in another dataset")
            if item is None:
                item = {"id": item_id, "datasetId": dataset["id"], "datasetName": dataset["name"],
                        "sourceTraceId": None, "sourceObservationId": None, "createdAt": now,
                        "mediaReferences": []}  # fmt: skip
                self._store.dataset_items[item_id] = item
            item |= {"status": body.get("status") or "ACTIVE", "input": body.get("input"),
                     "expectedOutput": body.get("expectedOutput"), "metadata": body.get("metadata"),
                     "updatedAt": now}  # fmt: skip
            return Response(200, dict(item))

    def _get_dataset_item(self, request: Request) -> Response:
        with self._lock:
            item = self._store.dataset_items.get(request.params[0])
        if item is None:
            raise not_found(f"Dataset item {request.params[0]} not found")
        return Response(200, dict(item))

    def _list_dataset_items(self, request: Request) -> Response:
        name = request.query.get("datasetName")
        with self._lock:
            items = [
                dict(i) for i in self._store.dataset_items.values() if not name or i["datasetName"] == name
            ]
        return _page_of(request, items)

    def _removed_dataset_runs(self, request: Request) -> Response:
        with self._lock:
            self.removed_calls.append(f"{request.method} {request.path}")
        raise not_found(REMOVED_DATASET_RUNS)

    # -- endpoints: experiments (v4) ------------------------------------------------------------

    def _window(self, request: Request) -> tuple[datetime, datetime | None]:
        """The required `fromStartTime` and the optional `toStartTime` of an experiments query."""
        query = request.query
        if query.get("filter"):
            with self._lock:
                self.not_emulated.append(f"GET {request.path}?filter=")
            raise ApiError(400, "The stand-in does not emulate the `filter` parameter")
        if not query.get("fromStartTime"):
            raise ApiError(400, "fromStartTime is required")
        try:
            start = views.parse_iso(query["fromStartTime"])
            end = views.parse_iso(query["toStartTime"]) if query.get("toStartTime") else None
        except ValueError as error:
            raise ApiError(400, f"Invalid datetime: {error}") from error
        return start, end

    def _list_experiments(self, request: Request) -> Response:
        start, end = self._window(request)
        catalog = experiments.EXPERIMENT_FIELD_GROUPS
        groups = _groups(request.query.get("fields"), catalog, experiments.DEFAULT_EXPERIMENT_GROUPS)
        limit = _limit(request, MAX_EXPERIMENTS_LIMIT)
        score_limit = _score_limit(request)
        rows = [
            row
            for row in experiments.experiment_rows(self._visible_spans(), start, end)
            if _listed(row, request.query, {"id": "id", "name": "name", "datasetId": "datasetId"})
        ]
        page, meta = _cursor_page(request, rows, ("endTime", "id"), limit)
        scores = self._visible_scores()
        data = [
            experiments.select(row, groups, catalog)
            | (
                {"scores": experiments.experiment_scores(row, scores, score_limit)}
                if "scores" in groups
                else {}
            )
            for row in page
        ]
        return Response(200, {"data": data, "meta": meta})

    def _list_experiment_items(self, request: Request) -> Response:
        start, end = self._window(request)
        catalog = experiments.ITEM_FIELD_GROUPS
        groups = _groups(request.query.get("fields"), catalog, experiments.DEFAULT_ITEM_GROUPS)
        limit = _limit(request, MAX_EXPERIMENTS_LIMIT)
        score_limit = _score_limit(request)
        filters = {
            "experimentId": "experimentId",
            "experimentName": "experimentName",
            "experimentItemId": "experimentItemId",
            "datasetId": "experimentDatasetId",
        }
        rows = [
            item
            for row, span in self._observation_rows(None)
            if experiments.is_item_root(span)
            and _in_window(row["startTime"], start, end)
            and _listed(item := experiments.item_row(row, span), request.query, filters)
        ]
        rows.sort(key=lambda row: (row["startTime"], row["id"]), reverse=True)
        page, meta = _cursor_page(request, rows, ("startTime", "id"), limit)
        scores = self._visible_scores()
        data = [
            experiments.select(row, groups, catalog)
            | ({"scores": experiments.item_scores(row, scores, score_limit)} if "scores" in groups else {})
            for row in page
        ]
        return Response(200, {"data": data, "meta": meta})


def _page_of(request: Request, rows: list[JsonObject]) -> Response:
    page = request.int_param("page", 1) or 1
    limit = request.int_param("limit", DEFAULT_PAGE_SIZE) or DEFAULT_PAGE_SIZE
    data = rows[(page - 1) * limit : page * limit]
    return Response(200, {"data": data, "meta": views.page_meta(page, limit, len(rows))})


def _route(method: str, regex: str, template: str, handler: Handler) -> Route:
    return Route(method, re.compile(regex), template, handler)


_SEGMENT = r"([^/]+)"  # one path segment: a prompt name with `/` must arrive as `%2F`
LangfuseStandIn.routes = [
    _route("POST", "/api/public/otel/v1/traces", "/api/public/otel/v1/traces",
           LangfuseStandIn._post_otel_traces),
    _route("POST", "/api/public/scores", "/api/public/scores", LangfuseStandIn._post_scores),
    _route("GET", "/api/public/v3/scores", "/api/public/v3/scores", LangfuseStandIn._get_scores_v3),
    _route("GET", "/api/public/v2/prompts", "/api/public/v2/prompts",
           LangfuseStandIn._list_prompts),
    _route("POST", "/api/public/v2/prompts", "/api/public/v2/prompts",
           LangfuseStandIn._create_prompt),
    _route("GET", f"/api/public/v2/prompts/{_SEGMENT}", "/api/public/v2/prompts/{promptName}",
           LangfuseStandIn._get_prompt),
    _route("PATCH", f"/api/public/v2/prompts/{_SEGMENT}/versions/{_SEGMENT}",
           "/api/public/v2/prompts/{name}/versions/{version}",
           LangfuseStandIn._update_prompt_labels),
    _route("GET", "/api/public/v2/observations", "/api/public/v2/observations",
           LangfuseStandIn._get_observations),
    _route("GET", f"/api/public/traces/{_SEGMENT}", "/api/public/traces/{traceId}",
           LangfuseStandIn._get_trace),
    _route("GET", "/api/public/health", "/api/public/health", LangfuseStandIn._health),
    _route("GET", "/api/public/projects", "/api/public/projects", LangfuseStandIn._projects),
    _route("GET", "/api/public/score-configs", "/api/public/score-configs",
           LangfuseStandIn._list_score_configs),
    _route("POST", "/api/public/score-configs", "/api/public/score-configs",
           LangfuseStandIn._create_score_config),
    _route("GET", f"/api/public/score-configs/{_SEGMENT}", "/api/public/score-configs/{configId}",
           LangfuseStandIn._get_score_config),
    _route("GET", "/api/public/v2/datasets", "/api/public/v2/datasets", LangfuseStandIn._list_datasets),
    _route("POST", "/api/public/v2/datasets", "/api/public/v2/datasets", LangfuseStandIn._create_dataset),
    _route("GET", f"/api/public/v2/datasets/{_SEGMENT}", "/api/public/v2/datasets/{datasetName}",
           LangfuseStandIn._get_dataset),
    _route("GET", "/api/public/dataset-items", "/api/public/dataset-items",
           LangfuseStandIn._list_dataset_items),
    _route("POST", "/api/public/dataset-items", "/api/public/dataset-items",
           LangfuseStandIn._create_dataset_item),
    _route("GET", f"/api/public/dataset-items/{_SEGMENT}", "/api/public/dataset-items/{id}",
           LangfuseStandIn._get_dataset_item),
    _route("GET", "/api/public/experiments", "/api/public/experiments",
           LangfuseStandIn._list_experiments),
    _route("GET", "/api/public/experiment-items", "/api/public/experiment-items",
           LangfuseStandIn._list_experiment_items),
    *(
        _route(method, regex, template, LangfuseStandIn._removed_dataset_runs)
        for method, regex, template in (
            ("POST", "/api/public/dataset-run-items", "/api/public/dataset-run-items"),
            ("GET", "/api/public/dataset-run-items", "/api/public/dataset-run-items"),
            ("GET", f"/api/public/datasets/{_SEGMENT}/runs", "/api/public/datasets/{datasetName}/runs"),
            ("GET", f"/api/public/datasets/{_SEGMENT}/runs/{_SEGMENT}",
             "/api/public/datasets/{datasetName}/runs/{runName}"),
            ("DELETE", f"/api/public/datasets/{_SEGMENT}/runs/{_SEGMENT}",
             "/api/public/datasets/{datasetName}/runs/{runName}"),
        )
    ),
]  # fmt: skip


# ---------------------------------------------------------------------------------------------
# request validation and query helpers

_SCORE_TYPES = frozenset({"NUMERIC", "BOOLEAN", "CATEGORICAL", "TEXT", "CORRECTION"})
_ENVIRONMENT = re.compile(r"^(?!langfuse)[a-z0-9_-]{1,40}$")
_SUBJECT_KEYS = ("traceId", "sessionId", "observationId", "datasetRunId")


def score_item_problem(item: Any) -> str | None:
    """Why Langfuse would reject one item of a score batch; None when it would accept it."""
    if not isinstance(item, dict):
        return "a score must be a JSON object"
    if not isinstance(item.get("name"), str) or not item["name"]:
        return "name is required"
    if not any(item.get(key) for key in _SUBJECT_KEYS):
        return "one of traceId, sessionId, observationId or datasetRunId is required"
    if item.get("source") not in (None, "API", "ANNOTATION"):
        return f"source {item['source']!r} is not accepted"
    environment = item.get("environment")
    if environment is not None and not _ENVIRONMENT.match(str(environment)):
        return f"invalid environment {environment!r}"
    return _timestamp_problem(item.get("timestamp")) or _value_problem(item)


def _timestamp_problem(timestamp: Any) -> str | None:
    if timestamp is None:
        return None
    try:
        views.parse_iso(str(timestamp))
    except ValueError:
        return f"timestamp {timestamp!r} is not ISO 8601 with a UTC offset"
    return None


def _value_problem(item: JsonObject) -> str | None:
    value = item.get("value")
    data_type = item.get("dataType")
    if data_type is not None and data_type not in _SCORE_TYPES:
        return f"unknown dataType {data_type!r}"
    if views.infer_data_type(item) in ("NUMERIC", "BOOLEAN"):
        return _number_problem(value, data_type)
    if not isinstance(value, str):
        return f"value must be a string for {data_type} scores"
    if data_type == "TEXT" and not 1 <= len(value) <= 500:
        return "TEXT scores take 1 to 500 characters"
    return None


def _number_problem(value: Any, data_type: str | None) -> str | None:
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if not is_number or not math.isfinite(value):
        return f"value must be a finite number for {data_type or 'NUMERIC'} scores"
    if data_type == "BOOLEAN" and value not in (0, 1):
        return "BOOLEAN scores take the value 0 or 1"
    return None


def _item_id(item: Any) -> Any:
    return item.get("id") if isinstance(item, dict) else None


def _basic_credentials(header: str | None) -> tuple[str | None, str | None]:
    if not header or not header.lower().startswith("basic "):
        return None, None
    try:
        decoded = base64.b64decode(header[6:].strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None, None
    public_key, _, secret_key = decoded.partition(":")
    return public_key, secret_key


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _limit(request: Request, maximum: int) -> int:
    limit = request.int_param("limit", DEFAULT_PAGE_SIZE) or DEFAULT_PAGE_SIZE
    if not 1 <= limit <= maximum:
        raise ApiError(400, f"limit must be between 1 and {maximum}")
    return limit


def _score_limit(request: Request) -> int:
    limit = request.int_param("scoreLimit", MAX_EXPERIMENT_SCORES_LIMIT) or MAX_EXPERIMENT_SCORES_LIMIT
    if not 1 <= limit <= MAX_EXPERIMENT_SCORES_LIMIT:
        raise ApiError(400, f"scoreLimit must be between 1 and {MAX_EXPERIMENT_SCORES_LIMIT}")
    return limit


def _groups(
    raw: str | None, catalog: dict[str, tuple[str, ...]], default: tuple[str, ...]
) -> tuple[str, ...]:
    """The requested field groups of an experiments query, checked against the operation's."""
    if not raw:
        return default
    groups = tuple(group.strip() for group in raw.split(",") if group.strip())
    unknown = [group for group in groups if group not in catalog]
    if unknown:
        raise ApiError(400, f"Unknown field groups: {unknown}")
    return groups


def _listed(row: JsonObject, query: dict[str, str], filters: dict[str, str]) -> bool:
    """The row passes the comma-separated list filters (query parameter -> row field) given."""
    return all(
        str(row.get(field_name)) in query[param].split(",")
        for param, field_name in filters.items()
        if query.get(param)
    )


def _in_window(iso: str, start: datetime, end: datetime | None) -> bool:
    moment = views.parse_iso(iso)
    return moment >= start and (end is None or moment < end)


def _cursor_page(
    request: Request, rows: list[JsonObject], keys: Sequence[str], limit: int
) -> tuple[list[JsonObject], JsonObject]:
    """One page of rows sorted descending by `keys`, after the request's cursor; the next cursor."""
    after = _decode_cursor(request.query.get("cursor"))
    if after is not None:
        rows = [row for row in rows if [row[key] for key in keys] < after]
    page = rows[:limit]
    meta = {"cursor": _encode_cursor([page[-1][key] for key in keys])} if len(rows) > limit else {}
    return page, meta


def _field_groups(raw: str | None) -> tuple[str, ...]:
    if not raw:
        return views.DEFAULT_FIELD_GROUPS
    groups = tuple(group.strip() for group in raw.split(",") if group.strip())
    unknown = [group for group in groups if group not in views.FIELD_GROUPS]
    if unknown:
        raise ApiError(400, f"Unknown field groups: {unknown}")
    return groups


# Query parameters of GET /api/public/v2/observations compared verbatim with the row.
_EXACT_FILTERS = (
    "traceId", "type", "name", "level", "userId", "sessionId", "environment", "version",
)  # fmt: skip


def _matches(row: JsonObject, query: dict[str, str]) -> bool:
    for key in _EXACT_FILTERS:
        if key in query and str(row.get(key)) != query[key]:
            return False
    if "parentObservationId" in query and (row["parentObservationId"] or "") != query["parentObservationId"]:
        return False
    if "isRootObservation" in query:
        wanted = query["isRootObservation"].lower() == "true"
        if row["isRootObservation"] != wanted:
            return False
    start = views.parse_iso(row["startTime"])
    if "fromStartTime" in query and start < views.parse_iso(query["fromStartTime"]):
        return False
    return not ("toStartTime" in query and start >= views.parse_iso(query["toStartTime"]))


def _score_matches(body: JsonObject, query: dict[str, str]) -> bool:
    for key in ("traceId", "observationId", "sessionId", "id"):
        if query.get(key) and str(body.get(key)) not in query[key].split(","):
            return False
    for key in ("name", "dataType", "configId"):
        if query.get(key) and str(body.get(key)) != query[key]:
            return False
    return not (query.get("environment") and (body.get("environment") or "default") != query["environment"])


def _prompt_meta_matches(meta: JsonObject, query: dict[str, str]) -> bool:
    if query.get("name") and meta["name"] != query["name"]:
        return False
    if query.get("label") and query["label"] not in meta["labels"]:
        return False
    return not (query.get("tag") and query["tag"] not in meta["tags"])


def _row_order(item: tuple[JsonObject, int]) -> list[Any]:
    row, copy = item
    return [row["startTime"], row["id"], -copy]


def _stale_copy(view: JsonObject, copy: int) -> JsonObject:
    """A not-yet-merged duplicate row: same observation, an older `updatedAt` when shown."""
    if copy == 0 or "updatedAt" not in view:
        return view
    stale = views.parse_iso(view["updatedAt"]).timestamp() - copy / 1000
    return view | {"updatedAt": views.iso_from_seconds(stale)}


def _encode_cursor(position: list[Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(position).encode()).decode()


def _decode_cursor(cursor: str | None) -> list[Any] | None:
    if not cursor:
        return None
    try:
        position = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except ValueError as error:
        raise ApiError(400, "Invalid cursor") from error
    if not isinstance(position, list):
        raise ApiError(400, "Invalid cursor")
    return position


# ---------------------------------------------------------------------------------------------
# HTTP plumbing


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    standin: LangfuseStandIn

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up mid-response is not a stand-in bug; anything else is.
        error = sys.exc_info()[1]
        if not isinstance(error, ConnectionError | TimeoutError):
            with self.standin._lock:
                self.standin.internal_errors.append(f"HTTP layer: {error!r}")


class _RequestHandler(BaseHTTPRequestHandler):
    server: _Server
    server_version = f"langfuse-standin/{SERVER_VERSION}"
    protocol_version = "HTTP/1.0"  # one request per connection: go_down() leaves nothing open

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def log_message(self, format: str, *args: Any) -> None:
        return  # keep pytest output clean; `.requests` records every request

    def _handle(self) -> None:
        request = Request(self.command, self.path, self.headers, self._read_body())
        response = self.server.standin.dispatch(request)
        if response is None:
            self.close_connection = True
            return  # nothing written: the client sees the connection closed
        self._send(response)

    def _read_body(self) -> bytes:
        if (self.headers.get("Transfer-Encoding") or "").lower() == "chunked":
            return self._read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _read_chunked(self) -> bytes:
        chunks: list[bytes] = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return b"".join(chunks)
            chunks.append(self.rfile.read(size))
            self.rfile.readline()

    def _send(self, response: Response) -> None:
        payload = response.raw if response.raw is not None else json.dumps(response.body).encode()
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in response.headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)


class _KeepAliveRequestHandler(_RequestHandler):
    protocol_version = "HTTP/1.1"
