"""pydantic-ai agent delegation (pydantic-ai's multi-agent docs): `joke_selection_agent` calls the
`joke_factory` tool, which runs `joke_generation_agent`; instrumented as Langfuse's docs do it
(`get_client()` and `Agent.instrument_all()` at import), with scripted `FunctionModel`s."""

from __future__ import annotations

from typing import Any

from langfuse import get_client
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

langfuse = get_client()
Agent.instrument_all()


def _generate(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("Why did the chicken cross the road? To get to the other side.")])


def _select(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1].parts[-1]
    if isinstance(last, ToolReturnPart):
        return ModelResponse(parts=[TextPart(f"The best one: {last.content}")])
    return ModelResponse(parts=[ToolCallPart("joke_factory", {"count": 1})])


joke_generation_agent = Agent(FunctionModel(_generate), name="joke_generation_agent", output_type=str)
joke_selection_agent = Agent(
    FunctionModel(_select), name="joke_selection_agent", system_prompt="Use joke_factory, then pick one."
)


@joke_selection_agent.tool
async def joke_factory(ctx: RunContext[None], count: int) -> str:
    result = await joke_generation_agent.run(f"Please generate {count} jokes.", usage=ctx.usage)
    return result.output


def run(request: Any) -> object:
    return joke_selection_agent.run_sync(request.input).output
