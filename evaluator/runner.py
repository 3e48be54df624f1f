"""The runner: scenarios against their targets, with bounded concurrency and a per-scenario timeout.

Each scenario runs in its own trace (deterministic id from run id and scenario id) under a root SPAN
named after the scenario. A target that raises or hangs becomes an `error` result with the message;
the other scenarios go on. Every result is handed to `on_result` (the store, the progress bar) the
moment it finishes, so an interrupted run keeps everything it finished.

A hung target cannot be killed in Python; it runs in a daemon thread that the runner stops waiting for
at the timeout, so it cannot keep the process alive. The workers are daemon threads too: on Ctrl-C the
runner returns what finished at once, and nothing holds the process until running scenarios end.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import queue
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from evaluator.evaluation import error_result, evaluate
from evaluator.langfuse_adapter import LangfuseAdapter
from evaluator.prompts import PromptSource
from evaluator.results import JudgeStatus, PromptUse, RunInfo, ScenarioResult
from evaluator.scenario import LoadedScenario
from evaluator.target import LLMEndpoint, PromptResolver, Target, TargetRequest

JUDGE_NOT_AVAILABLE = JudgeStatus(
    status="skipped", reason="the LLM judge is not part of this version; no quality scores"
)


class TargetTimeoutError(Exception):
    """The target did not return within the scenario timeout."""


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_run_id() -> str:
    return f"run-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    concurrency: int = 4
    timeout_seconds: float = 120.0
    prompt_pins: Mapping[str, int] = field(default_factory=dict)
    run_id: str = ""
    run_name: str = ""
    judge_status: JudgeStatus = JUDGE_NOT_AVAILABLE


class Runner:
    """Runs loaded scenarios; everything it needs is injected."""

    def __init__(
        self,
        *,
        adapter: LangfuseAdapter,
        targets: Mapping[str, Target],
        prompts: PromptSource,
        llm: LLMEndpoint | None = None,
    ) -> None:
        self._adapter = adapter
        self._targets = targets
        self._prompts = prompts
        self._llm = llm

    def run(
        self,
        scenarios: Sequence[LoadedScenario],
        options: RunOptions,
        on_result: Callable[[ScenarioResult], None] = lambda _: None,
        on_start: Callable[[RunInfo], None] = lambda _: None,
    ) -> tuple[RunInfo, list[ScenarioResult]]:
        """Run every scenario; results in the scenarios' order. Ctrl-C stops waiting and returns
        what finished, with `interrupted=True`."""
        run_id = options.run_id or new_run_id()
        run = RunInfo(
            id=run_id,
            name=options.run_name or run_id,
            started_at=utc_now(),
            prompt_pins=dict(options.prompt_pins),
        )
        on_start(run)
        finished: dict[str, ScenarioResult] = {}
        interrupted = False
        done = self._start_workers(scenarios, run_id, options)
        try:
            while len(finished) < len(scenarios):
                try:
                    result = done.get(timeout=0.2)  # a timeout keeps Ctrl-C responsive
                except queue.Empty:
                    continue
                finished[result.scenario_id] = result
                on_result(result)
        except KeyboardInterrupt:
            interrupted = True  # the workers are daemon threads: nothing waits for them
        ordered = [finished[s.scenario.id] for s in scenarios if s.scenario.id in finished]
        run = RunInfo(
            id=run.id,
            name=run.name,
            started_at=run.started_at,
            finished_at=utc_now(),
            prompt_pins=run.prompt_pins,
            interrupted=interrupted,
        )
        return run, ordered

    def _start_workers(
        self, scenarios: Sequence[LoadedScenario], run_id: str, options: RunOptions
    ) -> queue.SimpleQueue[ScenarioResult]:
        """`concurrency` daemon threads working through the scenarios; results arrive on the queue."""
        todo: queue.SimpleQueue[LoadedScenario] = queue.SimpleQueue()
        for item in scenarios:
            todo.put(item)
        done: queue.SimpleQueue[ScenarioResult] = queue.SimpleQueue()

        def work() -> None:
            while True:
                try:
                    item = todo.get_nowait()
                except queue.Empty:
                    return
                done.put(self._run_safely(item, run_id, options))

        for index in range(min(options.concurrency, len(scenarios))):
            threading.Thread(target=work, daemon=True, name=f"scenario-worker-{index}").start()
        return done

    def _run_safely(self, item: LoadedScenario, run_id: str, options: RunOptions) -> ScenarioResult:
        """Never raises: a failure of the evaluator itself around one scenario is that scenario's error."""
        try:
            return self._run_one(item, run_id, options)
        except Exception as exc:  # noqa: BLE001 - one scenario's failure must not stop the others
            return error_result(
                item.scenario,
                self._adapter.trace_id_for(run_id, item.scenario.id),
                f"evaluator error: {type(exc).__name__}: {exc}",
                judge_status=options.judge_status,
                latency_ms=None,
                finished_at=utc_now(),
            )

    def _run_one(self, item: LoadedScenario, run_id: str, options: RunOptions) -> ScenarioResult:
        scenario = item.scenario
        trace_id = self._adapter.trace_id_for(run_id, scenario.id)
        resolver = PromptResolver(self._prompts, options.prompt_pins)
        request = TargetRequest(
            input=scenario.input,
            scenario_id=scenario.id,
            run_id=run_id,
            langfuse=self._adapter.client,
            callbacks=self._adapter.callbacks(),
            prompts=resolver,
            llm=self._llm,
            metadata={"tags": list(scenario.tags)},
        )
        target = self._targets[scenario.target]
        error: str | None = None
        output: Any = None
        started = time.perf_counter()
        with self._adapter.scenario_run(
            trace_id=trace_id,
            scenario_id=scenario.id,
            run_id=run_id,
            tags=scenario.tags,
            input=scenario.input,
        ) as root:
            try:
                output = call_with_timeout(target, request, options.timeout_seconds)
                root.set_output(output)
            except TargetTimeoutError:
                error = f"timed out after {options.timeout_seconds:g} s"
                root.set_error(error)
            except Exception as exc:  # noqa: BLE001 - any failure of the system under test
                error = f"{type(exc).__name__}: {exc}"
                root.set_error(error)
        latency_ms = round((time.perf_counter() - started) * 1000, 1)
        trace = self._adapter.take_trace(trace_id)
        used = {name: PromptUse(version=p.version, source=p.source) for name, p in resolver.used.items()}
        if error is not None:
            return error_result(
                scenario,
                trace_id,
                error,
                judge_status=options.judge_status,
                latency_ms=latency_ms,
                prompts=used,
                finished_at=utc_now(),
            )
        return evaluate(
            scenario,
            trace,
            judge_status=options.judge_status,
            output=output,
            latency_ms=latency_ms,
            prompts=used,
            finished_at=utc_now(),
        )


def call_with_timeout(target: Target, request: TargetRequest, timeout: float) -> object:
    """Call the target in a daemon thread that sees the caller's context (the current span);
    raise TargetTimeoutError after `timeout` seconds. Async targets run in their own event loop."""
    future: Future[object] = Future()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            value = target(request)
            if inspect.isawaitable(value):
                value = asyncio.run(_await(value))
            future.set_result(value)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            future.set_exception(exc)

    thread = threading.Thread(
        target=context.run, args=(work,), daemon=True, name=f"target-{request.scenario_id}"
    )
    thread.start()
    thread.join(timeout)
    if not future.done():
        raise TargetTimeoutError
    return future.result()


async def _await(value: Any) -> object:
    return await value
