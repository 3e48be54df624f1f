"""The package as a team installs it into its own project: what pyproject.toml declares for the build,
and what the wheel holds."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_build_backend_declared_can_read_the_license_expression() -> None:
    """`license = "MIT"` (an SPDX expression, PEP 639) is read by setuptools 77 and later; older ones
    refuse the project table ("`project.license` must be valid exactly by one definition"), so a build
    without isolation (`pip wheel --no-build-isolation`, distribution packagers) on the minimum the
    build-system table allowed failed."""
    assert isinstance(PYPROJECT["project"]["license"], str)
    (backend,) = [r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools")]
    minimum = re.fullmatch(r"setuptools>=(\d+)(?:\.\d+)*", backend)
    assert minimum is not None, backend
    assert int(minimum.group(1)) >= 77
