"""Benchmark: reading judge replies a server did not cut at `max_tokens` (llama.cpp and Ollama can be
set to ignore it), of 10 KB, 100 KB and 250 KB of junk: `{` repeated, `{"a": ` repeated, prose with
braces, and `</think>` repeated (each with no verdict, the reader's worst case).

Seconds for one `read_reply` of each, for the reader before it was made linear (its two quadratic
functions inlined below, patched in) and the reader as it is, in this one process run. Prints the
figures; asserts nothing.

    .venv/bin/python benchmarks/bench_replies.py [--sizes 10000,100000,250000]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable
from typing import Any

from evaluator.judge import CorrectnessReply, read_reply, replies

JUNK: dict[str, Callable[[int], str]] = {
    "open braces": lambda size: "{" * size,
    "nested keys": lambda size: '{"a": ' * (size // 6),
    "prose with braces": lambda size: "Scores {x} and {y}: " * (size // 20),
    "closing tags": lambda size: "</think>" * (size // 8),
}


def outermost_objects_before(text: str) -> list[tuple[Any, int]]:
    """The reader before: a decode from every `{` to the end of the reply."""
    found: list[tuple[Any, int]] = []
    end = 0
    for match in re.finditer(r"\{", text):
        if match.start() < end:
            continue
        try:
            value, end = json.JSONDecoder().raw_decode(text, match.start())
        except (ValueError, RecursionError):
            continue
        found.append((value, end))
    return found


def without_reasoning_before(text: str) -> str:
    """The reader before: for each closing tag, a search of all the text before it."""
    text = replies._THINKING.sub("", text, count=1)
    orphans = [
        end
        for end in replies._THINKING_END.finditer(text)
        if not re.search(f"<{end.group(1)}>", text[: end.start()], re.IGNORECASE)
    ]
    return text[orphans[-1].end() :] if orphans else text


def seconds(text: str) -> float:
    started = time.perf_counter()
    read_reply(text, CorrectnessReply)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,250000", help="reply sizes, in characters")
    sizes = [int(size) for size in parser.parse_args().sizes.split(",")]
    after = (replies._outermost_objects, replies._without_reasoning)
    print(f"{'reply':<18} {'size':>8} {'before':>9} {'after':>9}")
    for name, junk in JUNK.items():
        for size in sizes:
            text = junk(size)
            replies._outermost_objects, replies._without_reasoning = (
                outermost_objects_before,
                without_reasoning_before,
            )
            before = seconds(text)
            replies._outermost_objects, replies._without_reasoning = after
            print(f"{name:<18} {len(text):>8} {before:>8.3f}s {seconds(text):>8.3f}s")


if __name__ == "__main__":
    main()
