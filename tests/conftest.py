"""Shared test fixtures: paths to ../shared, the CLI runner, a project folder."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("WORKBENCH_SHARED", ROOT.parent / "shared"))
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="session")
def bbnli_dir() -> Path:
    """The real BBNLI source files. Missing them is a failure, never a skip."""
    folder = SHARED / "bbnli"
    if not folder.is_dir():
        pytest.fail(
            f"../shared/bbnli is missing (looked in {folder}); tests need the real BBNLI files"
            + (" (CI=true)" if os.environ.get("CI") == "true" else "")
        )
    return folder


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A copy of the example project (config + templates) in a temporary folder, as cwd."""
    shutil.copy(ROOT / "workbench.toml", tmp_path / "workbench.toml")
    shutil.copytree(ROOT / "templates", tmp_path / "templates")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(runner: CliRunner, *args: str, **kw):
    """Run the CLI the way `main()` does, so WorkbenchErrors become exit code 2."""
    from workbench.cli.main import app
    from workbench.core.errors import WorkbenchError

    result = runner.invoke(app, list(args), catch_exceptions=True, **kw)
    if isinstance(result.exception, WorkbenchError):
        result.exit_code = 2
    return result


@pytest.fixture(scope="session")
def fixture_models(tmp_path_factory) -> dict[str, Path]:
    """The tiny fixture models (no base-size ones), built once per test session."""
    from workbench.models.fixtures import build_all

    return build_all(tmp_path_factory.mktemp("models"), base=False)


@pytest.fixture(autouse=True)
def _offline_hub(monkeypatch, tmp_path_factory):
    """No test reaches the real Hub: a model name that is not local fails fast. Scores cached
    outside a project go to this session's own folder, not the user's ~/.cache/workbench, which
    a second test run beside this one (or the user) shares: a test counting what it computed
    must not find another run's scores there."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("WORKBENCH_PROGRESS", "0")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "user-cache"))


def write_project(root: Path, templates: dict[str, str], config: str = "") -> Path:
    """A project folder with the given template files and workbench.toml text."""
    (root / "templates").mkdir(parents=True, exist_ok=True)
    for name, text in templates.items():
        (root / "templates" / name).write_text(text, encoding="utf-8")
    (root / "workbench.toml").write_text(config, encoding="utf-8")
    return root


def synthetic_queue(workspace: Path, n: int, domains=("gender", "age", "race")) -> Path:
    from workbench.kinds.nli.fixtures import synthetic_queue as make

    return make(workspace, n, domains)


@pytest.fixture(scope="session")
def releases(tmp_path_factory):
    """kind -> a release of the kind's example project (test_standalone_lm_kinds.build_release),
    built once per kind and session when first asked for."""
    from test_standalone_lm_kinds import build_release

    built: dict = {}

    def release(kind: str):
        if kind not in built:
            built[kind] = build_release(kind, tmp_path_factory.mktemp(kind.replace("-", "_")))
        return built[kind]

    return release


@pytest.fixture(scope="session")
def queued_project(tmp_path_factory, fixture_models):
    """(kind, folder) -> a copy in FOLDER of the kind's example project with its queue built
    (support/kind_projects.make_project), built once per kind and session: each caller labels,
    pushes and pulls in its own copy."""
    from support.kind_projects import make_project

    built: dict = {}

    def project(kind: str, folder: Path) -> Path:
        if kind not in built:
            pristine = tmp_path_factory.mktemp(f"queued-{kind.replace('-', '_')}") / kind
            built[kind] = make_project(kind, pristine, fixture_models["mlm-bert"])
        shutil.copytree(built[kind], folder, symlinks=True)
        return Path(folder)

    return project
