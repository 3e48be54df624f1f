"""Tracing, embedded: the real SDK's spans, captured in-process, become the normalized trace."""

import base64
import os
import threading
from collections.abc import Iterator

import pytest
from langchain_core.tools import tool

from evaluator.errors import ConfigError
from evaluator.langfuse import LangfuseSettings, Tracing


@tool
def pdf_retrieval(query: str) -> str:
    """Search the papers."""
    return f"papers about {query}"


@pytest.fixture
def tracing() -> Iterator[Tracing]:
    tracing = Tracing.embedded()
    yield tracing
    tracing.shutdown()


def test_spans_become_trace_with_types_nesting_and_trace_attributes(tracing: Tracing) -> None:
    trace_id = tracing.trace_id_for("run-1", "scenario-a")
    client = tracing.client
    with tracing.scenario_run(
        trace_id=trace_id, scenario_id="scenario-a", run_id="run-1", tags=["smoke"], input="q"
    ) as root:
        with client.start_as_current_observation(as_type="agent", name="orchestrator") as orch:
            orch.update(metadata={"flow": "research"})
            with client.start_as_current_observation(as_type="agent", name="research"):
                pdf_retrieval.invoke({"query": "sql"}, config={"callbacks": tracing.callbacks()})
        root.set_output("final answer")
    root.end()
    trace = tracing.take_trace(trace_id)
    assert trace.id == trace_id
    assert trace.name == "scenario-a"
    assert trace.agent_names == ["orchestrator", "research"]
    assert trace.entry_agents == {"orchestrator"}  # the evaluator's root is a SPAN, not an agent
    assert trace.tool_path == ["pdf_retrieval"]
    assert trace.tools[0].agent == "research"
    assert trace.tools[0].output is not None
    assert trace.flow == "research"
    assert trace.output == "final answer"


def test_trace_ids_are_deterministic() -> None:
    assert Tracing.trace_id_for("r", "s") == Tracing.trace_id_for("r", "s")
    assert Tracing.trace_id_for("r", "s") != Tracing.trace_id_for("r", "t")
    assert len(Tracing.trace_id_for("r", "s")) == 32


def test_concurrent_traces_are_kept_apart(tracing: Tracing) -> None:
    names = [f"s{i}" for i in range(8)]
    ids = {name: tracing.trace_id_for("run", name) for name in names}
    barrier = threading.Barrier(len(names))

    def one(name: str) -> None:
        with tracing.scenario_run(
            trace_id=ids[name], scenario_id=name, run_id="run", tags=[], input=""
        ) as root:
            barrier.wait(timeout=10)  # every trace is open at the same time
            with tracing.client.start_as_current_observation(as_type="agent", name=f"agent-{name}"):
                pdf_retrieval.invoke({"query": name}, config={"callbacks": tracing.callbacks()})
            root.end()

    threads = [threading.Thread(target=one, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    for name in names:
        trace = tracing.take_trace(ids[name])
        assert trace.agent_names == [f"agent-{name}"]
        assert trace.tools[0].input == {"query": name}
    assert tracing.take_trace(ids["s0"]).observation_count == 0  # taken once


def test_a_data_uri_stays_as_it_is_in_the_embedded_trace(tracing: Tracing) -> None:
    """Embedded, nothing is uploaded: the SDK's media handling would swap the image for a reference
    to an upload that can never happen (and log a refused connection to the embedded address)."""
    image = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(64)).decode()
    trace_id = tracing.trace_id_for("run-media", "scenario-image")
    with tracing.scenario_run(
        trace_id=trace_id, scenario_id="scenario-image", run_id="run-media", tags=[], input=image
    ) as root:
        root.set_output(image)
    root.end()
    trace = tracing.take_trace(trace_id)
    assert trace.output == image


def test_a_run_started_during_an_embedded_run_is_embedded_too() -> None:
    # An embedded run names its key in LANGFUSE_* while it runs (for clients made without keys); a
    # second run_suite in another thread then must not take that for a Langfuse to connect to.
    with Tracing.embedded().process_default():
        assert os.environ["LANGFUSE_PUBLIC_KEY"] and LangfuseSettings.from_env() is None


def test_a_bad_sdk_setting_stops_an_embedded_tracing_before_the_sdk_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No keys: the SDK still reads LANGFUSE_FLUSH_AT (and the others) for the embedded client.
    monkeypatch.setenv("LANGFUSE_FLUSH_AT", "abc")
    with pytest.raises(ConfigError, match='LANGFUSE_FLUSH_AT="abc" is not a whole number of spans'):
        Tracing.embedded()
