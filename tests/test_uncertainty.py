"""Every figure with its interval (#38): the kinds' per-unit measures against hand computations,
clusters, planted and null differences through the command, degenerate groups, the options, and
the standalone evaluator's intervals against `workbench evaluate`'s."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import invoke
from test_standalone_evaluator import without_tool_fields
from test_standalone_lm_kinds import alone_and_workbench, build_release

from workbench import kinds
from workbench.evaluation import intervals as iv
from workbench.kinds.crows_pairs.evaluate import DECLARED as CROWS
from workbench.kinds.crows_pairs.evaluate import Pair
from workbench.kinds.crows_pairs.metrics import Outcome
from support.figures import assert_same_figures


def crows_figures(outcomes: list[Outcome], groups: list[str]):
    """A CrowS-Pairs model entry and the scopes of its intervals, from the pairs' outcomes."""
    pairs = [Pair({}, k + 1, "a", "b", o.direction, g) for k, (o, g) in enumerate(zip(outcomes, groups))]
    return CROWS.model_entry(
        pairs,
        [{"sent_more_score": 0.0, "sent_less_score": 0.0, "score": o.hit, "neutral": o.neutral} for o in outcomes],
    )


def test_every_kind_that_evaluates_declares_its_resampling_unit():
    for kind in kinds.loadable():
        if kind.evaluator and kind.name in {"nli", "stereoset", "crows-pairs", "sos", "sofa", "honest"}:
            assert kind.resampling is not None and kind.resampling.units, kind.name


def test_a_mean_over_cells_is_recomputed_from_the_resampled_units():
    # units 0, 1 in cell 0 (values 1, 0), unit 2 in cell 1 (value 1): the point is (1/2 + 1) / 2;
    # drawing unit 0 twice and unit 2 once gives (1 + 1) / 2; drawing unit 1 three times leaves
    # cell 1 out: 0.
    m = iv.Measure(np.array([[1, 1], [0, 1], [1, 1]], dtype=float), iv.mean_of_cells(100), np.array([0, 0, 1]))
    assert m.point == pytest.approx(75.0)
    assert m.stat(np.array([[2, 0, 1], [0, 3, 0]])) == pytest.approx([100.0, 0.0])


def test_a_binomial_share_of_pairs_matches_the_exact_bootstrap_distribution():
    # 3 hits out of 4 pairs: a resample's metric is 25·Binomial(4, 3/4), so P(≤ 25) = 0.051,
    # P(≤ 50) = 0.262 and P(100) = 0.316: the 80% percentile interval (10% and 90% quantiles) is
    # [50, 100], the se 25·sqrt(4·3/4·1/4) = 21.65.
    outcomes = [Outcome("stereo", h, 0) for h in (1, 1, 1, 0)]
    metric = crows_figures(outcomes, ["t"] * 4)[1][0].measures["metric_score"]
    found = iv.measure_interval(metric, iv.Settings(level=0.80, resamples=40000, seed=1))
    assert found.estimate == 75.0 and (found.lower, found.upper) == (50.0, 100.0)
    assert found.se == pytest.approx(21.65, abs=0.3)


def test_the_permutation_p_value_of_a_known_arrangement():
    # A hits on all 4 units, B on none: of the 2^4 swaps, |A − B| = 100 only when all or none are
    # swapped: p = (1 + 2/16 · P) / (1 + P) → 1/8.
    a = iv.measure_of_ratio([1, 1, 1, 1], scale=100)
    b = iv.measure_of_ratio([0, 0, 0, 0], scale=100)
    d = iv.paired(a, b, iv.Settings(resamples=1000, seed=3), permutations=40000)
    assert d.difference == 100.0 and d.p_value == pytest.approx(1 / 8, abs=0.01)


def test_identities_sharing_a_template_widen_the_honest_interval():
    from types import SimpleNamespace

    from workbench.kinds.honest.evaluate import DECLARED, Row, Scored
    from workbench.kinds.honest.parsing import Template
    from workbench.kinds.honest.scoring import template_of

    rng = random.Random(5)
    rows, hits = [], []
    for n in range(30):  # 30 templates x 8 identities
        hurtful = rng.random() < 0.3  # the wording decides for every identity
        for who in ("the woman", "the man", "women", "men", "the girl", "the boy", "girls", "boys"):
            rows.append(Template(len(rows) + 2, f"{who} template{n} dreams of [M].", who, None))
            hits.append(["cat" if hurtful and rng.random() < 0.9 else None])
    scored = Scored(None, SimpleNamespace(categories=[]), [1])  # K = 1, a lexicon without categories
    items = [Row(t, template_of(t), scored) for t in rows]
    _, scopes = DECLARED.given({}, items).model_entry(items, [{"hurtful": h} for h in hits])
    clustered = scopes[0]
    assert clustered.n_units == 30
    items = iv.measure_of_ratio([float(h[0] is not None) for h in hits], scale=100.0)
    settings = iv.Settings(seed=2)
    wide = iv.measure_interval(clustered.measures["honest"], settings)
    narrow = iv.measure_interval(items, settings)
    assert wide.estimate == pytest.approx(narrow.estimate) and wide.se > 2 * narrow.se


def test_all_tied_pairs_warn_and_carry_no_interval():
    outcomes = [Outcome("stereo", 0, 1)] * 120
    entry, scopes = crows_figures(outcomes, ["gender"] * 120)
    warnings = iv.attach(entry, scopes, iv.Settings(), "model-x")
    assert "model-x: overall: all 120 pairs tied or failed to score: its metric says nothing about bias" in warnings
    assert entry["overall"]["intervals"]["metric_score"]["lower"] is None
    assert "says nothing" in entry["overall"]["intervals"]["metric_score"]["warning"]
    few = [Outcome("stereo", 1, 0)] * 4
    assert "only 4 pairs" in iv.attach(*crows_figures(few, ["t"] * 4), iv.Settings(), "m")[0]


def _predictions(path, models: dict[str, float], n_pairs=150, seed=0):
    """NLI predictions of pairs; each model predicts entailment on a pro sample with its own rate."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n_pairs):
            for model, rate in models.items():
                for stance in ("pro", "anti"):
                    pred = (
                        "entailment"
                        if stance == "pro" and rng.random() < rate
                        else rng.choice(["neutral", "neutral", "contradiction"])
                    )
                    f.write(
                        json.dumps(
                            {
                                "model": model,
                                "pair_id": f"p{i}",
                                "stance": stance,
                                "domain": "d",
                                "subtopic": f"s{i % 3}",
                                "prediction": pred,
                            }
                        )
                        + "\n"
                    )
    return path


def test_a_planted_difference_is_detected_and_a_null_one_is_not(tmp_path, runner):
    path = _predictions(tmp_path / "p.jsonl", {"biased": 0.6, "fair-1": 0.1, "fair-2": 0.1})
    result = invoke(runner, "evaluate", "--predictions", str(path), "--json", str(tmp_path / "s.json"), "--seed", "4")
    assert result.exit_code == 0, result.output
    compared = json.loads((tmp_path / "s.json").read_text())["uncertainty"]["comparisons"]["bias_aggregate"]
    pairs = {(p["a"], p["b"]): p for p in compared["pairs"]}
    planted, null = pairs[("biased", "fair-1")], pairs[("fair-1", "fair-2")]
    assert not planted["within_noise"] and planted["p_value"] < 0.01 and planted["interval"]["lower"] > 0
    assert null["within_noise"] and null["p_value"] > 0.05
    assert "biased − fair-1" in result.output and "beyond noise" in planted["sentence"]
    assert "within noise" in null["sentence"] and null["sentence"] in " ".join(result.output.split())
    assert compared["sign_stability"]["biased"] == 1.0


def test_the_same_fixture_model_twice_is_within_noise(fixture_models, tmp_path, project, runner):
    from workbench.kinds.crows_pairs.example import write_example

    src = write_example(project / "data")
    twin = tmp_path / "twin"
    shutil.copytree(fixture_models["clm-gpt2"], twin)
    r = invoke(
        runner,
        "evaluate",
        str(src),
        "-m",
        str(fixture_models["clm-gpt2"]),
        "-m",
        str(twin),
        "--json",
        "c.json",
        "--csv",
        "c.csv",
    )
    assert r.exit_code == 0, r.output
    doc = json.loads((project / "c.json").read_text())
    (pair,) = doc["uncertainty"]["comparisons"]["metric_score"]["pairs"]
    assert pair["difference"] == 0 and pair["within_noise"] and pair["p_value"] == 1.0
    for m in doc["models"].values():  # the figures are unchanged; the interval's estimate is the figure
        found = m["overall"]["intervals"]["metric_score"]
        assert (
            found["estimate"] == m["overall"]["metric_score"] and found["lower"] <= found["estimate"] <= found["upper"]
        )
        assert (found["n_units"], found["resamples"], found["level"]) == (10, 1000, 0.95)
    assert f"{m['overall']['metric_score']:.1f} [{found['lower']:.1f}, {found['upper']:.1f}]" in r.output
    header = (project / "c.csv").read_text().splitlines()[0]
    assert "metric_score_lower,metric_score_upper,metric_score_se" in header


def test_the_options_are_checked_and_zero_resamples_turn_intervals_off(tmp_path, runner):
    path = _predictions(tmp_path / "p.jsonl", {"a": 0.3})
    bad = invoke(runner, "evaluate", "--predictions", str(path), "--ci-level", "95")
    assert bad.exit_code == 2 and "--ci-level must lie between 0 and 1" in str(bad.exception)
    off = invoke(runner, "evaluate", "--predictions", str(path), "--bootstrap", "0", "--json", str(tmp_path / "o.json"))
    assert off.exit_code == 0, off.output
    doc = json.loads((tmp_path / "o.json").read_text())
    assert "intervals" not in doc["models"]["a"]["overall"] and doc["uncertainty"]["resamples"] == 0
    on = invoke(
        runner,
        "evaluate",
        "--predictions",
        str(path),
        "--ci-level",
        "0.8",
        "--bootstrap",
        "300",
        "--json",
        str(tmp_path / "i.json"),
    )
    found = json.loads((tmp_path / "i.json").read_text())["models"]["a"]["overall"]["intervals"]["accuracy"]
    assert on.exit_code == 0 and (found["level"], found["resamples"]) == (0.8, 300)


def test_stereoset_intervals_re_average_target_terms_as_the_figures_do():
    from workbench.kinds.stereoset.cats import Example, Sentence, StereoSetData
    from workbench.kinds.stereoset.evaluate import DECLARED, Cat, _results

    examples, scores = [], {}
    rng = random.Random(3)
    for i in range(40):
        sentences = {}
        for gold in ("stereotype", "anti-stereotype", "unrelated"):
            sid = f"s{i}-{gold}"
            sentences[gold] = Sentence(sid, f"{gold} {i}", gold)
            scores[sid] = rng.random()
        examples.append(Example(f"e{i}", "intrasentence", f"term{i % 7}", ["age", "work"][i % 2], "ctx", sentences))
    data = StereoSetData("test", Path("test.json"), "1", examples)
    cats = [Cat(e, data) for e in examples]
    entry, scopes = DECLARED.model_entry(cats, _results(cats, scores))
    iv.Uncertainty(iv.Settings(seed=1), DECLARED.units, ("ss", "icat")).add("m", entry, scopes)
    for node in (entry["overall"], entry["intrasentence"]["by_domain"]["age"]):
        for k in ("lms", "ss", "icat"):
            assert node["intervals"][k]["estimate"] == pytest.approx(node[k])
            assert node["intervals"][k]["lower"] <= node[k] <= node["intervals"][k]["upper"]


@pytest.mark.parametrize("kind", ["crows-pairs", "sos"])
def test_the_standalone_evaluator_gives_the_same_intervals(
    kind, tmp_path_factory, fixture_models, tmp_path, monkeypatch
):
    release = build_release(kind, tmp_path_factory.mktemp(f"{kind}-ci"))
    args = [
        "--model",
        str(fixture_models["clm-gpt2"]),
        "--model",
        str(fixture_models["mlm-bert"]),
        "--bootstrap",
        "300",
        "--seed",
        "7",
        "--ci-level",
        "0.9",
    ]
    alone, workbench_doc, ran = alone_and_workbench(release, args, tmp_path, monkeypatch)
    assert_same_figures(without_tool_fields(alone), without_tool_fields(workbench_doc))
    assert alone["uncertainty"]["seed"] == 7 and alone["uncertainty"]["comparisons"]
    figure = "metric_score" if kind == "crows-pairs" else "sos"
    for m in alone["models"].values():  # a small example: bounds where the overall figure can carry a verdict
        found = m["overall"]["intervals"][figure]
        assert found["level"] == 0.9 and found["resamples"] == (0 if "warning" in found else 300)
    assert "intervals from 300 resamples" in ran.stdout


def test_versions_are_compared_on_the_templates_both_have(bbnli_dir, fixture_models, tmp_path, runner, monkeypatch):
    monkeypatch.chdir(tmp_path)
    later = tmp_path / "gender-later"
    shutil.copytree(bbnli_dir / "gender", later)
    dropped = sorted(later.glob("*.json"))[0]
    dropped.unlink()
    model = str(fixture_models["nli-a"])
    result = invoke(
        runner, "evaluate", str(bbnli_dir / "gender"), str(later), "--model", model, "--json", str(tmp_path / "v.json")
    )
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "v.json").read_text())
    first = json.loads((tmp_path / f"v.{doc['versions'][0]['tag']}.json").read_text())  # the first version alone
    assert "versions" not in first["uncertainty"]
    (paired,) = doc["paired"]  # the second version against the first
    (versions,) = paired["models"]
    kept = first["models"][model]["overall"]["intervals"]["accuracy"]["n_units"] - versions["dropped"]
    assert versions["dropped"] > 0 and versions["added"] == 0 and versions["shared"] == kept
    change = versions["measures"]["bias_aggregate"]
    # the shared templates got the same predictions in both: no change, within noise
    assert change["difference"] == pytest.approx(0, abs=1e-9) and change["within_noise"]
    assert f"{versions['dropped']} dropped templates not compared" in " ".join(result.output.split())


def test_one_variant_per_template_is_drawn_and_a_fill_dependent_verdict_shows():
    clusters = ["t1", "t1", "t2", "t2", "t2", "t3"]
    kept = iv.one_per_cluster(clusters, 2000, seed=1)
    assert set(kept.sum(axis=1)) == {3}  # one variant of each of the 3 templates
    assert kept[:, 5].all() and abs(kept[:, 0].mean() - 0.5) < 0.05 and abs(kept[:, 2].mean() - 1 / 3) < 0.05
    # every variant of every template leans the same way: the verdict never depends on the fill
    same = iv.measure_of_ratio([1, 1, 1, 1, 1, 1], scale=100.0, neutral=0.0)
    assert iv.variant_stability(same, clusters, iv.Settings(seed=2), "bias")["sign_kept"] == 1.0
    # one fill of template t2 (-9) makes the reported figure negative (-2 / 6); with one fill per
    # template the figure is negative only when that fill is drawn: in 1/3 of the draws
    mixed = iv.measure_of_ratio([1, 1, -9, 2, 2, 1], [1, 1, 1, 1, 1, 1], 100.0, 0.0)
    found = iv.variant_stability(mixed, clusters, iv.Settings(seed=2), "bias")
    assert mixed.point < 0 and abs(found["sign_kept"] - 1 / 3) < 0.05 and found["lower"] < 0 < found["upper"]
    assert "stays on its side of 0" in found["sentence"]
    assert iv.variant_stability(same, ["a", "b", "c", "d", "e", "f"], iv.Settings(), "bias") is None
