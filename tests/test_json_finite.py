"""Every JSON file workbench writes is JSON: a figure that divides by zero is null, never `NaN` or
`Infinity`, which strict parsers (JavaScript's, jq's, Go's) refuse (issue 55)."""

from __future__ import annotations

import dataclasses
import json
from contextlib import contextmanager

import pytest
from test_declared import DECL, toy_items

from workbench.evaluation.declared import share
from workbench.evaluation.intervals import Settings


def strict(text: str):
    def refuse(constant):
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def score(models, items, options, progress):
    progress(len(items))
    return [{"hit": it["value"], "weight": 1, "none": 0} for it in items]


# hits per item of none: Σ hit / 0 is +inf where a group has a hit, 0 / 0 (NaN) where it has none
DIVIDES_BY_ZERO = dataclasses.replace(
    DECL, score=score, statistics=(*DECL.statistics[:1], share("per_none", "hits per none", "hit", among="none"))
)


def scored(declared, items):
    @contextmanager
    def progress(name, total):
        yield lambda n: None

    doc, _ = declared.evaluate_items(
        items, "toy.jsonl", {}, Settings(0.95, 50, 0), lambda role, name: object(), ["m"], {}, progress, lambda x: None
    )
    return doc


@pytest.fixture
def doc():
    items = toy_items()
    for it in items:  # group "a" never hits: 0 / 0 there
        it["value"] = 0 if it["group"] == "a" else it["value"]
    return scored(DIVIDES_BY_ZERO, items)


def test_a_statistic_that_divides_by_zero_is_null_in_workbench_evaluates_json(doc, tmp_path):
    from workbench.evaluation.output import write_json

    write_json(doc, tmp_path / "scores.json")
    written = strict((tmp_path / "scores.json").read_text(encoding="utf-8"))
    entry = written["models"]["m"]
    assert entry["overall"]["per_none"] is None and entry["by_group"]["a"]["per_none"] is None
    assert entry["overall"]["intervals"]["per_none"]["lower"] is None
    assert entry["overall"]["rate"] == pytest.approx(doc["models"]["m"]["overall"]["rate"])  # the rest as ever


def test_and_in_a_releases_evaluate_py_json(doc, tmp_path):
    from workbench.release.runtime.cli import write_scores

    write_scores(doc, tmp_path / "alone.json")
    assert strict((tmp_path / "alone.json").read_text(encoding="utf-8"))["models"]["m"]["overall"]["per_none"] is None


def test_and_in_the_items_file_and_csv_cells(tmp_path):
    from workbench.evaluation.output import write_items

    rows = [{"model": "m", "scores": [1.0, float("nan")], "ratio": float("inf")}]
    write_items(rows, tmp_path / "items.jsonl")
    line = strict((tmp_path / "items.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert line == {"model": "m", "scores": [1.0, None], "ratio": None}


def test_a_number_that_is_not_finite_anywhere_in_a_document_is_written_as_null(tmp_path):
    """What a kind adds to its JSON by hand (a field of its own) is written the same way."""
    import numpy as np

    from workbench.evaluation.output import write_json

    write_json(
        {"x": [float("inf"), -float("inf"), np.float32("nan"), 2.5, 3], "n": {"y": np.float64("inf")}},
        tmp_path / "a.json",
    )
    written = strict((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert (written["x"], written["n"]) == ([None, None, None, 2.5, 3], {"y": None})
