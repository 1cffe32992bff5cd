"""The code stays clean the way CI checks it: `ruff check` with the rules in pyproject.toml
(syntax and statement errors, unused and undefined names) finds nothing, and every file is in
one format, ruff's (`ruff format` with the line length in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing_in_the_code_tests_benchmarks_and_examples():
    ruff = Path(sys.executable).with_name("ruff")
    assert ruff.is_file(), "ruff is a dev dependency: `make test` installs it into the venv"
    done = subprocess.run(
        [str(ruff), "check", "workbench", "tests", "benchmarks", "examples"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_every_file_is_in_ruff_format():
    ruff = Path(sys.executable).with_name("ruff")
    done = subprocess.run(
        [str(ruff), "format", "--check", "workbench", "tests", "benchmarks", "examples"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, "run `ruff format workbench tests benchmarks examples`:\n" + done.stdout[-4000:]
