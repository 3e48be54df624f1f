"""The trace the research demo writes through the real Langfuse SDK: types, names, nesting, flow."""

from __future__ import annotations

import json

from evaluator.errors import PromptError
from evaluator.prompts import Prompt
from evaluator.run import PromptResolver
from tests.builders import served
from tests.demo.tracing import PROMPTS, TracedRun, traced_run

PDF_QUESTION = "What is the state of the art in text-to-SQL on the Spider benchmark?"


def _metadata(run: TracedRun, name: str, key: str) -> object:
    raw = (run.one(name).attributes or {}).get(f"langfuse.observation.metadata.{key}")
    return json.loads(str(raw)) if raw is not None else None


def test_research_route_nests_agents_and_tools_below_the_root_span() -> None:
    run = traced_run(PDF_QUESTION)

    assert run.named("agent") == ["orchestrator", "research"]
    assert run.named("tool") == ["pdf_retrieval", "web_search"]  # v1 (production): the flaw
    assert run.parent_name(run.one("orchestrator")) == "scenario"
    assert run.parent_name(run.one("research")) == "orchestrator"
    assert [run.parent_name(run.one(t)) for t in ("pdf_retrieval", "web_search")] == ["research"] * 2
    assert "85.3%" in run.answer


def test_orchestrator_records_its_route_as_flow_metadata() -> None:
    research = traced_run(PDF_QUESTION)
    clarification = traced_run("Tell me about it.")

    assert _metadata(research, "orchestrator", "flow") == "research"
    assert _metadata(clarification, "orchestrator", "flow") == "clarification"
    assert clarification.named("agent") == ["orchestrator", "clarification"]
    assert clarification.named("tool") == []
    assert clarification.answer.endswith("?")


class _BrokenResearchResolver(PromptResolver):
    def get(self, name: str) -> Prompt:
        if name == "agents/research":
            raise PromptError([])
        return super().get(name)


def test_the_route_is_recorded_even_when_the_sub_agent_fails() -> None:
    run = traced_run(PDF_QUESTION, resolver=_BrokenResearchResolver(PROMPTS), keep_errors=True)

    assert isinstance(run.error, PromptError)
    assert _metadata(run, "orchestrator", "flow") == "research"
    assert run.named("agent") == ["orchestrator", "research"]


def test_generations_are_named_after_their_agent_and_nest_below_it() -> None:
    run = traced_run(PDF_QUESTION)
    generations = [
        s for s in run.spans if (s.attributes or {}).get("langfuse.observation.type") == "generation"
    ]

    assert [s.name for s in generations] == ["orchestrator-llm"] + ["research-llm"] * 3
    assert [run.agent_of(s) for s in generations] == ["orchestrator"] + ["research"] * 3
    assert {(s.attributes or {}).get("langfuse.observation.model.name") for s in generations} == {
        "scripted-research-demo"
    }


def test_only_agents_and_tools_are_agent_and_tool_observations() -> None:
    run = traced_run(PDF_QUESTION)
    kinds = {(s.attributes or {}).get("langfuse.observation.type") for s in run.spans}

    assert kinds == {"span", "agent", "chain", "generation", "tool"}
    assert len({s.context.trace_id for s in run.spans if s.context}) == 1


def test_pinning_research_v2_drops_the_needless_web_search() -> None:
    run = traced_run(PDF_QUESTION, pins={"agents/research": 2})

    assert run.named("tool") == ["pdf_retrieval"]
    assert "85.3%" in run.answer


class _ServedResolver(PromptResolver):
    """Hands out prompts as if Langfuse served them: with a prompt client to link generations to."""

    def get(self, name: str) -> Prompt:
        return served(super().get(name))


def test_generations_link_to_the_prompt_version_that_langfuse_served() -> None:
    run = traced_run(PDF_QUESTION, resolver=_ServedResolver(PROMPTS, {"agents/research": 2}))
    links = {
        (
            s.name,
            (s.attributes or {}).get("langfuse.observation.prompt.name"),
            (s.attributes or {}).get("langfuse.observation.prompt.version"),
        )
        for s in run.spans
        if (s.attributes or {}).get("langfuse.observation.type") == "generation"
    }

    assert links == {("orchestrator-llm", "agents/orchestrator", 1), ("research-llm", "agents/research", 2)}
