"""The kind contract is type-checked, so a plugin learns of a wrong field from mypy, not at run time.

mypy checks the files `[tool.mypy]` in pyproject.toml names (the contract: contract/kind.py, the
evaluator options and model roles, the declared evaluator; the example plugins bbq_lite and
bold_lite) and finds nothing; and a plugin that gives a `Kind` field the wrong type is caught.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT

api = pytest.importorskip("mypy.api", reason="mypy is a dev dependency: `make test` installs it into the venv")

PYPROJECT = ROOT / "pyproject.toml"


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """One mypy cache for this file's runs (the second reads what the first learned of workbench)."""
    return tmp_path_factory.mktemp("mypy-cache")


def mypy(cache: Path, *paths: str) -> tuple[str, int]:
    """mypy with the project's configuration, run from the repository root (where its paths start)."""
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        out, err, status = api.run(
            [
                "--config-file",
                str(PYPROJECT),
                "--cache-dir",
                str(cache),
                "--no-error-summary",
                "--hide-error-context",
                *paths,
            ]
        )
    finally:
        os.chdir(here)
    return out + err, status


def test_the_contract_and_the_example_plugins_type_check(cache):
    out, status = mypy(cache)  # the files [tool.mypy] names
    assert status == 0, out


def test_a_plugin_giving_a_kind_field_the_wrong_type_is_caught(cache, tmp_path):
    plugin = tmp_path / "wrong_plugin"
    plugin.mkdir()
    (plugin / "__init__.py").write_text(
        textwrap.dedent("""\
        from workbench.core.evaluator_option import EvaluatorOption
        from workbench.kinds.base import Kind

        GOOD = Kind(name="good", description="x", evaluator_options=(EvaluatorOption("--x", "x"),))
        NAMED = Kind(name=1, description="x")
        OPTIONS = Kind(name="options", description="x", evaluator_options=("--x",))
        """),
        encoding="utf-8",
    )
    out, status = mypy(cache, str(plugin))
    assert status == 1, out
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert len(errors) == 2, out
    assert "__init__.py:5: error:" in errors[0] and '"name"' in errors[0] and "[arg-type]" in errors[0], out
    assert "__init__.py:6: error:" in errors[1] and '"evaluator_options"' in errors[1], out
    assert "[arg-type]" in errors[1], out
