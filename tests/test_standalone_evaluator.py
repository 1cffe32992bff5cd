"""The standalone evaluate.py a release carries: it runs where workbench is not installed,
offline, checks the data against the manifest, and writes the JSON `workbench evaluate` does."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import ROOT, invoke
from workbench import __version__, kinds
from workbench.contract.kind import Kind
from workbench.models.loading import local_revision
from workbench.release import standalone
from support.figures import assert_same_figures

# Runs a release's evaluate.py where the installed workbench cannot be imported: `workbench`
# may come only from the release's own evaluator/ folder (TEST_BLOCKED names more packages to
# refuse). At exit it writes the file of every workbench module that was loaded to TEST_LOADED.
ONLY_THE_RELEASE = """
import atexit, importlib.abc, importlib.machinery, json, os, runpy, sys
from pathlib import Path

script = Path(sys.argv[1]).resolve()
inside = script.parent / "evaluator"
blocked = set(filter(None, os.environ.get("TEST_BLOCKED", "").split(",")))

class OnlyTheRelease(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top in blocked:
            raise ImportError(f"No module named {name!r} (blocked by the test)")
        if top != "workbench":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.origin is None or not Path(spec.origin).resolve().is_relative_to(inside):
            raise ImportError(f"No module named {name!r} (blocked by the test: not in {inside})")
        return spec

sys.meta_path.insert(0, OnlyTheRelease())
try:
    import workbench  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("the installed workbench is still importable")

def record():
    loaded = sorted(m.__file__ for n, m in list(sys.modules.items())
                    if n.split(".")[0] == "workbench" and getattr(m, "__file__", None))
    Path(os.environ["TEST_LOADED"]).write_text(json.dumps(loaded))

atexit.register(record)
sys.argv = sys.argv[1:]
runpy.run_path(str(script), run_name="__main__")
"""

# What only names the tool and its version; everything else must be equal.
TOOL_FIELDS = ("tool", "tool_version", "provenance")


def without_tool_fields(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k not in TOOL_FIELDS}


def run_standalone(
    script: Path, args: list[str], cwd: Path, hub=None, token: str | None = None, blocked: tuple[str, ...] = ()
) -> subprocess.CompletedProcess:
    """Run a release's evaluate.py without the installed workbench, from `cwd`, offline unless a
    test Hub is given. Every workbench module it loaded must be a file of the release's evaluator/
    (`ran.loaded`: those files), and the release's files stay as they were (no bytecode)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HF_ENDPOINT", "HF_HUB_OFFLINE", "HF_TOKEN")}
    env.update(HF_HOME=str(cwd / ".hf-home"), PYTHONNOUSERSITE="1", TEST_BLOCKED=",".join(blocked))
    if hub is None:
        env["HF_HUB_OFFLINE"] = "1"
    else:
        env.update(HF_ENDPOINT=hub.url, HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1", HF_TOKEN=token)
    before = sorted(p for p in script.parent.rglob("*"))
    with tempfile.TemporaryDirectory() as scratch:
        env["TEST_LOADED"] = str(Path(scratch) / "loaded.json")
        ran = subprocess.run(
            [sys.executable, "-c", ONLY_THE_RELEASE, str(script), *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        record = Path(env["TEST_LOADED"])
        ran.loaded = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else []
    code = script.parent.resolve() / "evaluator"
    assert all(Path(f).resolve().is_relative_to(code) for f in ran.loaded), ran.loaded
    assert ran.returncode != 0 or ran.loaded, "scored, but no workbench module came from evaluator/"
    if cwd.resolve() != script.parent.resolve():
        assert sorted(p for p in script.parent.rglob("*")) == before, "running evaluate.py changed the release's files"
    return ran


@pytest.fixture(scope="module")
def nli_release(tmp_path_factory, fixture_models) -> tuple[Path, Path]:
    """(project, release folder): a labelled NLI project built as version 1.0.0."""
    from typer.testing import CliRunner

    from test_release import write_labels

    project = tmp_path_factory.mktemp("project")
    shutil.copytree(ROOT / "templates", project / "templates")
    (project / "workbench.toml").write_text(
        '[project]\nname = "demo-bias"\nrepo = "test-org/demo-bias"\nlicense = "cc-by-4.0"\n'
        f'[generate]\nmodel = "{fixture_models["mlm-bert"]}"\ntop_k = 5\n'
        f'[filter]\nmodels = ["{fixture_models["nli-a"]}", "{fixture_models["nli-c"]}"]\n[evaluate]\nmodels = []\n'
    )
    runner = CliRunner()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("WORKBENCH_PROGRESS", "0")
        for step in (["expand"], ["generate"], ["filter"], ["run"]):
            assert invoke(runner, *step).exit_code == 0
        items = pq.read_table(project / ".workbench" / "queue" / "data.parquet").to_pylist()
        write_labels(
            project / "labels.jsonl", items, lambda k: ["valid-pro", "valid-anti", "invalid", "incoherent"][k % 4]
        )
        assert invoke(runner, "annotate", "-a", "alice", "--labels-from", str(project / "labels.jsonl")).exit_code == 0
        built = invoke(runner, "build", "--version", "1.0.0")
        assert built.exit_code == 0, built.output
    return project, (project / "exports" / "demo-bias" / "1.0.0").resolve()


# every installed kind with a standalone evaluator, by name
STANDALONE_KINDS = sorted(k.name for k in kinds.loadable() if k.standalone)


def built(kind: str, folder: Path, dataset: str | None = "org/name@v1.0.0") -> Path:
    """The kind's standalone evaluator written into `folder` as a build writes it."""
    folder.mkdir(parents=True, exist_ok=True)
    assert standalone.write(kinds.get(kind), dataset, folder) is not None
    return folder


def evaluator_files(folder: Path) -> dict[str, Path]:
    """Path under evaluator/ (as text) -> the file, for every file a release's evaluator/ holds."""
    code = folder / "evaluator"
    return {p.relative_to(code).as_posix(): p for p in sorted(code.rglob("*")) if p.is_file()}


def module_name(relative: str) -> str:
    return relative.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def imports_in(tree: ast.AST):
    """(line, absolute-or-relative import node) of every import, at any depth, but those under
    `if TYPE_CHECKING:` (which never run) and those a `try:` guards with an `except ImportError`
    that carries on (optional: the script runs without them)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
            for other in node.orelse:
                yield from imports_in(ast.Module(body=[other], type_ignores=[]))
            continue
        if isinstance(node, ast.Try) and any(
            getattr(h.type, "id", "") in ("ImportError", "ModuleNotFoundError")
            and not any(isinstance(s, ast.Raise) for s in h.body)
            for h in node.handlers
        ):
            for other in [*node.handlers, *node.orelse, *node.finalbody]:
                yield from imports_in(ast.Module(body=[other], type_ignores=[]))
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        yield from imports_in(node)


def absolute(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The modules (or `module.name` candidates) an import statement names, made absolute."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = (
        ".".join(
            package[: len(package) - node.level + 1] + [node.module]
            if node.module
            else package[: len(package) - node.level + 1]
        )
        if node.level
        else node.module
    )
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


@pytest.mark.parametrize("kind", STANDALONE_KINDS)
def test_every_import_of_the_evaluator_is_installed_by_the_card_or_copied(kind, tmp_path):
    """Each import in every file of a release's evaluator/ (inside functions too) is the standard
    library, a package of the card's pip line (or one transformers itself installs), or a module
    copied into evaluator/; and `--help` runs with only the release's own workbench."""
    folder = built(kind, tmp_path / "release")
    files = evaluator_files(folder)
    copied = {module_name(f) for f in files}
    requirements = standalone.card_lines(kinds.get(kind))[0].split("pip install ")[1].rstrip("):").split()
    allowed = set(requirements) | {"safetensors", "huggingface_hub", "__future__"}  # transformers' own
    tops = set()
    for relative, path in files.items():
        for node in imports_in(ast.parse(path.read_bytes())):
            names = absolute(node, module_name(relative), relative.endswith("__init__.py"))
            top = names[0].split(".")[0]
            if top == "workbench":
                assert any(n in copied for n in names), f"{relative}:{node.lineno} imports {names[0]}, not copied"
            else:
                tops.add(top)
                assert top in sys.stdlib_module_names or top in allowed, f"{relative}:{node.lineno} imports {names[0]}"
    assert "torch" in tops and "transformers" in tops  # every kind runs its models itself
    assert ("pyarrow" in tops) == ("pyarrow" in requirements)  # asked for exactly where it is used
    launcher = (folder / "evaluate.py").read_text(encoding="utf-8")
    assert len(launcher.splitlines()) < 70 and "def " in launcher  # a docstring and a few lines, no code of its own
    ran = run_standalone(folder / "evaluate.py", ["--help"], cwd=tmp_path)
    assert ran.returncode == 0 and "--model" in ran.stdout and "Standalone evaluator" in ran.stdout, ran.stderr
    assert launcher.splitlines()[1].removeprefix('"""') in ran.stdout  # the docstring's first line, in --help


@pytest.mark.parametrize("kind", STANDALONE_KINDS)
def test_the_standalone_and_the_in_package_evaluator_are_the_same_code(kind, tmp_path):
    """Every file of a release's evaluator/ is byte for byte the workbench file at the same path
    (only the packages none of them imports from get an empty __init__.py instead), and the
    kind's standalone module takes its scoring functions from where `workbench evaluate` takes them."""
    from workbench import kinds

    files = evaluator_files(built(kind, tmp_path))
    modules = {module_name(f) for f in files}
    markers = []
    for relative, path in files.items():
        source = ROOT / relative
        assert source.is_file(), f"evaluator/{relative} is no file of workbench"
        if path.read_bytes() != source.read_bytes():
            assert relative.endswith("/__init__.py") and path.read_bytes() == b"", f"evaluator/{relative} differs"
            markers.append(module_name(relative))
    name = kinds.get(kind).standalone
    assert f"{name.replace('.', '/')}.py" in files
    assert {"workbench.release.runtime.cli", "workbench.release.runtime.release", "workbench.models.runtime"} <= modules
    # a marker stands only for a package that no copied module imports names from
    for relative, path in files.items():
        for node in imports_in(ast.parse(path.read_bytes())):
            if isinstance(node, ast.ImportFrom):
                names = absolute(node, module_name(relative), relative.endswith("__init__.py"))
                assert names[0] not in markers or all(n in modules for n in names[1:]), (relative, node.lineno)

    # What the standalone module imports from the kind's packages, `workbench evaluate` imports too
    # (from the same module), somewhere in the code it runs for that kind.
    shared = scoring_imports(name)
    used = in_package_imports(kinds.get(kind).evaluator)
    assert shared, name
    assert shared - used <= NOT_IMPORTED_IN_PACKAGE.get(kind, set()), sorted(shared - used)
    module = importlib.import_module(name)
    for source, attribute in shared:
        if name == kinds.get(kind).evaluator and not hasattr(module, attribute):
            continue  # the evaluator module itself (a declared kind): what it imports in a function is its own code
        assert getattr(module, attribute) is getattr(importlib.import_module(source), attribute)


# What a standalone module takes from its kind that `workbench evaluate` reaches another way.
NOT_IMPORTED_IN_PACKAGE = {
    # called by classifier.resolve_classifiers, which also looks a model up on the Hub (the script names it offline)
    "nli": {("workbench.kinds.nli.classifier", "check_labels")},
    # the choices of the script's --score-rule; workbench's --score-rule is checked by fills.score_rule (shared)
    "honest": {("workbench.kinds.honest.fills", "CAUSAL_RULES"), ("workbench.kinds.honest.fills", "MASKED_RULES")},
    # the choices of the scripts' reference switches; workbench's come from the kind's evaluator_options
    "sos": {("workbench.kinds.sos.metrics", "TOKEN_RULES")},
    "stereoset": {
        ("workbench.kinds.stereoset.scoring", "CAUSAL_INTERSENTENCE"),
        ("workbench.kinds.stereoset.scoring", "MASKED_INTRASENTENCE"),
    },
}


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # a name inside a module, not a module
        return False


def _from_imports(name: str) -> set[tuple[str, str]]:
    """(module, name) of every `from MODULE import NAME` in module `name`, at any depth, made
    absolute; a module imported by name (`from . import data`) adds what the code reads from it
    (`data.check` -> (PACKAGE.data, check))."""
    path = Path(importlib.util.find_spec(name).origin)
    tree = ast.parse(path.read_bytes())
    out, bound = set(), {}
    for node in imports_in(tree):
        if isinstance(node, ast.ImportFrom):
            base = absolute(node, name, path.name == "__init__.py")[0]
            for alias in node.names:
                out.add((base, alias.name))
                if base.startswith("workbench.") and _is_module(f"{base}.{alias.name}"):
                    bound[alias.asname or alias.name] = f"{base}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            out.add((bound[node.value.id], node.attr))
    return out


def scoring_imports(name: str) -> set[tuple[str, str]]:
    """What a standalone module imports from the kinds' modules (the runtime and core aside)."""
    return {(m, n) for m, n in _from_imports(name) if m.startswith("workbench.kinds.")}


def in_package_imports(evaluator: str) -> set[tuple[str, str]]:
    """What the kinds' modules that `workbench evaluate` runs for a kind import, following its
    evaluator module's imports through the kinds' packages."""
    seen, todo, found = set(), [evaluator], set()
    while todo:
        name = todo.pop()
        if name in seen or not _is_module(name):
            continue
        seen.add(name)
        for module, attribute in _from_imports(name):
            found.add((module, attribute))
            for candidate in (module, f"{module}.{attribute}"):
                if candidate.startswith("workbench.kinds.") and _is_module(candidate):
                    todo.append(candidate)
    return found


def test_a_copied_module_that_imports_what_users_lack_is_refused_at_build_time(tmp_path, monkeypatch):
    """An import the script's users would not have, at any depth of the closure and inside a
    function too, stops the build with the module and line; one under TYPE_CHECKING does not."""
    from workbench.core.errors import WorkbenchError
    from workbench.release.standalone.closure import EvaluatorError

    package = tmp_path / "plugin_kind"
    package.mkdir()
    (package / "__init__.py").write_text("import rich  # the package itself is only a marker in evaluator/\n")
    (package / "standalone.py").write_text(
        "from __future__ import annotations\n\nfrom typing import TYPE_CHECKING\n\n"
        "from workbench.core.errors import InputError\nfrom .helper import measure\n\n"
        "TITLE, MEASURES, DATA = 'Plugin', 'a share', 'data/x.csv'\nevaluate = measure\n\n"
        "if TYPE_CHECKING:\n    import pandas\n"
    )
    (package / "helper.py").write_text("import json\n\n\ndef measure():\n    import yaml\n    return json\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    plugin = Kind(name="plugin-kind", description="a plugin", standalone="plugin_kind.standalone")
    with pytest.raises(EvaluatorError) as refused:
        standalone.write(plugin, None, tmp_path / "release")
    message = str(refused.value)
    assert "plugin_kind/helper.py:5: imports yaml" in message
    assert "pandas" not in message and "rich" not in message and "InputError" not in message
    assert not (tmp_path / "release" / "evaluate.py").exists()
    assert issubclass(EvaluatorError, WorkbenchError)  # `workbench build` says it in one line, exit code 2

    # an optional import (a `try:` that catches ImportError) is allowed: the script runs without it
    (package / "helper.py").write_text(
        "import json\n\n\ndef measure():\n    try:\n        import yaml\n"
        "    except ImportError:\n        yaml = None\n    return json, yaml\n"
    )
    version = standalone.write(plugin, None, tmp_path / "release")
    assert version.startswith(__version__ + "+")
    files = evaluator_files(tmp_path / "release")
    assert set(files) == {
        "plugin_kind/__init__.py",
        "plugin_kind/standalone.py",
        "plugin_kind/helper.py",
        "workbench/__init__.py",
        "workbench/core/__init__.py",
        "workbench/core/errors.py",
    }
    assert files["plugin_kind/__init__.py"].read_bytes() == b"" and files["workbench/__init__.py"].read_bytes() == b""
    (package / "helper.py").write_text("import pydantic\n")
    with pytest.raises(EvaluatorError, match=r"plugin_kind/helper.py:1: imports pydantic"):
        standalone.write(plugin, None, tmp_path / "other")


def test_model_revision_is_the_commit_in_the_hub_cache_or_local(tmp_path, monkeypatch, fixture_models):
    from huggingface_hub import constants

    from workbench.release.runtime.models import model_ref, model_revision
    from workbench.release.runtime.release import Refused

    commit = "0123456789abcdef0123456789abcdef01234567"
    cache = tmp_path / "hub"
    (cache / "models--org--nli" / "refs").mkdir(parents=True)
    (cache / "models--org--nli" / "refs" / "main").write_text(commit)
    (cache / "models--org--nli" / "snapshots" / commit).mkdir(parents=True)
    (cache / "models--org--nli" / "snapshots" / commit / "config.json").write_text("{}")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    assert model_revision("org/nli", "org/nli") == commit
    assert model_revision("org/other", "org/other") == "unknown"
    local = str(fixture_models["nli-a"])
    assert model_revision(local, local) == "local"
    assert model_ref("org/nli").revision == commit and model_ref("org/other").revision == "main"
    assert model_ref(local).revision.startswith("sha256:")  # a hash of its files, as workbench names it
    with pytest.raises(Refused, match="'./nowhere': no such folder"):
        model_ref("./nowhere")


def test_standalone_evaluate_py_equals_workbench_evaluate_without_workbench_offline(
    nli_release, fixture_models, tmp_path, monkeypatch
):
    project, release = nli_release
    models = [str(fixture_models["nli-a"]), str(fixture_models["nli-c"])]
    # The card's words, with the models filled in.
    card = (release / "README.md").read_text(encoding="utf-8")
    command = next(line.split("#")[0] for line in card.splitlines() if line.startswith("python evaluate.py"))
    words = shlex.split(command)
    assert words[:2] == ["python", "evaluate.py"] and "--model" in words and "--json" in words
    args = [models[0] if word == "MODEL" else word for word in words[2:]] + ["--model", models[1]]  # repeatable

    # Outside the repository and the project: a download of the release next to nothing else.
    where = tmp_path / "elsewhere"
    shutil.copytree(release, where / "demo-bias")
    ran = run_standalone(where / "demo-bias" / "evaluate.py", args, cwd=where)
    assert ran.returncode == 0, ran.stderr[-3000:]
    out = where / words[words.index("--json") + 1]
    standalone_doc = json.loads(out.read_text(encoding="utf-8"))

    monkeypatch.chdir(project)
    from typer.testing import CliRunner

    folder = str((where / "demo-bias").resolve())
    result = invoke(
        CliRunner(),
        "evaluate",
        folder,
        *[a for m in models for a in ("--model", m)],
        "--json",
        str(tmp_path / "workbench.json"),
        "--cache",
        str(tmp_path / "fresh-cache.sqlite"),
    )
    assert result.exit_code == 0, result.output
    workbench_doc = json.loads((tmp_path / "workbench.json").read_text(encoding="utf-8"))

    assert_same_figures(without_tool_fields(standalone_doc), without_tool_fields(workbench_doc))
    assert set(standalone_doc["models"]) == set(models) and standalone_doc["dataset"]["n_samples"] > 0
    assert (
        standalone_doc["dataset"]["repo"] == "test-org/demo-bias" and standalone_doc["dataset"]["revision"] == "v1.0.0"
    )
    provenance = standalone_doc["provenance"]
    assert provenance["dataset_folder"] == folder and provenance["dataset_commit"] is None
    assert provenance["release"] == "test-org/demo-bias@v1.0.0"
    # each model named as workbench names it: a hash of its checkpoint's files
    assert provenance["model_revisions"] == {m: local_revision(Path(m)) for m in models}
    assert provenance["evaluator_version"] == standalone_doc["tool_version"]
    assert provenance["evaluator_version"].startswith(__version__ + "+")
    assert "aggregate bias score" in ran.stdout  # the terminal summary
    # the code that ran is the release's: its own modules, the kind's and workbench's scoring code among them
    loaded = {Path(f).relative_to(where / "demo-bias" / "evaluator").as_posix() for f in ran.loaded}
    assert {
        "workbench/kinds/nli/evaluate.py",
        "workbench/kinds/nli/classifier.py",
        "workbench/kinds/nli/evaluation/metrics/nli_scores.py",
        "workbench/release/runtime/cli.py",
    } <= loaded


def test_cut_data_file_is_refused_not_scored(nli_release, fixture_models, tmp_path):
    _, release = nli_release
    copy = tmp_path / "release"
    shutil.copytree(release, copy)
    data = copy / "data" / "all.parquet"
    data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    ran = run_standalone(
        copy / "evaluate.py", ["--model", str(fixture_models["nli-a"]), "--json", "s.json"], cwd=tmp_path
    )
    assert ran.returncode == 2, ran.stderr[-3000:]
    assert "data/all.parquet" in ran.stderr and "cut short" in ran.stderr and "nothing was scored" in ran.stderr
    assert "Traceback" not in ran.stderr and not (tmp_path / "s.json").exists()


def alone(release: Path, folder: Path) -> Path:
    """evaluate.py and the code it runs (evaluator/), copied away from the release's files."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(release / "evaluate.py", folder / "evaluate.py")
    shutil.copytree(release / "evaluator", folder / "evaluator")
    return folder / "evaluate.py"


def test_alone_and_offline_it_says_it_cannot_fetch_the_pinned_release(nli_release, fixture_models, tmp_path):
    """Copied away from the release files, it fetches the pinned tag; offline that fails clearly.
    Without the evaluator/ folder beside it, it says that is missing."""
    _, release = nli_release
    script = alone(release, tmp_path / "alone")
    ran = run_standalone(script, ["--model", str(fixture_models["nli-a"])], cwd=tmp_path)
    assert ran.returncode == 2, ran.stderr[-3000:]
    assert "cannot download test-org/demo-bias@v1.0.0" in ran.stderr and "Traceback" not in ran.stderr

    # without a package the card names, or with the installed workbench already imported: one line each
    ran = run_standalone(script, ["--model", str(fixture_models["nli-a"])], cwd=tmp_path, blocked=("numpy",))
    assert ran.returncode == 2 and ran.stderr.strip().splitlines() == [
        "evaluate.py: error: No module named 'numpy' (blocked by the test); this script needs: pip install torch "
        "transformers numpy pyarrow"
    ], ran.stderr[-3000:]
    code = (
        f"import runpy, sys, workbench; sys.argv = [{str(script)!r}]; runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert ran.returncode == 2 and ran.stderr.strip().splitlines() == [
        "evaluate.py: error: workbench is already imported in this Python process; run the script on its own: "
        "python evaluate.py ..."
    ], ran.stderr[-3000:]

    shutil.rmtree(tmp_path / "alone" / "evaluator")
    ran = run_standalone(script, ["--model", str(fixture_models["nli-a"])], cwd=tmp_path)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr and not ran.loaded, ran.stderr[-3000:]
    assert ran.stderr.strip().splitlines() == [
        f"evaluate.py: error: {tmp_path / 'alone' / 'evaluator'} is missing: it "
        "holds the code this script runs; download it with evaluate.py"
    ]


def test_alone_it_scores_the_pinned_revision_from_the_hub_and_records_its_commit(nli_release, fixture_models, tmp_path):
    from support.hub_server import HubServer
    from test_release import TOKEN, run_cli

    project, release = nli_release
    model = str(fixture_models["nli-a"])
    hub = HubServer(tokens={TOKEN}).start()
    try:
        published = run_cli(project, hub, "publish", "--version", "1.0.0")
        assert published.returncode == 0, published.stderr[-3000:]
        ran = run_standalone(
            alone(release, tmp_path), ["--model", model, "--json", "s.json"], cwd=tmp_path, hub=hub, token=TOKEN
        )
        assert ran.returncode == 0, ran.stderr[-3000:]
        scored = run_cli(
            project,
            hub,
            "evaluate",
            "test-org/demo-bias@v1.0.0",
            "--model",
            model,
            "--json",
            str(tmp_path / "w.json"),
            "--cache",
            str(tmp_path / "fresh-cache.sqlite"),
        )
        assert scored.returncode == 0, scored.stderr[-3000:]
        tag = hub.state.repos[("dataset", "test-org/demo-bias")].tags["v1.0.0"]
    finally:
        hub.stop()
    doc = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert_same_figures(
        without_tool_fields(doc), without_tool_fields(json.loads((tmp_path / "w.json").read_text(encoding="utf-8")))
    )
    assert doc["dataset"]["dataset"] == "test-org/demo-bias@v1.0.0"
    assert doc["provenance"]["dataset_commit"] == tag and doc["provenance"]["dataset_folder"] is None
