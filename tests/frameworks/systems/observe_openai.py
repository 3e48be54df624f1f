"""Plain Python with Langfuse's `@observe` and its OpenAI drop-in (`from langfuse.openai import OpenAI`),
as Langfuse's docs build it: a `calculator` agent whose model calls `add`, then answers. The client is
the caller's (pointed at a loopback stand-in); `options` go to each completion call (streaming)."""

from __future__ import annotations

import json
from typing import Any

from langfuse import get_client, observe
from langfuse.openai import OpenAI

AGENT_TOOLS = {"calculator": ["add"]}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two integers.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        },
    }
]
langfuse = get_client()


@observe(as_type="tool")
def add(a: int, b: int) -> int:
    return a + b


def _calls(response: Any, streamed: bool) -> list[tuple[str, str]]:
    """The (tool, arguments) the model asked for, from a completion or its stream."""
    if not streamed:
        return [(c.function.name, c.function.arguments) for c in response.choices[0].message.tool_calls or []]
    found: dict[int, list[str]] = {}
    for chunk in response:
        for choice in chunk.choices:
            for call in choice.delta.tool_calls or []:
                name, arguments = found.setdefault(call.index, ["", ""])
                found[call.index] = [
                    name + (call.function.name or ""),
                    arguments + (call.function.arguments or ""),
                ]
    return [(name, arguments) for name, arguments in found.values()]


@observe(as_type="agent")
def calculator(question: str, client: OpenAI, options: dict[str, Any]) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(3):
        response = client.chat.completions.create(
            model="gpt-4o-mini", messages=messages, tools=TOOLS, **options
        )
        calls = _calls(response, bool(options.get("stream")))
        if not calls:
            return "done"
        for index, (name, arguments) in enumerate(calls):
            call = {"id": f"c{index}", "type": "function", "function": {"name": name, "arguments": arguments}}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            messages.append(
                {"role": "tool", "tool_call_id": f"c{index}", "content": str(add(**json.loads(arguments)))}
            )
    return "gave up"


def reply(body: dict[str, Any]) -> dict[str, Any]:
    """The stand-in's model: `add(2, 3)` first, then the answer."""
    if any(m.get("role") == "tool" for m in body["messages"]):
        return {"content": "5"}
    arguments = json.dumps({"a": 2, "b": 3})
    return {
        "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "add", "arguments": arguments}}]
    }
