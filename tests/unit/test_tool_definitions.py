"""Tool definitions where each framework records them, and the tool_schemas file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.errors import InputError
from evaluator.trace import Observation
from evaluator.trace.tool_definitions import ToolDefinition, load_tool_schemas, recorded_definitions

PARAMETERS = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
OPENAI = {"type": "function", "function": {"name": "add", "description": "Add.", "parameters": PARAMETERS}}
ADD = ToolDefinition(name="add", description="Add.", parameters=PARAMETERS)


def _obs(type_: str, **fields: object) -> Observation:
    return Observation(id="o", parent_id=None, type=type_, name=str(fields.pop("name", "x")), **fields)  # type: ignore[arg-type]


def test_pydantic_ais_gen_ai_tool_definitions_on_the_model_span() -> None:
    flat = [{"type": "function", "name": "add", "description": "Add.", "parameters": PARAMETERS}]
    obs = _obs("GENERATION", attributes={"gen_ai.tool.definitions": json.dumps(flat)})
    assert recorded_definitions(obs) == (ADD,)


def test_openinference_llm_tools_on_the_model_span_and_tool_parameters_on_the_tool_span() -> None:
    model = _obs(
        "GENERATION", attributes={"llm.tools.0.tool.json_schema": json.dumps(OPENAI), "llm.model_name": "m"}
    )
    assert recorded_definitions(model) == (ADD,)
    tool = _obs(
        "TOOL",
        name="add",
        attributes={
            "tool.name": "add",
            "tool.description": "Add.",
            "tool.parameters": json.dumps(PARAMETERS),
        },
    )
    assert recorded_definitions(tool) == (ADD,)


def test_a_generations_tools_input_and_langchains_tool_messages() -> None:
    assert recorded_definitions(_obs("GENERATION", input={"messages": [], "tools": [OPENAI]})) == (ADD,)
    messages = [{"role": "user", "content": "hi"}, {"role": "tool", "content": OPENAI}]
    assert recorded_definitions(_obs("GENERATION", input=messages)) == (ADD,)
    result = [{"role": "tool", "content": "3", "tool_call_id": "c1"}]  # a tool's result, not a definition
    assert recorded_definitions(_obs("GENERATION", input=result)) == ()
    assert recorded_definitions(_obs("GENERATION", input=["text", {"role": "tool", "content": OPENAI}])) == (
        ADD,
    )
    assert recorded_definitions(_obs("GENERATION", input=[{"role": "tool", "content": OPENAI}, "text"])) == ()


def test_other_observations_and_malformed_definitions_record_nothing() -> None:
    assert recorded_definitions(_obs("SPAN", input={"tools": [OPENAI]})) == ()
    bad = json.dumps([{"name": 3}, {"name": "x", "parameters": "no"}, "text"])
    assert recorded_definitions(_obs("GENERATION", attributes={"gen_ai.tool.definitions": bad})) == ()
    assert recorded_definitions(_obs("GENERATION", attributes={"gen_ai.tool.definitions": "{not json"})) == ()


def test_a_tool_schemas_file_of_openai_function_definitions(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([OPENAI]))
    assert load_tool_schemas(path) == {"add": ADD}


@pytest.mark.parametrize(
    ("content", "field", "found"),
    [
        ("{not json", "", "not JSON"),
        ('{"add": {}}', "", "not a list"),
        (
            '[{"type": "function", "function": {"description": "no name"}}]',
            "[0]",
            "not a function definition",
        ),
    ],
)
def test_a_bad_tool_schemas_file_names_the_file_the_entry_and_the_fix(
    tmp_path: Path, content: str, field: str, found: str
) -> None:
    path = tmp_path / "tools.json"
    path.write_text(content)
    with pytest.raises(InputError) as raised:
        load_tool_schemas(path)
    problem = raised.value.problems[0]
    assert (problem.source, problem.field) == (str(path), field)
    assert found in problem.found
    assert "OpenAI function definitions" in problem.fix


def test_a_missing_tool_schemas_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        load_tool_schemas(tmp_path / "absent.json")


def test_older_pydantic_ai_request_parameters_openai_functions_and_anthropic_tools() -> None:
    older = json.dumps(
        {"function_tools": [{"name": "add", "description": "Add.", "parameters_json_schema": PARAMETERS}]}
    )
    assert recorded_definitions(_obs("GENERATION", attributes={"model_request_parameters": older})) == (ADD,)
    functions = {
        "messages": [],
        "functions": [{"name": "add", "description": "Add.", "parameters": PARAMETERS}],
    }
    assert recorded_definitions(_obs("GENERATION", input=functions)) == (ADD,)
    anthropic = {"tools": [{"name": "add", "description": "Add.", "input_schema": PARAMETERS}]}
    assert recorded_definitions(_obs("GENERATION", input=anthropic)) == (ADD,)
