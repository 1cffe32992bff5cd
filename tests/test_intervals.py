"""Bootstrap intervals, paired differences and stability, against figures computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.evaluation import intervals as iv


def test_two_units_give_the_hand_computed_bootstrap_distribution():
    # Units 0 and 1: a resample's mean is 0, 0.5 or 1 with probabilities 1/4, 1/2, 1/4, so the
    # 95% percentile interval is [0, 1] and the standard error sqrt(1/8).
    stat, point = iv.ratio([0.0, 1.0])
    result = iv.interval(stat, point, 2, resamples=20000, seed=3)
    assert point == 0.5 and (result.lower, result.upper) == (0.0, 1.0)
    assert abs(result.se - math.sqrt(1 / 8)) < 0.01 and result.resamples == 20000


def test_a_binomial_share_matches_the_normal_approximation():
    rng = np.random.default_rng(1)
    hits = (rng.random(400) < 0.3).astype(float)
    p = hits.mean()
    stat, point = iv.ratio(hits, scale=100)
    result = iv.interval(stat, point, len(hits), resamples=20000, seed=5)
    half = 100 * 1.96 * math.sqrt(p * (1 - p) / len(hits))
    assert abs(point - 100 * p) < 1e-9
    assert abs((result.upper - result.lower) / 2 - half) < 0.35
    assert abs(result.se - half / 1.96) < 0.15


def test_a_ratio_of_sums_weights_units_by_their_denominators():
    stat, point = iv.ratio([1, 3], [2, 4])  # (1 + 3) / (2 + 4)
    assert point == 4 / 6
    assert np.allclose(stat(np.array([[2, 0], [0, 2], [1, 1]])), [0.5, 0.75, 4 / 6])


def test_the_permutation_p_value_of_two_units_is_one_half():
    # A = [1, 1], B = [0, 0]: swapping each unit's A and B at random gives |A - B| >= 1 exactly
    # when both or neither are swapped (probability 1/2).
    d = iv.paired_difference([1, 1], [0, 0], permutations=20000, resamples=2000, seed=2)
    assert d.difference == 1.0 and abs(d.p_value - 0.5) < 0.02


def test_resampling_whole_clusters_is_wider_when_items_share_a_template():
    rng = np.random.default_rng(7)
    templates = np.repeat(np.arange(20), 10)  # 20 templates x 10 filled items
    offset = rng.normal(0, 1, 20)[templates]  # the template's wording moves all its items
    values = offset + rng.normal(0, 0.1, templates.size)
    item_stat, point = iv.ratio(values)
    items = iv.interval(item_stat, point, values.size, seed=1)
    sums, keys = iv.by_cluster(np.stack([values, np.ones_like(values)], axis=1), templates.tolist())
    cluster_stat, cluster_point = iv.ratio(sums[:, 0], sums[:, 1])
    clusters = iv.interval(cluster_stat, cluster_point, len(keys), seed=1)
    assert len(keys) == 20 and abs(cluster_point - point) < 1e-9
    assert clusters.se > 2 * items.se


def test_a_planted_difference_is_detected_and_a_null_one_is_not():
    rng = np.random.default_rng(11)
    a = (rng.random(500) < 0.70).astype(float)
    b = (rng.random(500) < 0.50).astype(float)
    planted = iv.paired_difference(a, b, scale=100, seed=4)
    assert not planted.within_noise and planted.p_value < 0.01 and planted.interval.lower > 0
    assert "beyond noise" in planted.sentence("metric", "A", "B", "pairs")
    c = (rng.random(500) < 0.50).astype(float)
    d = (rng.random(500) < 0.50).astype(float)
    null = iv.paired_difference(c, d, scale=100, seed=4)
    assert null.within_noise and null.p_value > 0.05
    assert "within noise" in null.sentence("metric", "C", "D", "pairs")


def test_ranking_and_sign_stability():
    rng = np.random.default_rng(2)
    strong = (rng.random(300) < 0.8).astype(float)
    weak = (rng.random(300) < 0.3).astype(float)
    s1, p1 = iv.ratio(strong, scale=100)
    s2, p2 = iv.ratio(weak, scale=100)
    assert iv.ranking_stability([s1, s2], [p1, p2], 300, seed=1) == 1.0
    near = (rng.random(300) < 0.52).astype(float)
    s3, p3 = iv.ratio(near, scale=100)
    assert iv.sign_stability(s1, p1, 50, 300) == 1.0
    assert 0.2 < iv.sign_stability(s3, p3, 50, 300) < 1.0


def test_degenerate_runs_are_named():
    assert "all 120 pairs tied" in iv.degenerate(120, 0, "CrowS metric", "pairs", "50 says nothing about bias")
    assert "only 4 templates" in iv.degenerate(4, 4, "HONEST@5", "templates")
    assert iv.degenerate(50, 40, "metric", "pairs") is None


def test_no_resampling_gives_the_point_alone():
    stat, point = iv.ratio([1.0, 0.0, 1.0])
    result = iv.interval(stat, point, 3, resamples=0)
    assert result.estimate == 2 / 3 and result.lower is None and result.resamples == 0


def test_resamples_drawn_a_few_at_a_time_are_the_draws_of_one_block(monkeypatch):
    """A scope of many units is resampled a few rows at a time (CELLS); the counts, and so every
    interval, are those of the whole B x units block drawn at once."""
    n, b = 37, 300
    rng = np.random.default_rng(5)
    drawn = rng.integers(0, n, size=(b, n))
    whole = np.stack([np.bincount(row, minlength=n) for row in drawn])
    assert np.array_equal(iv.resample_counts(n, b, seed=5), whole)
    values = rng.random((n, 2)) + 0.1
    scope = iv.Scope(("overall",), {"m": iv.Measure(values, iv.share(100.0))}, "pairs")
    entry_all = {"overall": {}}
    iv.attach(entry_all, [scope], iv.Settings(resamples=b, seed=5), "model")
    monkeypatch.setattr(iv, "CELLS", 4 * n)  # four resamples at a time
    assert iv.chunk_rows(n) == 4
    chunks = list(iv.count_chunks(n, b, seed=5))
    assert len(chunks) == b // 4 and np.array_equal(np.concatenate(chunks), whole)
    entry_few = {"overall": {}}
    iv.attach(entry_few, [scope], iv.Settings(resamples=b, seed=5), "model")
    assert _leaves(entry_few) == pytest.approx(_leaves(entry_all), rel=1e-12, abs=0)
    assert entry_all["overall"]["intervals"]["m"]["lower"] is not None


def _leaves(found) -> list:
    """Every number of a nested dict or list, in order (products of other block sizes may differ
    in the last bits: the draws are equal, the figures equal to 1e-12)."""
    if isinstance(found, dict):
        return [x for key in sorted(found) for x in _leaves(found[key])]
    if isinstance(found, (list, tuple)):
        return [x for item in found for x in _leaves(item)]
    return [float(found)] if isinstance(found, (int, float)) and not isinstance(found, bool) else []


def test_comparisons_drawn_a_few_resamples_at_a_time_are_those_of_one_block(monkeypatch):
    """Two models' paired difference, permutation p-value, ranking and sign stability come out the
    same when their resamples and permutations are drawn a few rows at a time (a million pairs)."""
    rng = np.random.default_rng(8)
    n = 41
    a = iv.Measure(np.stack([rng.random(n), np.ones(n)], axis=1), iv.share(100.0), neutral=50.0)
    b = iv.Measure(np.stack([rng.random(n) * 0.9, np.ones(n)], axis=1), iv.share(100.0), neutral=50.0)
    settings = iv.Settings(resamples=300, seed=3)

    def figures():
        scopes = {m: iv.Scope(("overall",), {"s": x}, "pairs") for m, x in (("a", a), ("b", b))}
        d = iv.paired_difference(a.values[:, 0], b.values[:, 0], resamples=300, permutations=300, seed=3)
        return iv.compare(scopes, ("s",), settings, "pairs"), (d.difference, d.interval, d.p_value)

    whole = figures()
    monkeypatch.setattr(iv, "CELLS", 7 * n)  # seven rows at a time
    few = figures()
    assert few[0]["s"]["sentence"] == whole[0]["s"]["sentence"] and few[1][2] == whole[1][2]
    assert _leaves(few[0]) == pytest.approx(_leaves(whole[0]), rel=1e-12, abs=0)
    assert [few[1][0], *few[1][1].as_dict().values()] == pytest.approx([whole[1][0], *whole[1][1].as_dict().values()])
    assert whole[0]["s"]["pairs"][0]["interval"]["lower"] is not None
