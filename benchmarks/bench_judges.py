"""Benchmark: the evaluator's extra CPU per item with its quality judge on, over a bare asyncio loop.

Each item makes one agent chat call and one judge chat call to a loopback OpenAI-compatible stand-in
(tests/standin/judge_server.py, its own process, `--latency-ms` per reply), at most `--concurrency`
items in flight. Three sides (four with `--langfuse-runner`) run in this one process, `--repeat`
rounds, the order rotated each round (the machine is shared and noisy: each side is compared with the
bare run of its own round):

- bare: `asyncio` + one `AsyncOpenAI` client, a semaphore of `concurrency`; per item the agent call,
  then the judge call with the quality prompt's messages (the same system message and the same user
  message the project sends, filled in with `str.replace`) and its `response_format`, the reply read
  with `json.loads`;
- embedded: `run_suite()` on the same items as scenarios with answer criteria, the target an async
  function making the agent call with `AsyncOpenAI`, the project's own quality judge (its real rubric,
  prompts/evaluation/quality/v1.prompt) through its own client, judge concurrency = concurrency; no
  Langfuse keys: traced in-process, results, scores and verdicts stored in SQLite (the verdict cache
  on, as a user runs it: every item is new, so each verdict is a miss and a write);
- export: the same with LANGFUSE_* pointing at the Langfuse stand-in (tests/standin/langfuse_server.py,
  its own process): the agent's and the judge's spans exported, scores delivered, then everything
  `run_suite()` does after the run. The stand-in keeps connections alive, as Langfuse does
  (`--langfuse-http10`: one request per connection, the stand-in's default for its fault tests, where
  every span batch and score batch opens a new connection);
- langfuse (with `--langfuse-runner`): Langfuse's own `run_experiment` on the same items, the task
  making the agent call and an async evaluator the judge call (the bare side's messages), exporting
  to a second Langfuse stand-in with keys of its own: the issue's reference row, in the same harness.

CPU is this process's `time.process_time()` around each side (the servers' CPU is not counted); the
figure is (CPU of a side - CPU of the bare side of the same round) / items, median over rounds. Peak
RSS is measured per side in a fresh process running that side alone (VmHWM; every such process imports
the same modules, the evaluator included, so the differences are the sides' own). `--profile SIDE`
runs that side once more under cProfile (one profiler per thread, merged) and prints its top entries
per item, by own time and by cumulative time.

    PYTHONPATH=. python benchmarks/bench_judges.py [--items 200] [--concurrency 32] [--latency-ms 100]
        [--repeat 3] [--profile embedded|export] [--langfuse-runner]
    # the issue's second column: --items 1000 --concurrency 64 --latency-ms 50
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import math
import multiprocessing
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, ClassVar

from bench_judge import start_standin
from bench_overhead import CallMeter, Sample, Server, _peak_rss_mb, _serve_langfuse, measure
from openai import AsyncOpenAI

from evaluator.config import Config, JudgeConfig, Settings, StoreConfig
from evaluator.prompts import PromptLibrary
from evaluator.run import SuiteOptions, TargetRequest, run_suite
from evaluator.scenarios import Scenario

ROOT = Path(__file__).resolve().parents[1]
MODEL = "bench"
CRITERIA = "Names DIN-SQL and its 85.3% execution accuracy on Spider."
NO_SOURCES_NOTE = "The agents used no tool output: there are no sources."  # what the project says then
QUALITY_KEYS = {"answer_quality", "factual_correctness", "completeness", "reasoning"}
DIMENSIONS = sorted(QUALITY_KEYS - {"reasoning"})  # the scored ones (Langfuse's runner: one evaluation each)


@dataclass(frozen=True, kw_only=True)
class Setup:
    """What every side shares: the endpoint, the quality prompt as the bare side sends it, the config."""

    scenarios: int  # items per side (bench_overhead.measure reads this name)
    concurrency: int
    chat_url: str
    system: str  # the quality prompt's system message
    user_template: str  # its user message, variables unfilled
    response_format: dict[str, Any]
    config: Config
    langfuse: dict[str, str]  # the LANGFUSE_* variables of the export side
    # ... and of Langfuse's runner (`--langfuse-runner`): a stand-in of its own, with its own keys. The
    # SDK keeps one client core per key per process: with the export side's key, the runner would use
    # the one the evaluator set up (its provider, exporter and batch size), not the SDK's own.
    runner: dict[str, str]
    meter: CallMeter  # bench_overhead.measure reads it; the async calls are not metered (0)


def make_setup(
    args: argparse.Namespace,
    chat_url: str,
    langfuse: dict[str, str],
    folder: str,
    runner: dict[str, str] | None = None,
) -> Setup:
    prompt = PromptLibrary(ROOT / "prompts").get("evaluation/quality")
    system, user = (m.content for m in prompt.messages)
    return Setup(
        scenarios=args.items,
        concurrency=args.concurrency,
        chat_url=chat_url,
        system=system,
        user_template=user,
        response_format={"type": "json_schema", "json_schema": dict(prompt.config["json_schema"])},
        config=Config(
            settings=Settings(
                store=StoreConfig(path=Path(folder) / "bench.db"), judge=JudgeConfig(model=MODEL)
            ),
            base_dir=ROOT,  # prompts/ is the project's own
            source=None,
        ),
        langfuse=langfuse,
        runner=runner or {},
        meter=CallMeter(),
    )


def question(run_id: str, index: int) -> str:
    return f"What is the state of the art in text-to-SQL? ({run_id} q{index})"


# --- bare: asyncio + AsyncOpenAI ----------------------------------------------------------------------


def bare(setup: Setup, run_id: str, items: int) -> None:
    verdicts = asyncio.run(_bare(setup, run_id, items))
    assert len(verdicts) == items and all(set(v) >= QUALITY_KEYS for v in verdicts)


async def _bare(setup: Setup, run_id: str, items: int) -> list[dict[str, Any]]:
    client = AsyncOpenAI(base_url=setup.chat_url, api_key="k", max_retries=0)
    slots = asyncio.Semaphore(setup.concurrency)

    async def item(index: int) -> dict[str, Any]:
        async with slots:
            asked = question(run_id, index)
            agent = await client.chat.completions.create(
                model=MODEL, messages=[{"role": "user", "content": asked}]
            )
            return await judged(client, setup, asked, agent.choices[0].message.content or "")

    try:
        return await asyncio.gather(*(item(i) for i in range(items)))
    finally:
        await client.close()


async def judged(client: AsyncOpenAI, setup: Setup, asked: str, answer: str) -> dict[str, Any]:
    """The judge call as the bare loop (and Langfuse's runner) makes it, its reply read as JSON."""
    user = (
        setup.user_template.replace("{{input}}", asked)
        .replace("{{criteria}}", CRITERIA)
        .replace("{{sources_note}}", NO_SOURCES_NOTE)
        .replace("{{sources}}", "(none)")
        .replace("{{answer}}", answer)
    )
    judge = await client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "system", "content": setup.system}, {"role": "user", "content": user}],
        temperature=0.0,
        max_tokens=600,
        response_format=setup.response_format,  # type: ignore[arg-type]
    )
    verdict: dict[str, Any] = json.loads(judge.choices[0].message.content or "")
    return verdict


# --- the project: run_suite with its quality judge ---------------------------------------------------


class AgentClients:
    """One `AsyncOpenAI` per event loop: each run has its own loop (the pipeline's), and an async
    client's connections belong to the loop that opened them. Kept for the benchmark's life: one
    collected later would close its connections on whatever loop runs then, not on its own."""

    KEPT: ClassVar[list[AsyncOpenAI]] = []

    def __init__(self, chat_url: str) -> None:
        self._url = chat_url
        self._clients: dict[int, AsyncOpenAI] = {}
        self._lock = threading.Lock()

    def get(self) -> AsyncOpenAI:
        loop = id(asyncio.get_running_loop())  # one run, one loop: ids are not reused meanwhile
        with self._lock:
            client = self._clients.get(loop)
            if client is None:
                client = self._clients[loop] = AsyncOpenAI(base_url=self._url, api_key="k", max_retries=0)
                self.KEPT.append(client)
        return client


def _run_suite(setup: Setup, run_id: str, items: int) -> None:
    clients = AgentClients(setup.chat_url)

    async def target(request: TargetRequest) -> str:
        reply = await clients.get().chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": request.input}]
        )
        return reply.choices[0].message.content or ""

    suite = run_suite(
        scenarios=[
            Scenario.model_validate(
                {
                    "id": f"s{i:05d}",
                    "target": "bench",
                    "input": question(run_id, i),
                    "expected": {"answer": {"criteria": CRITERIA}},
                }
            )
            for i in range(items)
        ],
        options=SuiteOptions(
            concurrency=setup.concurrency,
            judge_concurrency=setup.concurrency,
            timeout=60,
            run_name=run_id,
        ),
        targets={"bench": target},
        config=setup.config,
    )
    assert len(suite.results) == items, f"{len(suite.results)} of {items} results"
    statuses = {(r.status, r.judge_status.status, r.judge_status.reason) for r in suite.results}
    assert all(s[0] == "passed" and s[1] == "scored" for s in statuses), statuses
    assert suite.waiting == 0, f"{suite.waiting} scores were not delivered"


def embedded(setup: Setup, run_id: str, items: int) -> None:
    _run_suite(setup, run_id, items)


def export(setup: Setup, run_id: str, items: int) -> None:
    os.environ.update(setup.langfuse)
    try:
        _run_suite(setup, run_id, items)
    finally:
        for name in setup.langfuse:
            del os.environ[name]


# --- Langfuse's own runner (`--langfuse-runner`): run_experiment, the same two calls ----------------------


def langfuse_runner(setup: Setup, run_id: str, items: int) -> None:
    """Langfuse's `run_experiment` on the same items, exporting to its own stand-in: the task makes the
    agent call, an async evaluator the judge call (the bare side's messages), one `Evaluation` per
    quality dimension. The issue's reference row: less work than the project's (no validation, no
    trajectory, no store). Imported here, so that the other sides' processes import what they did."""
    from langfuse import Evaluation, Langfuse

    os.environ.update(setup.runner)
    client = Langfuse()
    agents = AgentClients(setup.chat_url)

    async def task(*, item: dict[str, Any], **_: Any) -> str:
        reply = await agents.get().chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": item["input"]}]
        )
        return reply.choices[0].message.content or ""

    async def quality(*, input: str, output: str, **_: Any) -> list[Any]:
        verdict = await judged(agents.get(), setup, input, output)
        return [Evaluation(name=key, value=float(verdict[key])) for key in DIMENSIONS]

    try:
        result = client.run_experiment(
            name=f"bench-{run_id}",
            data=[{"input": question(run_id, i)} for i in range(items)],
            task=task,
            evaluators=[quality],
            max_concurrency=setup.concurrency,
        )
        client.flush()
    finally:
        for name in setup.runner:
            del os.environ[name]
    evaluated = [r for r in result.item_results if len(r.evaluations) == len(DIMENSIONS)]
    assert len(evaluated) == items, f"{len(evaluated)} of {items} items evaluated"


SIDES: dict[str, Callable[[Setup, str, int], None]] = {"bare": bare, "embedded": embedded, "export": export}
LANGFUSE_RUNNER = "langfuse"  # the side `--langfuse-runner` adds (not in SIDES: not run by default)


def push_prompts(env: dict[str, str]) -> None:
    """`evaluator prompts push` into the Langfuse stand-in, as a connected user has done: the export
    side's judge is then served its prompt by Langfuse (and its generations linked to it)."""
    command = [sys.executable, "-m", "evaluator", "prompts", "push"]
    path = os.environ.get("PYTHONPATH") or str(ROOT)
    pushed = subprocess.run(  # noqa: S603
        command, check=False, env={**os.environ, **env, "PYTHONPATH": path}, capture_output=True, text=True
    )
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr


# --- peak RSS: each side alone in a fresh process ----------------------------------------------------


def _one_side_alone(side: str, args: argparse.Namespace, env: dict[str, Any], conn: Connection) -> None:
    """In a fresh process: one run of `side`; sends back that process's peak RSS in MB."""
    os.environ.update(env["judge"])
    with tempfile.TemporaryDirectory() as folder:
        run = SIDES.get(side, langfuse_runner)
        setup = make_setup(args, env["chat"], env["langfuse"], folder, env["runner"])
        run(setup, f"alone-{side}", args.items)
    conn.send(_peak_rss_mb())


def peak_rss_alone(side: str, args: argparse.Namespace, env: dict[str, Any]) -> float:
    ours, theirs = multiprocessing.get_context("spawn").Pipe()
    process = multiprocessing.get_context("spawn").Process(
        target=_one_side_alone, args=(side, args, env, theirs)
    )
    process.start()
    peak = float(ours.recv()) if ours.poll(900) else float("nan")
    process.join(30)
    return peak


# --- the profile: one cProfile per thread, merged ------------------------------------------------------


class ThreadProfiles:
    """While `on`, every thread that starts runs under a profiler of its own (cProfile follows one
    thread only); the main thread's is enabled by `profile()` itself. Threads still running at the end
    (long-lived ones started before, such as an embedded tracer's exporter) are not counted."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ended: list[cProfile.Profile] = []
        self.on = False
        run = threading.Thread.run

        def profiled_run(thread: threading.Thread) -> None:
            if not self.on:
                run(thread)
                return
            profiler = cProfile.Profile(time.thread_time)
            profiler.enable()
            try:
                run(thread)
            finally:
                profiler.disable()
                with self._lock:
                    self._ended.append(profiler)

        threading.Thread.run = profiled_run  # type: ignore[method-assign]

    def profile(self, work: Callable[[], None]) -> pstats.Stats:
        main = cProfile.Profile(time.thread_time)
        with self._lock:
            self._ended.clear()
        self.on = True
        main.enable()
        try:
            work()
        finally:
            main.disable()
            self.on = False
        stats = pstats.Stats(main)
        with self._lock:
            for profiler in self._ended:
                stats.add(profiler)
        return stats


def print_profile(stats: pstats.Stats, items: int, top: int) -> None:
    for key, label in (("tottime", "own time"), ("cumulative", "cumulative time")):
        out = io.StringIO()
        stats.stream = out  # type: ignore[attr-defined]
        stats.sort_stats(key).print_stats(top)
        print(f"  top {top} by {label} (µs per item: own / cumulative; calls per item):")
        for line in out.getvalue().splitlines():
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[1].replace(".", "").isdigit():
                calls, tottime, cumtime, where = parts[0], float(parts[1]), float(parts[3]), parts[5]
                per_item = int(calls.split("/")[0]) / items
                print(
                    f"    {tottime / items * 1e6:8.1f} {cumtime / items * 1e6:8.1f}  {per_item:6.1f}  {where}"
                )


# --- the run --------------------------------------------------------------------------------------------


def report(args: argparse.Namespace, samples: dict[str, list[Sample]], alone: dict[str, float]) -> None:
    n, latency = args.items, args.latency_ms / 1000
    ideal = math.ceil(n / args.concurrency) * 2 * latency
    print(
        f"judges: {n} items x (1 agent + 1 judge chat call, {args.latency_ms:g} ms each) at concurrency "
        f"{args.concurrency}, {args.repeat} round(s), order rotated; ideal wall {ideal:.2f} s; the Langfuse "
        f"stand-in {'one request per connection' if args.langfuse_http10 else 'keeps connections alive'}"
    )
    for name, runs in samples.items():
        cpu = statistics.median(s.cpu for s in runs) / n * 1000
        wall = statistics.median(s.wall for s in runs)
        extra = ""
        if name != "bare":
            paired = sorted((s.cpu - b.cpu) / n * 1000 for s, b in zip(runs, samples["bare"], strict=True))
            extra = (
                f"  extra {statistics.median(paired):5.2f} ms/item (paired by round; range "
                f"{paired[0]:.2f} to {paired[-1]:.2f})"
            )
        print(
            f"  {name:9} CPU {cpu:5.2f} ms/item{extra}  wall {wall:5.2f} s ({wall / ideal:.2f} x ideal)  "
            f"peak RSS alone {alone.get(name, float('nan')):4.0f} MB"
        )
        groups = {g for s in runs for g in s.threads}
        by_thread = {g: statistics.median(s.threads.get(g, 0.0) for s in runs) / n * 1000 for g in groups}
        ranked = sorted(by_thread.items(), key=lambda item: -item[1])
        print(
            "    by thread (ms/item, medians): "
            + ", ".join(f"{group} {ms:.2f}" for group, ms in ranked if ms >= 0.01)
        )
    print(
        "  goals (issue 22): extra <= 1.5 ms/item embedded, <= 2.0 ms exporting; peak RSS <= 100 MB at\n"
        "  N=1000. On a shared machine the figures move with the load: compare within one run."
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=50, help="items per side before measuring")
    parser.add_argument("--no-rss", action="store_true", help="skip the fresh-process RSS runs")
    parser.add_argument(
        "--langfuse-http10",
        action="store_true",
        help="the Langfuse stand-in answers one request per connection (its default for fault tests) "
        "instead of over keep-alive connections, as Langfuse does",
    )
    parser.add_argument(
        "--langfuse-runner",
        action="store_true",
        help="a fourth side: Langfuse's run_experiment making the same calls (the issue's reference row)",
    )
    parser.add_argument("--profile", choices=("bare", "embedded", "export"), help="then profile this side")
    parser.add_argument("--top", type=int, default=40, help="profile entries printed")
    parser.add_argument("--profile-out", type=Path, help="also save the profile there (pstats)")
    return parser


def start_langfuse(args: argparse.Namespace) -> tuple[Server, dict[str, str]]:
    """A Langfuse stand-in of its own keys, and the LANGFUSE_* variables that reach it."""
    public_key, secret_key = f"pk-lf-{uuid.uuid4().hex}", f"sk-lf-{uuid.uuid4().hex}"
    server = Server.start(_serve_langfuse, public_key, secret_key, not args.langfuse_http10)
    keys = {"LANGFUSE_PUBLIC_KEY": public_key, "LANGFUSE_SECRET_KEY": secret_key}
    return server, {**keys, "LANGFUSE_BASE_URL": server.url}


def rounds(
    sides: dict[str, Callable[[Setup, str, int], None]], setup: Setup, args: argparse.Namespace
) -> dict[str, list[Sample]]:
    """Each side warmed up, then `--repeat` rounds of all of them, the order rotated each round."""
    samples: dict[str, list[Sample]] = {name: [] for name in sides}
    names = list(sides)
    for name, side in sides.items():
        side(setup, f"warmup-{name}", args.warmup)
    for attempt in range(args.repeat):
        for name in names[attempt % len(names) :] + names[: attempt % len(names)]:
            samples[name].append(measure(sides[name], setup, f"{name}-{attempt}"))
    return samples


def main() -> None:
    args = _parser().parse_args()
    for name in [n for n in os.environ if n.startswith(("LANGFUSE_", "OPENAI_", "EVALUATOR_"))]:
        del os.environ[name]  # the embedded side must be embedded, and the judge's endpoint ours
    profiles = ThreadProfiles() if args.profile else None
    chat, chat_url = start_standin(args.latency_ms / 1000)
    langfuse, env = start_langfuse(args)
    judge_env = {"EVALUATOR_JUDGE_BASE_URL": chat_url, "EVALUATOR_JUDGE_API_KEY": "k"}
    os.environ.update(judge_env)
    push_prompts(env)
    servers = [langfuse]
    sides, runner_env = dict(SIDES), {}
    if args.langfuse_runner:
        runner, runner_env = start_langfuse(args)
        servers.append(runner)
        sides[LANGFUSE_RUNNER] = langfuse_runner
    try:
        with tempfile.TemporaryDirectory() as folder:
            setup = make_setup(args, chat_url, env, folder, runner_env)
            samples = rounds(sides, setup, args)
            if profiles is not None:
                stats = profiles.profile(lambda: SIDES[args.profile](setup, "profiled", args.items))
        every = {"chat": chat_url, "langfuse": env, "judge": judge_env, "runner": runner_env}
        alone = {} if args.no_rss else {name: peak_rss_alone(name, args, every) for name in sides}
    finally:
        for server in servers:
            server.conn.send("stop")
            server.stop()
        chat.terminate()
        chat.wait(10)
    if args.repeat:
        report(args, samples, alone)
    if profiles is not None:
        if args.profile_out is not None:
            stats.dump_stats(args.profile_out)
        print(f"profile of one {args.profile} run of {args.items} items (all threads that ended):")
        print_profile(stats, args.items, args.top)


if __name__ == "__main__":
    main()
