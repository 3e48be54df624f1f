"""The normalized trace from each source: built observations, Langfuse API bodies, captured spans."""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evaluator.errors import TraceError
from evaluator.trace import (
    Observation,
    Trace,
    build_trace,
    detail_from_file,
    load_trace_file,
    trace_from_langfuse_trace,
    trace_from_observations,
)
from tests.builders import TraceBuilder

LANGFUSE_TRACE = {
    "id": "abc123",
    "name": "research-pdf-only",
    "timestamp": "2026-11-22T10:00:00.000Z",
    "output": "DIN-SQL reaches 85.3% on Spider.",
    "tags": ["research"],
    "observations": [
        # deliberately out of order; one with an unknown extra field
        {
            "id": "t1",
            "traceId": "abc123",
            "type": "TOOL",
            "name": "pdf_retrieval",
            "parentObservationId": "a2",
            "startTime": "2026-11-22T10:00:02.000Z",
            "endTime": "2026-11-22T10:00:02.100Z",
            "input": '{"query": "text-to-SQL"}',
            "output": "hits",
            "level": "DEFAULT",
            "somethingNew": 1,
        },
        {
            "id": "root",
            "traceId": "abc123",
            "type": "SPAN",
            "name": "research-pdf-only",
            "parentObservationId": None,
            "startTime": "2026-11-22T10:00:00.000Z",
            "endTime": "2026-11-22T10:00:03.000Z",
        },
        {
            "id": "a1",
            "traceId": "abc123",
            "type": "AGENT",
            "name": "orchestrator",
            "parentObservationId": "root",
            "startTime": "2026-11-22T10:00:00.500Z",
            "metadata": {"flow": "research"},
        },
        {
            "id": "a2",
            "traceId": "abc123",
            "type": "agent",
            "name": "research",
            "parentObservationId": "a1",
            "startTime": "2026-11-22T10:00:01.000Z",
            "promptName": "agents/research",
            "promptVersion": 2,
        },
        {
            "id": "t2",
            "traceId": "abc123",
            "type": "TOOL",
            "name": "web_search",
            "parentObservationId": "a2",
            "startTime": "2026-11-22T10:00:02.500Z",
            "level": "ERROR",
            "statusMessage": "index unavailable",
        },
    ],
}


def _check_research_trace(trace_id: str, trace_name: str | None, trace: Trace) -> None:
    assert trace.id == trace_id
    assert trace.name == trace_name
    assert trace.agent_names == ["orchestrator", "research"]
    assert trace.entry_agents == {"orchestrator"}
    assert trace.tool_path == ["pdf_retrieval", "web_search"]
    assert trace.tools[0].input == {"query": "text-to-SQL"}
    assert trace.tools[0].agent == "research"
    assert trace.flow == "research"
    assert trace.errors == ("web_search: index unavailable",)
    assert trace.tools[1].error == "index unavailable"
    assert trace.prompts == (("agents/research", 2),)


def test_from_langfuse_trace_body() -> None:
    trace = trace_from_langfuse_trace(LANGFUSE_TRACE)
    _check_research_trace("abc123", "research-pdf-only", trace)
    assert trace.output == "DIN-SQL reaches 85.3% on Spider."
    assert trace.duration_seconds == pytest.approx(3.0)


def test_from_observations_pages_dedupes_by_id_keeping_newest() -> None:
    rows = [dict(o, updatedAt="2026-11-22T10:00:05.000Z") for o in LANGFUSE_TRACE["observations"]]
    stale = dict(rows[0], name="stale_name", updatedAt="2026-11-22T10:00:04.000Z")
    # v2 observations return metadata values as JSON strings
    rows[2] = dict(rows[2], metadata={"flow": '"research"'})
    pages = [{"data": [*rows[:3], stale], "meta": {"cursor": "c1"}}, {"data": [*rows[3:], stale], "meta": {}}]
    trace = trace_from_observations(pages)
    _check_research_trace("abc123", "research-pdf-only", trace)
    assert trace.observation_count == 5


def test_flow_falls_back_to_first_non_entry_agent() -> None:
    builder = TraceBuilder()
    orchestrator = builder.agent("orchestrator")
    builder.agent("clarification", parent=orchestrator)
    assert builder.build().flow == "clarification"


def test_no_agents_no_flow_and_missing_fields_degrade() -> None:
    trace = trace_from_langfuse_trace({"id": "x", "observations": [{"id": "1"}, {"name": "n", "id": "2"}]})
    assert trace.flow is None
    assert trace.agents == ()
    assert trace.observation_count == 2


def test_earliest_flow_metadata_wins() -> None:
    builder = TraceBuilder()
    first = builder.agent("orchestrator", metadata={"flow": "research"})
    builder.agent("research", parent=first, metadata={"flow": "other"})
    assert builder.build().flow == "research"


def test_cycle_in_parent_links_does_not_hang() -> None:
    body = {
        "id": "x",
        "observations": [
            {"id": "a", "type": "AGENT", "name": "a", "parentObservationId": "b"},
            {"id": "b", "type": "SPAN", "name": "b", "parentObservationId": "a"},
        ],
    }
    assert trace_from_langfuse_trace(body).agent_names == ["a"]


def test_load_trace_file_both_shapes_and_errors(tmp_path: Path) -> None:
    trace_file = tmp_path / "trace.json"
    trace_file.write_text(json.dumps(LANGFUSE_TRACE))
    assert load_trace_file(trace_file).tool_path == ["pdf_retrieval", "web_search"]
    page_file = tmp_path / "page.json"
    rows = [{"metadata": None, "output": None, **row} for row in LANGFUSE_TRACE["observations"]]
    page_file.write_text(json.dumps({"data": rows, "meta": {}}))
    assert load_trace_file(page_file).id == "abc123"
    # Saved without `fields=` Langfuse leaves out metadata and io: verdicts would be wrong.
    core = [
        {k: v for k, v in row.items() if k not in ("input", "output", "metadata")}
        for row in LANGFUSE_TRACE["observations"]
    ]
    page_file.write_text(json.dumps({"data": core, "meta": {}}))
    with pytest.raises(TraceError, match=r"no metadata and no output field.*&fields=core,basic,io,metadata"):
        load_trace_file(page_file)
    for empty in ({"data": [], "meta": {}}, {"id": "t1", "observations": []}):
        page_file.write_text(json.dumps(empty))
        with pytest.raises(TraceError, match="holds no observations"):
            load_trace_file(page_file)
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(TraceError, match="not a Langfuse trace"):
        load_trace_file(bad)
    with pytest.raises(TraceError, match="cannot read"):
        load_trace_file(tmp_path / "missing.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(TraceError, match="not JSON"):
        load_trace_file(tmp_path / "broken.json")


def test_tools_with_the_same_start_keep_the_order_they_ended_in() -> None:
    # Langfuse stores milliseconds: two calls made back to back can share a start time.
    rows = [
        {
            "id": "b",
            "type": "TOOL",
            "name": "second",
            "startTime": "2026-11-22T10:00:00.001Z",
            "endTime": "2026-11-22T10:00:00.003Z",
        },
        {
            "id": "a",
            "type": "TOOL",
            "name": "first",
            "startTime": "2026-11-22T10:00:00.001Z",
            "endTime": "2026-11-22T10:00:00.002Z",
        },
    ]
    assert trace_from_observations([{"data": rows}]).tool_path == ["first", "second"]


def _same_millisecond_calls(alpha_end_ms: float) -> tuple[list[Observation], list[dict[str, str]]]:
    """zeta then alpha, started 40 microseconds apart inside millisecond 1 (in-process: nanoseconds,
    as floats), each as captured and as Langfuse stores it (milliseconds)."""
    base = datetime(2026, 11, 22, 10, tzinfo=UTC).timestamp()
    calls = [("z", "zeta", 1.1003, 1.1400), ("a", "alpha", 1.1403, alpha_end_ms)]
    captured = [
        Observation(
            id=i, parent_id=None, type="TOOL", name=n, start_time=base + s / 1000, end_time=base + e / 1000
        )
        for i, n, s, e in calls
    ]
    stored = [
        {"id": i, "type": "TOOL", "name": n, "startTime": f"2026-11-22T10:00:00.{int(s):03d}Z"}
        | {"endTime": f"2026-11-22T10:00:00.{int(e):03d}Z"}
        for i, n, s, e in calls
    ]
    return captured, stored


def test_calls_in_one_millisecond_are_ordered_alike_captured_and_read_back() -> None:
    # Both ended inside millisecond 1: by name, on every side and whatever order the rows come in
    captured, stored = _same_millisecond_calls(alpha_end_ms=1.9)
    assert build_trace("t", captured).tool_path == ["alpha", "zeta"]
    for rows in (stored, stored[::-1]):
        assert trace_from_observations([{"data": rows}]).tool_path == ["alpha", "zeta"]
    # zeta ended before alpha's millisecond ended: the real order, known on both sides
    captured, stored = _same_millisecond_calls(alpha_end_ms=2.3)
    assert build_trace("t", captured).tool_path == ["zeta", "alpha"]
    for rows in (stored, stored[::-1]):
        assert trace_from_observations([{"data": rows}]).tool_path == ["zeta", "alpha"]


def test_runs_of_one_tool_call_id_are_one_call_made_when_the_first_began() -> None:
    # LangGraph: a tool paused at interrupt() runs again from its start on resume, same tool call id
    def run(obs_id: str, start: float, output: object, **ids: str) -> Observation:
        metadata = {"tool_call_id": ids["meta"]} if "meta" in ids else {}
        attributes = {"gen_ai.tool.call.id": ids["attr"]} if "attr" in ids else {}
        return Observation(
            id=obs_id, parent_id=None, type="TOOL", name="book", start_time=start, end_time=start + 0.1,
            output=output, metadata=metadata, attributes=attributes,
        )  # fmt: skip

    paused, lookup, resumed = (
        run("p", 1.0, None, meta="b1"),
        run("l", 2.0, "x"),
        run("r", 3.0, "Booked", meta="b1"),
    )
    other = Observation(id="o", parent_id=None, type="TOOL", name="lookup", start_time=2.0)
    trace = build_trace("t", [paused, other, resumed])
    assert trace.tool_path == ["book", "lookup"]
    assert (trace.tools[0].start_time, trace.tools[0].output, trace.tools[0].end_time) == (1.0, "Booked", 3.1)
    genai = [run("a", 1.0, None, attr="c1"), run("b", 2.0, "ok", attr="c1"), run("c", 3.0, "ok", attr="c2")]
    assert build_trace("t", genai).tool_path == ["book", "book"]  # c2 is another call
    assert build_trace("t", [paused, lookup]).tool_path == ["book", "book"]  # no id: calls of their own


def test_two_agents_calls_that_share_a_tool_call_id_are_two_calls() -> None:
    # pydantic-ai's TestModel names every call of a tool alike: billing's and shipping's are their own
    builder = TraceBuilder()
    for agent in ("billing", "shipping"):
        builder.tool("lookup_order", parent=builder.agent(agent), attributes={"gen_ai.tool.call.id": "same"})
    trace = builder.build()
    assert trace.tool_path == ["lookup_order", "lookup_order"]
    assert [t.agent for t in trace.tools] == ["billing", "shipping"]


def test_a_tool_run_traced_twice_as_the_same_tool_is_one_call() -> None:
    # a framework's tool whose function is also `@observe(as_type="tool", name=...)`: one call
    builder = TraceBuilder()
    agent = builder.agent("weather_agent")
    outer = builder.tool("get_weather", parent=agent, output="sunny")
    builder.tool("get_weather", parent=builder.add("SPAN", "fetch", parent=outer), output="sunny")
    builder.tool("get_weather", parent=agent, output="rain")  # a second call, beside the first
    builder.tool("get_forecast", parent=builder.tool("get_weather", parent=agent))  # another tool inside
    trace = builder.build()
    assert trace.tool_path == ["get_weather", "get_weather", "get_weather", "get_forecast"]
    assert [t.agent for t in trace.tools] == ["weather_agent"] * 4


def test_a_tool_that_calls_itself_twice_is_three_calls_even_when_traced_twice() -> None:
    # `walk` (framework span) > `walk` (its @observe span: the same call) > `walk`, `walk` (recursion)
    builder = TraceBuilder()
    outer = builder.tool("walk", parent=builder.agent("explorer"), attributes={"gen_ai.tool.call.id": "c1"})
    inner = builder.tool("walk", parent=outer)
    builder.tool("walk", parent=inner)
    builder.tool("walk", parent=inner)
    assert builder.build().tool_path == ["walk", "walk", "walk"]
    nested = TraceBuilder()  # two tool spans, one inside the other, that the model called apart
    first = nested.tool("walk", parent=nested.agent("explorer"), attributes={"gen_ai.tool.call.id": "c1"})
    nested.tool("walk", parent=first, attributes={"gen_ai.tool.call.id": "c2"})
    assert nested.build().tool_path == ["walk", "walk"]


def test_one_agents_two_runs_calls_that_share_a_tool_call_id_are_two_calls() -> None:
    # TestModel's fixed ids again, billing run twice; a run that stopped short (interrupt) resumes
    builder = TraceBuilder()
    for _ in range(2):
        builder.tool(
            "lookup_order", parent=builder.agent("billing"), output="paid", metadata={"tool_call_id": "same"}
        )
    assert builder.build().tool_path == ["lookup_order", "lookup_order"]
    resumed = TraceBuilder()
    for output in (None, "Booked"):
        resumed.tool("book", parent=resumed.agent("travel"), output=output, metadata={"tool_call_id": "b1"})
    trace = resumed.build()
    assert (trace.tool_path, trace.tools[0].output) == (["book"], "Booked")


def test_text_outputs_stay_text_and_the_traces_endpoint_dedupes() -> None:
    row = {"id": "r", "type": "SPAN", "name": "root", "output": "42", "updatedAt": "2026-11-22T10:00:01Z"}
    stale = dict(row, name="stale", updatedAt="2026-11-22T10:00:00Z")
    trace = trace_from_langfuse_trace(
        {"id": "t", "observations": [stale, row, {**row, "id": "x", "output": "null"}]}
    )
    assert trace.observation_count == 2
    assert trace.output == "42"  # an answer "42" is text, not the number 42
    assert trace.name == "root"


def test_a_v2_page_with_flattened_attributes_reads_as_the_nested_trace_view() -> None:
    """Langfuse's v2 observations come from the events table, which stores metadata as dotted paths:
    a framework span's attributes arrive as `attributes.<key>` values, not as one object."""

    def row(
        id_: str, parent: str | None, type_: str, name: str, attrs: dict[str, object]
    ) -> dict[str, object]:
        return {
            "id": id_,
            "traceId": "t1",
            "parentObservationId": parent,
            "type": type_,
            "name": name,
            "startTime": f"2026-11-23T10:00:0{id_[-1]}.000Z",
            "output": None,
            "metadata": {"scenario_id": "s", "scope.name": "pydantic-ai", **attrs},
        }

    flat = [
        row(
            "o1",
            None,
            "AGENT",
            "joke run",
            {"attributes.gen_ai.operation.name": "invoke_agent", "attributes.gen_ai.agent.name": "joke"},
        ),
        row(
            "o2",
            "o1",
            "TOOL",
            "lookup",
            {
                "attributes.gen_ai.operation.name": "execute_tool",
                "attributes.gen_ai.tool.name": "lookup",
                "attributes.gen_ai.tool.call.id": 7,
            },
        ),
    ]
    trace = trace_from_observations([{"data": flat}])
    assert trace.convention == "genai+langfuse"
    assert trace.agent_names == ["joke"] and trace.tool_path == ["lookup"]
    assert trace.tools[0].agent == "joke"


def test_the_trace_views_metadata_joins_its_observations_without_the_span_attributes_it_keeps() -> None:
    """The trace view's metadata holds the user's trace metadata (it joins every observation, as in
    the v2 observations) and the OpenTelemetry attributes of the span that set the trace (it does not)."""
    body = {
        "id": "t1",
        "metadata": {
            "flow": "billing",
            "attributes": {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "root"},
            "scope": {"name": "pydantic-ai"},
        },
        "observations": [
            {
                "id": "a",
                "type": "AGENT",
                "name": "joke run",
                "startTime": "2026-11-23T10:00:00.000Z",
                "metadata": {
                    "attributes": {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "joke"}
                },
            },
            {
                "id": "b",
                "parentObservationId": "a",
                "type": "TOOL",
                "name": "lookup",
                "startTime": "2026-11-23T10:00:01.000Z",
                "metadata": {
                    "attributes": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"}
                },
            },
        ],
    }
    trace = trace_from_langfuse_trace(body)
    assert trace.agent_names == ["joke"] and trace.tool_path == ["lookup"]
    assert trace.flow == "billing"


def test_a_page_dumped_with_the_sdks_model_dump_reads_as_the_api_body(tmp_path: Path) -> None:
    # `ObservationsV2Response.model_dump()` keeps the SDK's snake_case field names (and datetimes,
    # saved with json.dumps(..., default=str)); `.json()`, `.dict()` and `model_dump_json()` give the API's.
    def snake(key: str) -> str:
        return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)

    rows = [
        {snake(k): v for k, v in {"metadata": {"run_id": "r1"}, "output": None, **row}.items()}
        for row in LANGFUSE_TRACE["observations"]
    ]
    for row in rows:
        row["start_time"] = str(datetime.fromisoformat(row["start_time"]))
    page_file = tmp_path / "page.json"
    page_file.write_text(json.dumps({"data": rows, "meta": {}}))
    _check_research_trace("abc123", "research-pdf-only", load_trace_file(page_file))
    started = datetime(2026, 11, 22, 10, 0, 2, tzinfo=UTC).timestamp()
    assert load_trace_file(page_file).tools[0].start_time == started
    assert detail_from_file(page_file).observations[0].metadata == {"run_id": "r1"}  # its keys as written


def test_the_web_uis_trace_download_reads_or_is_refused_when_it_left_io_and_metadata_out(
    tmp_path: Path,
) -> None:
    # web/src/features/traces/server/buildTraceExport.ts: {"observations": [...], "scores": [...]},
    # no trace id or output of its own; over 350 observations (and in the older client-side download,
    # always) without input, output and metadata.
    rows = [{"metadata": {}, "output": None, **row} for row in LANGFUSE_TRACE["observations"]]
    download = tmp_path / "trace-abc123.json"
    download.write_text(json.dumps({"observations": rows, "scores": []}))
    _check_research_trace("abc123", "research-pdf-only", load_trace_file(download))
    large = [{k: v for k, v in row.items() if k not in ("input", "output", "metadata")} for row in rows]
    download.write_text(json.dumps({"observations": large, "scores": []}))
    with pytest.raises(TraceError, match=r"no metadata and no output field.*trace download.*&fields="):
        load_trace_file(download)
    legacy = [{**row, "metadata": "{}"} for row in large]
    download.write_text(json.dumps({"trace": {"id": "abc123"}, "observations": legacy}))
    with pytest.raises(TraceError, match=r"no output field"):
        load_trace_file(download)


def test_a_log_view_export_and_otlp_json_are_refused_saying_what_they_are(tmp_path: Path) -> None:
    # useLogViewAllObservationsIO.ts: [{id, type, name: "research (a2)", startTime, endTime, depth, ...}]
    rows = [
        {"id": r["id"], "type": r["type"], "name": f"{r['name']} ({r['id'][:8]})", "depth": 1}
        for r in LANGFUSE_TRACE["observations"]
    ]
    saved = tmp_path / "trace.json"
    saved.write_text(json.dumps(rows))
    with pytest.raises(TraceError, match=r"without parent ids \(the Langfuse log view.*Fix: save the trace"):
        load_trace_file(saved)
    saved.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": []}]}]}))
    with pytest.raises(TraceError, match=r"OpenTelemetry spans \(OTLP JSON\).*&fields="):
        load_trace_file(saved)


def test_a_trace_file_nested_too_deeply_is_bad_input(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(TraceError, match=r"deep.json: not JSON \(maximum recursion depth"):
        load_trace_file(deep)


@pytest.mark.parametrize(
    ("field", "value", "found"),
    [
        ("id", ["x"], r'observation 1: id is \["x"\], where Langfuse writes a string\. Fix: save'),
        (
            "parentObservationId",
            {"a": 1},
            r'observation 1 \(o1\): parentObservationId is \{"a": 1\}, .* \(or null\)',
        ),
        (
            "startTime",
            float("nan"),
            r"observation 1 \(o1\): startTime is NaN, where Langfuse writes a string \(or null\)",
        ),
        ("endTime", True, r"observation 1 \(o1\): endTime is true"),
    ],
)
def test_a_trace_file_with_a_value_langfuse_never_writes_is_bad_input(
    tmp_path: Path, field: str, value: object, found: str
) -> None:
    """An edited or hand-made file's id, parent id or time of the wrong kind: the file, the observation
    and the field named (it was a TypeError or ValueError traceback)."""
    rows = [{"metadata": None, "output": None, **row} for row in LANGFUSE_TRACE["observations"]]
    rows[0] = {**rows[0], "id": "o1", field: value}
    page = tmp_path / "page.json"
    page.write_text(json.dumps({"data": rows, "meta": {}}))
    with pytest.raises(TraceError, match=rf"page.json: {found}"):
        load_trace_file(page)


def test_a_time_that_is_a_number_of_seconds_is_read_and_nan_is_no_time() -> None:
    rows = [{"metadata": None, "output": None, **row} for row in LANGFUSE_TRACE["observations"]]
    rows[0] = {**rows[0], "startTime": 1_700_000_000.5}
    assert trace_from_observations([{"data": rows, "meta": {}}]).tool_path == ["pdf_retrieval", "web_search"]
    rows[0] = {**rows[0], "startTime": float("nan")}  # read from Langfuse, not a file: no time, no crash
    assert trace_from_observations([{"data": rows, "meta": {}}]).tool_path == ["pdf_retrieval", "web_search"]
