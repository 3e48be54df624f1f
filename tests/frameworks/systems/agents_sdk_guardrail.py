"""The OpenAI Agents SDK's input guardrail example (its "Guardrails" docs): a `math_guardrail` runs a
`Guardrail check` agent on the input before the `Customer support agent` (a triage agent) hands the
question to the `Billing agent`; math homework trips the guardrail and the run stops. Instrumented as
Langfuse's docs do it (OpenInference's instrumentor at import, `get_client()`), with scripted models."""

from __future__ import annotations

from typing import Any

from agents import (
    Agent,
    GuardrailFunctionOutput,
    InputGuardrailTripwireTriggered,
    ModelResponse,
    RunContextWrapper,
    Runner,
    TResponseInputItem,
    Usage,
    input_guardrail,
)
from langfuse import get_client
from openai.types.responses import ResponseFunctionToolCall
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from pydantic import BaseModel

from tests.frameworks.systems.agents_sdk import ScriptedModel

langfuse = get_client()
OpenAIAgentsInstrumentor().instrument()


class MathHomeworkOutput(BaseModel):
    is_math_homework: bool
    reasoning: str


class _GuardrailModel(ScriptedModel):
    """Says whether the input asks for math homework (its reply is the output type's JSON)."""

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
        text = input if isinstance(input, str) else str(input[0].get("content", ""))
        verdict = MathHomeworkOutput(is_math_homework="solve" in text.lower(), reasoning="read the input")
        self._reply = verdict.model_dump_json()
        return await super().get_response(system_instructions, input, *args, **kwargs)


guardrail_agent = Agent(
    name="Guardrail check",
    instructions="Check if the user is asking you to do their math homework.",
    output_type=MathHomeworkOutput,
    model=_GuardrailModel(),
)


@input_guardrail(run_in_parallel=False)  # blocking: a tripped guardrail stops the run before the agent
async def math_guardrail(
    ctx: RunContextWrapper[None], agent: Agent, input: str | list[TResponseInputItem]
) -> GuardrailFunctionOutput:
    result = await Runner.run(guardrail_agent, input, context=ctx.context)
    return GuardrailFunctionOutput(
        output_info=result.final_output, tripwire_triggered=result.final_output.is_math_homework
    )


class _TriageModel(ScriptedModel):
    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        call = ResponseFunctionToolCall(
            type="function_call", name="transfer_to_billing_agent", arguments="{}", call_id="h1"
        )
        return ModelResponse(output=[call], usage=Usage(), response_id=None)


billing_agent = Agent(
    name="Billing agent",
    instructions="You answer billing questions.",
    model=ScriptedModel("It ships tomorrow."),
)
support_agent = Agent(
    name="Customer support agent",
    instructions="You are a customer support agent. Hand billing questions to the billing agent.",
    handoffs=[billing_agent],
    input_guardrails=[math_guardrail],
    model=_TriageModel(),
)


def run(request: Any) -> object:
    try:
        return Runner.run_sync(support_agent, request.input).final_output
    except InputGuardrailTripwireTriggered:
        return "Sorry, I cannot help with math homework."
