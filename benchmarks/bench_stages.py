"""Benchmark: where the evaluator's CPU per scenario goes, stage by stage, on one thread (no contention).

Each figure is thread CPU (`time.thread_time`) per scenario, median of `--repeat` rounds of `--scenarios`
scenarios whose target returns at once, all measured in this one process:

- sdk root span: what the Langfuse SDK alone costs for the root span every scenario gets (start it with
  the scenario's trace id, propagate the trace attributes, set its output, end it), through the same
  embedded client the evaluator uses; the floor of the target stage;
- target stage: the evaluator's work around one target call (that span, plus the request, the prompt
  resolver, the deadline, the capture), without what follows in the same worker:
- trace + metrics: the captured spans to a Trace, then every metric and the result;
- record: the result and its scores into the SQLite store, in batches of 64 (as the record stage
  commits them under load).

    PYTHONPATH=. python benchmarks/bench_stages.py [--scenarios 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langfuse import propagate_attributes

from evaluator._time import utc_now
from evaluator.langfuse import Tracing
from evaluator.prompts import PromptLibrary
from evaluator.results import RunInfo, scores_for
from evaluator.run import Pipeline, PromptResolver, RunOptions
from evaluator.run.pipeline import _Attempt, _Run
from evaluator.scenarios import LoadedScenario, Scenario
from evaluator.storage import Finished, Store


def per_scenario(work: Callable[[], int]) -> float:
    """Thread CPU of `work()` in µs per scenario (`work` returns how many scenarios it did)."""
    started = time.thread_time()
    done = work()
    return (time.thread_time() - started) / done * 1e6


class Round:
    """One round: `n` scenarios through each stage in turn, on this thread."""

    def __init__(self, tracing: Tracing, pipeline: Pipeline, store: Store, run_id: str, n: int) -> None:
        self.tracing, self.store, self.run_id, self.n = tracing, store, run_id, n
        self.items = [
            LoadedScenario(scenario=Scenario(id=f"s{i}", target="t", input=f"q{i}"), path=Path("<bench>"))
            for i in range(n)
        ]
        self.run = _Run(
            pipeline, self.items, RunOptions(run_id=run_id, concurrency=1), lambda _: None, threading.Event()
        )
        self.ran: list[tuple[_Attempt, Any, float]] = []  # (attempt, output, latency_ms)
        self.done: list[Finished] = []

    def sdk_root_spans(self) -> int:
        for i in range(self.n):
            trace_id = Tracing.trace_id_for(f"sdk-{self.run_id}", f"s{i}")
            with (
                self.tracing.client.start_as_current_observation(
                    name=f"s{i}", as_type="span", input=f"q{i}", trace_context={"trace_id": trace_id},
                    end_on_exit=False,
                ) as span,
                propagate_attributes(
                    trace_name=f"s{i}", session_id=self.run_id, tags=[self.run_id],
                    metadata={"scenario_id": f"s{i}", "run_id": self.run_id},
                ),
            ):  # fmt: skip
                pass
            span.update(output="ok")
            span.end()
        return self.n

    def targets(self) -> int:
        def returned(attempt: _Attempt, output: Any, latency_ms: float) -> None:  # measured next, apart
            self.ran.append((attempt, output, latency_ms))

        self.run._after_target = returned  # type: ignore[method-assign]
        for item in self.items:
            self.run._attempt(
                _Attempt(
                    item=item,
                    trace_id=self.tracing.trace_id_for(self.run_id, item.scenario.id),
                    resolver=PromptResolver(self.run._p._prompts, {}),
                )
            )
        return self.n

    def metrics(self) -> int:
        self.done = [self.run._evaluate(*r)[0] for r in self.ran]
        return len(self.ran)

    def record(self) -> int:
        self.store.start_run(RunInfo(id=self.run_id, name=self.run_id, started_at=utc_now()))
        for start in range(0, len(self.done), 64):
            batch = [
                Finished(d.result, scores_for(d.result, run_id=self.run_id), None, 0)
                for d in self.done[start : start + 64]
            ]
            self.store.record_many(self.run_id, batch, destination=None)
        return len(self.done)

    def measure(self) -> dict[str, float]:
        try:
            return {
                "sdk root span": per_scenario(self.sdk_root_spans),
                "target stage": per_scenario(self.targets),
                "trace + metrics": per_scenario(self.metrics),
                "record": per_scenario(self.record),
            }
        finally:
            self.run._watchdog.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tracing = Tracing.embedded()
    figures: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "bench.db")
        pipeline = Pipeline(
            tracer=tracing, targets={"t": lambda _: "ok"}, prompts=PromptLibrary(Path(folder)), recorder=store
        )
        for index in range(args.repeat + 1):  # the first round warms up and is not counted
            measured = Round(tracing, pipeline, store, f"run-{index}", args.scenarios).measure()
            for name, value in measured.items():
                figures.setdefault(name, []).extend([value] if index else [])
        store.close()
    print(f"stages: thread CPU per scenario on one thread, {args.scenarios} scenarios x {args.repeat} rounds")
    for name, values in figures.items():
        print(
            f"  {name:16} {statistics.median(values):5.0f} µs median  ({min(values):.0f}-{max(values):.0f})"
        )
    total = sum(statistics.median(figures[k]) for k in ("target stage", "trace + metrics", "record"))
    sdk = statistics.median(figures["sdk root span"])
    print(
        f"  evaluator        {total:5.0f} µs per scenario in all, of which the SDK's root span {sdk:.0f} µs"
    )


if __name__ == "__main__":
    main()
