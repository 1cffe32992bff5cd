"""The layers hold: read from the code's own imports (parsed, never imported), so a change that
breaks them fails here.

From the top down: the command line (`workbench/cli/`, `workbench/demo.py`, `__main__.py`) may
import anything; the kinds' packages (`workbench/kinds/<kind>/`: crows_pairs, honest, nli, sofa,
sos, stereoset) use the shared packages; the shared packages (release, evaluation, sources,
annotation, labelstudio, core, models, languages, authoring, tui, and validation.py) know no kind;
at the bottom the kind contract and the registry (`kinds/base.py`, `kinds/__init__.py`,
`kinds/loader.py`, `kinds/layout.py`, `kinds/code.py`) are the layer below shared code, although
they live under `workbench/kinds/`: a shared package is handed a kind as the contract's `Kind`.

- no import cycles between workbench's modules (imports inside functions count too);
- `core/` imports nothing of workbench outside itself;
- the hard rule: no shared package imports a kind's package (nor names its module in a string,
  as `importlib.import_module` would); into `workbench/kinds/` they import the contract and the
  registry modules alone;
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
}
# The layer below shared code, though it lives under workbench/kinds/: the contract and the registry.
CONTRACT = {
    "workbench.kinds",
    "workbench.kinds.base",
    "workbench.kinds.loader",
    "workbench.kinds.layout",
    "workbench.kinds.code",
}
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
    """Shared module -> what it takes from workbench/kinds/ beyond the contract and the registry:
    a kind's package or module, imported or named in a string (the hard rule), or any other
    module of kinds/ that is neither contract nor registry."""
    graph, kinds = import_graph(package_dir), kind_packages(package_dir)
    paths = {_module(p, package_dir.parent): p for p in package_dir.rglob("*.py")}
    bad = {}
    for module, deps in graph.items():
        if layer(module) != "shared":
            continue
        named = {n for n in named_modules(paths[module]) if any(n == k or n.startswith(k + ".") for k in kinds)}
        wrong = {d for d in deps if d.startswith("workbench.kinds") and d not in CONTRACT} | named
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
            "kinds/loader.py": "",
            "kinds/nli/__init__.py": "",
            "kinds/nli/evaluate.py": "from ...evaluation import intervals\n",
            "evaluation/__init__.py": "",
            "evaluation/intervals.py": "from ..kinds.base import Kind\nfrom .. import kinds\n",  # contract, registry: allowed
            "evaluation/report.py": "def f():\n    from ..kinds.nli.evaluate import score\n",  # inside a function too
            "release/__init__.py": "",
            "release/build.py": "from workbench.kinds import nli\nfrom workbench.kinds.loader import x\n",
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
        "workbench.release.build": ["workbench.kinds.nli"],
        "workbench.sources.checks": ["workbench.kinds.nli.evaluate"],
    }


def test_every_module_has_a_layer_and_the_built_in_kinds_are_found():
    """A new package under workbench/ is placed in a layer here before its imports are checked."""
    assert BUILT_IN_KINDS <= {k.rpartition(".")[2] for k in kind_packages()}
    assert {m for m in import_graph() if layer(m) == "other"} <= {"workbench"}
    assert {m.split(".")[1] for m in import_graph() if layer(m) == "shared"} == set(SHARED)
    assert {m for m in import_graph() if layer(m) == "contract"} == CONTRACT


def test_no_shared_package_imports_a_kind_and_only_the_contract_and_registry_from_kinds():
    """The hard rule: shared code never imports a concrete kind (it is handed the kind). What a
    shared package takes from workbench/kinds/ is the contract and the registry, the layer below it."""
    assert upward() == {}
