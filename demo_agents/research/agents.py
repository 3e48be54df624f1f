"""The research system: an orchestrator that hands each request to a research or a clarification agent.

    orchestrator (AGENT, metadata flow = "research" | "clarification")
    ├── orchestrator-turn: orchestrator-llm (GENERATION) decides the route
    └── research (AGENT)                           or   clarification (AGENT)
        ├── research-turn: research-llm (GENERATION)     └── clarification-turn: clarification-llm
        ├── pdf_retrieval / web_search (TOOL), as the model asks
        └── research-turn: research-llm ... until the model answers

Every agent gets its prompt from `request.prompts` (so `--prompt agents/research=2` pins it) and runs
the same loop (`loop.converse`). The model is the scripted one offline (`request.llm is None`), else a
client for the configured OpenAI-compatible endpoint; the agents do not know which.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from demo_agents.research.loop import converse
from demo_agents.research.model import ScriptedChatModel
from demo_agents.research.openai_model import OpenAIChatModel
from demo_agents.research.tools import RESEARCH_TOOLS, library_summary
from evaluator.run import LLMEndpoint, TargetRequest

RESEARCH = "research"
CLARIFICATION = "clarification"


def run(request: TargetRequest) -> str:
    """Answer one request; the evaluator calls this inside the scenario's root span."""
    return Session(request=request, model=make_model(request.llm)).orchestrate()


def make_model(llm: LLMEndpoint | None) -> BaseChatModel:
    if llm is None:
        return ScriptedChatModel()
    return OpenAIChatModel(model=llm.model, base_url=llm.base_url, api_key=llm.api_key)


def route_from_reply(reply: str) -> str:
    """The orchestrator's decision: clarification only when the model says so, else research.

    Research is the default because a real model may wrap its one word in a sentence, and a wrong
    research route still produces an answer, where a wrong clarification produces only a question.
    """
    return CLARIFICATION if CLARIFICATION in reply.lower() else RESEARCH


@dataclass(frozen=True, kw_only=True)
class Session:
    """One request's run: the injected request and the model every agent shares."""

    request: TargetRequest
    model: BaseChatModel

    def orchestrate(self) -> str:
        with self._agent("orchestrator") as observation:
            route = route_from_reply(self._converse("orchestrator", {"request": self.request.input}))
            # Recorded before the sub-agent runs, so a run that fails there still shows its route.
            observation.update(metadata={"flow": route})
            answer = self.research() if route == RESEARCH else self.clarify()
            observation.update(output=answer)
        return answer

    def research(self) -> str:
        variables = {"question": self.request.input, "library": library_summary()}
        with self._agent(RESEARCH) as observation:
            answer = self._converse(RESEARCH, variables, tools=RESEARCH_TOOLS)
            observation.update(output=answer)
        return answer

    def clarify(self) -> str:
        with self._agent(CLARIFICATION) as observation:
            answer = self._converse(CLARIFICATION, {"request": self.request.input})
            observation.update(output=answer)
        return answer

    def _agent(self, name: str) -> Any:
        """An AGENT observation around the agent's work; everything inside nests below it."""
        return self.request.langfuse.start_as_current_observation(
            as_type="agent", name=name, input=self.request.input
        )

    def _converse(self, agent: str, variables: Mapping[str, object], tools: Sequence[BaseTool] = ()) -> str:
        return converse(
            self.model,
            self.request.prompts.get(f"agents/{agent}"),
            variables,
            agent=agent,
            tools=tools,
            callbacks=self.request.callbacks,
        )
