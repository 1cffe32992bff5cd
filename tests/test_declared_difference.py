"""A difference within units (issue 56 item 2): `declared.difference` is the mean over units of a
value on one condition of the unit minus on another (a coreference pair's pro-stereotypical
sentence against its anti-stereotypical one). Checked against numpy written out here: the point
overall and per group, its figure on given resamples of whole units, the largest gap between
groups, and the paired comparison of two models, with a unit holding one condition twice and a
unit holding only one condition (left out)."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pytest

from workbench.evaluation.declared import Declared, Gap, difference
from workbench.evaluation.intervals import Settings

KEY = "pro_minus_anti"


def items() -> list[dict]:
    out = []
    for u in range(24):
        for condition in ("pro", "anti"):
            out.append({"unit": f"u{u}", "group": "a" if u % 3 else "b", "condition": condition})
    out.append({"unit": "u0", "group": "b", "condition": "pro"})  # a unit with two pro items
    out.append({"unit": "lone", "group": "a", "condition": "pro"})  # no anti item: left out
    return out


def results(seed: int, rows: list[dict]) -> list[dict]:
    draw = np.random.default_rng(seed).random(len(rows))
    return [{"correct": int(p < (0.8 if r["condition"] == "pro" else 0.45))} for p, r in zip(draw, rows)]


def declared(score=None) -> Declared:
    return Declared(
        kind="k",
        title="t",
        meaning="m",
        data="d.jsonl",
        required=(),
        item=lambda record, bad: record,
        score=score or (lambda *a: []),
        statistics=(difference(KEY, "pro − anti accuracy", "correct", "condition", "pro", "anti"),),
        group="group",
        cluster="unit",
        gaps=(Gap("gap", "largest gap", of=KEY),),
    )


def by_unit(rows: list[dict], found: list[dict]) -> dict[str, float]:
    """Each unit with both conditions: its mean on pro minus its mean on anti, by numpy."""
    units: dict[str, dict[str, list[int]]] = {}
    for r, s in zip(rows, found):
        units.setdefault(r["unit"], {"pro": [], "anti": []})[r["condition"]].append(s["correct"])
    return {u: np.mean(c["pro"]) - np.mean(c["anti"]) for u, c in units.items() if c["pro"] and c["anti"]}


def test_a_difference_within_units_equals_numpy_overall_per_group_and_under_resampling():
    rows, found = items(), results(1, items())
    entry, scopes = declared().model_entry(rows, found)
    diffs = by_unit(rows, found)
    assert len(diffs) == 24 and "lone" not in diffs
    assert entry["overall"][KEY] == pytest.approx(np.mean(list(diffs.values())), abs=1e-12)
    group_of = {r["unit"]: r["group"] for r in rows}
    points = {}
    for group in ("a", "b"):
        mine = [d for u, d in diffs.items() if group_of[u] == group]
        points[group] = np.mean(mine)
        assert entry["by_group"][group][KEY] == pytest.approx(points[group], abs=1e-12)
    assert entry["overall"]["gap"] == pytest.approx(abs(points["a"] - points["b"]), abs=1e-12)

    # Whole units drawn with given multiplicities: the figure is the weighted mean of their differences.
    measure = scopes[0].measures[KEY]
    order = list(dict.fromkeys(r["unit"] for r in rows))  # units as first seen (the measure's rows)
    counts = np.random.default_rng(5).integers(0, 3, size=(40, len(order)))
    counts[:, 0] = 1  # every resample holds a unit with both conditions
    d = np.array([diffs.get(u, 0.0) for u in order])
    paired = np.array([u in diffs for u in order], dtype=float)
    assert measure.stat(counts) == pytest.approx((counts @ d) / (counts @ paired), abs=1e-12)
    assert measure.support == 24  # the interval rests on the units with both conditions


def test_two_models_are_compared_on_the_difference_within_units():
    rows = items()

    def score(models, items_, options, progress):
        return results(7 if models.model == "m1" else 8, items_)

    @contextmanager
    def progress_for(name, total):
        yield lambda n: None

    doc, _ = declared(score).evaluate_items(
        rows,
        "x",
        {},
        Settings(0.95, 300, 0),
        lambda role, name: name,
        ["m1", "m2"],
        {},
        progress_for,
        lambda line: None,
    )
    points = {m: np.mean(list(by_unit(rows, results(s, rows)).values())) for m, s in (("m1", 7), ("m2", 8))}
    for model, point in points.items():
        overall = doc["models"][model]["overall"]
        assert overall[KEY] == pytest.approx(point, abs=1e-12)
        low, high = overall["intervals"][KEY]["lower"], overall["intervals"][KEY]["upper"]
        assert low < point < high
    pair = doc["uncertainty"]["comparisons"][KEY]["pairs"][0]
    assert (pair["a"], pair["b"]) == ("m1", "m2")
    assert pair["difference"] == pytest.approx(points["m1"] - points["m2"], abs=1e-12)
    assert pair["interval"]["lower"] < pair["difference"] < pair["interval"]["upper"]


def test_a_difference_takes_its_four_columns_and_nothing_else():
    with pytest.raises(ValueError, match="a difference within units has its four columns"):
        difference(KEY, "t", "correct", "condition", "pro", "anti", cells="identity")
