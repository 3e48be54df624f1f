"""A single-turn run whose targets declare no per-agent analysis (`agent_tools`, `tool_schemas`), and
that has no dialogues, loads neither the per-agent code nor the dialogue code (issue 22: some 1.1 MB of
its memory). Each run is `run_suite` with its judges asking the judge stand-in, as the benchmark runs
it (benchmarks/bench_judges.py), embedded and connected (the Langfuse stand-in), in a fresh interpreter,
which then lists what of that code it imported. The controls: a run with a dialogue, and one whose
target declares its agents' tools, load what they use, with the same measure. The command line's
`evaluator run` (every command registered, the report modules with them) is measured the same way: its
`main` in a fresh interpreter, on scenario files of a temporary project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from evaluator.judge import AgentJudge
from evaluator.run.judging import AGENT_JUDGE
from tests.integration.conftest import ROOT
from tests.standin.judge_server import JudgeStandIn
from tests.standin.langfuse_server import LangfuseStandIn


def _package(name: str) -> tuple[str, ...]:
    """The package and its modules."""
    folder = ROOT.joinpath(*name.split("."))
    return (name, *(f"{name}.{path.stem}" for path in folder.glob("*.py") if path.stem != "__init__"))


PER_AGENT = ("evaluator.judge.agent_view", "evaluator.judge.agents", *_package("evaluator.metrics.agents"))
DIALOGUE = (*_package("evaluator.metrics.dialogue"), "evaluator.results.dialogue", "evaluator.run.dialogue")
CONFIG = """\
[targets.sync]
entry = "x:sync"
[targets.async]
entry = "x:async_"
[judge]
model = "judge-model"
[prompts]
dir = "{prompts}"
[store]
path = "evaluator.db"
"""
PER_AGENT_CONFIG = """\
agents = ["helper"]
tools = ["lookup"]
agent_tools = {helper = ["lookup"]}
"""
# In the fresh interpreter: argv[1] the case; prints the results' fields, then the watched modules loaded
_RUN = """
import json, sys
from pathlib import Path
from evaluator.run import SuiteOptions, run_suite
from evaluator.scenarios import Scenario

def sync(request):
    return "DIN-SQL reaches 85.3% on Spider."

async def async_(request):
    return "DIN-SQL reaches 85.3% on Spider."

expected = {"answer": {"criteria": "Names DIN-SQL.", "ground_truth": "DIN-SQL"}}
scenarios = [
    Scenario.model_validate({"id": f"s-{t}", "target": t, "input": "Who leads?", "expected": expected})
    for t in ("sync", "async")
]
if sys.argv[1] == "dialogue":
    turns = [{"user": "Who leads?"}, {"user": "By how much?"}]
    scenarios.append(Scenario.model_validate({"id": "d", "target": "sync", "turns": turns}))
suite = run_suite(
    scenarios=scenarios,
    targets={"sync": sync, "async": async_},
    options=SuiteOptions(concurrency=2, judge_concurrency=2, timeout=30),
    config=Path(sys.argv[2]),
)
results = [r.to_json() for r in suite.results]
print(json.dumps([{k: r.get(k) for k in ("kind", "status", "judge_status", "per_agent")} for r in results]))
print(json.dumps(sorted(m for m in json.loads(sys.argv[3]) if m in sys.modules)))
"""

# The command line in the fresh interpreter: argv[1:] the command; the last line of stderr its exit code
# and the watched modules loaded (in WATCHED)
_CLI = """
import json, os, sys
from evaluator.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
else:
    code = 0
loaded = sorted(m for m in json.loads(os.environ["WATCHED"]) if m in sys.modules)
print(json.dumps({"code": code, "loaded": loaded}), file=sys.stderr)
"""
_TARGETS = """
def sync(request):
    return "DIN-SQL reaches 85.3% on Spider."

async def async_(request):
    return "DIN-SQL reaches 85.3% on Spider."
"""
_SCENARIO = """
id: s-{target}
target: {target}
input: Who leads?
expected:
  answer: {{criteria: Names DIN-SQL., ground_truth: DIN-SQL}}
"""
_DIALOGUE = """
id: d
target: sync
turns:
  - user: Who leads?
  - user: By how much?
"""


def _python(
    tmp_path: Path, judge: JudgeStandIn, args: Sequence[str], env: Mapping[str, str]
) -> subprocess.CompletedProcess[str]:
    """`python -c *args` in a fresh interpreter in `tmp_path`: none of the caller's Langfuse, OpenAI or
    evaluator settings, the judge stand-in as the judge's endpoint, and `env` on top."""
    return subprocess.run(
        [sys.executable, "-c", *args],
        cwd=tmp_path,
        env={
            **{
                k: v
                for k, v in os.environ.items()
                if not k.startswith(("LANGFUSE_", "OPENAI_", "EVALUATOR_"))
            },
            "EVALUATOR_JUDGE_BASE_URL": judge.base_url,
            "EVALUATOR_JUDGE_API_KEY": "not-needed",
            "PYTHONPATH": str(ROOT),
            **env,
        },
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.fixture(scope="module")
def judge() -> Iterator[JudgeStandIn]:
    with JudgeStandIn() as standin:
        yield standin


def _run(
    tmp_path: Path, judge: JudgeStandIn, case: str, langfuse: dict[str, str] | None = None
) -> tuple[list[dict[str, object]], list[str]]:
    """The results' kind, status, judge status and per_agent field, and the watched modules loaded."""
    config = CONFIG.format(prompts=ROOT / "prompts")
    if case == "per_agent":
        config = config.replace('entry = "x:sync"\n', 'entry = "x:sync"\n' + PER_AGENT_CONFIG)
    (tmp_path / "evaluator.toml").write_text(config)
    watched = json.dumps(PER_AGENT + DIALOGUE)
    done = _python(tmp_path, judge, [_RUN, case, str(tmp_path / "evaluator.toml"), watched], langfuse or {})
    assert done.returncode == 0, done.stderr
    *_, results, loaded = done.stdout.strip().splitlines()
    return json.loads(results), json.loads(loaded)


@pytest.mark.parametrize("connected", [False, True], ids=["embedded", "connected"])
def test_a_single_turn_run_without_the_per_agent_analysis_loads_neither_that_nor_the_dialogue_code(
    tmp_path: Path, judge: JudgeStandIn, connected: bool, request: pytest.FixtureRequest
) -> None:
    langfuse: dict[str, str] = {}
    if connected:
        standin: LangfuseStandIn = request.getfixturevalue("langfuse_standin")
        public_key, secret_key = standin.new_keys()
        langfuse = {
            "LANGFUSE_PUBLIC_KEY": public_key,
            "LANGFUSE_SECRET_KEY": secret_key,
            "LANGFUSE_BASE_URL": standin.base_url,
        }
    results, loaded = _run(tmp_path, judge, "single", langfuse)
    assert [(r["status"], r["judge_status"]) for r in results] == [
        ("passed", {"status": "scored", "reason": ""})
    ] * 2
    assert not connected or standin.scores  # connected indeed: its scores were delivered
    assert loaded == []


def test_a_dialogue_loads_the_dialogue_code_and_not_the_per_agent_code(
    tmp_path: Path, judge: JudgeStandIn
) -> None:
    results, loaded = _run(tmp_path, judge, "dialogue")
    assert [r["kind"] for r in results] == [None, None, "dialogue"]
    assert loaded == sorted(DIALOGUE)


def test_a_target_declaring_its_agents_tools_loads_the_per_agent_code(
    tmp_path: Path, judge: JudgeStandIn
) -> None:
    results, loaded = _run(tmp_path, judge, "per_agent")
    assert [r["per_agent"] is not None for r in results] == [True, False]  # the sync target's, not async's
    assert loaded == sorted(PER_AGENT)


def test_the_judge_stage_knows_the_per_agent_judges_key() -> None:
    """Without its verdict (under this key) no result's `per_agent` takes the judge's values, so the
    judge stage does not import the per-agent judge to find that out."""
    assert AgentJudge.key == AGENT_JUDGE


def _cli_run(
    tmp_path: Path, judge: JudgeStandIn, *, dialogue: bool
) -> tuple[list[dict[str, object]], list[str]]:
    """`evaluator run` of the project's scenarios (the two single-turn ones, and a dialogue if asked),
    judged by the judge stand-in: the results' id, kind, status and judge status (from its --output),
    and the watched modules loaded."""
    (tmp_path / "evaluator.toml").write_text(CONFIG.format(prompts=ROOT / "prompts"))
    (tmp_path / "x.py").write_text(_TARGETS)
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    for target in ("sync", "async"):
        (scenarios / f"s-{target}.yaml").write_text(_SCENARIO.format(target=target))
    if dialogue:
        (scenarios / "d.yaml").write_text(_DIALOGUE)
    watched = {"WATCHED": json.dumps(PER_AGENT + DIALOGUE)}
    done = _python(tmp_path, judge, [_CLI, "run", "scenarios", "--output", "results.json"], watched)
    *_, last = done.stderr.strip().splitlines()
    found = json.loads(last)
    assert found["code"] in (0, 1), done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    results = json.loads((tmp_path / "results.json").read_text())["results"]
    fields = ("scenario_id", "kind", "status", "judge_status")
    return [{k: r.get(k) for k in fields} for r in results], found["loaded"]


def test_the_command_lines_single_turn_run_loads_neither_the_per_agent_nor_the_dialogue_code(
    tmp_path: Path, judge: JudgeStandIn
) -> None:
    """The report modules every command imports (compare's thresholds, the HTML page's dialogues, the
    runs rebuilt from Langfuse's scores) import that code only where they use it."""
    results, loaded = _cli_run(tmp_path, judge, dialogue=False)
    assert sorted((r["scenario_id"], r["status"]) for r in results) == [
        ("s-async", "passed"),
        ("s-sync", "passed"),
    ]
    assert [r["judge_status"] for r in results] == [{"status": "scored", "reason": ""}] * 2  # judged indeed
    assert loaded == []


def test_the_command_lines_run_of_a_dialogue_loads_the_dialogue_code(
    tmp_path: Path, judge: JudgeStandIn
) -> None:
    results, loaded = _cli_run(tmp_path, judge, dialogue=True)
    assert sorted((r["scenario_id"], r["kind"]) for r in results) == [
        ("d", "dialogue"),
        ("s-async", None),
        ("s-sync", None),
    ]
    assert loaded == sorted(DIALOGUE)
