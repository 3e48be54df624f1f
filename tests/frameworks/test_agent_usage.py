"""Tokens per agent as the Langfuse SDK's integrations record them, captured in-process as a run captures
them (the span's `langfuse.observation.usage_details`): OpenAI's usage object as the `langfuse.openai`
drop-in and LangChain's handler pass it on (`prompt_tokens`, `completion_tokens`, `total_tokens`, the
cached and reasoning counts nested in `*_details`) counts `total_tokens` once per generation; a stream
without `stream_options={"include_usage": True}` reports none: null, never 0."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from evaluator.langfuse import Tracing
from evaluator.metrics.agents import AgentFigures, analyze_agents
from tests.frameworks.agent_capture import load_system
from tests.frameworks.systems.scripted import ScriptedChat, call
from tests.standin.openai_server import openai_standin

OPENAI_USAGE = {  # as ChatOpenAI's `llm_output` has it: 10 input (8 of them cached), 5 output (2 reasoning)
    "prompt_tokens": 10,
    "completion_tokens": 5,
    "total_tokens": 15,
    "prompt_tokens_details": {"cached_tokens": 8, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 2},
}


@pytest.fixture(scope="module")
def tracing() -> Iterator[Tracing]:
    tracing = Tracing.embedded()
    yield tracing
    tracing.shutdown()


def _figures(tracing: Tracing, scenario_id: str, run: Any, agent: str) -> AgentFigures:
    """Run `run()` under a scenario's root, and the agent's figures from the captured spans' detail."""
    trace_id = tracing.trace_id_for("agent-usage", scenario_id)
    with (
        tracing.process_default(),
        tracing.scenario_run(
            trace_id=trace_id, scenario_id=scenario_id, run_id="agent-usage", tags=[], input="q"
        ) as root,
    ):
        run()
    root.end()
    captured = tracing.take(trace_id)
    detail = captured.detail()
    analysis = analyze_agents(captured.trace, detail.observations, usage=detail.usage)
    return analysis.per_agent[agent]


@pytest.mark.parametrize(
    ("options", "tokens"),
    [
        ({}, 2 * 18),  # two completions, each 11 + 7 = 18 (the stand-in's usage)
        ({"stream": True, "stream_options": {"include_usage": True}}, 2 * 18),
        ({"stream": True}, None),  # no usage chunk: nothing reported
    ],
    ids=["completion", "stream-with-usage", "stream-without-usage"],
)
def test_the_langfuse_openai_drop_in_counts_each_completions_total_once(
    tracing: Tracing, options: dict[str, Any], tokens: int | None
) -> None:
    system = load_system(tracing, "tests.frameworks.systems.observe_openai")
    with openai_standin(system.reply) as server:
        client = system.OpenAI(base_url=server.base_url, api_key="standin")
        figures = _figures(
            tracing,
            f"drop-in-{sorted(options)}",
            lambda: system.calculator("Add 2 and 3.", client, options),
            "calculator",
        )
        assert len(server.requests) == 2
    assert (figures.tool_calls, figures.issues) == (1, ())
    assert (figures.tokens, figures.cost) == (tokens, None)  # the drop-in leaves pricing to the server


class OpenAIUsageChat(ScriptedChat):
    """Reports usage as ChatOpenAI's `llm_output["token_usage"]` does (OpenAI's own usage object)."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        generation = ChatGeneration(message=self.script(messages))
        return ChatResult(generations=[generation], llm_output={"token_usage": OPENAI_USAGE})


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _add_then_answer(messages: Sequence[BaseMessage]) -> AIMessage:
    if isinstance(messages[-1], ToolMessage):
        return AIMessage(content="5")
    return call("add", "c1", a=2, b=3)


def test_langchains_handler_with_openais_usage_counts_each_total_once(tracing: Tracing) -> None:
    """Langfuse's handler passes OpenAI's usage on as it came (the server maps it): two model calls of
    15 tokens each, the cached and reasoning counts being parts of them."""
    agent = create_agent(model=OpenAIUsageChat(script=_add_then_answer), tools=[add], name="calculator")
    callbacks = tracing.callbacks()
    figures = _figures(
        tracing,
        "langchain-openai-usage",
        lambda: agent.invoke({"messages": [{"role": "user", "content": "2 + 3"}]}, {"callbacks": callbacks}),
        "calculator",
    )
    assert (figures.tool_calls, figures.issues, figures.tokens) == (1, (), 30)
