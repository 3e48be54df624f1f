"""The per-agent analysis' keys (DESIGN.md, Per-agent analysis): a target's `agent_tools` and
`tool_schemas`, a scenario's `expected.agent_tools`; names the target does not declare are bad input
with the file, the field, a did-you-mean and the fix."""

from pathlib import Path

import pytest

from evaluator.config import load_config
from evaluator.errors import ConfigError, ScenarioError
from evaluator.scenarios import TargetCatalog, load_scenarios

TARGET = """\
[targets.research]
entry = "demo_agents.research:run"
agents = ["orchestrator", "research"]
tools = ["pdf_retrieval", "web_search"]
tool_schemas = "tools.json"

[targets.research.agent_tools]
{agent} = ["{tool}"]
"""
SCENARIO = """\
id: narrowed
target: research
input: "q"
expected:
  agent_tools: {{{agent}: [{tool}]}}
"""
CATALOG = {
    "research": TargetCatalog(agents=("orchestrator", "research"), tools=("pdf_retrieval", "web_search"))
}


def test_a_targets_agent_tools_and_tool_schemas_are_read(tmp_path: Path) -> None:
    (tmp_path / "evaluator.toml").write_text(TARGET.format(agent="research", tool="pdf_retrieval"))
    config = load_config(tmp_path / "evaluator.toml")
    target = config.settings.targets["research"]
    assert target.agent_tools == {"research": ("pdf_retrieval",)}
    assert target.tool_schemas is not None and config.path(target.tool_schemas) == tmp_path / "tools.json"


@pytest.mark.parametrize(
    ("agent", "tool", "said"),
    [
        ("reserch", "pdf_retrieval", 'unknown agent "reserch" (did you mean "research"?)'),
        ("research", "web_serch", 'unknown tool "web_serch" (did you mean "web_search"?)'),
    ],
)
def test_an_undeclared_name_in_agent_tools_is_a_config_error(
    tmp_path: Path, agent: str, tool: str, said: str
) -> None:
    (tmp_path / "evaluator.toml").write_text(TARGET.format(agent=agent, tool=tool))
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "evaluator.toml")
    message = str(info.value)
    assert str(tmp_path / "evaluator.toml") in message and "agent_tools" in message
    assert said in message and "Fix:" in message


def test_a_scenarios_agent_tools_are_read(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(SCENARIO.format(agent="research", tool="pdf_retrieval"))
    [loaded] = load_scenarios([str(tmp_path / "a.yaml")], targets=CATALOG)
    assert loaded.scenario.expected.agent_tools == {"research": ("pdf_retrieval",)}


@pytest.mark.parametrize(
    ("agent", "tool", "said"),
    [
        (
            "reserch",
            "pdf_retrieval",
            'unknown agent "reserch" for target "research" (did you mean "research"?)',
        ),
        (
            "research",
            "web_serch",
            'unknown tool "web_serch" for target "research" (did you mean "web_search"?)',
        ),
    ],
)
def test_an_undeclared_name_in_a_scenarios_agent_tools_is_a_lint_problem(
    tmp_path: Path, agent: str, tool: str, said: str
) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(SCENARIO.format(agent=agent, tool=tool))
    with pytest.raises(ScenarioError) as info:
        load_scenarios([str(path)], targets=CATALOG)
    [problem] = [str(p) for p in info.value.problems]
    assert str(path) in problem and "expected.agent_tools" in problem and said in problem
    assert "use a name the target declares" in problem
