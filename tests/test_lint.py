"""The code style and typing the project keeps: ruff everywhere, strict mypy on the core."""
from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def test_ruff_finds_nothing() -> None:
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "mxexplorer", "tests",
                           "benchmarks", "tools"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_core_passes_strict_mypy() -> None:
    proc = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
