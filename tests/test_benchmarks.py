"""The benchmark harness (not the figures): every section has a module, the report lists every
section with its state, and `make bench SECTION=...` picks sections by name."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from benchmarks import common, run


def test_every_section_has_a_module_with_run():
    for name in common.ORDER:
        module = importlib.import_module(f"benchmarks.bench_{name}")
        assert callable(getattr(module, "run", None)), name
    assert sorted(n for names in common.GROUPS.values() for n in names) == sorted(common.ORDER)


def test_sections_are_chosen_by_name_in_report_order():
    assert run.sections(["sofa,fluency", "crows-pairs"]) == ["fluency", "crows_pairs", "sofa"]
    assert run.sections([]) == common.ORDER
    with pytest.raises(SystemExit, match="unknown section"):
        run.sections(["fluenc"])


def test_report_lists_every_section_measured_or_not(tmp_path, monkeypatch):
    monkeypatch.setattr(common, "REPORT", tmp_path / "REPORT.md")
    measured = common.stamp(
        common.summary(
            title="t",
            workload="w",
            figure="123 things/s",
            clock="c",
            roof=0.91,
            roof_what="a pure pass",
            loop=7.5,
            loop_what="one at a time",
            figures={"n": 3},
            notes=["a note"],
        ),
        "python -m benchmarks.run fluency",
        12.3,
        {"gpu": "none (no GPU)", "cpu": "x"},
    )
    failed = common.stamp({"status": "could not run", "why": "no Label Studio here"}, "cmd", 1, {"gpu": "none"})
    common.write_report({"fluency": measured, "labelstudio": failed})
    text = (tmp_path / "REPORT.md").read_text()
    assert "No GPU was available" in text
    assert "| [fluency](#fluency) | w | 123 things/s | 0.91× | 7.50× | c |" in text
    assert "| labelstudio | could not run: no Label Studio here |" in text
    for name in set(common.ORDER) - {"fluency", "labelstudio"}:
        assert f"| {name} | not measured yet (`make bench SECTION={name}`)" in text
    assert "by `python -m benchmarks.run fluency` in 12 s" in text and "- a note" in text


def unresolved_workbench_imports(path: Path) -> list[str]:
    """Every `from workbench... import name` (and `import workbench...`) anywhere in a file, the
    function-level ones included (sections import lazily), that does not resolve: the module does
    not import, or has no such name (as an attribute or a submodule). Nothing runs but the imports."""
    problems = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            module, names = node.module, [a.name for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Import):
            module, names = None, [a.name for a in node.names]
        else:
            continue
        for target in [module] if module else names:
            if target.split(".")[0] != "workbench":
                continue
            where = f"{path.name}:{node.lineno}"
            try:
                found = importlib.import_module(target)
            except Exception as exc:
                problems.append(f"{where}: {target} does not import ({type(exc).__name__}: {exc})")
                continue
            for name in names if module else ():
                if hasattr(found, name):
                    continue
                try:
                    importlib.import_module(f"{target}.{name}")
                except ModuleNotFoundError:
                    problems.append(f"{where}: {target} has no {name}")
    return problems


def test_every_workbench_import_of_every_section_resolves():
    """A section imports workbench's code inside `run`, so a name moved or removed there breaks the
    section only when it runs (bench_intervals and bench_honest did, when the kinds' evaluators were
    declared); this finds it without running any."""
    files = sorted((Path(common.ROOT) / "benchmarks").glob("bench_*.py"))
    assert len(files) >= len(common.ORDER)
    problems = [p for f in files for p in unresolved_workbench_imports(f)]
    assert not problems, "\n".join(problems)


def test_an_import_that_does_not_resolve_is_found(tmp_path):
    planted = tmp_path / "bench_planted.py"
    planted.write_text(
        "from workbench.evaluation.intervals import Settings\n"
        "import workbench.evaluation.declared\n"
        "from workbench.kinds import honest\n"  # a submodule
        "\n"
        "def run(ctx):\n"
        "    from workbench.kinds.honest.evaluate import score_model\n"
        "    from workbench.no_such_module import anything\n"
        "    import workbench.kinds.no_such_kind\n"
        "    from benchmarks.common import summary, not_workbench\n"  # only workbench's are checked
    )
    assert unresolved_workbench_imports(planted) == [
        "bench_planted.py:6: workbench.kinds.honest.evaluate has no score_model",
        "bench_planted.py:7: workbench.no_such_module does not import "
        "(ModuleNotFoundError: No module named 'workbench.no_such_module')",
        "bench_planted.py:8: workbench.kinds.no_such_kind does not import "
        "(ModuleNotFoundError: No module named 'workbench.kinds.no_such_kind')",
    ]
