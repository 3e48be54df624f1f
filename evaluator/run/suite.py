"""What a run of a suite did (`SuiteRun`), how it is asked for (`SuiteOptions`), how the service
tells its caller what happens along the way (`Notice`), and the run whose end the store could not take
(`RunNotStoredError`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evaluator.errors import StoreError, StoreMovedError
from evaluator.judge import JudgeModel
from evaluator.results import RunInfo, ScenarioResult
from evaluator.run.verify import VerifyReport
from evaluator.storage import DeliveryReport, DeliveryStatus, SpanDeliveryReport

__all__ = ["ExperimentReport", "Notice", "RunNotStoredError", "SuiteOptions", "SuiteRun", "logged_notice"]

Notice = Callable[[str, str], None]  # (kind: "warning" | "error" | "note", message)

_NOTICES = logging.getLogger("evaluator.run")
_LEVELS = {"error": logging.ERROR, "warning": logging.WARNING, "note": logging.INFO}


def logged_notice(kind: str, message: str) -> None:
    """`run_suite`'s notices when its caller takes none: on the `evaluator.run` logger at their
    level, so a script without logging set up still sees the warnings and errors on stderr."""
    _NOTICES.log(_LEVELS.get(kind, logging.WARNING), message)


@dataclass(frozen=True, kw_only=True)
class SuiteOptions:
    """How a suite runs, as `evaluator run`'s options say it. None (or unset) takes the configuration's
    value: `[run] concurrency` and `timeout_seconds`, `[judge] concurrency`.

    `tags`: only scenarios with one of them; `target`: every scenario against this target; `prompts`:
    pins as "NAME=VERSION"; `no_judge`: skip the judges; `no_cache`: ask them again instead of using
    the verdict cache; `judge_model`: the judges' model instead of the configured endpoint (e.g. a
    `judge.FakeJudgeModel` in tests); `output`: the result JSON file; `run_name`: the run's name
    (default its id); `verify_langfuse`: read the run back from Langfuse and compare verdicts."""

    tags: Sequence[str] = ()
    target: str | None = None
    prompts: Sequence[str] = ()
    concurrency: int | None = None
    timeout: float | None = None
    judge_concurrency: int | None = None
    no_judge: bool = False
    no_cache: bool = False
    judge_model: JudgeModel | None = None
    output: Path | None = None
    run_name: str | None = None
    verify_langfuse: bool = False


@dataclass(frozen=True, kw_only=True)
class ExperimentReport:
    """What became of a run's experiment: the scenarios whose traces carried the link, those that have
    no item in the dataset, the run-level scores posted, and why posting them failed, if it did."""

    dataset: str
    run_name: str
    experiment_id: str
    url: str | None = None
    linked: list[str] = field(default_factory=list)  # scenario ids
    not_in_dataset: list[str] = field(default_factory=list)
    scores: list[str] = field(default_factory=list)  # run-level score names posted
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class SuiteRun:
    """What a run of a suite did: the run, its results (in the scenarios' order) and, with Langfuse,
    what was delivered and verified."""

    run: RunInfo
    results: list[ScenarioResult]
    expected: int  # scenarios selected
    store_path: Path
    output: Path | None = None
    connected: bool = False
    delivery: DeliveryReport | None = None
    spans: SpanDeliveryReport | None = None
    status: DeliveryStatus | None = None  # what Langfuse acknowledged of this run, what waits
    trace_urls: dict[str, str] = field(default_factory=dict)
    verify: VerifyReport | None = None
    experiment: ExperimentReport | None = None  # the run as a Langfuse experiment, when linked
    scenario_targets: Mapping[str, str] = field(default_factory=dict)  # each selected scenario's target

    @property
    def waiting(self) -> int:
        """Scores of this run still in the outbox."""
        return self.status.scores_waiting if self.status else 0

    @property
    def delivered(self) -> bool:
        """Langfuse acknowledged every span and score of this run (True when not connected)."""
        if not self.connected or self.status is None:
            return not self.connected
        unknown = (self.delivery.unknown if self.delivery else 0) + (self.spans.unknown if self.spans else 0)
        return self.status.complete and not unknown

    @property
    def passed(self) -> bool:
        """Every scenario ran and passed, and (when asked) Langfuse gives the same verdicts."""
        complete = len(self.results) == self.expected and not self.run.interrupted
        verified = self.verify is None or self.verify.ok
        return complete and verified and all(r.status == "passed" for r in self.results)


_NAMED = 10  # scenario ids a message names, at most


class RunNotStoredError(StoreError):
    """The run is over, but the store could not take its end (finish time, totals, provenance), or
    failed during the run (`not_stored`: the ids of the results it did not take; no scenario started
    after it): `run_suite` raises it once everything else is done (--output written, the Langfuse side
    ended as far as it goes without the store). `suite` is the run as it went, every result in it;
    `cause` is the store's error, with its fix; `kept` the other places that hold the results
    ("--output FILE")."""

    def __init__(
        self, suite: SuiteRun, cause: StoreError, *, kept: Sequence[str] = (), not_stored: Sequence[str] = ()
    ) -> None:
        self.suite, self.cause, self.kept, self.not_stored = suite, cause, tuple(kept), tuple(not_stored)
        places = "".join(f", in {place}" for place in self.kept)
        if not self.not_stored:
            super().__init__(
                f"run {suite.run.id} is over and its results are in the store{places}, but its end (finish "
                f"time and totals) is not: {cause}"
            )
            return
        count, results = len(self.not_stored), len(suite.results)
        names = ", ".join(self.not_stored[:_NAMED]) + (
            f" and {count - _NAMED} more" if count > _NAMED else ""
        )
        where = f"only{places[1:]}" if places else "in no file (--output FILE keeps such results)"
        missing = suite.expected - results
        unstarted = (
            f"; {missing} scenarios have no result (none started after the failure)" if missing else ""
        )
        taken = (
            f"none of its {results} results is surely in the store ({names}): they are"
            if isinstance(cause, StoreMovedError)  # written to the file it had open, no longer there
            else f"{results - count} of its {results} results are in the store, {count} are not ({names}) "
            "and are"
        )
        super().__init__(
            f"the store failed during run {suite.run.id}: {taken} {where}{unstarted}; nor is the run's end "
            "(finish time and totals). No command loads results from a file into the store: once it can be "
            f"written, run again the scenarios whose results it does not have. {cause}"
        )

    def kept_in(self, place: str) -> RunNotStoredError:
        """The same error, with one more place that holds the results."""
        return RunNotStoredError(self.suite, self.cause, kept=[*self.kept, place], not_stored=self.not_stored)
