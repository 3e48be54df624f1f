"""A scripted LangChain chat model: each reply is a function of the conversation so far, so one model
object serves every scenario (a real system builds its model once, at import time)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool

Script = Callable[[Sequence[BaseMessage]], AIMessage]


class ScriptedChat(BaseChatModel):
    script: Script

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        """As a provider's chat model binds them: the tools' definitions travel with each call (the
        script ignores them; Langfuse's handler records them in the generation's input)."""
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.script(messages))])


def question(messages: Sequence[BaseMessage]) -> str:
    return next((str(m.content) for m in messages if isinstance(m, HumanMessage)), "")


def tool_results(messages: Sequence[BaseMessage], tool: str) -> list[str]:
    """The results of one tool's calls since the last human message."""
    results: list[str] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            results = []
        elif isinstance(message, ToolMessage) and message.name == tool:
            results.append(str(message.content))
    return results


def call(name: str, call_id: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])
