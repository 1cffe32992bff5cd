"""The NLI evaluator's measures (overall, per domain, per subtopic) over 1M predictions: the
vectorised `grouped` against a plain loop that counts sample by sample and pair by pair, as
a script computing BBNLI's and BBNLI-next's measures would."""

from __future__ import annotations

import time
from collections import defaultdict

import numpy as np

from .common import summary

LOOP_SAMPLE = 100_000


def plain_measures(stance, prediction, pair, groups) -> dict:
    """The same counts, one sample and one pair at a time, for each grouping."""
    out = {}
    for name, group in groups.items():
        counts = defaultdict(lambda: defaultdict(int))
        pro_of, anti_of = {}, {}
        for s, p, q, g in zip(stance.tolist(), prediction.tolist(), pair.tolist(), group.tolist()):
            c = counts[g]
            c["n"] += 1
            c["neutral"] += p == 1
            c["pro"] += (p == 0 and s) or (p == 2 and not s)
            c["anti"] += (p == 0 and not s) or (p == 2 and s)
            if q >= 0:
                (pro_of if s else anti_of)[q] = (p, g)
            else:
                c["unpaired_wrong"] += p != 1
        for q, (a, g) in pro_of.items():
            b = anti_of[q][0]
            c = counts[g]
            if a == b and a != 1:
                c["cf_error"] += 2
            else:
                c["cf_pro"] += (a == 0) + (b == 2)
                c["cf_anti"] += (a == 2) + (b == 0)
        out[name] = {g: {k: 100.0 * v / c["n"] for k, v in c.items()} for g, c in counts.items()}
    return out


def data(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    prediction = rng.integers(0, 3, n)
    n_pairs = n // 2 - n // 20
    pair = np.full(n, -1)
    pair[: 2 * n_pairs] = np.repeat(np.arange(n_pairs), 2)
    stance = np.ones(n, dtype=bool)
    stance[1 : 2 * n_pairs : 2] = False
    stance[2 * n_pairs :] = rng.random(n - 2 * n_pairs) < 0.5
    subtopic = np.concatenate(
        [
            np.repeat(rng.integers(0, 16, n_pairs), 2),  # both samples of a pair share it
            rng.integers(0, 16, n - 2 * n_pairs),
        ]
    )
    domain = subtopic % 3
    perm = rng.permutation(n)
    return prediction[perm], pair[perm], stance[perm], subtopic[perm], domain[perm], n_pairs


def run(ctx, n: int = 1_000_000) -> dict:
    from workbench.kinds.nli.evaluation.metrics.nli_bias import grouped

    prediction, pair, stance, subtopic, domain, n_pairs = data(n)
    times = []
    for _ in range(5):
        start = time.perf_counter()
        grouped(stance, prediction, pair, np.zeros(n, dtype=np.int64), 1)
        grouped(stance, prediction, pair, domain, 3)
        grouped(stance, prediction, pair, subtopic, 16)
        times.append(time.perf_counter() - start)
    small = data(LOOP_SAMPLE, seed=1)
    start = time.perf_counter()
    plain = plain_measures(
        small[2],
        small[0],
        small[1],
        {"overall": np.zeros(LOOP_SAMPLE, dtype=np.int64), "domain": small[4], "subtopic": small[3]},
    )
    loop = (time.perf_counter() - start) * n / LOOP_SAMPLE
    check = grouped(small[2], small[0], small[1], np.zeros(LOOP_SAMPLE, dtype=np.int64), 1)
    assert abs(check["cf_pro"][0] - plain["overall"][0]["cf_pro"]) < 1e-9  # the same measures
    assert abs(check["bias_pro"][0] - plain["overall"][0]["pro"]) < 1e-9
    median = sorted(times)[2]
    return summary(
        title="evaluate: the NLI bias measures of 1M predictions (NLI evaluator, measures only)",
        workload=f"{n:,} predictions ({n_pairs:,} counterfactual pairs), overall + 3 domains + 16 subtopics",
        figure=f"{median:.2f} s for every measure at every level ({n / median / 1e6:.1f}M predictions/s)",
        clock="wall seconds (no model; median of 5)",
        roof=None,
        roof_what="not applicable: no model runs here (predictions are inputs)",
        loop=round(loop / median, 1),
        loop_what=(
            f"counting sample by sample and pair by pair in Python (timed on {LOOP_SAMPLE:,} predictions, "
            "scaled; checked to give the same measures)"
        ),
        targets=["≤ 1 s for 1M predictions (overall + per domain + per subtopic)"],
        figures={
            "predictions": n,
            "pairs": n_pairs,
            "seconds_all_levels_median_of_5": round(median, 4),
            "plain_loop_seconds_extrapolated": round(loop, 2),
        },
    )
