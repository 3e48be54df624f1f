"""httpx's command line, imported only when it is run.

`import httpx` imports its command line too (`httpx._main`: click, pygments and rich) whenever those are
installed, and rich is one of ours: every process that loaded the Langfuse SDK (which imports httpx) held
some 4-5 MB and 50 ms of a command line nobody runs in it. Before this package imports httpx (its own
modules do, and the SDK), `defer` puts a stand-in in its place whose `main` imports the real one when
called, as does reading any other name of it: `httpx.main()` and `httpx._main` work as before. A process
that imported httpx first keeps it as it is.
"""

from __future__ import annotations

import importlib
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

__all__ = ["defer"]

_NAME = "httpx._main"
_swap = threading.Lock()


class _DeferredCli(types.ModuleType):
    """`httpx._main` until something of it is used: then the real module, in its place."""

    @property
    def main(self) -> Callable[..., Any]:
        # read by httpx's `from ._main import main`, which does not make this its package's `_main`
        package = sys.modules.get("httpx")
        if package is not None and "_main" not in vars(package):
            package._main = self  # type: ignore[attr-defined]
        return _run_main

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # the import system's questions (`__path__`...): a plain module's answers
            raise AttributeError(name)
        return getattr(_real(), name)


def _run_main(*args: Any, **kwargs: Any) -> Any:
    return _real().main(*args, **kwargs)


def _real() -> types.ModuleType:
    with _swap:  # two threads at once: the first takes the stand-in out, the second finds the real one
        if isinstance(sys.modules.get(_NAME), _DeferredCli):
            del sys.modules[_NAME]
        return importlib.import_module(_NAME)


def defer() -> None:
    """Put the stand-in in place, unless httpx (or its command line) is imported already."""
    if "httpx" not in sys.modules and _NAME not in sys.modules:
        sys.modules[_NAME] = _DeferredCli(_NAME, __doc__)
