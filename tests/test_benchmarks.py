"""The benchmark harness (not the figures): every section has a module, the report lists every
section with its state, and `make bench SECTION=...` picks sections by name."""

from __future__ import annotations

import importlib

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
