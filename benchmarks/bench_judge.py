"""Benchmark: the judge stage against the judge stand-in with a fixed 200 ms latency.

1. Wall time of 200 quality judgements at concurrency 32 (the stage's shape: 32 worker threads, each
   judging one scenario at a time through the one shared `openai` client). Ideal: ceil(200 / 32) x
   200 ms = 1.4 s; goal <= 1.10 x ideal, warmed.
2. The judge stage's own CPU per judgement: process CPU of those 200 judgements minus the CPU of a bare
   loop making the same 200 calls (the same messages, the same client, the same 32 threads); goal
   <= 0.5 ms. Both run in this one process, alternately; the stand-in runs in a separate process so
   its CPU is not counted. Printed as the median of the per-round differences and as the difference
   of each side's least-CPU round (on a shared machine, contention only ever adds CPU).

Everything real runs: prompt rendering, the retry policy and its gate, the tolerant reader and pydantic
validation, the verdict objects, and the judge tracer a run uses on the embedded client (which makes
no spans: nothing would see them; bench_judges.py measures them exported); the verdict cache is off
so that every judgement pays. Prints the figures; asserts nothing.

    .venv/bin/python benchmarks/bench_judge.py [--judgements 200] [--concurrency 32] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import math
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import SecretStr

from evaluator.config import LLMEndpoint
from evaluator.judge import NO_TRACING, Judges, JudgeSettings, OpenAIJudgeModel, sources_block
from evaluator.judge.render import quality_variables
from evaluator.langfuse import JudgeTracing, Tracing
from evaluator.prompts import PromptLibrary
from evaluator.scenarios import Scenario
from evaluator.trace import Observation, Trace, build_trace

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "DIN-SQL with GPT-4 reached 85.3% execution accuracy on the Spider test set. " * 20


def start_standin(latency: float) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "tests.standin.judge_server", "--latency", str(latency)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)  # noqa: S603
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def scenario_and_trace(index: int) -> tuple[Scenario, Trace]:
    scenario = Scenario.model_validate(
        {
            "id": f"bench-{index}",
            "target": "bench",
            "input": f"What is the state of the art in text-to-SQL? ({index})",
            "expected": {"answer": {"criteria": "Names DIN-SQL and its 85.3% execution accuracy."}},
        }
    )
    tool = Observation(id="t", parent_id=None, type="TOOL", name="pdf_retrieval", output=SOURCE)
    return scenario, build_trace(f"trace-{index}", [tool])


def in_stage(work: Callable[[int], object], count: int, concurrency: int) -> float:
    """Run work(0..count-1) on `concurrency` worker threads fed by a queue, as the judge stage does;
    the wall time."""
    todo: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    for index in range(count):
        todo.put(index)
    for _ in range(concurrency):
        todo.put(None)

    def worker() -> None:
        while (index := todo.get()) is not None:
            work(index)

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def measure(work: Callable[[int], object], count: int, concurrency: int) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) of one round."""
    cpu = time.process_time()
    wall = in_stage(work, count, concurrency)
    return wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgements", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-trace", action="store_true", help="judge traces off (NO_TRACING)")
    args = parser.parse_args()
    process, base_url = start_standin(args.latency)
    try:
        run(args, base_url)
    finally:
        process.terminate()
        process.wait(10)


def run(args: argparse.Namespace, base_url: str) -> None:
    count, concurrency = args.judgements, args.concurrency
    model = OpenAIJudgeModel(LLMEndpoint(base_url=base_url, model="bench", api_key=SecretStr("k")))
    prompts = PromptLibrary(ROOT / "prompts")
    tracing = Tracing.embedded()
    settings = JudgeSettings(model="bench", use_cache=False)
    tracer = NO_TRACING if args.no_trace else JudgeTracing(tracing)
    judges = Judges(model=model, prompts=prompts, settings=settings, tracer=tracer)
    cases = [scenario_and_trace(i) for i in range(count)]
    answer = "DIN-SQL reaches 85.3% execution accuracy on Spider [pdf:din-sql]."
    prompt = prompts.get("evaluation/quality")
    fmt = judges.response_format(prompt)
    messages = [
        prompt.compile_messages(
            **quality_variables(
                question=s.input,
                answer=answer,
                criteria=s.expected.answer.criteria or "" if s.expected.answer else "",
                sources=sources_block(t.tools, settings.source_budget_chars),
            )
        )
        for s, t in cases
    ]

    def judged(index: int) -> object:
        scenario, trace = cases[index]
        outcome = judges.judge(scenario, answer, trace, run_id="bench")
        assert outcome.status.status == "scored", outcome.status.reason
        return outcome

    def bare(index: int) -> object:
        return model.complete(
            messages[index], model="bench", temperature=0.0, response_format=fmt, timeout=60
        )

    measure(judged, concurrency, concurrency)  # warm up: connections, imports, the SDK
    measure(bare, concurrency, concurrency)
    stage, loop = [], []
    for _ in range(args.repeat):
        stage.append(measure(judged, count, concurrency))
        loop.append(measure(bare, count, concurrency))
    report(stage, loop, count, concurrency, args.latency)
    tracing.shutdown()
    model.close()


def report(
    stage: list[tuple[float, float]],
    loop: list[tuple[float, float]],
    count: int,
    concurrency: int,
    latency: float,
) -> None:
    ideal = math.ceil(count / concurrency) * latency
    walls = sorted(w for w, _ in stage)
    overhead_ms = [(s_cpu - l_cpu) / count * 1000 for (_, s_cpu), (_, l_cpu) in zip(stage, loop, strict=True)]
    print(
        f"{count} judgements, concurrency {concurrency}, {latency * 1000:.0f} ms per call: "
        f"ideal {ideal:.3f} s"
    )
    print(
        f"  judge stage wall: median {statistics.median(walls):.3f} s "
        f"({statistics.median(walls) / ideal:.2f} x ideal; best {walls[0]:.3f} s, worst {walls[-1]:.3f} s); "
        f"goal <= {1.10 * ideal:.3f} s"
    )
    print(f"  bare loop wall:   median {statistics.median(w for w, _ in loop):.3f} s")
    print(
        f"  CPU per call: judge stage {statistics.median(c for _, c in stage) / count * 1000:.2f} ms, "
        f"bare loop {statistics.median(c for _, c in loop) / count * 1000:.2f} ms"
    )
    least = (min(c for _, c in stage) - min(c for _, c in loop)) / count * 1000
    print(
        f"  judge stage's own CPU per judgement: median of rounds {statistics.median(overhead_ms):.2f} ms "
        f"(rounds: {', '.join(f'{v:.2f}' for v in overhead_ms)}); least-CPU round of each side "
        f"{least:.2f} ms; goal <= 0.5 ms"
    )


if __name__ == "__main__":
    main()
