"""The SDK's client left running after a run: shut down at the process's exit, once, within its bound;
inside a command, a run shuts it down itself."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluator.langfuse import one_command
from evaluator.langfuse.lifetime import in_command

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
import atexit, time
from evaluator.langfuse.lifetime import shut_down_at_exit, shut_down_now

class Client:  # as the SDK's: its own exit hook flushes without a bound; shutdown() takes it off first
    def __init__(self, name, seconds):
        self.name, self.seconds = name, seconds
        atexit.register(self._flush_at_exit)

    def _flush_at_exit(self):
        time.sleep(self.seconds)

    def shutdown(self):
        atexit.unregister(self._flush_at_exit)
        time.sleep(self.seconds)
        print("shut down", self.name, flush=True)

shut_down_at_exit("pk-quick", Client("quick", 0), 5)
shut_down_at_exit("pk-hung", Client("hung", 60), 1)  # made after the first: its own hook came later
shut_down_at_exit("pk-now", Client("now, at exit", 0), 5)
shut_down_now("pk-now", Client("now", 0), 5)
print(time.monotonic(), flush=True)
"""


def test_at_exit_each_client_is_shut_down_once_and_a_hung_one_holds_exit_no_longer_than_its_bound() -> None:
    ran = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
        timeout=120,
    )
    ended = time.monotonic()
    assert ran.returncode == 0, ran.stderr
    now, exiting, *at_exit = ran.stdout.splitlines()
    assert now == "shut down now"
    # the hung one never finished; the one shut down before is not shut down again
    assert at_exit == ["shut down quick"]
    exit_took = ended - float(exiting)
    assert exit_took < 1 + 4, f"the exit took {exit_took:.1f} s"


def test_one_command_holds_while_the_command_runs_even_when_it_fails() -> None:
    assert not in_command()
    with pytest.raises(RuntimeError), one_command():
        with one_command():
            assert in_command()
        assert in_command()
        raise RuntimeError("the command failed")
    assert not in_command()
