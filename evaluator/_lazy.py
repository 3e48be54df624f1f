"""Packages whose public names are imported on first use (PEP 562).

A package that lists its names here costs nothing to import until one of them is used, so a command that
needs neither the Langfuse SDK nor `openai` (`lint`, `report`, `compare`, `--help`) does not load them:
together they are about a second of start-up and 50 MB. A package may list only some of its names, such
as those of the per-agent analysis and the dialogues (about 1 MB), which a single-turn run without them
never loads. Each such package keeps the same names under `if TYPE_CHECKING:` imports, for type checkers
and readers; tests/unit/test_lazy.py checks that the two lists agree with `__all__`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping

__all__ = ["lazy_names"]


def lazy_names(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, given each public name's home: its module, or
    `module:attribute` for a name the package gives another attribute (`import ... as`)."""

    def __getattr__(name: str) -> object:  # noqa: N807 - the module hook's own name
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = home.partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        setattr(sys.modules[package], name, value)  # the next use is a plain attribute
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted({*vars(sys.modules[package]), *homes})

    return __getattr__, __dir__
