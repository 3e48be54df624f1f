"""Benchmark: the evaluator's CPU per dialogue turn, against its CPU per single-turn scenario.

A booking desk that answers at once (no model, no latency) plays `--dialogues` dialogues of `--turns`
turns (default 1,000 x 8): each turn opens one agent observation whose metadata reports the turn's state
(intent, domain, acts, slots, action: DESIGN.md, Dialogues) and one search tool returning hotel names,
then replies. Every turn expects that state (the belief state accumulating, a change of domain from
restaurant to hotel on turn 3, a booking on the last turn under a policy), the agent, and a ground truth
(no judge runs: on even turns it is the reply, an exact match by CRAG's rule; on odd turns another text,
which only a judge could decide, so not measured). The target forgets the area on the change of domain and
names a hotel its tool did not return on one turn, so the metrics find real failures.

Two sides run in this one benchmark run, `--repeat` rounds, their order rotated each round (the machine
is shared and noisy: compare within one run), each round of each side in a fresh process of its own
(its warm-up, then the measured run, in a new store), both through `run_suite()` embedded (no Langfuse
keys, no judge endpoint; results and scores stored in SQLite), at the same `--concurrency`:

- single: dialogues x turns single-turn scenarios, each one of the turns alone (its message, its
  single-turn expectations: the agent, tools unchecked, the ground truth), against the same target;
- dialogue: the dialogues, their turns run in order, each turn with its history and session;
- then (with `--then CHECKOUT`): the single-turn scenarios through the evaluator of an earlier checkout,
  in a fresh process each round (benchmarks/single_then.py), for the issue's "today": the code of
  d83b685, before the dialogue work (`git worktree add /tmp/then d83b685`).

CPU is the side's process's `time.process_time()` around its run, over turns (or scenarios): the figure is
ms of CPU per turn, and the ratio dialogue / single (goal, issue 23: at most 1, a turn costs no more
than a single-turn scenario). The target's own work (its SDK spans) is in both. Then the dialogue metrics'
own cost: the pure functions (`score_dialogue` on each dialogue's turns as the metrics take them, then
`score_run` over all the dialogues) timed on the same data, per turn. `--profile SIDE` runs that side
once more under cProfile (one profiler per thread, merged) and prints its top entries per turn.

    PYTHONPATH=. python benchmarks/bench_dialogues.py [--dialogues 1000] [--turns 8] [--concurrency 8]
        [--repeat 3] [--profile dialogue|single] [--profile-out FILE] [--then CHECKOUT]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from bench_judges import ThreadProfiles, print_profile
from bench_overhead import THREAD_CPU, Sample
from single_then import desk

from evaluator.config import Config, Settings, StoreConfig, TargetConfig
from evaluator.metrics import dialogue as dm
from evaluator.run import SuiteOptions, TargetRequest, run_suite
from evaluator.scenarios import Scenario

HOTELS = ["Acorn Guest House", "Hamilton Lodge", "Alexander Bed And Breakfast", "Cityroomz"]
RESTAURANTS = ["Pizza Hut City Centre", "The Golden Curry", "Curry Garden"]
POLICY = {"book_hotel": ["name", "bookday", "bookpeople", "bookstay"]}
GROUND_TRUTH = "Noted."  # every other turn's ground truth: not its reply (only a judge could decide)


@dataclass(frozen=True, kw_only=True)
class Step:
    """One turn of the script: the user's message, the expected state, what the target reports and
    says, and the names its search tool returns."""

    user: str
    ground_truth: str  # the reply itself on even turns (an exact match), else GROUND_TRUTH
    expected: dict[str, Any]
    reported: dict[str, Any]
    reply: str
    found: list[str]


def _restaurant(slots: dict[str, str]) -> dict[str, Any]:
    return {"restaurant": dict(slots)}


def _script(turns: int) -> list[Step]:
    """`turns` steps: restaurant search (area, pricerange, food), then a hotel in the same area and
    price range (a change of domain: memory transfer), then the booking slots one by one, then book."""
    rest = {"area": "centre", "pricerange": "cheap"}
    hotel: dict[str, str] = {}
    steps = []
    for index in range(turns):
        last = index == turns - 1
        if index < min(3, turns - 1):
            rest = {**rest, **({"food": "indian"} if index == 1 else {})}
            expected_slots: dict[str, Any] = _restaurant(rest)
            intent, domain, action = "find_restaurant", "restaurant", "inform"
            acts, found = ["Restaurant-Inform"], RESTAURANTS
            reply = f"{RESTAURANTS[1]} serves indian food in the centre. {GROUND_TRUTH}"
            reported_slots = expected_slots
        else:
            hotel = {"area": "centre", "pricerange": "cheap", **hotel}
            extra = [("bookday", "saturday"), ("bookpeople", "2"), ("name", "acorn guest house")]
            if index - 3 < len(extra):
                hotel[extra[index - 3][0]] = extra[index - 3][1]
            else:
                hotel["bookstay"] = "3"
            intent, domain = "book_hotel", "hotel"
            action = "book" if last else "request"
            acts, found = (["Hotel-Book"] if last else ["Hotel-Request"]), HOTELS
            expected_slots = {**_restaurant(rest), "hotel": dict(hotel)}
            forgot = {k: v for k, v in hotel.items() if k != "area"}  # the flaw: the area is lost
            reported_slots = {**_restaurant(rest), "hotel": forgot}
            named = "Cityroomz" if index == 4 else HOTELS[0]  # turn 4: a hotel its search did not return
            reply = f"{'Booked' if last else 'How about'} {named}. {GROUND_TRUTH}"
            found = HOTELS[:2] if index == 4 else HOTELS
        expected = {
            "intent": intent,
            "domain": domain,
            "acts": acts,
            "slots": expected_slots,
            "action": action,
        }
        reported = {
            "intent": intent,
            "domain": domain,
            "acts": acts,
            "slots": reported_slots,
            "action": action,
        }
        steps.append(
            Step(
                user=f"turn {index}: {intent}",
                ground_truth=reply if index % 2 == 0 else GROUND_TRUTH,
                expected=expected,
                reported=reported,
                reply=reply,
                found=found,
            )
        )
    return steps


def make_target(script: Sequence[Step]) -> Callable[[TargetRequest], str]:
    """The desk (single_then.desk: the same in the `--then` process), answering each step's message."""
    return desk(replies(script))


def replies(script: Sequence[Step]) -> dict[str, dict[str, Any]]:
    """What the desk does for each step, by its message (a single-turn scenario's message names its turn)."""
    return {
        step.user: {"reply": step.reply, "found": step.found, "reported": step.reported} for step in script
    }


def _single_expected(step: Step) -> dict[str, Any]:
    """A turn's single-turn expectations (a dialogue turn leaves its tools unchecked; so does this)."""
    return {
        "agents": {"include": ["desk"]},
        "tools": {"strict": False},
        "answer": {"ground_truth": step.ground_truth},
    }


def _turn_expected(step: Step) -> dict[str, Any]:
    return {**step.expected, "agents": {"include": ["desk"]}, "answer": {"ground_truth": step.ground_truth}}


def dialogues(script: Sequence[Step], count: int) -> list[Scenario]:
    return [
        Scenario.model_validate(
            {
                "id": f"d{index:05d}",
                "target": "desk",
                "policy": POLICY,
                "goal": {"book": ["hotel"]},
                "turns": [{"user": step.user, "expected": _turn_expected(step)} for step in script],
            }
        )
        for index in range(count)
    ]


def single_files(script: Sequence[Step], count: int) -> list[dict[str, Any]]:
    """The single-turn scenarios as their files say them (also what `--then` hands the checkout)."""
    return [
        {
            "id": f"s{index:05d}",
            "target": "desk",
            "input": script[index % len(script)].user,
            "expected": _single_expected(script[index % len(script)]),
        }
        for index in range(count)
    ]


def singles(script: Sequence[Step], count: int) -> list[Scenario]:
    return [Scenario.model_validate(scenario) for scenario in single_files(script, count)]


@dataclass(frozen=True, kw_only=True)
class Setup:
    concurrency: int
    config: Config
    target: Callable[[TargetRequest], str]
    sides: dict[str, list[Scenario]]
    turns: int  # turns (or single-turn scenarios) per side


THEN = "then"  # the side `--then` adds: the single-turn scenarios through an earlier checkout
SCORES: dict[str, float] = {}  # scores per turn (or scenario) each side stored, from its last run


def run_side(setup: Setup, name: str, run_id: str, scenarios: Sequence[Scenario]) -> str:
    """The side's run (its id)."""
    suite = run_suite(
        scenarios=scenarios,
        options=SuiteOptions(concurrency=setup.concurrency, timeout=60, run_name=run_id, no_judge=True),
        targets={"desk": setup.target},
        config=setup.config,
    )
    assert len(suite.results) == len(scenarios)
    assert all(r.status != "error" for r in suite.results), [r.error for r in suite.results if r.error][:3]
    return suite.run.id


def count_scores(setup: Setup, name: str, run_id: str) -> None:
    """The scores the side's run stored, per turn (or scenario)."""
    with sqlite3.connect(setup.config.store_path) as db:
        [(count,)] = db.execute("SELECT COUNT(*) FROM scores WHERE run_id = ?", (run_id,)).fetchall()
    SCORES[name] = count / setup.turns


def measure(setup: Setup, name: str, run_id: str) -> Sample:
    threads = THREAD_CPU.start()
    cpu, wall = time.process_time(), time.perf_counter()
    run = run_side(setup, name, run_id, setup.sides[name])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    time.sleep(0.2)  # the threads the side started have ended
    by_thread = THREAD_CPU.since(threads)
    count_scores(setup, name, run)
    return Sample(cpu=cpu, calls_cpu=0.0, wall=wall, peak_rss_mb=0.0, rss_mb=0.0, threads=by_thread)


def warm_up(setup: Setup, name: str, args: argparse.Namespace) -> list[Scenario]:
    """The side's first `--warmup` dialogues, or their turns as single-turn scenarios."""
    return setup.sides[name][: args.warmup * (args.turns if name == "single" else 1)]


def _measured_alone(options: dict[str, Any], name: str, run_id: str, conn: Connection) -> None:
    """In a fresh process: the side's warm-up, then its measured run; sends back (sample, scores)."""
    args = argparse.Namespace(**options)
    with tempfile.TemporaryDirectory() as folder:
        setup = make_setup(args, folder)
        run_side(setup, name, f"warmup-{run_id}", warm_up(setup, name, args))
        conn.send((measure(setup, name, run_id), SCORES[name]))


def measure_alone(args: argparse.Namespace, name: str, run_id: str) -> Sample:
    """The side measured in a fresh process of its own, with a new store, as `then` is: no side pays
    for what the rounds before it left behind (a store every run added its rows to, some 130,000 score
    rows a round at the default size; the heap they grew)."""
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(target=_measured_alone, args=(vars(args), name, run_id, theirs))
    process.start()
    sample, SCORES[name] = ours.recv()
    process.join()
    return sample


def measure_then(args: argparse.Namespace, run_id: str) -> Sample:
    """The single-turn scenarios through the evaluator of the checkout `args.then`, in a fresh process
    (benchmarks/single_then.py): its CPU around its timed run, after its own warm-up."""
    script = _script(args.turns)
    side = {
        "scenarios": single_files(script, args.dialogues * args.turns),
        "steps": replies(script),
        "concurrency": args.concurrency,
        "warmup": args.warmup * args.turns,
        "run_name": run_id,
    }
    done = subprocess.run(  # noqa: S603
        [sys.executable, str(Path(__file__).with_name("single_then.py"))],
        input=json.dumps(side),
        env={**os.environ, "PYTHONPATH": str(args.then)},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"--then {args.then}: single_then.py failed:\n{done.stderr[-3000:]}")
    figures = json.loads(done.stdout.splitlines()[-1])
    SCORES[THEN] = figures["scores"]
    return Sample(
        cpu=figures["cpu"], calls_cpu=0.0, wall=figures["wall"], peak_rss_mb=0.0, rss_mb=0.0, threads={}
    )


# --- the dialogue metrics alone, on the same data -------------------------------------------------------


def metric_turns(script: Sequence[Step]) -> list[dm.Turn]:
    """A dialogue's turns as the metrics take them (run/dialogue.py builds the same from the run)."""
    return [
        dm.Turn(
            expected=dm.DialogueState.of(
                intent=step.expected["intent"],
                domain=step.expected["domain"],
                acts=step.expected["acts"],
                slots=step.expected["slots"],
                action=step.expected["action"],
            ),
            predicted=dm.DialogueState.of(
                intent=step.reported["intent"],
                domain=step.reported["domain"],
                acts=step.reported["acts"],
                slots=step.reported["slots"],
                action=step.reported["action"],
            ),
            reply=step.reply,
            tool_outputs=("\n".join(step.found),),
            correctness=dm.CragTurn(verdict="correct", exact_match=True)
            if step.ground_truth == step.reply
            else None,
        )
        for step in script
    ]


def time_metrics(script: Sequence[Step], count: int, repeat: int) -> tuple[float, float]:
    """(score_dialogue, score_run) CPU in µs per turn, the median over `repeat` rounds."""
    turns = metric_turns(script)
    policy, goal = dm.normalise_policy(POLICY), dm.Goal.of(book=["hotel"])
    per_dialogue, per_run = [], []
    for _ in range(max(1, repeat)):
        started = time.process_time()
        figures = [
            dm.score_dialogue(turns, policy=policy, goal=goal, entities=HOTELS + RESTAURANTS)
            for _ in range(count)
        ]
        middle = time.process_time()
        dm.score_run(figures)
        ended = time.process_time()
        per_dialogue.append(middle - started)
        per_run.append(ended - middle)
    n = count * len(script)
    return statistics.median(per_dialogue) / n * 1e6, statistics.median(per_run) / n * 1e6


# --- the run --------------------------------------------------------------------------------------------


def report(
    args: argparse.Namespace, samples: dict[str, list[Sample]], metrics_us: tuple[float, float]
) -> None:
    n = args.dialogues * args.turns
    print(
        f"dialogues: {args.dialogues} dialogues x {args.turns} turns against {n} single-turn scenarios, a "
        f"target that answers at once, concurrency {args.concurrency}, {args.repeat} round(s), order rotated"
    )
    for name, runs in samples.items():
        cpu = statistics.median(s.cpu for s in runs) / n * 1000
        wall = statistics.median(s.wall for s in runs)
        unit = "turn" if name == "dialogue" else "scenario"
        print(f"  {name:8} CPU {cpu:5.2f} ms/{unit}  wall {wall:6.2f} s  scores {SCORES[name]:.2f}/{unit}")
        groups = {g for s in runs for g in s.threads}
        by_thread = {g: statistics.median(s.threads.get(g, 0.0) for s in runs) / n * 1000 for g in groups}
        ranked = sorted(by_thread.items(), key=lambda item: -item[1])
        if ranked:  # none for `then`: its process is not this one
            shown = ", ".join(f"{g} {ms:.2f}" for g, ms in ranked if ms >= 0.01)
            print(f"    by thread (ms, medians): {shown}")
        for s in runs:
            print(f"    round: CPU {s.cpu:6.2f} s, wall {s.wall:6.2f} s")
    ratios = sorted(d.cpu / s.cpu for d, s in zip(samples["dialogue"], samples["single"], strict=True))
    print(
        f"  dialogue / single, CPU per turn over CPU per scenario, paired by round: median "
        f"{statistics.median(ratios):.2f} (range {ratios[0]:.2f} to {ratios[-1]:.2f})"
    )
    if THEN in samples:
        ratios = sorted(d.cpu / t.cpu for d, t in zip(samples["dialogue"], samples[THEN], strict=True))
        print(
            f"  dialogue / then, CPU per turn over CPU per scenario of {args.then}, paired by round: median "
            f"{statistics.median(ratios):.2f} (range {ratios[0]:.2f} to {ratios[-1]:.2f})"
        )
    dialogue_us, run_us = metrics_us
    print(
        f"  the dialogue metrics alone (pure functions, same data): score_dialogue {dialogue_us:.1f} "
        f"µs/turn, score_run {run_us:.1f} µs/turn"
    )
    print(
        "  goal (issue 23): CPU per turn <= CPU per single-turn scenario (ratio <= 1). On a shared machine\n"
        "  the figures move with the load: compare within one run."
    )


def make_setup(args: argparse.Namespace, folder: str) -> Setup:
    script = _script(args.turns)
    catalog = Path(folder) / "db.json"
    catalog.write_text(json.dumps(HOTELS + RESTAURANTS))
    config = Config(
        settings=Settings(
            store=StoreConfig(path=Path(folder) / "bench.db"),
            targets={"desk": TargetConfig(entry="unused:desk", entities=catalog)},
        ),
        base_dir=Path(folder),
        source=None,
    )
    n = args.dialogues * args.turns
    return Setup(
        concurrency=args.concurrency,
        config=config,
        target=make_target(script),
        sides={"single": singles(script, n), "dialogue": dialogues(script, args.dialogues)},
        turns=n,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dialogues", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=20, help="dialogues (x turns scenarios) per side first")
    parser.add_argument("--profile", choices=("dialogue", "single"), help="then profile this side")
    parser.add_argument("--top", type=int, default=40, help="profile entries printed")
    parser.add_argument("--profile-out", type=Path, help="also save the profile there (pstats)")
    parser.add_argument(
        "--then",
        type=Path,
        help="a checkout of an earlier revision: its single-turn scenarios run too, as the side `then`, "
        "in a fresh process each round (e.g. git worktree add /tmp/then d83b685, the issue's 'today')",
    )
    args = parser.parse_args()
    if args.turns < 5:
        parser.error("--turns must be at least 5 (the script changes domain on turn 3 and books last)")
    for name in [n for n in os.environ if n.startswith(("LANGFUSE_", "OPENAI_", "EVALUATOR_"))]:
        del os.environ[name]  # embedded, and no judge endpoint
    profiles = ThreadProfiles() if args.profile else None
    samples: dict[str, list[Sample]] = {"single": [], "dialogue": [], **({THEN: []} if args.then else {})}
    names = list(samples)
    for attempt in range(args.repeat):
        for name in names[attempt % len(names) :] + names[: attempt % len(names)]:
            run_id = f"{name}-{attempt}"
            sample = measure_then(args, run_id) if name == THEN else measure_alone(args, name, run_id)
            samples[name].append(sample)
    with tempfile.TemporaryDirectory() as folder:
        setup = make_setup(args, folder)
        if profiles is not None:
            side = args.profile
            run_side(setup, side, f"warmup-{side}", warm_up(setup, side, args))
            stats = profiles.profile(lambda: run_side(setup, side, "profiled", setup.sides[side]))
    metrics_us = time_metrics(_script(args.turns), args.dialogues, args.repeat)
    if args.repeat:
        report(args, samples, metrics_us)
    if profiles is not None:
        if args.profile_out is not None:
            stats.dump_stats(args.profile_out)
        print(f"profile of one {args.profile} run ({setup.turns} turns; all threads that ended), per turn:")
        print_profile(stats, setup.turns, args.top)


if __name__ == "__main__":
    main()
