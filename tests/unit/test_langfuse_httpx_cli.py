"""httpx's command line is imported only when it is used: each case runs in a fresh interpreter (this one
imported httpx long ago) and prints what it found as JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from tests.integration.conftest import ROOT

CLI = ("click", "pygments", "rich")  # what httpx's command line imports


def _fresh(code: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-c", f"import json, sys\n{code}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_the_sdk_loaded_through_this_package_does_not_load_httpxs_command_line() -> None:
    found = _fresh(
        "import evaluator.langfuse, langfuse, httpx\n"
        f"print(json.dumps([m for m in {CLI!r} if m in sys.modules]))"
    )
    assert found == []


def test_httpx_main_still_runs_the_real_command_line() -> None:
    found = _fresh(
        "import evaluator.langfuse, httpx\n"
        "try:\n    httpx.main(['--help'])\nexcept SystemExit as exc:\n    code = exc.code\n"
        "real = sys.modules['httpx._main']\n"
        "print(json.dumps([code, real.__file__.endswith('_main.py'), 'click' in sys.modules]))"
    )
    assert found == [0, True, True]


def test_any_other_name_of_the_command_line_is_the_real_ones() -> None:
    found = _fresh(
        "import evaluator.langfuse, httpx, httpx._main\n"
        "names = httpx._main.print_help.__module__, sys.modules['httpx._main'].__name__\n"
        "print(json.dumps([*names, type(sys.modules['httpx._main']).__name__]))"
    )
    assert found == ["httpx._main", "httpx._main", "module"]


def test_a_process_that_imported_httpx_first_keeps_it_as_it_was() -> None:
    found = _fresh(
        "import httpx, evaluator.langfuse\n"
        "print(json.dumps([type(sys.modules['httpx._main']).__name__, 'click' in sys.modules]))"
    )
    assert found == ["module", True]
