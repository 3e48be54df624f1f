"""Run the research demo with a real Langfuse client whose spans stay in memory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from uuid import uuid4

from langfuse import Langfuse
from langfuse.langchain import CallbackHandler
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from demo_agents.research import run
from evaluator.prompts import PromptLibrary
from evaluator.run import LLMEndpoint, PromptResolver, TargetRequest

REPO = Path(__file__).resolve().parents[2]
PROMPTS = PromptLibrary(REPO / "prompts")
TYPE = "langfuse.observation.type"


@dataclass(frozen=True)
class TracedRun:
    answer: str
    spans: list[ReadableSpan]  # in start order
    error: Exception | None = None  # what run() raised, with keep_errors=True

    def named(self, kind: str) -> list[str]:
        """Names of the observations of one type ("agent", "tool", ...), in start order."""
        return [s.name for s in self.spans if s.attributes and s.attributes.get(TYPE) == kind]

    def one(self, name: str) -> ReadableSpan:
        (span,) = [s for s in self.spans if s.name == name]
        return span

    def parent_name(self, span: ReadableSpan) -> str | None:
        parent_id = span.parent.span_id if span.parent else None
        return next((s.name for s in self.spans if s.context and s.context.span_id == parent_id), None)

    def agent_of(self, span: ReadableSpan) -> str | None:
        """The nearest AGENT ancestor's name."""
        current: ReadableSpan | None = span
        while current is not None and current.parent is not None:
            parent_id = current.parent.span_id
            current = next((s for s in self.spans if s.context and s.context.span_id == parent_id), None)
            if current is not None and current.attributes and current.attributes.get(TYPE) == "agent":
                return current.name
        return None


def memory_client() -> tuple[Langfuse, InMemorySpanExporter, list[CallbackHandler]]:
    """A real Langfuse client whose spans stay in memory (its exporter), and its LangChain handlers.
    Shut the client down when done."""
    exporter = InMemorySpanExporter()
    key = f"pk-lf-test-{uuid4().hex}"  # one per client: the SDK shares state per public key
    client = Langfuse(
        public_key=key,
        secret_key="sk-lf-test",
        base_url="http://127.0.0.1:9",
        tracer_provider=TracerProvider(),
        span_exporter=exporter,
    )
    return client, exporter, [CallbackHandler(public_key=key)]


def traced_run(
    text: str,
    *,
    pins: Mapping[str, int] | None = None,
    resolver: PromptResolver | None = None,
    llm: LLMEndpoint | None = None,
    keep_errors: bool = False,
) -> TracedRun:
    """`run()` inside a root SPAN, as the evaluator calls it, with its own Langfuse client.

    With `keep_errors`, an exception from `run()` is returned with the spans instead of raised.
    """
    client, exporter, handlers = memory_client()
    request = TargetRequest(
        input=text,
        scenario_id="demo-test",
        run_id="run-demo-test",
        langfuse=client,
        callback_factory=lambda: handlers,
        prompts=resolver or PromptResolver(PROMPTS, pins),
        llm=llm,
    )
    answer, error = "", None
    try:
        with client.start_as_current_observation(name="scenario", as_type="span"):
            answer = run(request)
    except Exception as exc:
        if not keep_errors:
            raise
        error = exc
    finally:
        client.flush()
        client.shutdown()
    spans = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time or 0)
    return TracedRun(answer=answer, spans=spans, error=error)
