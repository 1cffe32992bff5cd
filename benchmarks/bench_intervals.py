"""What the intervals cost (#38): their share of `workbench evaluate`'s wall time at the default
1,000 resamples on every kind's example, and their time and memory at full benchmark sizes.

1. Each kind's example (the files `make demo` scores; for NLI the BBNLI templates) with two tiny
   fixture models, through `workbench evaluate` in this process (and an NLI predictions file,
   where no model runs at all): the wall time of the whole command, and the time spent
   in the intervals (`Uncertainty.add` and `finish`, which the declared evaluators call per model
   and per run: resampling every group's figures, comparing the two models; and NLI's
   one-variant-per-template draws, `variant_stability`), timed by wrapping them. The per-unit sums
   the declaration builds for every figure (`Declared._measure`, `_gaps`: the points come from
   them too) are timed beside them. Tiny models make the scoring cheap, so the share is an upper
   bound of what a real checkpoint would see.
2. Full sizes without a model (the intervals do not depend on how scores were made): CrowS-Pairs'
   1,508 pairs, StereoSet's 4,229 examples (overall, 2 splits, 4 domains each), HONEST's 1,620
   template rows of 60 templates, SOFA's 11,349 stereotypes in 9 categories (1.49M probes: the
   intervals see one value per stereotype) and an NLI release of 20,000 samples in 2,000 templates,
   each as its declared evaluator's items and one model's results: the declaration's figures with
   their per-unit sums (`model_entry`) and the intervals (`Uncertainty.add`, NLI's variant draws,
   `finish`), as `workbench evaluate` runs them; peak memory measured with tracemalloc.
"""

from __future__ import annotations

import json
import os
import random
import time
import tracemalloc
from pathlib import Path

import numpy as np

from .common import summary
from .run import Unavailable

RESAMPLES = 1000


def _timed_uncertainty():
    """Wrap Uncertainty.add/finish and the variant draws (the declared layer's and the NLI kind's own
    evaluator's) so their time adds up in `spent["intervals"]`, and the declaration's per-unit sums
    (`Declared._measure`, `_gaps`) in `spent["unit_sums"]`; returns (spent, undo)."""
    from workbench.evaluation import declared, intervals
    from workbench.kinds.nli.evaluation import results

    spent = {"intervals": 0.0, "unit_sums": 0.0}
    targets = [
        (intervals.Uncertainty, "add", "intervals"),
        (intervals.Uncertainty, "finish", "intervals"),
        (declared, "variant_stability", "intervals"),
        (results, "variant_stability", "intervals"),
        (declared.Declared, "_measure", "unit_sums"),
        (declared.Declared, "_gaps", "unit_sums"),
    ]
    originals = [getattr(owner, name) for owner, name, _ in targets]

    def wrap(method, key):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                spent[key] += time.perf_counter() - start

        return timed

    for (owner, name, key), method in zip(targets, originals):
        setattr(owner, name, wrap(method, key))

    def undo():
        for (owner, name, _), method in zip(targets, originals):
            setattr(owner, name, method)

    return spent, undo


def _examples(folder, models) -> dict[str, list[str]]:
    """kind -> the evaluate arguments of its example, with two fixture models."""
    from workbench.kinds.crows_pairs.example import write_example as crows
    from workbench.kinds.honest.example import write_example as honest
    from workbench.kinds.sofa.example import write_example as sofa
    from workbench.kinds.sos.example import write_example as sos
    from workbench.kinds.stereoset.example import write_example as stereoset

    lms = ["-m", str(models["mlm-bert"]), "-m", str(models["clm-gpt2"])]
    templates, lexicon = honest(folder)
    out = {
        "crows-pairs": [str(crows(folder)), "--kind", "crows-pairs", *lms],
        "sos": [str(sos(folder)), "--kind", "sos", *lms],
        "stereoset": [str(stereoset(folder)), "--kind", "stereoset", *lms],
        "honest": [str(templates), "--kind", "honest", "--lexicon", str(lexicon), *lms],
        "sofa": [str(sofa(folder)), "--kind", "sofa", *lms],
    }
    bbnli = Path(os.environ.get("WORKBENCH_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "bbnli"
    if not bbnli.is_dir():
        raise Unavailable(f"the BBNLI files (the NLI kind's example) are missing: {bbnli}")
    out["nli"] = [str(bbnli), "-m", str(models["nli-a"]), "-m", str(models["nli-b"])]
    predictions = folder / "nli-predictions.jsonl"
    rng = random.Random(0)
    with open(predictions, "w", encoding="utf-8") as f:  # 2 models' predictions of 400 pairs: nothing but the measures
        for model in ("model-a", "model-b"):
            for i in range(400):
                for stance in ("pro", "anti"):
                    f.write(
                        json.dumps(
                            {
                                "model": model,
                                "pair_id": f"p{i}",
                                "stance": stance,
                                "domain": f"d{i % 3}",
                                "subtopic": f"s{i % 12}",
                                "prediction": rng.choice(["entailment", "neutral", "neutral", "contradiction"]),
                            }
                        )
                        + "\n"
                    )
    out["nli, predictions file (no model)"] = ["--predictions", str(predictions)]
    return out


def per_kind(ctx) -> dict:
    from typer.testing import CliRunner

    from workbench.cli.main import app
    from workbench.models.fixtures import build_all

    folder = ctx.work / "intervals"
    models = build_all(folder / "models", base=False)
    runner = CliRunner()
    out = {}
    for kind, args in _examples(folder / "data", models).items():
        best = None
        for _ in range(3):
            spent, undo = _timed_uncertainty()
            start = time.perf_counter()
            try:
                result = runner.invoke(
                    app, ["evaluate", *args, "--bootstrap", str(RESAMPLES), "--cache", str(folder / f"{kind}.sqlite")]
                )
            finally:
                undo()
            total = time.perf_counter() - start
            if result.exit_code != 0:
                raise RuntimeError(f"{kind}: {result.output[-2000:]}")
            if best is None or total < best[0]:
                best = (total, spent["intervals"], spent["unit_sums"])
        out[kind] = {
            "evaluate_s": round(best[0], 3),
            "intervals_s": round(best[1], 4),
            "share_pct": round(100 * best[1] / best[0], 2),
            "unit_sums_s": round(best[2], 4),
        }
    return out


class _SofaFigures:
    """What SOFA's `figures`/`about` read from a model's results (metrics.py's figures, made while
    scoring): empty here, the intervals do not use them."""

    def __init__(self, categories: list[str]):
        self.figures = {"overall": {}, "by_category": {c: {} for c in categories}}


def _synthetic(rng) -> dict[str, tuple]:
    """name -> (declaration, items, one model's results) of each declared kind at its published size."""
    from workbench.kinds.crows_pairs.evaluate import DECLARED as crows, Pair
    from workbench.kinds.honest.evaluate import DECLARED as honest, Row, Scored
    from workbench.kinds.honest.parsing import Lexicon, Template, TemplateSet
    from workbench.kinds.honest.scoring import template_of
    from workbench.kinds.nli.evaluate import COLUMNS
    from workbench.kinds.nli.evaluate import DECLARED as nli
    from workbench.kinds.nli.evaluation.metrics import nli_scores
    from workbench.kinds.sofa.evaluate import DECLARED as sofa, Stereotype
    from workbench.kinds.stereoset.cats import Example, Sentence, StereoSetData
    from workbench.kinds.stereoset.evaluate import DECLARED as stereoset, Cat

    out = {}
    types = [f"type{i}" for i in range(9)]
    pairs, results = [], []
    for i in range(1508):
        direction = ["stereo", "antistereo"][i % 2]
        pairs.append(Pair({}, i + 2, f"more {i}", f"less {i}", direction, types[i % 9]))
        more, less = rng.normal(-30, 5, 2)
        neutral = int(rng.random() < 0.05)
        results.append(
            {
                "sent_more_score": float(more),
                "sent_less_score": float(less),
                "score": 0 if neutral else int(rng.random() < 0.6),
                "neutral": neutral,
                "near_boundary": 0,
                "same_tokens": 0,
            }
        )
    out["crows-pairs (1,508 pairs)"] = (crows, pairs, results)

    examples = []
    for i in range(4229):
        sentences = {g: Sentence(f"{i}{g}", g, g) for g in ("stereotype", "anti-stereotype", "unrelated")}
        examples.append(
            Example(
                str(i),
                ["intrasentence", "intersentence"][i % 2],
                f"term{i % 321}",
                ["gender", "race", "religion", "profession"][i % 4],
                "",
                sentences,
            )
        )
    data = StereoSetData("bench", Path("bench.json"), "1", examples)
    cats = [Cat(e, data) for e in examples]
    results = [
        {f"{g}_score": float(rng.random()) for g in ("stereotype", "anti_stereotype", "unrelated")} for _ in cats
    ]
    out["stereoset (4,229 examples)"] = (stereoset, cats, results)

    lexicon = Lexicon(Path("lexicon.tsv"), {"cat": "cat"}, ["cat"], 1, 0, False)
    templates = [
        Template(i + 2, f"who{i % 27} template{i // 27} [M].", f"who{i % 27}", ["f", "m"][i % 2]) for i in range(1620)
    ]
    scored = Scored(TemplateSet("bench", Path("templates.tsv"), templates, "group", 0), lexicon, [1, 5, 10, 20])
    rows = [Row(t, template_of(t), scored) for t in templates]
    results = [
        {"fills": [f"w{j}" for j in range(20)], "hurtful": ["cat" if rng.random() < 0.05 else None for _ in range(20)]}
        for _ in rows
    ]
    options = {"top_k": [1, 5, 10, 20], "lexicon": "lexicon.tsv"}
    out["honest (1,620 rows, 60 templates, K = 20)"] = (honest.given(options, rows), rows, results)

    n_st = 11_349  # the 1.49M probes are folded into one variance per stereotype while scoring
    figures = _SofaFigures(types)
    codes = rng.integers(0, 9, n_st)
    stereotypes = [Stereotype(f"s{s}", types[codes[s]], f"stereotype {s}", s, None) for s in range(n_st)]
    identities = rng.integers(1, 40, n_st)
    results = [
        {"variance": float(rng.gamma(2.0, 0.05)), "n_identities": int(identities[s]), "probes": figures}
        for s in range(n_st)
    ]
    out["sofa (11,349 stereotypes, 1.49M probes)"] = (sofa, stereotypes, results)

    samples = []
    for i in range(10_000):
        for stance in ("pro", "anti"):
            samples.append(
                {
                    "premise": "p",
                    "hypothesis": "h",
                    "stance": stance,
                    "domain": f"d{i % 3}",
                    "subtopic": f"s{i % 16}",
                    "pair_id": f"p{i}",
                    "cluster": f"t{i % 2000}",
                }
            )
    samples = [{**r, "unit": u} for r, u in zip(samples, nli_scores.clusters(samples))]
    predictions = [["entailment", "neutral", "contradiction"][k] for k in rng.integers(0, 3, len(samples))]
    counts = nli_scores.sample_counts(samples, predictions).tolist()
    codes = nli_scores.pair_codes(samples, "bench").tolist()
    results = [
        {
            "prediction": p,
            **dict(zip(COLUMNS, c)),
            "paired_pro": int(code >= 0 and r["stance"] == "pro"),
            "unpaired": int(code < 0),
        }
        for r, p, c, code in zip(samples, predictions, counts, codes)
    ]
    out["nli (20,000 samples, 2,000 templates)"] = (nli, samples, results)
    return out


def _full_size() -> dict:
    """Time and peak memory of each declared kind's figures and intervals at its published size,
    one model: `model_entry` (the figures and their per-unit sums), then the intervals as
    `Declared.evaluate_items` runs them (`Uncertainty.add`, the variant draws, `finish`)."""
    from workbench.evaluation.intervals import Settings

    out = {}
    for name, (declared, items, results) in _synthetic(np.random.default_rng(0)).items():
        tracemalloc.start()
        start = time.perf_counter()
        uncertainty = declared.uncertainty(Settings(resamples=RESAMPLES))
        entry, scopes = declared.model_entry(items, results)
        figures = time.perf_counter()
        doc = {"models": {"m": entry}}
        uncertainty.add("m", entry, scopes)
        variants: dict = {}
        declared._variant("m", items, results, uncertainty.settings, variants)
        uncertainty.finish(doc)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        if not entry["overall"].get("intervals"):
            raise RuntimeError(f"{name}: no intervals were attached ({doc['uncertainty']['warnings']})")
        out[name] = {
            "seconds": round(seconds, 3),
            "intervals_s": round(seconds - (figures - start), 3),
            "scopes": len(scopes),
            "peak_mib": round(peak / 2**20, 1),
        }
    return out


def run(ctx) -> dict:
    kinds = per_kind(ctx)
    full = _full_size()
    with_models = {k: v for k, v in kinds.items() if "no model" not in k}
    worst_kind = max(with_models, key=lambda k: with_models[k]["share_pct"])
    shares = ", ".join(f"{k} {v['share_pct']:.1f}%" for k, v in with_models.items())
    return summary(
        title="intervals: their share of an evaluate run at 1,000 resamples, and their cost at full sizes",
        workload="each kind's example with two tiny fixture models through `workbench evaluate`; full-size "
        "synthetic items and scores for the declared evaluators of CrowS-Pairs, StereoSet, HONEST, SOFA "
        "(1.49M probes) and NLI",
        figure=f"intervals take {shares} of evaluate's wall time with models (most: {worst_kind})",
        clock="wall seconds, best of 3 (the intervals timed inside the same runs)",
        roof=None,
        roof_what="not applicable: no model runs in the intervals",
        loop=None,
        loop_what="not applicable: the resamples are one matrix product; there is no loop to compare",
        targets=[
            "≤ 10% of evaluate's wall time on every kind's example at 1,000 resamples",
            "flat memory for SOFA's 1.49M probes (per stereotype, not per probe)",
        ],
        figures={"per_kind": kinds, "full_size": full},
        notes=[
            "Tiny fixture models score in milliseconds (and later runs read the score cache), so these shares "
            "are upper bounds: with a real checkpoint the scoring grows and the intervals do not.",
            "An NLI predictions file runs no model: evaluate is then only the measures, and the intervals "
            f"are {kinds['nli, predictions file (no model)']['share_pct']:.0f}% of it "
            f"({kinds['nli, predictions file (no model)']['intervals_s']} s).",
            "The per-unit sums each figure is computed from (the declared layer's `_measure`, `_gaps`; the "
            "points use them too, so they are not counted in the share): "
            + ", ".join(f"{k} {v['unit_sums_s']} s" for k, v in with_models.items())
            + ".",
            "Full sizes (figures with their per-unit sums, then the intervals): "
            + "; ".join(
                f"{k}: {v['seconds']} s ({v['intervals_s']} s the intervals), {v['scopes']} groups, "
                f"peak {v['peak_mib']} MiB"
                for k, v in full.items()
            ),
        ],
    )
