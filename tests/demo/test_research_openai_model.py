"""The real-model mode against an OpenAI-compatible stand-in on loopback."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatResult
from openai.types.chat import ChatCompletion
from pydantic import SecretStr

from demo_agents.research import OpenAIChatModel
from demo_agents.research.openai_model import chat_result
from evaluator.run import LLMEndpoint
from tests.demo.tracing import traced_run
from tests.standin.openai_server import completion, openai_standin

QUESTION = "What is the state of the art in text-to-SQL on the Spider benchmark?"
SEARCH_CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "pdf_retrieval", "arguments": json.dumps({"query": "DIN-SQL Spider"})},
}


def _research_model(body: dict[str, Any]) -> dict[str, Any]:
    """Routes to research, then searches the PDF library once, then answers from the result."""
    if "tools" not in body:
        return {"content": "research"}
    results = [m for m in body["messages"] if m["role"] == "tool"]
    if not results:
        return {"content": None, "tool_calls": [SEARCH_CALL]}
    return {"content": f"DIN-SQL reached 85.3%. Source: {results[0]['content'].splitlines()[0]}"}


def _endpoint(base_url: str) -> LLMEndpoint:
    return LLMEndpoint(base_url=base_url, model="standin-model", api_key=SecretStr("sk-standin"))


def test_run_drives_the_agents_through_the_endpoint() -> None:
    with openai_standin(_research_model) as server:
        run = traced_run(QUESTION, llm=_endpoint(server.base_url))

    assert run.answer.startswith("DIN-SQL reached 85.3%. Source: [pdf:din-sql] DIN-SQL: Decomposed")
    assert run.named("agent") == ["orchestrator", "research"]
    assert run.named("tool") == ["pdf_retrieval"]
    assert [path for path, _, _ in server.requests] == ["/v1/chat/completions"] * 3
    assert {headers["authorization"] for _, headers, _ in server.requests} == {"Bearer sk-standin"}
    generations = [s for s in run.spans if s.name.endswith("-llm")]
    assert {(s.attributes or {}).get("langfuse.observation.model.name") for s in generations} == {
        "standin-model"
    }


def test_requests_carry_prompt_parameters_tools_and_the_tool_exchange() -> None:
    with openai_standin(_research_model) as server:
        traced_run(QUESTION, llm=_endpoint(server.base_url))
    route, search, answer = server.bodies()

    assert route["model"] == "standin-model" and route["temperature"] == 0  # from the prompt's config
    assert "tools" not in route
    assert [m["role"] for m in route["messages"]] == ["system", "user"]
    assert route["messages"][1]["content"] == QUESTION
    assert [t["function"]["name"] for t in search["tools"]] == ["pdf_retrieval", "web_search"]
    assert [m["role"] for m in answer["messages"]] == ["system", "user", "assistant", "tool"]
    assistant, tool = answer["messages"][2:]
    assert assistant["tool_calls"][0]["id"] == "call_1"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"query": "DIN-SQL Spider"}
    assert tool["tool_call_id"] == "call_1" and tool["content"].startswith("[pdf:din-sql]")


def _completion(message: dict[str, Any]) -> ChatCompletion:
    return ChatCompletion.model_validate(completion(message, model="m-1"))


def _message(result: ChatResult) -> AIMessage:
    message = result.generations[0].message
    assert isinstance(message, AIMessage)
    return message


def test_chat_result_converts_calls_usage_and_model_name() -> None:
    result = chat_result(_completion({"content": None, "tool_calls": [SEARCH_CALL]}))
    message = _message(result)

    assert message.tool_calls == [
        {"name": "pdf_retrieval", "args": {"query": "DIN-SQL Spider"}, "id": "call_1", "type": "tool_call"}
    ]
    assert message.usage_metadata == {
        "input_tokens": 11,
        "output_tokens": 7,
        "total_tokens": 18,
    }
    assert result.llm_output == {"model_name": "m-1"}


@pytest.mark.parametrize(
    ("arguments", "error"),
    [("{not json", "arguments are not JSON"), ("[1, 2]", "arguments are not a JSON object")],
)
def test_unusable_arguments_become_invalid_tool_calls(arguments: str, error: str) -> None:
    call = {**SEARCH_CALL, "function": {"name": "pdf_retrieval", "arguments": arguments}}
    message = _message(chat_result(_completion({"content": "", "tool_calls": [call]})))

    assert message.tool_calls == []
    (invalid,) = message.invalid_tool_calls
    assert invalid["name"] == "pdf_retrieval" and invalid["args"] == arguments
    assert str(invalid["error"]).startswith(error)


def test_custom_tool_calls_are_ignored_and_empty_choices_refused() -> None:
    custom = {"id": "c2", "type": "custom", "custom": {"name": "grep", "input": "x"}}
    message = _message(chat_result(_completion({"content": "ok", "tool_calls": [custom]})))
    assert message.tool_calls == [] and message.text == "ok"

    empty = ChatCompletion.model_validate({**completion({}, model="m"), "choices": []})
    with pytest.raises(ValueError, match="no choices"):
        chat_result(empty)


def test_the_api_key_is_not_in_the_models_repr() -> None:
    model = OpenAIChatModel(model="m", api_key=SecretStr("sk-secret-value"), base_url="http://127.0.0.1:1")
    assert "sk-secret-value" not in repr(model)
    assert "sk-secret-value" not in str(model.model_dump())
