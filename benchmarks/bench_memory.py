"""Benchmark: where a run's peak RSS goes (issue 22's 100 MB bound), side by side in one process run.

Two parts, each figure from a fresh process:

- the import base: the RSS of a process that has only imported `openai` and `langfuse` (the two SDKs
  the product must use), then `evaluator.run`; each also without click, which httpx imports (with rich
  and pygments, for its command line) only when it is installed, as it is in the project's .venv for
  the tests and is not in a user's install;
- the run: each side of benchmarks/bench_judges.py (the bare `asyncio` + `AsyncOpenAI` loop, the
  evaluator embedded, the evaluator exporting to the Langfuse stand-in) alone in a fresh process at each
  `--items` count: the RSS after the imports, the peak (VmHWM) and the RSS at the end, with the C heap
  as glibc's `mallinfo2` sees it at the end (in use, and free between blocks still in use).

    PYTHONPATH=. python benchmarks/bench_memory.py [--items 1,64,1000,3000] [--concurrency 64]
        [--latency-ms 50] [--sides bare,embedded,export]
"""

from __future__ import annotations

import argparse
import ctypes
import multiprocessing
import os
import subprocess
import sys
import tempfile
from multiprocessing.connection import Connection
from typing import Any

from bench_judge import start_standin
from bench_judges import ROOT, SIDES, make_setup, push_prompts, start_langfuse

IMPORTS = ("openai, langfuse", "evaluator.run")
_BLOCK_CLICK = "import sys; sys.modules['click'] = None; "  # as if click were not installed


def _status_mb(*fields: str) -> dict[str, float]:
    found: dict[str, float] = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in fields:
                found[name] = int(value.split()[0]) / 1024
    return found


_MALLINFO2_FIELDS = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in _MALLINFO2_FIELDS.split()]


def _c_heap_mb() -> tuple[float, float]:
    """(in use, free between blocks) of glibc's heap, in MB; NaN where there is no mallinfo2."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
        info = libc.mallinfo2()
    except (OSError, AttributeError):
        return float("nan"), float("nan")
    return info.uordblks / 1e6, info.fordblks / 1e6


def import_base(statement: str) -> float:
    """The RSS (MB) of a fresh interpreter that has run `statement`."""
    code = (
        f"{statement}\n"
        "for line in open('/proc/self/status'):\n"
        "    if line.startswith('VmRSS:'): print(line.split()[1])"
    )
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH") or str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)  # noqa: S603
    return int(done.stdout.split()[-1]) / 1024


def _side_alone(
    side: str, items: int, args: argparse.Namespace, env: dict[str, Any], conn: Connection
) -> None:
    """In a fresh process: one run of `side`; sends back its RSS figures."""
    os.environ.update(env["judge"])
    start = _status_mb("VmRSS")["VmRSS"]
    with tempfile.TemporaryDirectory() as folder:
        setup = make_setup(
            argparse.Namespace(items=items, concurrency=args.concurrency),
            env["chat"],
            env["langfuse"],
            folder,
        )
        SIDES[side](setup, f"memory-{side}-{items}", items)
    end = _status_mb("VmRSS", "VmHWM")
    conn.send((start, end["VmHWM"], end["VmRSS"], *_c_heap_mb()))


def side_alone(side: str, items: int, args: argparse.Namespace, env: dict[str, Any]) -> tuple[float, ...]:
    ours, theirs = multiprocessing.get_context("spawn").Pipe()
    process = multiprocessing.get_context("spawn").Process(
        target=_side_alone, args=(side, items, args, env, theirs)
    )
    process.start()
    figures: tuple[float, ...] = ours.recv() if ours.poll(900) else (float("nan"),) * 5
    process.join(30)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", default="1,64,1000,3000", help="item counts, comma-separated")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--sides", default="bare,embedded,export", help="of: " + ", ".join(SIDES))
    args = parser.parse_args()
    counts = [int(n) for n in args.items.split(",")]
    sides = args.sides.split(",")
    unknown = [s for s in sides if s not in SIDES]
    if unknown:
        parser.error(f"unknown side(s) {', '.join(unknown)}: choose from {', '.join(SIDES)}")

    print("import base (RSS of a fresh interpreter after the imports):")
    for modules in IMPORTS:
        with_click, without = import_base(f"import {modules}"), import_base(f"{_BLOCK_CLICK}import {modules}")
        print(f"  import {modules:18} {with_click:6.1f} MB   without click {without:6.1f} MB")

    for name in [n for n in os.environ if n.startswith(("LANGFUSE_", "OPENAI_", "EVALUATOR_"))]:
        del os.environ[name]  # the embedded side must be embedded, and the judge's endpoint ours
    chat, chat_url = start_standin(args.latency_ms / 1000)
    langfuse, langfuse_env = start_langfuse(argparse.Namespace(langfuse_http10=False))
    judge_env = {"EVALUATOR_JUDGE_BASE_URL": chat_url, "EVALUATOR_JUDGE_API_KEY": "k"}
    os.environ.update(judge_env)
    try:
        push_prompts(langfuse_env)
        env = {"chat": chat_url, "langfuse": langfuse_env, "judge": judge_env}
        print(f"\neach side alone in a fresh process (C={args.concurrency}, L={args.latency_ms:g} ms), MB:")
        columns = ("imported", "peak", "end", "C heap in use", "free in it")
        print(f"  {'side':9} {'items':>6} " + " ".join(f"{c:>{max(len(c), 6)}}" for c in columns))
        for side in sides:
            for items in counts:
                start, peak, end, used, free = side_alone(side, items, args, env)
                figures = (start, peak, end, used, free)
                print(
                    f"  {side:9} {items:6d} "
                    + " ".join(f"{f:{max(len(c), 6)}.1f}" for c, f in zip(columns, figures, strict=True))
                )
    finally:
        langfuse.conn.send("stop")
        langfuse.stop()
        chat.terminate()
        chat.wait(10)


if __name__ == "__main__":
    main()
