"""The OpenAI Agents SDK's triage example (handoffs to language agents), instrumented as Langfuse's
docs do it: OpenInference's `OpenAIAgentsInstrumentor().instrument()` at import, with `get_client()`.
The model is scripted: a `Model` answering by agent, with the hand-off the triage agent's model calls."""

from __future__ import annotations

from typing import Any

from agents import Agent, Model, ModelResponse, Runner, Usage, trace
from langfuse import get_client
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

langfuse = get_client()
OpenAIAgentsInstrumentor().instrument()


class ScriptedModel(Model):
    """Replies by the agent's instructions: the triage agent hands off by the input's language."""

    def __init__(self, reply: str | None = None) -> None:
        self._reply = reply

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        if self._reply is not None:
            return model_response(reply_message(self._reply))
        text = input if isinstance(input, str) else str(input[0].get("content", ""))
        target = "transfer_to_spanish_agent" if "hola" in text.lower() else "transfer_to_english_agent"
        return model_response(
            ResponseFunctionToolCall(type="function_call", name=target, arguments="{}", call_id="h1")
        )

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the example runs without streaming")


def reply_message(text: str) -> ResponseOutputMessage:
    content = [ResponseOutputText(type="output_text", text=text, annotations=[])]
    return ResponseOutputMessage(
        type="message", id="m1", role="assistant", status="completed", content=content
    )


def model_response(item: Any) -> ModelResponse:
    return ModelResponse(output=[item], usage=Usage(), response_id=None)


spanish_agent = Agent(
    name="Spanish agent", instructions="You only speak Spanish.", model=ScriptedModel("¡Hola! ¿Cómo estás?")
)
english_agent = Agent(
    name="English agent", instructions="You only speak English.", model=ScriptedModel("Hello! How are you?")
)
triage_agent = Agent(
    name="Triage agent",
    instructions="Handoff to the appropriate agent based on the language of the request.",
    handoffs=[spanish_agent, english_agent],
    model=ScriptedModel(),
)


def run(request: Any) -> object:
    return Runner.run_sync(triage_agent, request.input).final_output


# The SDK's "deterministic" agent pattern: the application runs agents one after another, each on the
# last one's output, inside one `trace()`: no agent passes control to another, so none orchestrates.
outline_agent = Agent(
    name="Outline agent", instructions="Outline a story.", model=ScriptedModel("An outline.")
)
story_agent = Agent(name="Story agent", instructions="Write the story.", model=ScriptedModel("A story."))


def run_in_sequence(request: Any) -> object:
    with trace("Deterministic story flow"):
        outline = Runner.run_sync(outline_agent, request.input).final_output
        return Runner.run_sync(story_agent, str(outline)).final_output
