"""The offline model: `ScriptedChatModel`, and the `bind_tools` both demo models share.

The scripted model exists so that the demo runs without keys and still produces the trace a real
model would: AGENT, GENERATION and TOOL observations of the same shape, driven by real
`AIMessage(tool_calls=...)`. Its behaviour comes from the prompt it is given, never from the scenario,
so changing a prompt version changes what it does, exactly as with a real model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import tool_call
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from demo_agents.research.text import content_words, normalize_space, tokens, word_set
from demo_agents.research.tools import NO_MATCH

# The instruction sentences the scripted model recognises (whitespace-normalised substrings of the
# system prompt). The prompt files in prompts/agents/ contain them verbatim; a test checks that.
ROUTE_RULE = "Reply with exactly one word: research or clarification."
CLARIFY_RULE = "Ask the user exactly one question that would make the request researchable."
PDF_RULE = "Use pdf_retrieval for questions about published papers, methods and benchmarks."
ALWAYS_WEB_RULE = "To be thorough, always also call web_search."
WEB_IF_NEEDED_RULE = "Call web_search only for recent news or releases, or when pdf_retrieval finds nothing."
RESEARCH_RULES = (PDF_RULE, ALWAYS_WEB_RULE, WEB_IF_NEEDED_RULE)

# A question "asks for news" when it has one of these words, and "is about papers" when it has no
# news word or has one of the paper words as well ("compare DIN-SQL with the latest results").
NEWS_WORDS = word_set(
    "latest recent recently news newest new announced announcement release released releases today week month"
)
PAPER_WORDS = word_set(
    "paper papers published study studies benchmark benchmarks accuracy method methods approach "
    "compare compared comparison versus vs"
)

NO_INSTRUCTIONS_REPLY = "I have no instructions I recognise for this conversation."
NOTHING_FOUND_REPLY = "I could not find sources that answer this question."

_SOURCE_HEADER = re.compile(r"^\[((?:pdf|web):[^\]]+)\] (.+)$")
_ToolLike = dict[str, Any] | type | Callable[..., Any] | BaseTool


class ToolBindingChatModel(BaseChatModel):
    """A chat model that receives its tools as OpenAI-format schemas in a `tools` keyword."""

    def bind_tools(
        self,
        tools: Sequence[_ToolLike],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)


class ScriptedChatModel(ToolBindingChatModel):
    """A deterministic chat model that follows the instruction sentences in its system prompt.

    Sentence in the system prompt          What the model does
    -------------------------------------  ----------------------------------------------------------
    ROUTE_RULE (orchestrator v1)           Replies "clarification" when the request has no content
      "Reply with exactly one word:        words (only stop words such as "tell", "me", "about",
      research or clarification."          "it", "can", "you", "help"), else "research".
    CLARIFY_RULE (clarification v1)        Replies with one question that quotes the request and
      "Ask the user exactly one question   suggests topics to name.
      that would make the request
      researchable."
    PDF_RULE (research v1, v2)             Calls pdf_retrieval first, unless the question asks for
      "Use pdf_retrieval for questions     news and names nothing paper-like.
      about published papers, methods
      and benchmarks."
    ALWAYS_WEB_RULE (research v1: the      Then calls web_search, whatever pdf_retrieval found.
    flaw) "To be thorough, always also
      call web_search."
    WEB_IF_NEEDED_RULE (research v2)       Calls web_search only when the question asks for news,
      "Call web_search only for recent     or when pdf_retrieval answered "No matching ...".
      news or releases, or when
      pdf_retrieval finds nothing."
    (none of the above)                    Replies NO_INSTRUCTIONS_REPLY, without tool calls.

    Rules are checked top to bottom and the first that applies decides. Under the research rules
    each turn calls the next wanted tool that is bound and not yet called (one call per turn, with
    `{"query": <the question's content words>}`); when none is left, it answers with one line per
    source found ("- title (cite as): key result [source id]"), or NOTHING_FOUND_REPLY.

    A question asks for news when it contains a word of NEWS_WORDS (so "What is new in RAG
    evaluation?" counts as news), and is about papers when it asks for no news or also contains a
    word of PAPER_WORDS. These are keyword rules with keyword blind spots, on purpose: the
    orchestrator's rule sends a wordy but vague request ("Can you help me find some good papers for
    my project?") to research, and the bundled scenario research-clarify-wordy-request catches it.
    """

    model: str = "scripted-research-demo"

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        bound = {t["function"]["name"] for t in kwargs.get("tools", ())}
        reply = _reply(Conversation.of(messages), bound)
        return ChatResult(generations=[ChatGeneration(message=reply)])


@dataclass(frozen=True, kw_only=True)
class Conversation:
    """What the rules look at: the system prompt, the user's request and the tool results so far."""

    system: str
    request: str
    results: tuple[tuple[str, str], ...]  # (tool name, result text) in call order
    turn: int  # assistant messages so far

    @classmethod
    def of(cls, messages: Sequence[BaseMessage]) -> Conversation:
        def texts(kind: type[BaseMessage]) -> list[str]:
            return [str(m.text) for m in messages if isinstance(m, kind)]

        requests = texts(HumanMessage)
        return cls(
            system=normalize_space(" ".join(texts(SystemMessage))),
            request=requests[-1] if requests else "",
            results=tuple((m.name or "", str(m.text)) for m in messages if isinstance(m, ToolMessage)),
            turn=sum(isinstance(m, AIMessage) for m in messages),
        )

    def called(self, tool: str) -> bool:
        return any(name == tool for name, _ in self.results)

    def result(self, tool: str) -> str:
        return next((text for name, text in reversed(self.results) if name == tool), "")


def _reply(conv: Conversation, bound: set[str]) -> AIMessage:
    if ROUTE_RULE in conv.system:
        return AIMessage(content="clarification" if not content_words(conv.request) else "research")
    if CLARIFY_RULE in conv.system:
        return AIMessage(content=clarifying_question(conv.request))
    if not any(rule in conv.system for rule in RESEARCH_RULES):
        return AIMessage(content=NO_INSTRUCTIONS_REPLY)
    tool = next_tool(conv, bound)
    if tool is None:
        return AIMessage(content=compose_answer(conv))
    query = " ".join(content_words(conv.request)) or conv.request
    call = tool_call(name=tool, args={"query": query}, id=f"call_{conv.turn}_{tool}")
    return AIMessage(content="", tool_calls=[call])


def asks_for_news(question: str) -> bool:
    return not NEWS_WORDS.isdisjoint(tokens(question))


def is_about_papers(question: str) -> bool:
    return not asks_for_news(question) or not PAPER_WORDS.isdisjoint(tokens(question))


def next_tool(conv: Conversation, bound: set[str]) -> str | None:
    """The next tool the research rules want that is bound and not yet called; None to answer."""
    wants_pdf = PDF_RULE in conv.system and is_about_papers(conv.request)
    pdf_found_nothing = conv.result("pdf_retrieval").startswith(NO_MATCH)
    wants_web = ALWAYS_WEB_RULE in conv.system or (
        WEB_IF_NEEDED_RULE in conv.system and (asks_for_news(conv.request) or pdf_found_nothing)
    )
    for tool, wanted in (("pdf_retrieval", wants_pdf), ("web_search", wants_web)):
        if wanted and tool in bound and not conv.called(tool):
            return tool
    return None


def clarifying_question(request: str) -> str:
    quoted = request.strip().rstrip(".?!")
    return (
        f'Your request "{quoted}" does not name a topic I can look up. Which paper, method or '
        "benchmark should I research, for example text-to-SQL or retrieval-augmented generation?"
    )


def compose_answer(conv: Conversation) -> str:
    """One line per distinct source in the tool results, in the order found."""
    lines: dict[str, str] = {}
    for _, text in conv.results:
        for block in text.split("\n\n"):
            header = _SOURCE_HEADER.match(block.split("\n", 1)[0])
            fields = dict(line.split(": ", 1) for line in block.split("\n")[1:] if ": " in line)
            if header and header[1] not in lines:
                cite, key = fields.get("Cite as", ""), fields.get("Key result", "")
                lines[header[1]] = f"- {header[2]} ({cite}): {key} [{header[1]}]"
    if not lines:
        return NOTHING_FOUND_REPLY
    return "Here is what the sources say:\n" + "\n".join(lines.values())
