"""Benchmark: the evaluator's extra CPU per scenario over a bare thread pool making the same calls.

Each scenario makes the same two chat calls, through one shared sync `openai.OpenAI` client, to a
loopback OpenAI-compatible stand-in that answers after a fixed delay. Five sides run in this one
process, alternating, `--repeat` times (machines are noisy, so they are compared within one run):

- bare: `ThreadPoolExecutor(concurrency)` mapping the two-call function over the scenarios;
- embedded: the same function as a target run through `run_suite()` (the path of `evaluator run`)
  without Langfuse keys: traced, validated, each result and its scores stored in SQLite;
- export: the same with LANGFUSE_* pointing at a loopback Langfuse stand-in: spans exported by the
  SDK, scores delivered while the run goes on, then everything `run_suite()` does after the run;
- sdk span, sdk span+export: bare, plus only the root span every scenario gets (started before the
  calls with the scenario's trace id and trace attributes, its output set after, ended), made through
  the Langfuse SDK alone, on the evaluator's embedded client or on a connected one that exports to
  the stand-in. Their extra is the floor that no change to the evaluator can remove while each
  scenario keeps its span; embedded - sdk span is what the evaluator's own machinery costs.

The servers run in separate processes, so their CPU is not counted: CPU is this process's
`time.process_time()` (user + system, all threads) around each side. The figure of interest is
(CPU of a side - CPU of bare) / scenarios, in ms per scenario; medians are printed. Peak RSS is
`ru_maxrss`, a process-wide high-water mark: it only grows, so a side's figure is the peak of
everything so far, not of that side alone (the current RSS is printed beside it). Each side's CPU
is also split by thread (threads named alike, numbers dropped, summed): where the extra goes.

    PYTHONPATH=. python benchmarks/bench_overhead.py [--scenarios 1000] [--concurrency 64]
        [--latency 0.05] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import resource
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import openai
from langfuse import propagate_attributes

from evaluator.config import Config, Settings, StoreConfig
from evaluator.langfuse import LangfuseSettings, Tracing
from evaluator.run import SuiteOptions, TargetRequest, run_suite
from evaluator.scenarios import Scenario

MODEL = "gpt-4o-mini"
PAGE_SIZE = resource.getpagesize()


# --- the servers, each in a process of its own ------------------------------------------------------


def _serve_openai(latency: float, conn: Connection) -> None:
    """An OpenAI-compatible `POST /v1/chat/completions` answering after `latency` seconds (keep-alive)."""
    body = json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 0,
            "model": MODEL,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        }
    ).encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            time.sleep(latency)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 256  # the listen backlog: 64 clients connect at once

    server = Server(("127.0.0.1", 0), Handler)
    conn.send(f"http://127.0.0.1:{server.server_address[1]}/v1")
    server.serve_forever()


def _serve_langfuse(public_key: str, secret_key: str, keep_alive: bool, conn: Connection) -> None:
    """The loopback Langfuse stand-in (tests/standin) with one key pair; answers `spans` with a count.
    `keep_alive`: over HTTP/1.1 keep-alive connections, as Langfuse serves (else one request per
    connection, the stand-in's default for its fault tests)."""
    from tests.standin.langfuse_server import LangfuseStandIn

    standin = LangfuseStandIn(public_key=public_key, secret_key=secret_key, keep_alive=keep_alive).start()
    conn.send(standin.base_url)
    while (command := conn.recv()) != "stop":
        if command == "spans":
            conn.send(len(standin.spans))
    standin.stop()


@dataclass
class Server:
    process: multiprocessing.process.BaseProcess
    conn: Connection
    url: str

    @classmethod
    def start(cls, target: Callable[..., None], *args: object) -> Server:
        ours, theirs = multiprocessing.get_context("spawn").Pipe()
        process = multiprocessing.get_context("spawn").Process(
            target=target, args=(*args, theirs), daemon=True
        )
        process.start()
        if not ours.poll(60):
            process.terminate()
            raise RuntimeError(f"{target.__name__} did not start within 60 s")
        return cls(process=process, conn=ours, url=str(ours.recv()))

    def stop(self) -> None:
        self.process.terminate()
        self.process.join(5)


# --- the work: two chat calls per scenario --------------------------------------------------------


class CallMeter:
    """Thread CPU spent inside the two calls (the OpenAI client's own work), summed over threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.cpu = 0.0

    def add(self, seconds: float) -> None:
        with self._lock:
            self.cpu += seconds


def make_two_calls(client: openai.OpenAI, meter: CallMeter) -> Callable[[str], str]:
    def two_calls(question: str) -> str:
        started = time.thread_time()
        try:
            return _two_calls(question)
        finally:
            meter.add(time.thread_time() - started)

    def _two_calls(question: str) -> str:
        first = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": question}])
        answer = first.choices[0].message.content or ""
        second = client.chat.completions.create(
            model=MODEL,
            messages=[
                {"role": "user", "content": question},
                {"role": "assistant", "content": answer},
                {"role": "user", "content": "Check the answer."},
            ],
        )
        return second.choices[0].message.content or ""

    return two_calls


@dataclass(frozen=True, kw_only=True)
class Setup:
    scenarios: int
    concurrency: int
    two_calls: Callable[[str], str]
    meter: CallMeter
    config: Config
    langfuse: dict[str, str]  # the LANGFUSE_* variables of the export side


# --- the sides ----------------------------------------------------------------------------------------


def bare(setup: Setup, run_id: str, scenarios: int) -> None:
    with ThreadPoolExecutor(setup.concurrency) as pool:
        answers = list(pool.map(setup.two_calls, (f"{run_id} q{i}" for i in range(scenarios))))
    assert len(answers) == scenarios


def _run_suite(setup: Setup, run_id: str, scenarios: int) -> None:
    """The evaluator's run, as `evaluator run` does it: `run_suite()` with the target as a callable."""

    def target(request: TargetRequest) -> str:
        return setup.two_calls(request.input)

    suite = run_suite(
        scenarios=[
            Scenario(id=f"s{i:05d}", target="bench", input=f"{run_id} q{i}") for i in range(scenarios)
        ],
        options=SuiteOptions(concurrency=setup.concurrency, timeout=60, run_name=run_id),
        targets={"bench": target},
        config=setup.config,
    )
    assert len(suite.results) == scenarios and all(r.status == "passed" for r in suite.results)
    assert suite.waiting == 0, f"{suite.waiting} scores were not delivered"


def embedded(setup: Setup, run_id: str, scenarios: int) -> None:
    _run_suite(setup, run_id, scenarios)


def export(setup: Setup, run_id: str, scenarios: int) -> None:
    os.environ.update(setup.langfuse)
    try:
        _run_suite(setup, run_id, scenarios)
    finally:
        for name in setup.langfuse:
            del os.environ[name]


def _with_root_spans(setup: Setup, run_id: str, scenarios: int, tracing: Tracing) -> None:
    """Bare, each scenario inside the root span the evaluator gives it, made through the SDK alone
    (the attributes of `Tracing.scenario_run`)."""
    client = tracing.client

    def scenario(index: int) -> str:
        scenario_id = f"s{index:05d}"
        with (
            client.start_as_current_observation(
                name=scenario_id,
                as_type="span",
                input=f"{run_id} q{index}",
                trace_context={"trace_id": Tracing.trace_id_for(run_id, scenario_id)},
                end_on_exit=False,
            ) as span,
            propagate_attributes(
                trace_name=scenario_id,
                session_id=run_id,
                tags=[run_id],
                metadata={"scenario_id": scenario_id, "run_id": run_id},
            ),
        ):
            answer = setup.two_calls(f"{run_id} q{index}")
        span.update(output=answer)
        span.end()
        return answer

    with ThreadPoolExecutor(setup.concurrency) as pool:
        answers = list(pool.map(scenario, range(scenarios)))
    assert len(answers) == scenarios


def sdk_span(setup: Setup, run_id: str, scenarios: int) -> None:
    _with_root_spans(setup, run_id, scenarios, Tracing.embedded())


def sdk_span_export(setup: Setup, run_id: str, scenarios: int) -> None:
    """As `sdk span`, on a connected client made as a run makes it; its spans are exported and
    flushed before the side ends, and the client shut down as a run's is."""
    settings = LangfuseSettings.from_env(setup.langfuse)
    assert settings is not None
    tracing = Tracing.connected(settings)
    try:
        _with_root_spans(setup, run_id, scenarios, tracing)
    finally:
        exported = tracing.shutdown(60)
    assert exported, "the SDK did not flush and shut down within 60 s"


SIDES: dict[str, Callable[[Setup, str, int], None]] = {
    "bare": bare,
    "embedded": embedded,
    "export": export,
    "sdk span": sdk_span,
    "sdk span+export": sdk_span_export,
}


# --- measuring -----------------------------------------------------------------------------------------


class ThreadCpu:
    """CPU per thread group during a side: a thread alive before and after by its own CPU clock, one
    that started and ended meanwhile by its CPU time when it ended (`Thread.run` is wrapped for that)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ended: dict[str, float] = {}
        run = threading.Thread.run

        def measured_run(thread: threading.Thread) -> None:
            try:
                run(thread)
            finally:
                with self._lock:
                    group = _group(thread.name)
                    self._ended[group] = self._ended.get(group, 0.0) + time.thread_time()

        threading.Thread.run = measured_run  # type: ignore[method-assign]

    def start(self) -> dict[int, tuple[str, float]]:
        with self._lock:
            self._ended.clear()
        return _clocks()

    def since(self, before: dict[int, tuple[str, float]]) -> dict[str, float]:
        with self._lock:
            groups = dict(self._ended)
        for ident, (name, cpu) in _clocks().items():
            if ident in before:
                group = _group(name)
                groups[group] = groups.get(group, 0.0) + cpu - before[ident][1]
        return groups


def _group(name: str) -> str:
    return re.sub(r"([-_ ]?\d+)+$", "", re.sub(r" \(.*\)$", "", name))


def _clocks() -> dict[int, tuple[str, float]]:
    clocks = {}
    for thread in threading.enumerate():
        if thread.ident is not None:
            try:
                clock = time.pthread_getcpuclockid(thread.ident)
                clocks[thread.ident] = (thread.name, time.clock_gettime(clock))
            except (OSError, ProcessLookupError):  # it ended just now
                continue
    return clocks


THREAD_CPU = ThreadCpu()


@dataclass(frozen=True)
class Sample:
    cpu: float
    calls_cpu: float  # of which inside the two calls
    wall: float
    peak_rss_mb: float
    rss_mb: float
    threads: dict[str, float]  # CPU seconds by thread group


def _current_rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * PAGE_SIZE / 2**20


def measure(side: Callable[[Setup, str, int], None], setup: Setup, run_id: str) -> Sample:
    threads = THREAD_CPU.start()
    calls_cpu, cpu, wall = setup.meter.cpu, time.process_time(), time.perf_counter()
    side(setup, run_id, setup.scenarios)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    time.sleep(0.2)  # the threads the side started have ended
    calls_cpu = setup.meter.cpu - calls_cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return Sample(
        cpu=cpu,
        calls_cpu=calls_cpu,
        wall=wall,
        peak_rss_mb=peak,
        rss_mb=_current_rss_mb(),
        threads=THREAD_CPU.since(threads),
    )


def _median_outside(runs: list[Sample]) -> float:
    return statistics.median(s.cpu - s.calls_cpu for s in runs)


def _paired_ms(runs: list[Sample], against: list[Sample], scenarios: int) -> list[float]:
    """Each round's CPU of one side minus the other's, in ms per scenario, sorted."""
    return sorted((s.cpu - o.cpu) / scenarios * 1000 for s, o in zip(runs, against, strict=True))


def report(args: argparse.Namespace, samples: dict[str, list[Sample]], spans_received: int) -> None:
    n = args.scenarios
    ideal = -(-n // args.concurrency) * 2 * args.latency
    print(
        f"overhead: {n} scenarios x 2 chat calls ({args.latency * 1000:.0f} ms each) at concurrency "
        f"{args.concurrency}, {args.repeat} rounds, medians; ideal wall {ideal:.2f} s"
    )
    bare_cpu = statistics.median(s.cpu for s in samples["bare"])
    bare_rest = _median_outside(samples["bare"])
    for name, runs in samples.items():
        cpu = statistics.median(s.cpu for s in runs)
        rest = _median_outside(runs)
        wall = statistics.median(s.wall for s in runs)
        paired = _paired_ms(runs, samples["bare"], n)
        extra = (
            ""
            if name == "bare"
            else f"  extra {(cpu - bare_cpu) / n * 1000:5.2f} ms/scenario"
            f" (outside the calls: {(rest - bare_rest) / n * 1000:5.2f}; paired by round: median "
            f"{statistics.median(paired):5.2f}, range {paired[0]:.2f} to {paired[-1]:.2f})"
        )
        print(
            f"  {name:15} CPU {cpu / n * 1000:5.2f} ms/scenario{extra}  wall {wall:5.2f} s  "
            f"peak RSS {max(s.peak_rss_mb for s in runs):4.0f} MB"
        )
        groups = {group for s in runs for group in s.threads}
        by_thread = {g: statistics.median(s.threads.get(g, 0.0) for s in runs) / n * 1000 for g in groups}
        calls = statistics.median(s.calls_cpu for s in runs) / n * 1000
        ranked = sorted(by_thread.items(), key=lambda item: -item[1])
        print(
            "    by thread (ms/scenario, medians): "
            + ", ".join(f"{group} {ms:.2f}" for group, ms in ranked if ms >= 0.01)
            + f"; of the target threads' CPU, in the two calls {calls:.2f}"
        )
        for s in runs:
            print(
                f"    round: CPU {s.cpu:5.2f} s, in the calls {s.calls_cpu:5.2f} s, wall {s.wall:5.2f} s, "
                f"peak RSS so far {s.peak_rss_mb:4.0f} MB, RSS now {s.rss_mb:4.0f} MB"
            )
    print(f"  the Langfuse stand-in received {spans_received} spans")
    for side, floor in (("embedded", "sdk span"), ("export", "sdk span+export")):
        own = _median_outside(samples[side]) - _median_outside(samples[floor])
        paired = _paired_ms(samples[side], samples[floor], n)
        print(
            f"  {side}: the evaluator's own machinery over the SDK's root span ({floor}): "
            f"{own / n * 1000:5.2f} ms/scenario outside the calls (paired by round, all CPU: median "
            f"{statistics.median(paired):5.2f}, range {paired[0]:.2f} to {paired[-1]:.2f})"
        )
    print("  goals: extra <= 1.0 ms/scenario embedded, <= 1.5 ms with export; peak RSS <= 100 MB")
    print(
        "  extra = (CPU of the side - CPU of bare) / scenarios, from the medians over rounds; 'paired by\n"
        "  round' takes that difference within each round (the sides of a round run back to back) and\n"
        "  gives its median and range over rounds. 'Outside the calls' first subtracts\n"
        "  the thread CPU spent inside the two chat calls on each side (the same work on every side,\n"
        "  and the noisiest part). Peak RSS is ru_maxrss, the process's high-water mark so far: it never\n"
        "  goes down, so a side's figure includes what earlier sides left (each round runs the sides in\n"
        "  the order above); the RSS goal applies to the line below: a fresh process per side."
    )


def make_setup(args: argparse.Namespace, chat_url: str, langfuse: dict[str, str], folder: str) -> Setup:
    client = openai.OpenAI(base_url=chat_url, api_key="x", max_retries=0)
    meter = CallMeter()
    return Setup(
        scenarios=args.scenarios,
        concurrency=args.concurrency,
        two_calls=make_two_calls(client, meter),
        meter=meter,
        config=Config(
            settings=Settings(store=StoreConfig(path=Path(folder) / "bench.db")),
            base_dir=Path(folder),
            source=None,
        ),
        langfuse=langfuse,
    )


def _one_side_alone(
    side: str, args: argparse.Namespace, chat_url: str, langfuse: dict[str, str], conn: Connection
) -> None:
    """In a fresh process: one run of `side`; sends back that process's peak RSS in MB."""
    with tempfile.TemporaryDirectory() as folder:
        SIDES[side](make_setup(args, chat_url, langfuse, folder), f"alone-{side}", args.scenarios)
    conn.send(_peak_rss_mb())


def _peak_rss_mb() -> float:
    """VmHWM, this process's own peak (ru_maxrss would carry the parent's peak across fork and exec)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_alone(side: str, args: argparse.Namespace, chat_url: str, langfuse: dict[str, str]) -> float:
    """The peak RSS of a process that runs only `side` (imports, threads, the run and its results)."""
    ours, theirs = multiprocessing.get_context("spawn").Pipe()
    process = multiprocessing.get_context("spawn").Process(
        target=_one_side_alone, args=(side, args, chat_url, langfuse, theirs)
    )
    process.start()
    peak = float(ours.recv()) if ours.poll(600) else float("nan")
    process.join(30)
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per chat call")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=100, help="scenarios per side before measuring")
    args = parser.parse_args()
    public_key, secret_key = f"pk-lf-{uuid.uuid4().hex}", f"sk-lf-{uuid.uuid4().hex}"
    for name in [n for n in os.environ if n.startswith(("LANGFUSE_", "OPENAI_"))]:
        del os.environ[name]  # the embedded side must be embedded
    chat = Server.start(_serve_openai, args.latency)
    langfuse = Server.start(_serve_langfuse, public_key, secret_key, False)
    env = {
        "LANGFUSE_PUBLIC_KEY": public_key,
        "LANGFUSE_SECRET_KEY": secret_key,
        "LANGFUSE_BASE_URL": langfuse.url,
    }
    samples: dict[str, list[Sample]] = {name: [] for name in SIDES}
    with tempfile.TemporaryDirectory() as folder:
        setup = make_setup(args, chat.url, env, folder)
        for name, side in SIDES.items():
            side(setup, f"warmup-{name}", args.warmup)
        for attempt in range(args.repeat):
            for name, side in SIDES.items():
                samples[name].append(measure(side, setup, f"{name}-{attempt}"))
    alone = {name: peak_rss_alone(name, args, chat.url, env) for name in ("bare", "embedded", "export")}
    langfuse.conn.send("spans")
    spans_received = int(langfuse.conn.recv())
    langfuse.conn.send("stop")
    for server in (chat, langfuse):
        server.stop()
    report(args, samples, spans_received)
    print(
        "  peak RSS of a process running one side alone (imports, threads, run, results): "
        + ", ".join(f"{name} {mb:.0f} MB" for name, mb in alone.items())
    )


if __name__ == "__main__":
    main()
