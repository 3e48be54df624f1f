"""In-process capture: spans turned into observations as Langfuse's server stores them (input and
output, metadata, prompt links)."""

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from evaluator.trace.capture import observation_from_span


def _span(scope: str, attributes: dict[str, object]) -> ReadableSpan:
    return ReadableSpan(name="s", attributes=attributes, instrumentation_scope=InstrumentationScope(scope))


def test_a_framework_spans_input_and_output_come_from_its_attributes_as_the_server_takes_them() -> None:
    def _span(scope: str, attributes: dict[str, object]) -> ReadableSpan:
        return ReadableSpan(
            name="s", attributes=attributes, instrumentation_scope=InstrumentationScope(scope)
        )

    openinference = _span(
        "openinference.instrumentation.openai_agents",
        {"openinference.span.kind": "TOOL", "input.value": '{"city": "Paris"}', "output.value": "Sunny"},
    )
    observed = observation_from_span(openinference)
    assert (observed.input, observed.output) == ({"city": "Paris"}, "Sunny")
    assert "input.value" not in observed.attributes  # lifted out, as the server does
    genai = _span(
        "pydantic-ai",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "t",
            "gen_ai.tool.call.arguments": "{}",
            "gen_ai.tool.call.result": "42",
        },
    )
    assert observation_from_span(genai).output == "42"
    own = _span("langfuse-sdk", {"langfuse.observation.output": '"kept"', "output.value": "not this"})
    assert observation_from_span(own).output == "kept"


def test_a_prompt_version_links_to_generations_only_as_the_server_links_it() -> None:
    prompt = {"langfuse.observation.prompt.name": "agents/research", "langfuse.observation.prompt.version": 2}
    for kind, linked in (("generation", ("agents/research", 2)), ("span", (None, None))):
        attributes = {"langfuse.observation.type": kind, **prompt}  # propagate_attributes(prompt=)
        observed = observation_from_span(_span("langfuse-sdk", attributes))
        assert (observed.prompt_name, observed.prompt_version) == linked


def test_metadata_is_the_observations_then_the_traces_which_wins() -> None:
    attributes = {
        "langfuse.observation.metadata.flow": '"own"',
        "langfuse.observation.metadata.team": '"search"',
        "langfuse.trace.metadata.flow": '"billing"',
        "langfuse.observation.metadata": '{"blob": 1}',
        "ai.telemetry.metadata.userId": "u1",  # the server takes it for the user, not metadata
    }
    assert observation_from_span(_span("langfuse-sdk", attributes)).metadata == {
        "blob": 1,
        "team": "search",
        "flow": "billing",
    }
