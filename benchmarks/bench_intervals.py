"""What the intervals cost (#38): their share of `workbench evaluate`'s wall time at the default
1,000 resamples on every kind's example, and their time and memory at full benchmark sizes.

1. Each kind's example (the files `make demo` scores; for NLI the BBNLI templates) with two tiny
   fixture models, through `workbench evaluate` in this process (and an NLI predictions file,
   where no model runs at all): the wall time of the whole command, and the time spent
   in the intervals (`Uncertainty.add` and `finish`: building the per-unit measures, resampling,
   comparing the two models; and NLI's one-variant-per-template draws), timed by wrapping them. Tiny models make the scoring
   cheap, so the share is an upper bound of what a real checkpoint would see.
2. Full sizes without a model (the intervals do not depend on how scores were made): CrowS-Pairs'
   1,508 pairs, StereoSet's 4,229 examples (overall, 2 splits, 4 domains each), HONEST's 1,620
   template rows of 60 templates, SOFA's 11,349 stereotypes in 9 categories (1.49M probes: the
   intervals see one value per stereotype) and an NLI release of 20,000 samples in 2,000 templates;
   peak memory of the intervals measured with tracemalloc.
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
    """Wrap Uncertainty.add/finish (and the NLI kind's variant draws) so their time adds up in
    `spent[0]`; returns (spent, undo)."""
    from workbench.evaluation import intervals
    from workbench.kinds.nli.evaluation import results

    spent = [0.0]
    originals = intervals.Uncertainty.add, intervals.Uncertainty.finish, results.variant_stability

    def wrap(method):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - start

        return timed

    intervals.Uncertainty.add, intervals.Uncertainty.finish, results.variant_stability = (wrap(m) for m in originals)

    def undo():
        intervals.Uncertainty.add, intervals.Uncertainty.finish, results.variant_stability = originals

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
                best = (total, spent[0])
        out[kind] = {
            "evaluate_s": round(best[0], 3),
            "intervals_s": round(best[1], 4),
            "share_pct": round(100 * best[1] / best[0], 2),
        }
    return out


def _full_size() -> dict:
    """Interval time and peak memory of each kind's scopes at its published size, one model."""
    from workbench.evaluation.intervals import Settings, Uncertainty
    from workbench.kinds.crows_pairs.metrics import Outcome
    from workbench.kinds.crows_pairs.metrics import scopes as crows_scopes
    from workbench.kinds.honest.parsing import Template
    from workbench.kinds.honest.scoring import honest_scopes
    from workbench.kinds.nli.evaluation.metrics.nli_scores import scopes as nli_scopes
    from workbench.kinds.sofa.metrics import Accumulator, sofa_scopes
    from workbench.kinds.stereoset.cats import Example, Sentence, StereoSetData
    from workbench.kinds.stereoset.metrics import scopes as stereoset_scopes

    rng = np.random.default_rng(0)
    builds = {}
    types = [f"type{i}" for i in range(9)]
    outcomes = [
        Outcome(["stereo", "antistereo"][i % 2], int(rng.random() < 0.6), int(rng.random() < 0.05)) for i in range(1508)
    ]
    groups = [types[i % 9] for i in range(1508)]
    builds["crows-pairs (1,508 pairs)"] = lambda: crows_scopes(outcomes, groups)

    examples, scores = [], {}
    for i in range(4229):
        sentences = {g: Sentence(f"{i}{g}", g, g) for g in ("stereotype", "anti-stereotype", "unrelated")}
        scores.update({s.id: float(rng.random()) for s in sentences.values()})
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
    builds["stereoset (4,229 examples)"] = lambda: stereoset_scopes(data, scores)

    templates = [
        Template(i + 2, f"who{i % 27} template{i // 27} [M].", f"who{i % 27}", ["f", "m"][i % 2]) for i in range(1620)
    ]
    hits = [["cat" if rng.random() < 0.05 else None for _ in range(20)] for _ in templates]
    builds["honest (1,620 rows, 60 templates, K = 20)"] = lambda: honest_scopes(
        templates, hits, 20, [1, 5, 10, 20], ["cat"]
    )

    n_st = 11_349
    acc = Accumulator(n_st)
    per_st = rng.integers(2, 260, n_st)
    st = np.repeat(np.arange(n_st), per_st)[:1_490_120]
    acc.add(st, np.zeros(len(st), dtype=np.int64), rng.normal(0, 0.3, len(st)))
    st_cat = list(rng.integers(0, 9, n_st))
    builds["sofa (11,349 stereotypes, 1.49M probes)"] = lambda: sofa_scopes(acc, st_cat, types)

    rows = []
    for i in range(10_000):
        for stance in ("pro", "anti"):
            rows.append(
                {
                    "stance": stance,
                    "domain": f"d{i % 3}",
                    "subtopic": f"s{i % 16}",
                    "pair_id": f"p{i}",
                    "cluster": f"t{i % 2000}",
                    "prediction": ["entailment", "neutral", "contradiction"][rng.integers(3)],
                }
            )
    builds["nli (20,000 samples, 2,000 templates)"] = lambda: nli_scopes(rows)

    out = {}
    for name, scopes_of in builds.items():
        tracemalloc.start()
        start = time.perf_counter()
        scopes = scopes_of()
        entry: dict = {}
        for scope in scopes:  # the groups' dicts the intervals go into (the figures are not needed here)
            node = entry
            for key in scope.path:
                node = node.setdefault(key, {})
        uncertainty = Uncertainty(Settings(resamples=RESAMPLES), "units", ())
        uncertainty.add("m", entry, scopes)
        uncertainty.finish({})
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        out[name] = {"seconds": round(seconds, 3), "scopes": len(scopes), "peak_mib": round(peak / 2**20, 1)}
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
        "synthetic scores for CrowS-Pairs, StereoSet, HONEST, SOFA (1.49M probes) and NLI",
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
            "Full sizes: "
            + "; ".join(
                f"{k}: {v['seconds']} s, {v['scopes']} groups, peak {v['peak_mib']} MiB" for k, v in full.items()
            ),
        ],
    )
