"""The files a run writes beside the store (`--output`, `--junit`, `report --html`), checked before
anything runs: one that cannot be written, or would replace the store or another option's file, is bad
input then, not a failure at the run's end."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from evaluator.config import Config
from evaluator.errors import ConfigError

__all__ = ["check_output_file", "store_files"]


def check_output_file(
    option: str, path: Path | None, *, example: str, keep: Mapping[Path, str] | None = None
) -> None:
    """Refuse a file a command-line option names for the run to write (`--output`, `--junit`) that
    cannot be written, before running, not after; without writing anything (a run that stops on bad
    input leaves no file or folder behind): a folder (`example` names a file in it), a file where a
    folder of its path should be, a place that is not writable (a read-only one), a file of `keep`
    (each with what it is: the store's, `store_files`, another option's), which writing would replace.
    None: no file."""
    if path is None:
        return
    kept = next((what for file, what in (keep or {}).items() if file.resolve() == path.resolve()), None)
    if kept is not None:
        raise ConfigError(
            f"{option} {path} is {kept}, which writing it would replace. "
            f"Fix: give another file, e.g. {path.parent / example}"
        )
    if path.is_dir():
        raise ConfigError(f"{option} {path} is a folder. Fix: give a file name, e.g. {path / example}")
    existing = next(p for p in (path, *path.parents) if p.exists())  # what a write would change
    if existing != path and not existing.is_dir():
        problem = f"{existing} is a file, not a folder"
    elif not os.access(existing, os.W_OK):
        problem = f"{existing} is not writable"
    else:
        return
    raise ConfigError(f"{option} {path} cannot be written ({problem}). Fix: choose a writable path.")


def store_files(config: Config) -> dict[Path, str]:
    """The local store's files, for `check_output_file` to keep: the database, and SQLite's beside it."""
    db = config.store_path
    return {
        db.with_name(db.name + end): f"the local store ({db})" for end in ("", "-wal", "-shm", "-journal")
    }
