"""Benchmark: the fault table of issue 11 ("Nothing lost, ever"), measured, not asserted.

Each row builds a fresh project (200 scenarios by default; the toy target records 4 spans each: the
evaluator's root, the orchestrator and worker agents, one tool; 3 workflow scores each), starts a fresh
loopback Langfuse stand-in (tests/standin) with fresh keys in this process, runs `evaluator run
--require-delivery` in a subprocess against it while injecting one fault (or killing the process), then
heals the stand-in and runs `evaluator sync` (in a subprocess, with the same keys; a second time when
the first one left something waiting). It prints what Langfuse (the stand-in) holds of every scenario
the store holds as finished, after the run and after sync, with duplicates, wall time, the post-run
phase and a verdict against the issue's goal. It asserts nothing.

    .venv/bin/python benchmarks/faults.py                       # the default rows (about 5 min on 2 cores)
    .venv/bin/python benchmarks/faults.py --rows healthy,hung   # some rows
    .venv/bin/python benchmarks/faults.py --big-scenarios 1000  # burst20k smaller (5000: 20,000 spans)
    .venv/bin/python benchmarks/faults.py --list                # every row, with what it does
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the stand-in lives in tests/, which is not an installed package
    sys.path.insert(0, str(ROOT))

from evaluator.langfuse.span_records import to_otlp  # noqa: E402
from tests.standin.langfuse_server import LangfuseStandIn, Request, Response  # noqa: E402
from tests.standin.otlp import decode_export_request  # noqa: E402

SPANS_PATH = "/api/public/otel/v1/traces"
SCORES_PATH = "/api/public/scores"
SPANS_PER_SCENARIO = 4  # root + orchestrator + worker + lookup tool (toy_targets:by_input)
SCORES_PER_SCENARIO = 3  # workflow_pass, workflow_agents_pass, workflow_tools_pass
PACED = (4, "sleep:0.05")  # concurrency, input
BURST = (64, "")  # empty input: "q<i>"
POLL_SECONDS = 0.01
ACKNOWLEDGED = re.compile(r"In Langfuse \(acknowledged\): (\d+) of (\d+) spans, (\d+) of (\d+) scores")

CONFIG = """\
[targets.toy]
entry = "toy_targets:by_input"
[run]
timeout_seconds = 30
[store]
path = "evaluator.db"
[langfuse]
flush_timeout_seconds = {flush:g}
delivery_deadline_seconds = {deadline:g}
"""
SCENARIO = """\
id: s{index:04d}
target: toy
input: "{input}"
expected:
  agents: {{include: [worker]}}
  tools: {{include: [lookup]}}
"""


def designed_reject(item: dict[str, Any], every: int = 50) -> bool:
    """The scores the 207 / 400 rows refuse: workflow_tools_pass of every 50th scenario (4 of 600; the
    207-id / 207-nameless rows: of every 17th, about one in each batch of 50 scores)."""
    scenario = str((item.get("metadata") or {}).get("scenario_id", ""))
    return (
        item.get("name") == "workflow_tools_pass"
        and scenario[1:].isdigit()
        and int(scenario[1:]) % every == 7 % every
    )


class BatchRefusingStandIn(LangfuseStandIn):
    """The stand-in's own switch (`reject_scores`) can only answer 207 with per-item errors. This one
    answers 400 to a whole score batch that holds a refused item, as a server validating the batch
    as a whole does; batches without one are served as usual."""

    def dispatch(self, request: Request) -> Response | None:
        if self.down or request.method != "POST" or request.path != SCORES_PATH:
            return super().dispatch(request)
        try:
            body = json.loads(request.body or b"null")
        except ValueError:
            return super().dispatch(request)
        bad = (
            [i for i in body if isinstance(i, dict) and designed_reject(i)] if isinstance(body, list) else []
        )
        if not bad:
            return super().dispatch(request)
        ids = ", ".join(str(i.get("id")) for i in bad)
        response = self._checked(request, Response.error(400, f"Invalid score(s): {ids}", "BadRequest"))
        self._record(request, response.status)
        return response


class HungServer:
    """Listens on a port, accepts every connection, and never reads a byte nor answers."""

    def __init__(self, port: int) -> None:
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", port))
        self._listener.listen(256)
        self._listener.settimeout(0.05)
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True, name="hung-server")
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            self._held.append(connection)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        for connection in self._held:
            connection.close()
        self._listener.close()


@dataclass(frozen=True)
class Trigger:
    at: float  # fraction of the scenarios stored as finished
    action: str  # down | up | kill | term | int


Fault = Callable[[LangfuseStandIn], None]


def _no_fault(standin: LangfuseStandIn) -> None:
    return None


@dataclass(frozen=True)
class Row:
    name: str
    about: str
    pace: tuple[int, str] = PACED
    fault: Fault = _no_fault  # applied before the run starts
    triggers: tuple[Trigger, ...] = ()
    standin: type[LangfuseStandIn] = LangfuseStandIn
    hung: bool = False  # a HungServer takes the stand-in's port for the run
    big: bool = False  # --big-scenarios instead of --scenarios
    optional: bool = False  # not in the default selection
    rejects: bool = False  # designed_reject() scores are refused: they cannot be in Langfuse
    reject_every: int = 50  # designed_reject()'s `every`


def _set_slow(seconds: float) -> Fault:
    def fault(standin: LangfuseStandIn) -> None:
        standin.slow = seconds

    return fault


def _fail_500(standin: LangfuseStandIn) -> None:
    standin.fail_next(6, 500, path=SPANS_PATH)
    standin.fail_next(6, 500, path=SCORES_PATH)


def _rate_limit(standin: LangfuseStandIn) -> None:
    standin.rate_limit_next(4, retry_after=2, path=SPANS_PATH)
    standin.rate_limit_next(4, retry_after=2, path=SCORES_PATH)


def _reject_207(standin: LangfuseStandIn) -> None:
    standin.reject_scores(designed_reject, "Score config not found (designed reject)")


def _reject_207_named(naming: Literal["id", "nothing"]) -> Fault:
    """One score of every 17th scenario refused (about one per batch of 50), the 207's errors naming
    it by `id` with status 400 (as the ingestion API's IngestionError does), or not at all."""

    def fault(standin: LangfuseStandIn) -> None:
        standin.score_errors = naming
        standin.reject_scores(
            lambda item: designed_reject(item, every=17),
            "Score config not found (designed reject)",
            status=400,
        )

    return fault


def _down(standin: LangfuseStandIn) -> None:
    standin.go_down()


def rows(timeout: int) -> list[Row]:
    slow = float(timeout + 1)
    return [
        Row("healthy", "no fault"),
        Row("outage-mid", "refused from 1/3 of results stored to 2/3", triggers=(
            Trigger(1 / 3, "down"), Trigger(2 / 3, "up"))),
        Row("outage-end", "refused from 1/3 of results stored until after the run exits",
            triggers=(Trigger(1 / 3, "down"),)),
        Row("refused", "connection refused from the start until after the run exits", fault=_down),
        Row("hung", "a socket that accepts and never answers, from the start to the end", hung=True),
        Row("500s", "6 x HTTP 500 on the spans path and 6 on the scores path", fault=_fail_500),
        Row("429", "4 x 429 Retry-After: 2 on spans and 4 on scores", fault=_rate_limit),
        Row("207", "207 per-item reject of 4 scores (sticky)", fault=_reject_207, rejects=True),
        Row("400", "400 for a whole score batch holding one of 4 bad scores (sticky; benchmark subclass)",
            standin=BatchRefusingStandIn, rejects=True),
        Row("kill-last-paced", "SIGKILL once all results are stored (c=4, sleep 0.05)",
            triggers=(Trigger(1.0, "kill"),)),
        Row("kill-last-burst", "SIGKILL once all results are stored (c=64)", pace=BURST,
            triggers=(Trigger(1.0, "kill"),)),
        Row("kill-mid-paced", "SIGKILL at 1/2 of results stored (c=4, sleep 0.05)",
            triggers=(Trigger(0.5, "kill"),)),
        Row("kill-mid-burst", "SIGKILL at 1/2 of results stored (c=64)", pace=BURST,
            triggers=(Trigger(0.5, "kill"),)),
        Row("term-last-burst", "SIGTERM once all results are stored (c=64)", pace=BURST,
            triggers=(Trigger(1.0, "term"),)),
        Row("term-mid-paced", "SIGTERM at 1/2 of results stored (c=4, sleep 0.05)",
            triggers=(Trigger(0.5, "term"),)),
        Row("int-last-burst", "SIGINT (Ctrl-C) once all results are stored (c=64)", pace=BURST,
            triggers=(Trigger(1.0, "int"),)),
        Row("int-last-hung", "SIGINT once all results are stored, Langfuse hung (accepts, never answers)",
            hung=True, triggers=(Trigger(1.0, "int"),)),
        Row("slow>timeout", f"every request answered after {slow:g} s > LANGFUSE_TIMEOUT={timeout}",
            fault=_set_slow(slow)),
        Row("term-last-paced", "SIGTERM once all results are stored (c=4, sleep 0.05)",
            triggers=(Trigger(1.0, "term"),), optional=True),
        Row("term-mid-burst", "SIGTERM at 1/2 of results stored (c=64)", pace=BURST,
            triggers=(Trigger(0.5, "term"),), optional=True),
        Row("int-mid-paced", "SIGINT at 1/2 of results stored (c=4, sleep 0.05)",
            triggers=(Trigger(0.5, "int"),), optional=True),
        Row("207-id", "207 per-item reject of one score per ~50, named by id and status 400 (sticky)",
            fault=_reject_207_named("id"), rejects=True, reject_every=17, optional=True),
        Row("207-nameless", "207 per-item reject of one score per ~50, naming nothing (sticky)",
            fault=_reject_207_named("nothing"), rejects=True, reject_every=17, optional=True),
        Row("burst20k", "--big-scenarios x 4 spans at c=64 against a server answering after 0.5 s",
            pace=BURST, fault=_set_slow(0.5), big=True),
    ]  # fmt: skip


# ---------------------------------------------------------------------------------------------
# the local store


@dataclass
class Local:
    """What the store holds as finished, and what it captured and scored for it."""

    finished: int = 0
    spans: dict[str, set[str]] = field(default_factory=dict)  # trace id -> span ids captured
    span_total: int = 0  # SUM(traces.spans) of finished scenarios
    scores: dict[str, str | None] = field(default_factory=dict)  # score id -> rejected reason
    designed: set[str] = field(default_factory=set)  # score ids designed_reject() refuses


def results_count(db: Path) -> int | None:
    if not db.exists():
        return None
    try:
        with sqlite3.connect(db, timeout=1) as connection:
            return int(connection.execute("SELECT COUNT(*) FROM results").fetchone()[0])
    except sqlite3.Error:
        return None


def read_local(db: Path, reject_every: int = 50) -> Local:
    local = Local()
    if not db.exists():
        return local
    with sqlite3.connect(db, timeout=5) as connection:
        finished = {str(r[0]) for r in connection.execute("SELECT trace_id FROM results")}
        local.finished = len(finished)
        for trace_id, payload, count in connection.execute("SELECT trace_id, payload, spans FROM traces"):
            if trace_id in finished:
                decoded = decode_export_request(to_otlp(bytes(payload)), received_at=0.0, visible_at=0.0)
                local.spans[str(trace_id)] = {s.span_id for s in decoded}
                local.span_total += int(count)
        query = "SELECT id, trace_id, rejected, name, scenario_id FROM scores"
        for score_id, trace_id, rejected, name, scenario in connection.execute(query):
            if trace_id in finished:
                local.scores[str(score_id)] = rejected
                item = {"name": name, "metadata": {"scenario_id": scenario}}
                if designed_reject(item, every=reject_every):
                    local.designed.add(str(score_id))
    return local


# ---------------------------------------------------------------------------------------------
# one row


@dataclass
class Seen:
    """What the stand-in holds of the finished scenarios at one moment."""

    spans: int
    scores: int
    missing_spans: int
    missing_scores: set[str]


def seen(standin: LangfuseStandIn, local: Local) -> Seen:
    received: dict[str, set[str]] = {}
    for span in standin.spans:
        received.setdefault(span.trace_id, set()).add(span.span_id)
    spans = sum(len(ids & received.get(trace_id, set())) for trace_id, ids in local.spans.items())
    stored = standin.scores
    missing = {score_id for score_id in local.scores if score_id not in stored}
    captured = sum(len(ids) for ids in local.spans.values())
    return Seen(spans, len(local.scores) - len(missing), captured - spans, missing)


@dataclass
class Outcome:
    row: Row
    exit: int | None = None
    finished: int = 0
    expected_spans: int = 0
    expected_scores: int = 0
    after_run: Seen | None = None
    after_sync: Seen | None = None
    said: str = "-"  # what the run said Langfuse acknowledged: spans/scores
    sync_exits: list[int] = field(default_factory=list)
    dup_scores: int = 0
    dup_score_max: int = 0
    dup_spans: int = 0
    score_posts: int = 0  # POSTs of score batches the stand-in answered, run and sync together
    wall: float = 0.0
    post: float | None = None  # None: killed
    fired: list[str] = field(default_factory=list)  # trigger actions done, in order
    notes: list[str] = field(default_factory=list)
    verdict: str = ""


@dataclass(frozen=True)
class Options:
    scenarios: int
    big_scenarios: int
    deadline: float
    flush: float
    timeout: int
    slack: float
    syncs: int
    run_timeout: float
    logs: Path


def write_project(folder: Path, count: int, row_input: str, options: Options) -> None:
    (folder / "evaluator.toml").write_text(CONFIG.format(flush=options.flush, deadline=options.deadline))
    (folder / "toy_targets.py").write_text((ROOT / "tests/integration/toy_targets.py").read_text())
    scenarios = folder / "scenarios"
    scenarios.mkdir()
    for index in range(count):
        text = row_input or f"q{index}"
        (scenarios / f"s{index:04d}.yaml").write_text(SCENARIO.format(index=index, input=text))


def environment(standin: LangfuseStandIn, timeout: int) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("LANGFUSE_", "OPENAI_", "EVALUATOR_"))}
    return keep | {
        "LANGFUSE_PUBLIC_KEY": standin.public_key,
        "LANGFUSE_SECRET_KEY": standin.secret_key,
        "LANGFUSE_BASE_URL": standin.base_url,
        "LANGFUSE_TIMEOUT": str(timeout),
        "PYTHONPATH": str(ROOT),
        "COLUMNS": "200",
    }


class Bench:
    """One row: the project, the stand-in, the run, the faults, the sync and the measurements."""

    def __init__(self, row: Row, options: Options, folder: Path) -> None:
        self.row = row
        self.options = options
        self.folder = folder
        self.count = options.big_scenarios if row.big else options.scenarios
        self.db = folder / "evaluator.db"
        self.standin = row.standin().start()
        self.hung: HungServer | None = None
        self.outcome = Outcome(row)
        self.log = options.logs / f"{row.name.replace('>', '-gt-')}.log"

    def heal(self) -> None:
        """Langfuse healthy again: no hung socket, listening, no injected faults."""
        if self.hung is not None:
            self.hung.close()
            self.hung = None
        self.standin.come_back()
        self.standin.clear_faults()
        self.standin.reject_scores(None)

    def run(self) -> Outcome:
        try:
            self._run()
        finally:
            self.heal()
            self.standin.stop()
        return self.outcome

    def _run(self) -> None:
        concurrency, row_input = self.row.pace
        write_project(self.folder, self.count, row_input, self.options)
        self.row.fault(self.standin)
        if self.row.hung:
            self.standin.go_down()
            self.hung = HungServer(self.standin.port)
        command = [sys.executable, "-m", "evaluator", "run", "--concurrency", str(concurrency)]
        self._execute([*command, "--require-delivery"], concurrency)
        local = read_local(self.db, self.row.reject_every)
        self.outcome.after_run = seen(self.standin, local)
        self.heal()
        self._sync()
        local = read_local(
            self.db, self.row.reject_every
        )  # unchanged by sync, but read again: sync must not drop anything
        self._measure(local)

    def _execute(self, command: list[str], concurrency: int) -> None:
        pending = sorted(self.row.triggers, key=lambda t: t.at)
        killed = False
        with self.log.open("w") as log:
            log.write(f"$ {' '.join(command)}  (row {self.row.name}: {self.row.about})\n")
            log.flush()
            started = time.monotonic()
            process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
                command, cwd=self.folder, env=environment(self.standin, self.options.timeout),
                stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
            last, changed = 0, started
            while process.poll() is None:
                if time.monotonic() - started > self._run_timeout():
                    process.kill()
                    self.outcome.notes.append("run timed out: the benchmark killed it")
                    killed = True
                    break
                count = results_count(self.db)
                now = time.monotonic()
                if count is not None and count != last:
                    last, changed = count, now
                while pending and count is not None and count >= pending[0].at * self.count:
                    killed |= self._fire(pending.pop(0).action, process)
                time.sleep(POLL_SECONDS)
            process.wait()
            ended = time.monotonic()
        last_count = results_count(self.db)
        if last_count is not None and last_count != last:  # stored between the last poll and exit
            changed = ended
        self.outcome.exit = process.returncode
        self.outcome.wall = ended - started
        self.outcome.post = None if killed else ended - changed
        if pending:
            self.outcome.notes.append(f"never reached: {', '.join(t.action for t in pending)}")

    def _run_timeout(self) -> float:
        return self.options.run_timeout * (3 if self.row.big else 1)

    def _fire(self, action: str, process: subprocess.Popen[bytes]) -> bool:
        """Do one trigger; True when the process was SIGKILLed."""
        self.outcome.fired.append(action)
        if action == "down":
            self.standin.go_down()
        elif action == "up":
            self.standin.come_back()
        elif action == "kill":
            process.kill()
            return True
        elif action in ("term", "int"):
            process.send_signal(signal.SIGTERM if action == "term" else signal.SIGINT)
        return False

    def _sync(self) -> None:
        env = environment(self.standin, self.options.timeout)
        for attempt in range(self.options.syncs):
            with self.log.open("a") as log:
                log.write(f"\n$ evaluator sync  (attempt {attempt + 1}, stand-in healthy)\n")
                log.flush()
                try:
                    code = subprocess.run(
                        [sys.executable, "-m", "evaluator", "sync"], cwd=self.folder, env=env,
                        stdout=log, stderr=subprocess.STDOUT, timeout=self.options.deadline * 6, check=False,
                    ).returncode  # fmt: skip
                except subprocess.TimeoutExpired:
                    code = -9
            self.outcome.sync_exits.append(code)
            if code == 0 or not self._waiting():
                return

    def _waiting(self) -> bool:
        """Something is still waiting (not rejected) in the outbox."""
        with sqlite3.connect(self.db, timeout=5) as connection:
            scores = connection.execute(
                "SELECT COUNT(*) FROM scores WHERE sent_at IS NULL AND rejected IS NULL"
            ).fetchone()[0]
            traces = connection.execute(
                "SELECT COUNT(*) FROM traces LEFT JOIN span_acks USING (destination, trace_id) "
                "WHERE traces.sent_at IS NULL AND COALESCE(span_acks.spans, 0) < traces.spans"
            ).fetchone()[0]
        return bool(scores or traces)

    def _measure(self, local: Local) -> None:
        outcome = self.outcome
        outcome.finished = local.finished
        outcome.expected_spans = local.span_total
        outcome.expected_scores = len(local.scores)
        outcome.after_sync = seen(self.standin, local)
        outcome.score_posts = len(self.standin.requests_to(SCORES_PATH, "POST"))
        posts = self.standin.score_posts
        outcome.dup_scores = sum(1 for n in posts.values() if n > 1)
        outcome.dup_score_max = max(posts.values(), default=0)
        received = Counter(span.span_id for span in self.standin.spans)
        outcome.dup_spans = sum(1 for n in received.values() if n > 1)
        text = self.log.read_text(errors="replace")
        claims = ACKNOWLEDGED.findall(text.split("\n$ evaluator sync", 1)[0])  # the run's own summary
        if claims:
            spans_said, _, scores_said, _ = claims[0]
            outcome.said = f"{spans_said}/{scores_said}"
            self._check_claim(int(spans_said), int(scores_said))
        captured = sum(len(ids) for ids in local.spans.values())
        if captured != local.span_total or local.span_total != SPANS_PER_SCENARIO * local.finished:
            outcome.notes.append(
                f"store: {local.span_total} spans counted, {captured} in payloads, "
                f"{SPANS_PER_SCENARIO * local.finished} expected"
            )
        if len(local.scores) != SCORES_PER_SCENARIO * local.finished:
            outcome.notes.append(f"store: {len(local.scores)} scores for {local.finished} finished")
        dropped = text.count("Queue full")
        if dropped:
            outcome.notes.append(f"SDK 'Queue full' x{dropped}")
        outcome.notes.extend(self.standin.problems()[:3])
        outcome.verdict = verdict(outcome, local, self.options)

    def _check_claim(self, spans_said: int, scores_said: int) -> None:
        """The run's summary must not say Langfuse has more than it has (of this run's spans/scores)."""
        after = self.outcome.after_run
        if after is None:
            return
        if spans_said > after.spans or scores_said > after.scores:
            self.outcome.notes.append(
                f"run said {spans_said} spans/{scores_said} scores acknowledged; Langfuse had "
                f"{after.spans}/{after.scores}"
            )


def verdict(outcome: Outcome, local: Local, options: Options) -> str:
    """OK when, after sync, nothing finished is missing from Langfuse (but the scores refused by
    design, which must be stored as rejected), the post-run phase held its deadline, and no score id
    was stored twice."""
    after = outcome.after_sync
    if after is None:
        return "no data"
    problems = _rejects_problems(outcome, local, after)
    if after.missing_spans:
        problems.append(f"{after.missing_spans} spans lost")
    if outcome.post is not None and outcome.post > options.deadline + options.slack:
        problems.append(f"post-run {outcome.post:.0f}s")
    if outcome.dup_scores:
        problems.append(f"{outcome.dup_scores} scores stored twice+")
    if outcome.finished == 0:
        problems.append("nothing finished")
    if any(note.startswith("run said") for note in outcome.notes):
        problems.append("run over-claimed")
    for action, code in (("int", 130), ("term", 143)):
        if action in outcome.fired and "kill" not in outcome.fired and outcome.exit != code:
            problems.append(f"exit {outcome.exit}, not {code}")
    return "OK" if not problems else "FAIL: " + "; ".join(problems)


def _rejects_problems(outcome: Outcome, local: Local, after: Seen) -> list[str]:
    """Scores lost: missing from Langfuse, but (rows 207/400) those refused by design, which must be
    exactly the ones the store keeps as rejected."""
    rejected = {sid for sid, reason in local.scores.items() if reason is not None}
    designed = local.designed if outcome.row.rejects else set()
    problems: list[str] = []
    if rejected != designed:
        problems.append(f"{len(rejected)} scores stored as rejected, {len(designed)} refused by design")
    lost = after.missing_scores - designed
    if lost:
        problems.append(f"{len(lost)} scores lost")
    return problems


# ---------------------------------------------------------------------------------------------
# the table

HEADER = (
    "row", "exit", "fin", "spans run", "scores run", "said", "spans sync", "scores sync", "sync",
    "dupSc", "dupSp", "scPOST", "wall", "post", "verdict",
)  # fmt: skip


def cells(outcome: Outcome) -> list[str]:
    run, synced = outcome.after_run, outcome.after_sync
    spans, scores = outcome.expected_spans, outcome.expected_scores
    post = "killed" if outcome.post is None else f"{outcome.post:.1f}s"
    dup = f"{outcome.dup_scores}" + (f"(x{outcome.dup_score_max})" if outcome.dup_scores else "")
    return [
        outcome.row.name,
        "-" if outcome.exit is None else str(outcome.exit),
        str(outcome.finished),
        f"{run.spans}/{spans}" if run else "-",
        f"{run.scores}/{scores}" if run else "-",
        outcome.said,
        f"{synced.spans}/{spans}" if synced else "-",
        f"{synced.scores}/{scores}" if synced else "-",
        ",".join(str(c) for c in outcome.sync_exits) or "-",
        dup,
        str(outcome.dup_spans),
        str(outcome.score_posts),
        f"{outcome.wall:.1f}s",
        post,
        outcome.verdict,
    ]


def print_table(outcomes: Sequence[Outcome]) -> None:
    table = [list(HEADER), *(cells(o) for o in outcomes)]
    widths = [max(len(line[i]) for line in table) for i in range(len(HEADER))]
    for index, line in enumerate(table):
        print("  ".join(text.ljust(width) for text, width in zip(line, widths, strict=True)).rstrip())
        if index == 0:
            print("  ".join("-" * width for width in widths))
    notes = [(o.row.name, note) for o in outcomes for note in o.notes]
    if notes:
        print("\nNotes:")
        for name, note in notes:
            print(f"  {name}: {note}")


def legend(options: Options) -> str:
    return f"""
Legend (per row: a fresh project, stand-in and keys; `run --require-delivery` in a subprocess):
  exit         exit code of `evaluator run` (0 passed, 1 failed, 3 not all delivered, 130 SIGINT,
               143 SIGTERM, -9 SIGKILLed by the benchmark)
  fin          scenarios the store holds as finished (rows in `results`)
  spans run    span ids of finished scenarios the stand-in received when the run exited / spans the
               store captured for them (SUM(traces.spans); the ids compared are decoded from the store)
  scores run   score ids of finished scenarios the stand-in stored / scores in the store
  said         "In Langfuse (acknowledged): X spans, Y scores" as the run printed it (X/Y)
  spans/scores sync  the same after `evaluator sync` (stand-in healthy, same keys)
  sync         exit code(s) of sync: a second sync runs only when the first exits non-zero and
               something still waits (not rejected) in the outbox
  dupSc        score ids the stand-in stored more than once (xN: the most times one id was stored)
  dupSp        span ids the stand-in received more than once (harmless: Langfuse merges by id)
  scPOST       score batch POSTs the stand-in answered (run and sync; a 207 that names its rejects
               costs no more, one that names nothing is halved down to them: rows 207-id, 207-nameless;
               the halving re-posts scores Langfuse had accepted, which dupSc counts, so 207-nameless
               fails that check: Langfuse updates them by id, the cost is the POSTs)
  wall         the run's wall time; post: from the last result stored to the process's exit
  verdict      OK when after sync every span and score of every finished scenario is in Langfuse
               (rows 207/400: but the 4 refused scores, which must be stored as rejected, so sync
               exits 1 there), post <= deadline {options.deadline:g} s + {options.slack:g} s, no score stored
               twice, the run did not claim more than Langfuse had, and a run sent SIGINT/SIGTERM
               exited 130/143 (as README's "Long runs" says)
Settings: delivery_deadline_seconds={options.deadline:g}, flush_timeout_seconds={options.flush:g},
LANGFUSE_TIMEOUT={options.timeout}; paced = --concurrency 4 with targets sleeping 0.05 s; burst =
--concurrency 64, no sleep. Logs of every run and sync: {options.logs}"""


def parse(argv: Sequence[str] | None = None) -> tuple[list[Row], Options]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", default="", help="comma-separated row names (default: all non-optional)")
    parser.add_argument("--scenarios", type=int, default=200)
    parser.add_argument("--big-scenarios", type=int, default=5000, help="scenarios of the burst20k row")
    parser.add_argument("--deadline", type=float, default=10.0, help="delivery_deadline_seconds")
    parser.add_argument("--flush", type=float, default=5.0, help="flush_timeout_seconds")
    parser.add_argument("--timeout", type=int, default=2, help="LANGFUSE_TIMEOUT")
    parser.add_argument("--slack", type=float, default=5.0, help="seconds allowed past the deadline")
    parser.add_argument("--syncs", type=int, default=2, help="sync attempts at most")
    parser.add_argument(
        "--run-timeout", type=float, default=180.0, help="seconds before a run is killed (burst20k: 3x)"
    )
    parser.add_argument("--logs", type=Path, default=None, help="folder for run/sync logs (default: temp)")
    parser.add_argument("--list", action="store_true", help="list the rows and exit")
    args = parser.parse_args(argv)
    every = rows(args.timeout)
    if args.list:
        for row in every:
            print(f"{row.name:16} {'(optional) ' if row.optional else ''}{row.about}")
        raise SystemExit(0)
    names = [n.strip() for n in args.rows.split(",") if n.strip()]
    unknown = set(names) - {r.name for r in every}
    if unknown:
        parser.error(f"unknown rows: {', '.join(sorted(unknown))} (see --list)")
    chosen = [r for r in every if r.name in names] if names else [r for r in every if not r.optional]
    logs = args.logs or Path(tempfile.mkdtemp(prefix="faults-logs-"))
    logs.mkdir(parents=True, exist_ok=True)
    options = Options(
        scenarios=args.scenarios,
        big_scenarios=args.big_scenarios,
        deadline=args.deadline,
        flush=args.flush,
        timeout=args.timeout,
        slack=args.slack,
        syncs=args.syncs,
        run_timeout=args.run_timeout,
        logs=logs,
    )
    return chosen, options


def main(argv: Sequence[str] | None = None) -> None:
    chosen, options = parse(argv)
    outcomes: list[Outcome] = []
    started = time.monotonic()
    for row in chosen:
        with tempfile.TemporaryDirectory(prefix=f"faults-{row.name.replace('>', '-')}-") as folder:
            outcome = Bench(row, options, Path(folder)).run()
        outcomes.append(outcome)
        elapsed = time.monotonic() - started
        print(f"[{elapsed:6.0f}s] {row.name}: {outcome.verdict}", file=sys.stderr, flush=True)
    print_table(outcomes)
    print(legend(options))
    print(f"Total: {time.monotonic() - started:.0f} s for {len(outcomes)} rows")


if __name__ == "__main__":
    main()
