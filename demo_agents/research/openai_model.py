"""The real-model mode: a LangChain chat model over any OpenAI-compatible chat completions endpoint.

A few dozen lines instead of a langchain-openai dependency: the demo needs messages in, tool calls
out, and token usage for the trace, nothing else (no streaming, no structured output).
"""

from __future__ import annotations

import json
from typing import Any, cast

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    InvalidToolCall,
    ToolCall,
    convert_to_openai_messages,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import invalid_tool_call, tool_call
from langchain_core.outputs import ChatGeneration, ChatResult
from openai import OpenAI
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionMessageFunctionToolCall,
    ChatCompletionMessageParam,
)
from openai.types.completion_usage import CompletionUsage
from pydantic import SecretStr

from demo_agents.research.model import ToolBindingChatModel


class OpenAIChatModel(ToolBindingChatModel):
    """Calls `chat.completions.create` with the bound tools and keyword parameters.

    One client per call, closed right after: a demo run makes a handful of calls, and nothing is
    left open when an agent fails half-way. A tool call whose arguments are not a JSON object becomes
    an `invalid_tool_call` on the message (the agent loop does not run it), not an exception.
    """

    model: str
    api_key: SecretStr
    base_url: str | None = None
    timeout: float = 60.0
    max_retries: int = 2

    @property
    def _llm_type(self) -> str:
        return "openai-compatible"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        params: dict[str, Any] = {**kwargs, "stop": stop} if stop else dict(kwargs)
        # LangChain's converter produces exactly the chat completions message format.
        payload = cast("list[ChatCompletionMessageParam]", convert_to_openai_messages(messages))
        with OpenAI(
            api_key=self.api_key.get_secret_value(),
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
        ) as client:
            completion = client.chat.completions.create(model=self.model, messages=payload, **params)
        return chat_result(completion)


def chat_result(completion: ChatCompletion) -> ChatResult:
    """The LangChain view of a completion: content, tool calls, usage and the model's name."""
    if not completion.choices:
        raise ValueError(f"the endpoint returned no choices (completion id {completion.id})")
    choice = completion.choices[0]
    calls: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    for raw in choice.message.tool_calls or ():
        if not isinstance(raw, ChatCompletionMessageFunctionToolCall):
            continue  # custom (free-text) tools: the demo binds none
        name, arguments = raw.function.name, raw.function.arguments
        args = _arguments(arguments)
        if isinstance(args, dict):
            calls.append(tool_call(name=name, args=args, id=raw.id))
        else:
            invalid.append(invalid_tool_call(name=name, args=arguments, id=raw.id, error=args))
    message = AIMessage(
        content=choice.message.content or "",
        tool_calls=calls,
        invalid_tool_calls=invalid,
        usage_metadata=_usage(completion.usage),
        response_metadata={"model_name": completion.model, "finish_reason": choice.finish_reason},
    )
    return ChatResult(
        generations=[ChatGeneration(message=message)], llm_output={"model_name": completion.model}
    )


def _arguments(arguments: str) -> dict[str, Any] | str:
    """A tool call's arguments as a dict, or the reason they are not one."""
    try:
        args = json.loads(arguments) if arguments else {}
    except json.JSONDecodeError as exc:
        return f"arguments are not JSON: {exc}"
    return args if isinstance(args, dict) else "arguments are not a JSON object"


def _usage(usage: CompletionUsage | None) -> UsageMetadata | None:
    if usage is None:
        return None
    return UsageMetadata(
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.completion_tokens,
        total_tokens=usage.total_tokens,
    )
