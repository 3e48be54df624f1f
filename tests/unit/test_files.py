"""The files a command writes (--output, --junit, --html): whole, or none left behind; and never a
file that is not the command's own to remove."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from evaluator.storage import write_whole


class _DiskFillsUp:
    """A file on a disk that fills up: what is written reaches it until the disk is full (the first
    `room` characters), and its flush at close fails as a full disk's does."""

    def __init__(self, real: Any, room: int) -> None:
        self._real, self._room, self._text = real, room, ""

    def fileno(self) -> int:
        return int(self._real.fileno())

    def write(self, text: str) -> int:
        self._text += text
        return len(text)

    def __enter__(self) -> _DiskFillsUp:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._real.write(self._text[: self._room])
        self._real.close()
        raise OSError(errno.ENOSPC, "No space left on device")


def _opening(monkeypatch: pytest.MonkeyPatch, target: Path, make: Any) -> None:
    """Path.open of `target` for writing opens it for real, then hands `make(file)` to the writer."""
    real_open = Path.open

    def open_(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        file = real_open(self, mode, *args, **kwargs)
        return make(file) if self == target and "w" in mode else file

    monkeypatch.setattr(Path, "open", open_)


def test_a_file_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "out" / "results.json"
    write_whole(path, '{"run": {}}\n')
    assert path.read_text(encoding="utf-8") == '{"run": {}}\n'


def test_a_disk_that_fills_up_leaves_no_truncated_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, `run --output` on a full disk left 8 KB of JSON cut off mid-string, and `--junit` an
    empty file, where a CI step read them as the run's."""
    path = tmp_path / "results.json"
    path.write_text('{"an": "earlier run"}', encoding="utf-8")
    _opening(monkeypatch, path, lambda file: _DiskFillsUp(file, room=8))
    with pytest.raises(OSError, match="No space left"):
        write_whole(path, '{"run": {"id": "r"}, "results": []}\n')
    assert not path.exists()


def test_a_file_that_cannot_be_opened_is_left_as_it_was(tmp_path: Path) -> None:
    folder = tmp_path / "results.json"
    folder.mkdir()  # a folder where the file should be: not opened, not removed
    with pytest.raises(OSError):
        write_whole(folder, "{}")
    assert folder.is_dir()


def test_what_is_not_a_regular_file_is_never_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write to a pipe (or a device: `--output /dev/full`) that fails leaves it there: the first
    version of write_whole removed /dev/full, run as root."""
    pipe = tmp_path / "results.pipe"
    os.mkfifo(pipe)
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)  # lets the writer open it

    def reader_gone(file: Any) -> Any:
        os.close(reader)  # the write then fails: a broken pipe
        return file

    _opening(monkeypatch, pipe, reader_gone)
    with pytest.raises(OSError):
        write_whole(pipe, "{}" * 100_000)
    assert stat.S_ISFIFO(pipe.lstat().st_mode)


def test_a_failed_write_through_a_symbolic_link_leaves_the_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target, link = tmp_path / "elsewhere.json", tmp_path / "results.json"
    target.write_text("{}", encoding="utf-8")
    link.symlink_to(target)
    _opening(monkeypatch, link, lambda file: _DiskFillsUp(file, room=1))
    with pytest.raises(OSError):
        write_whole(link, '{"run": {}}')
    assert link.is_symlink()
