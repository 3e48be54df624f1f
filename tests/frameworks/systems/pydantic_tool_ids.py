"""pydantic-ai tools whose spans a naive reading would merge or split wrongly, instrumented as Langfuse's
docs do it (`get_client()` and `Agent.instrument_all()` at import).

- `run_testmodel`: the sub-agents tested the way pydantic-ai's "Unit testing" docs test agents, their
  models replaced by `TestModel` (`agent.override(model=TestModel())`), which calls every tool of an
  agent once, with the id `pyd_ai_tool_call_id__<tool>`. The scripted `support_agent` asks billing,
  billing again, then shipping, one call at a time, so `billing_agent` runs twice and `shipping_agent`
  once, each run calling `lookup_order` once under that one id: three calls.
- `run_traced_twice`: a `@agent.tool_plain` whose function is also `@observe(as_type="tool")` (a team
  that traced its functions before adopting the framework): the model calls `count_files` once, and the
  function recurses into two folders: three calls, the first recorded by two nested spans.
"""

from __future__ import annotations

from typing import Any

from langfuse import get_client, observe
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

langfuse = get_client()
Agent.instrument_all()

_ASKS = ["ask_billing", "ask_billing", "ask_shipping"]


def _support(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    answers = [p.content for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    if len(answers) == len(_ASKS):
        return ModelResponse(parts=[TextPart("Order 42: shipped and paid.")])
    return ModelResponse(parts=[ToolCallPart(_ASKS[len(answers)], {"question": "Order 42?"})])


support_agent = Agent(FunctionModel(_support), name="support_agent")
billing_agent = Agent("test", name="billing_agent", instructions="Answer billing questions.")
shipping_agent = Agent("test", name="shipping_agent", instructions="Answer shipping questions.")


def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id}: shipped, paid"


billing_agent.tool_plain(lookup_order)
shipping_agent.tool_plain(lookup_order)


@support_agent.tool
async def ask_billing(ctx: RunContext[None], question: str) -> str:
    return (await billing_agent.run(question, usage=ctx.usage)).output


@support_agent.tool
async def ask_shipping(ctx: RunContext[None], question: str) -> str:
    return (await shipping_agent.run(question, usage=ctx.usage)).output


def run_testmodel(request: Any) -> object:
    with billing_agent.override(model=TestModel()), shipping_agent.override(model=TestModel()):
        return support_agent.run_sync(request.input).output


_FOLDERS = {"/": ["/docs", "/src"], "/docs": [], "/src": []}


def _count(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1].parts[-1]
    if isinstance(last, ToolReturnPart):
        return ModelResponse(parts=[TextPart(f"{last.content} files.")])
    return ModelResponse(parts=[ToolCallPart("count_files", {"folder": "/"})])


files_agent = Agent(FunctionModel(_count), name="files_agent")


@files_agent.tool_plain
@observe(as_type="tool", name="count_files")
def count_files(folder: str) -> int:
    """The number of files in a folder and the folders inside it."""
    return 1 + sum(count_files(inner) for inner in _FOLDERS[folder])


def run_traced_twice(request: Any) -> object:
    return files_agent.run_sync(request.input).output
