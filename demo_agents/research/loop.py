"""The agent loop: a chat model and its tools, turn by turn, until the model answers.

Each model turn runs as a small LangChain sequence, `<agent>-turn`: a pass-through step,
`<agent>-prompt`, carrying the prompt's `generation_metadata`, then the model, run as `<agent>-llm`.
The pass-through step exists because the Langfuse callback handler links a generation to a prompt
version only when `langfuse_prompt` sits on a chain step that shares a parent run with the model;
on the model call itself it is silently dropped. The two steps become CHAIN observations, the model
call a GENERATION: none of them counts as an agent or a tool. Tool calls run outside the sequence,
each a TOOL observation named after its tool, directly below the agent."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool

from evaluator.prompts import ChatMessage, Prompt

MAX_MODEL_TURNS = 6  # the research agent needs at most three: pdf_retrieval, web_search, answer
MODEL_PARAMETERS = ("temperature", "max_tokens")  # prompt `config` keys passed on to the model
TURN_LIMIT_REPLY = "I stopped after {turns} model turns without reaching an answer."

_MESSAGE_TYPES: Mapping[str, type[BaseMessage]] = {
    "system": SystemMessage,
    "user": HumanMessage,
    "assistant": AIMessage,
}


def converse(
    model: BaseChatModel,
    prompt: Prompt,
    variables: Mapping[str, object],
    *,
    agent: str,
    tools: Sequence[BaseTool] = (),
    callbacks: Sequence[Any] = (),
) -> str:
    """The model's final answer to the compiled prompt, after running every tool call it makes.

    Bounded: after MAX_MODEL_TURNS turns that all asked for tools, returns TURN_LIMIT_REPLY.
    """
    messages = to_langchain(prompt.compile_messages(**variables))
    step = model_turn(model, prompt, agent=agent, tools=tools)
    config: RunnableConfig = {"callbacks": list(callbacks), "run_name": f"{agent}-turn"}
    by_name = {tool.name: tool for tool in tools}
    for _ in range(MAX_MODEL_TURNS):
        reply = step.invoke(messages, config=config)
        messages.append(reply)
        if not reply.tool_calls:
            return str(reply.text)
        messages.extend(run_tool(call, by_name, callbacks) for call in reply.tool_calls)
    return TURN_LIMIT_REPLY.format(turns=MAX_MODEL_TURNS)


def to_langchain(messages: Iterable[ChatMessage]) -> list[BaseMessage]:
    return [_MESSAGE_TYPES[m.role](content=m.content) for m in messages]


def model_turn(
    model: BaseChatModel, prompt: Prompt, *, agent: str, tools: Sequence[BaseTool]
) -> Runnable[list[BaseMessage], AIMessage]:
    """One model call as `<agent>-prompt | <agent>-llm` (see the module docstring for why)."""
    parameters = {key: prompt.config[key] for key in MODEL_PARAMETERS if key in prompt.config}
    bound: Runnable[LanguageModelInput, AIMessage] = model.bind_tools(tools) if tools else model
    if parameters:
        bound = bound.bind(**parameters)
    carrier = RunnableLambda(_unchanged, name=f"{agent}-prompt").with_config(
        metadata=prompt.generation_metadata
    )
    return carrier | bound.with_config(run_name=f"{agent}-llm")


def _unchanged(messages: list[BaseMessage]) -> list[BaseMessage]:
    return messages


def run_tool(call: ToolCall, tools: Mapping[str, BaseTool], callbacks: Sequence[Any]) -> ToolMessage:
    """Run one tool call as a TOOL observation; a call to an unknown tool is answered, not run."""
    tool = tools.get(call["name"])
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        return ToolMessage(
            content=f"There is no tool named {call['name']!r}. Tools: {known}.",
            tool_call_id=call["id"] or "",
            name=call["name"],
            status="error",
        )
    result = tool.invoke(call, config={"callbacks": list(callbacks)})
    if not isinstance(result, ToolMessage):  # only when a call lacks an id: not from these models
        result = ToolMessage(content=str(result), tool_call_id=call["id"] or "", name=call["name"])
    return result
