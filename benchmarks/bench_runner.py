"""Benchmark: runner overhead for 200 scenarios whose agent sleeps a fixed 100 ms, at concurrency 32.

The ideal wall time is ceil(200 / 32) x 100 ms = 700 ms; the goal is <= 1.10 x that. Everything real
runs: embedded Langfuse tracing, one trace per scenario, validation, the SQLite store written per result.
Prints the figures; asserts nothing.

    .venv/bin/python benchmarks/bench_runner.py [--scenarios 200] [--concurrency 32] [--sleep 0.1]
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from evaluator.langfuse import Tracing
from evaluator.prompts import PromptLibrary
from evaluator.run import Pipeline, RunOptions, TargetRequest
from evaluator.scenarios import LoadedScenario, Scenario
from evaluator.storage import Store


def make_target(sleep: float) -> Callable[[TargetRequest], str]:
    def sleeper(request: TargetRequest) -> str:
        with request.langfuse.start_as_current_observation(as_type="agent", name="sleeper"):
            time.sleep(sleep)
        return "done"

    return sleeper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--sleep", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    items = [
        LoadedScenario(
            scenario=Scenario(id=f"bench-{i:04d}", target="sleeper", input=f"q{i}"), path=Path("bench.yaml")
        )
        for i in range(args.scenarios)
    ]
    ideal = math.ceil(args.scenarios / args.concurrency) * args.sleep
    tracing = Tracing.embedded()
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "bench.db")
        runner = Pipeline(
            tracer=tracing,
            targets={"sleeper": make_target(args.sleep)},
            prompts=PromptLibrary(Path("-")),
            recorder=store,
        )
        walls = []
        for attempt in range(args.repeat):
            options = RunOptions(concurrency=args.concurrency, run_id=f"bench-{attempt}")
            started = time.perf_counter()
            run, results = runner.run(items, options)
            walls.append(time.perf_counter() - started)
            assert len(results) == args.scenarios and not run.interrupted
        store.close()
    tracing.shutdown()
    print(
        f"runner: {args.scenarios} scenarios x {args.sleep * 1000:.0f} ms at concurrency {args.concurrency}"
    )
    print(f"  ideal {ideal * 1000:.0f} ms; goal <= {ideal * 1.1 * 1000:.0f} ms (1.10 x ideal)")
    for wall in walls:
        print(f"  wall {wall * 1000:.0f} ms = {wall / ideal:.3f} x ideal")
    print(f"  best {min(walls) / ideal:.3f} x ideal, median {sorted(walls)[len(walls) // 2] / ideal:.3f} x")


if __name__ == "__main__":
    main()
