"""The `single (then)` side of bench_dialogues.py `--then CHECKOUT`: run in a fresh process with
PYTHONPATH=CHECKOUT, so that the single-turn scenarios go through that checkout's evaluator.

It reads the side from stdin as JSON (the scenarios as dicts, the desk's replies by message, the
concurrency, the warm-up count), runs the warm-up scenarios and then all of them through that
checkout's `run_suite()` embedded (no Langfuse keys, no judge), and prints one JSON line: the
`time.process_time()` and wall time around the timed run, and the scores it stored per scenario.

It uses only what both API shapes offer: `run_suite(options=SuiteOptions(...))` where the checkout
has `SuiteOptions`, else the keyword arguments `run_suite` took before it (d83b685, the code the
issue 23 goal names "today"). Imports and the warm-up are outside the timed run, as in-process.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluator.config import Config, Settings, StoreConfig, TargetConfig
from evaluator.run import run_suite
from evaluator.scenarios import Scenario


def desk(by_message: dict[str, dict[str, Any]]) -> Callable[[Any], str]:
    """bench_dialogues' booking desk (its `make_target`), here so that both processes run the same one:
    for the request's message, an agent observation reporting the turn's state, a search tool returning
    names, then the reply."""

    def answer(request: Any) -> str:
        step = by_message[request.input]
        client = request.langfuse
        with client.start_as_current_observation(as_type="agent", name="desk") as agent:
            with client.start_as_current_observation(as_type="tool", name="search") as tool:
                tool.update(output=step["found"])
            agent.update(metadata=step["reported"])
        return str(step["reply"])

    return answer


def run(side: dict[str, Any], folder: Path, scenarios: list[Scenario], run_name: str) -> str:
    config = Config(
        settings=Settings(
            store=StoreConfig(path=folder / "bench.db"),
            targets={"desk": TargetConfig(entry="unused:desk")},
        ),
        base_dir=folder,
        source=None,
    )
    targets = {"desk": desk(side["steps"])}
    try:
        from evaluator.run import SuiteOptions
    except ImportError:
        suite = run_suite(
            scenarios=scenarios,
            targets=targets,
            config=config,
            concurrency=side["concurrency"],
            timeout=60,
            run_name=run_name,
            no_judge=True,
        )
    else:
        options = SuiteOptions(concurrency=side["concurrency"], timeout=60, run_name=run_name, no_judge=True)
        suite = run_suite(scenarios=scenarios, options=options, targets=targets, config=config)
    assert len(suite.results) == len(scenarios)
    assert all(r.status != "error" for r in suite.results), [r.error for r in suite.results if r.error][:3]
    return str(suite.run.id)


def main() -> None:
    side = json.load(sys.stdin)
    scenarios = [Scenario.model_validate(s) for s in side["scenarios"]]
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        run(side, folder, scenarios[: side["warmup"]], "warmup")
        cpu, wall = time.process_time(), time.perf_counter()
        run_id = run(side, folder, scenarios, side["run_name"])
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        with sqlite3.connect(folder / "bench.db") as db:
            [(count,)] = db.execute("SELECT COUNT(*) FROM scores WHERE run_id = ?", (run_id,)).fetchall()
    print(json.dumps({"cpu": cpu, "wall": wall, "scores": count / len(scenarios)}))


if __name__ == "__main__":
    main()
