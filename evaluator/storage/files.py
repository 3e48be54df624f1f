"""The files a command writes for you to read (`run --output`, `--junit`, `report --html`): whole, or
none at all. A write that fails partway (a full disk) leaves no truncated file behind that a CI step
would read as this run's (a JSON cut off mid-string, an empty JUnit file)."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

__all__ = ["write_whole"]


def write_whole(path: Path, text: str) -> None:
    """Write `text` (UTF-8) to `path`, making its folders. Raises OSError as writing does: when the
    file could not be opened, nothing changed; when it failed once opened (the file then already
    emptied, as opening for writing does), what was written of it is removed. Only a regular file
    this call opened is removed: never a device (`--output /dev/full`), a pipe, or what a symbolic
    link points to."""
    path.parent.mkdir(parents=True, exist_ok=True)
    file = path.open("w", encoding="utf-8")
    opened = os.fstat(file.fileno())
    try:
        with file:  # closing flushes: a full disk may show only there
            file.write(text)
    except OSError:
        if stat.S_ISREG(opened.st_mode):
            with contextlib.suppress(OSError):
                there = path.lstat()
                if (there.st_dev, there.st_ino) == (opened.st_dev, opened.st_ino):
                    path.unlink()
        raise
