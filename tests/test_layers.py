"""The layers hold: read from the code's own imports (parsed, never imported), so a change that
breaks them fails here.

From the top down: the command line (`workbench/cli/`, `workbench/demo.py`, `__main__.py`) may
import anything; the kinds (`workbench/kinds/`: each kind's package, and the package itself, which
re-exports the registry and detects a file's kind) use the shared packages; the shared packages
(release, evaluation, sources, annotation, labelstudio, core, models, languages, authoring, tui,
and validation.py) know no kind; below them `workbench/contract/` holds the kind contract
(`kind.py`), the registry (`registry.py`), the guarded loader and the code identity; `core/` is at
the bottom.

- no import cycles between workbench's modules (imports inside functions count too);
- `core/` imports nothing of workbench outside itself;
- `contract/` imports only `core/` and itself at run time (type-only imports aside);
- the hard rule: no shared package imports anything under `workbench/kinds/` (nor names a kind's
  module in a string, as `importlib.import_module` would): every import runs downward;
- shared code is handed the kind: it never imports the registry (so never looks one up by name);
- at most the listed files outside `workbench/kinds/` name a kind, and they say why.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "workbench"
KIND_WORDS = re.compile(r"(?i)(?<![a-z])(nli|bbnli|stereo_?set|crows|honest|sofa|sos|hurtlex)(?![a-z])")
# Files outside kinds/ allowed to name a kind, and why.
NAMING_A_KIND = {
    "workbench/models/fixtures.py": "builds the tiny offline models of every kind's tests and demo (NLI classifiers among them)",
    "workbench/contract/registry.py": "lists the built-in kinds' entry points (for a checkout never installed) and the "
    "default kind of a project that names none",
}
# The layer below shared code: the contract, the registry, the loader and the code identity.
CONTRACT = {
    "workbench.contract",
    "workbench.contract.kind",
    "workbench.contract.registry",
    "workbench.contract.loader",
    "workbench.contract.code",
}
REGISTRY = "workbench.contract.registry"
# Shared code: it knows no kind (packages, and modules at workbench's top).
SHARED = (
    "release",
    "evaluation",
    "sources",
    "annotation",
    "labelstudio",
    "core",
    "models",
    "languages",
    "authoring",
    "tui",
    "validation",
)
# The top layer: it may import anything.
TOP = ("cli", "demo", "__main__")
BUILT_IN_KINDS = {"crows_pairs", "honest", "nli", "sofa", "sos", "stereoset"}


def _module(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package_dir: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the workbench modules it imports (relative imports resolved; `from pkg import
    name` counts as importing pkg.name when that is a module). Cached: callers must not change it."""
    return _import_graph(package_dir)


@lru_cache(maxsize=None)
def _import_graph(package_dir: Path) -> dict[str, set[str]]:
    modules = {_module(p, package_dir.parent): p for p in package_dir.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.split(".")[0] == "workbench"}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                elif (node.module or "").split(".")[0] == "workbench":
                    target = node.module
                else:
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    found.add(sub if sub in modules else target)
        graph[name] = {m if m in modules else m.rpartition(".")[0] for m in found} - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_planted_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_core_imports_nothing_of_workbench_outside_core():
    bad = {
        m: sorted(d for d in deps if not d.startswith("workbench.core") and d != "workbench")
        for m, deps in import_graph().items()
        if m.startswith("workbench.core")
    }
    assert {m: d for m, d in bad.items() if d} == {}


def test_at_most_three_files_outside_kinds_name_a_kind():
    naming = sorted(
        str(p.relative_to(ROOT))
        for p in PACKAGE.rglob("*.py")
        if not p.is_relative_to(PACKAGE / "kinds") and KIND_WORDS.search(p.read_text(encoding="utf-8"))
    )
    assert set(naming) <= set(NAMING_A_KIND), f"files outside workbench/kinds/ that name a kind: {naming}"
    assert len(NAMING_A_KIND) <= 3


def kind_packages(package_dir: Path = PACKAGE) -> set[str]:
    """The kinds' packages: every package directly under workbench/kinds/."""
    return {f"workbench.kinds.{p.parent.name}" for p in (package_dir / "kinds").glob("*/__init__.py")}


def layer(module: str) -> str:
    """top, kind, contract, shared or other (a module no rule places)."""
    part = module.split(".")[1] if "." in module else ""
    if part in TOP:
        return "top"
    if module in CONTRACT:
        return "contract"
    if part == "kinds":
        return "kind"
    return "shared" if part in SHARED else "other"


def named_modules(path: Path) -> set[str]:
    """The strings in a module's code that name a workbench module (`import_module("workbench.kinds.x")`)."""
    return {
        node.value
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.fullmatch(r"workbench(\.\w+)+", node.value)
    }


def upward(package_dir: Path = PACKAGE) -> dict[str, list[str]]:
    """Shared module -> what it takes from workbench/kinds/: a kind's package or module, imported or
    named in a string, or the kinds' package itself (the hard rule), and the registry (shared code
    is handed its kind, never looks one up)."""
    graph, kinds = import_graph(package_dir), kind_packages(package_dir)
    paths = {_module(p, package_dir.parent): p for p in package_dir.rglob("*.py")}
    bad = {}
    for module, deps in graph.items():
        if layer(module) != "shared":
            continue
        named = {n for n in named_modules(paths[module]) if any(n == k or n.startswith(k + ".") for k in kinds)}
        wrong = {d for d in deps if d.startswith("workbench.kinds") or d == REGISTRY} | named
        if wrong:
            bad[module] = sorted(wrong)
    return bad


def _plant(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "workbench" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "workbench"


def test_the_layer_check_finds_planted_upward_imports(tmp_path):
    package = _plant(
        tmp_path,
        {
            "__init__.py": "",
            "kinds/__init__.py": "",
            "kinds/base.py": "",
            "kinds/nli/__init__.py": "",
            "kinds/nli/evaluate.py": "from ...evaluation import intervals\n",
            "contract/__init__.py": "",
            "contract/kind.py": "",
            "contract/registry.py": "",
            "evaluation/__init__.py": "",
            "evaluation/intervals.py": "from ..contract.kind import Kind\n",  # the contract: allowed
            "evaluation/report.py": "def f():\n    from ..kinds.nli.evaluate import score\n",  # inside a function too
            "evaluation/versions.py": "from .. import kinds\nfrom ..contract import registry\n",  # a lookup, either way
            "release/__init__.py": "",
            "release/build.py": "from workbench.kinds import nli\nfrom workbench.kinds.base import x\n",
            "sources/__init__.py": "",
            "sources/checks.py": "import importlib\nm = importlib.import_module('workbench.kinds.nli.evaluate')\n",
            "cli/__init__.py": "",
            "cli/main.py": "from ..kinds.nli import evaluate\n",  # the top layer may
            "demo.py": "import workbench.kinds.nli.evaluate\n",
        },
    )
    assert kind_packages(package) == {"workbench.kinds.nli"}
    assert upward(package) == {
        "workbench.evaluation.report": ["workbench.kinds.nli.evaluate"],
        "workbench.evaluation.versions": ["workbench.contract.registry", "workbench.kinds"],
        "workbench.release.build": ["workbench.kinds.base", "workbench.kinds.nli"],
        "workbench.sources.checks": ["workbench.kinds.nli.evaluate"],
    }


def test_every_module_has_a_layer_and_the_built_in_kinds_are_found():
    """A new package under workbench/ is placed in a layer here before its imports are checked."""
    assert BUILT_IN_KINDS <= {k.rpartition(".")[2] for k in kind_packages()}
    assert {m for m in import_graph() if layer(m) == "other"} <= {"workbench"}
    assert {m.split(".")[1] for m in import_graph() if layer(m) == "shared"} == set(SHARED)
    assert {m for m in import_graph() if layer(m) == "contract"} == CONTRACT


def test_no_shared_package_imports_anything_of_kinds_nor_the_registry():
    """The hard rule: shared code never imports a concrete kind, nor anything else under
    workbench/kinds/, nor the registry: it is handed the kind (`contract.kind.Kind`), and every
    import runs downward."""
    assert upward() == {}


def runtime_imports(path: Path) -> set[str]:
    """The workbench modules a contract module imports outside `if TYPE_CHECKING:` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
        for n in ast.walk(node)
    }
    package = _module(path).rpartition(".")[0] if path.name != "__init__.py" else _module(path)
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only or not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            found.add(".".join(base + ([node.module] if node.module else [])))
        elif (node.module or "").startswith("workbench"):
            found.add(node.module)
    return found


def test_the_contract_imports_only_core_and_itself_at_run_time():
    bad = {
        str(p.relative_to(ROOT)): sorted(
            m
            for m in runtime_imports(p)
            if not m.startswith(("workbench.core", "workbench.contract")) and m != "workbench"
        )
        for p in (PACKAGE / "contract").glob("*.py")
    }
    assert {f: m for f, m in bad.items() if m} == {}
