"""The scripted model's rules (the table in its docstring), per prompt version, and the prompt files."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import tool_call
from langchain_core.outputs import ChatGeneration, ChatResult

from demo_agents.research.agents import route_from_reply
from demo_agents.research.loop import MAX_MODEL_TURNS, TURN_LIMIT_REPLY, converse, run_tool
from demo_agents.research.model import (
    ALWAYS_WEB_RULE,
    CLARIFY_RULE,
    NO_INSTRUCTIONS_REPLY,
    NOTHING_FOUND_REPLY,
    PDF_RULE,
    ROUTE_RULE,
    WEB_IF_NEEDED_RULE,
    Conversation,
    ScriptedChatModel,
    compose_answer,
)
from demo_agents.research.text import normalize_space
from demo_agents.research.tools import RESEARCH_TOOLS, library_summary, pdf_retrieval, web_search
from evaluator.prompts import Prompt
from tests.demo.tracing import PROMPTS

PAPERS = "What is the state of the art in text-to-SQL on the Spider benchmark?"
NEWS = "What's the latest news on text-to-SQL leaderboards?"
BOTH = "How does DIN-SQL's Spider accuracy compare with the latest leaderboard news?"
UNCOVERED = "What is the Model Context Protocol?"


class ToolRecorder(BaseCallbackHandler):
    """Names of the tools run, in order: the agent's tool path without a tracing backend."""

    def __init__(self) -> None:
        self.tools: list[str] = []

    def on_tool_start(self, serialized: dict[str, Any], input_str: str, **kwargs: Any) -> None:
        self.tools.append(serialized["name"])


def _research(
    question: str, prompt: Prompt, tools: tuple[Any, ...] = RESEARCH_TOOLS
) -> tuple[str, list[str]]:
    recorder = ToolRecorder()
    variables = {"question": question, "library": library_summary()}
    answer = converse(
        ScriptedChatModel(), prompt, variables, agent="research", tools=tools, callbacks=[recorder]
    )
    return answer, recorder.tools


def _system_text(name: str, version: int) -> str:
    prompt = PROMPTS.get(name, version=version)
    return normalize_space(" ".join(m.content for m in prompt.messages if m.role == "system"))


def test_prompt_files_carry_the_sentences_the_scripted_model_recognises() -> None:
    v1, v2 = _system_text("agents/research", 1), _system_text("agents/research", 2)

    assert ROUTE_RULE in _system_text("agents/orchestrator", 1)
    assert CLARIFY_RULE in _system_text("agents/clarification", 1)
    assert PDF_RULE in v1 and ALWAYS_WEB_RULE in v1 and WEB_IF_NEEDED_RULE not in v1
    assert PDF_RULE in v2 and WEB_IF_NEEDED_RULE in v2 and ALWAYS_WEB_RULE not in v2


def test_production_is_research_v1_and_v2_is_the_candidate() -> None:
    assert PROMPTS.get("agents/research").version == 1
    assert PROMPTS.get("agents/research", label="candidate").version == 2


@pytest.mark.parametrize(
    ("request_text", "route"),
    [
        ("Tell me about it.", "clarification"),
        ("Can you help?", "clarification"),
        ("Tell me more.", "clarification"),
        ("What is RAG?", "research"),
        (PAPERS, "research"),
        # The documented blind spot: enough words, but no topic.
        ("Can you help me find some good papers for my project?", "research"),
    ],
)
def test_orchestrator_routes_requests_without_content_words_to_clarification(
    request_text: str, route: str
) -> None:
    reply = converse(
        ScriptedChatModel(), PROMPTS.get("agents/orchestrator"), {"request": request_text}, agent="o"
    )
    assert reply == route
    assert route_from_reply(reply) == route


def test_route_from_a_real_models_sentence() -> None:
    assert route_from_reply("This should go to Clarification.") == "clarification"
    assert route_from_reply("research") == "research"
    assert route_from_reply("I am not sure.") == "research"


def test_clarification_asks_one_question_that_quotes_the_request() -> None:
    reply = converse(
        ScriptedChatModel(), PROMPTS.get("agents/clarification"), {"request": "Can you help?"}, agent="c"
    )
    assert reply.count("?") == 1 and reply.endswith("?")
    assert '"Can you help"' in reply


@pytest.mark.parametrize(
    ("question", "v1_tools", "v2_tools"),
    [
        (PAPERS, ["pdf_retrieval", "web_search"], ["pdf_retrieval"]),  # the v1 flaw
        (NEWS, ["web_search"], ["web_search"]),  # news, nothing paper-like: no PDF search
        (BOTH, ["pdf_retrieval", "web_search"], ["pdf_retrieval", "web_search"]),
        (UNCOVERED, ["pdf_retrieval", "web_search"], ["pdf_retrieval", "web_search"]),  # v2: fallback
    ],
)
def test_research_tool_path_per_prompt_version(
    question: str, v1_tools: list[str], v2_tools: list[str]
) -> None:
    assert _research(question, PROMPTS.get("agents/research", version=1))[1] == v1_tools
    assert _research(question, PROMPTS.get("agents/research", version=2))[1] == v2_tools


def test_new_counts_as_news_so_a_new_methods_question_asks_the_papers_too() -> None:
    # "new" is a news word; "approach" a paper word: both sources, in order.
    _, tools = _research(
        "Is there a new approach to evaluating RAG?", PROMPTS.get("agents/research", version=2)
    )
    assert tools == ["pdf_retrieval", "web_search"]


def test_research_answer_cites_every_source_found() -> None:
    answer, _ = _research(PAPERS, PROMPTS.get("agents/research", version=2))

    assert answer.startswith("Here is what the sources say:")
    assert "[pdf:din-sql]" in answer and "85.3%" in answer and "(Pourreza and Rafiei, 2023)" in answer


def test_the_model_calls_only_tools_that_are_bound() -> None:
    _, tools = _research(PAPERS, PROMPTS.get("agents/research", version=1), tools=(pdf_retrieval,))
    assert tools == ["pdf_retrieval"]


def test_a_sentence_wrapped_across_lines_is_still_recognised() -> None:
    wrapped = PDF_RULE.replace(" questions ", "\n    questions ")
    prompt = Prompt(name="agents/research", version=9, type="text", text=f"{wrapped}\n{{{{question}}}}")
    _, tools = _research(PAPERS, prompt)
    assert tools == ["pdf_retrieval"]


def test_without_a_recognised_sentence_the_model_answers_without_tools() -> None:
    prompt = Prompt(name="agents/research", version=9, type="text", text="Be helpful. {{question}}")
    assert _research(PAPERS, prompt) == (NO_INSTRUCTIONS_REPLY, [])


def test_tool_calls_are_real_tool_calls_with_deterministic_ids() -> None:
    model = ScriptedChatModel().bind_tools(RESEARCH_TOOLS)
    messages = [SystemMessage(PDF_RULE), HumanMessage("Which benchmark did Spider introduce?")]

    first = model.invoke(messages)
    assert isinstance(first, AIMessage)
    assert first.tool_calls == [
        {
            "name": "pdf_retrieval",
            "args": {"query": "benchmark spider introduce"},
            "id": "call_0_pdf_retrieval",
            "type": "tool_call",
        }
    ]
    again = model.invoke(messages)
    assert isinstance(again, AIMessage) and again.tool_calls == first.tool_calls


def test_compose_answer_lists_each_source_once_or_says_nothing_was_found() -> None:
    found = pdf_retrieval.invoke({"query": "din sql spider"})
    twice = Conversation(
        system=PDF_RULE,
        request="q",
        results=(("pdf_retrieval", found), ("pdf_retrieval", found)),
        turn=2,
    )
    nothing = Conversation(system=PDF_RULE, request="q", results=(("web_search", "No matching"),), turn=1)

    assert compose_answer(twice).count("[pdf:din-sql]") == 1
    assert compose_answer(nothing) == NOTHING_FOUND_REPLY


def test_tool_messages_feed_the_conversation_view() -> None:
    messages = [
        SystemMessage("a"),
        SystemMessage("b"),
        HumanMessage("first"),
        AIMessage("", tool_calls=[{"name": "web_search", "args": {}, "id": "1"}]),
        ToolMessage("result", tool_call_id="1", name="web_search"),
        HumanMessage("second"),
    ]
    conv = Conversation.of(messages)

    assert (conv.system, conv.request, conv.turn) == ("a b", "second", 1)
    assert conv.called("web_search") and conv.result("web_search") == "result"
    assert not conv.called("pdf_retrieval") and conv.result("pdf_retrieval") == ""


class Repeating(ScriptedChatModel):
    """Asks for web_search on every turn, as a confused real model might."""

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        call = tool_call(name="web_search", args={"query": "x"}, id=f"c{len(messages)}")
        return ChatResult(generations=[ChatGeneration(message=AIMessage("", tool_calls=[call]))])


def test_the_loop_stops_after_its_turn_limit() -> None:
    recorder = ToolRecorder()
    answer = converse(
        Repeating(),
        PROMPTS.get("agents/research"),
        {"question": "q", "library": ""},
        agent="r",
        tools=RESEARCH_TOOLS,
        callbacks=[recorder],
    )
    assert answer == TURN_LIMIT_REPLY.format(turns=MAX_MODEL_TURNS)
    assert recorder.tools == ["web_search"] * MAX_MODEL_TURNS


def test_a_call_to_an_unknown_tool_is_answered_not_run() -> None:
    reply = run_tool(tool_call(name="calculator", args={}, id="c1"), {"web_search": web_search}, ())

    assert reply.status == "error" and reply.tool_call_id == "c1"
    assert reply.content == "There is no tool named 'calculator'. Tools: web_search."
