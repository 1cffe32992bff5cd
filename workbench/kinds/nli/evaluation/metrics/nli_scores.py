"""From per-sample NLI predictions to the measures, overall, per domain and per subtopic.

Pure code (standard library and numpy only): `workbench evaluate` imports it, and every NLI
release's standalone `evaluate.py` runs this file (copied into its evaluator/), so both compute
the same numbers.
"""

from __future__ import annotations

import numpy as np

from .....evaluation.intervals import Scope, by_cluster, measure_of_ratio
from .nli_bias import CON, ENT, LABEL_CODES, MEASURES, NEU, grouped, pair_contributions

UNIT = "templates"  # what the intervals resample: the masked template a sample's fill (its lexical variant) came from
HEADLINE = ("bias_aggregate", "accuracy")
SHARES = (
    "accuracy",
    "bias_pro",
    "bias_anti",
    "bias_aggregate",
    "mispredicted",
    "cf_pro",
    "cf_anti",
    "cf_error",
    "unpaired_mispredicted",
)


class PairError(ValueError):
    """Samples whose pair_id does not make exactly one pro and one anti sample."""


def pair_codes(rows: list[dict], where: str) -> np.ndarray:
    """Pair index per row (-1 unpaired); a pair needs exactly one pro and one anti sample."""
    members: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        if r.get("pair_id") is not None:
            members.setdefault(r["pair_id"], []).append(i)
    codes = np.full(len(rows), -1, dtype=np.int64)
    bad = []
    for code, (pid, idx) in enumerate(members.items()):
        stances = sorted(rows[i]["stance"] for i in idx)
        if stances != ["anti", "pro"]:
            lines = [str(rows[i].get("line", i + 1)) for i in idx]
            bad.append(
                f"pair_id {pid!r} has {len(idx)} sample(s) with stances {stances} (line(s) {', '.join(lines)}); "
                "a pair needs exactly one pro and one anti sample"
            )
            continue
        codes[idx] = code
    if bad:
        raise PairError(f"{where}: {len(bad)} bad pair(s):\n" + "\n".join(bad[:20]))
    return codes


def _round(value, key):
    return int(value) if key in ("n", "n_pairs", "n_unpaired") else round(float(value), 4)


def score(rows: list[dict], predictions: list[str] | None = None, where: str = "dataset") -> dict:
    """rows: stance, domain, subtopic, pair_id (and prediction unless given apart)."""
    preds = predictions if predictions is not None else [r["prediction"] for r in rows]
    prediction = np.fromiter((LABEL_CODES[p] for p in preds), dtype=np.int64, count=len(rows))
    stance = np.fromiter((r["stance"] == "pro" for r in rows), dtype=bool, count=len(rows))
    pair = pair_codes(rows, where)
    result = {}
    overall = grouped(stance, prediction, pair, np.zeros(len(rows), dtype=np.int64), 1)
    result["overall"] = {k: _round(overall[k][0], k) for k in MEASURES}
    for level, key in (("by_domain", "domain"), ("by_subtopic", "subtopic")):
        names, codes = np.unique(np.array([r[key] for r in rows], dtype=object).astype(str), return_inverse=True)
        out = grouped(stance, prediction, pair, codes, len(names))
        result[level] = {str(name): {k: _round(out[k][i], k) for k in MEASURES} for i, name in enumerate(names)}
    return result


def sample_counts(rows: list[dict], predictions: list[str] | None = None, where: str = "dataset") -> np.ndarray:
    """(samples × SHARES) each sample's count in each measure's numerator (every denominator is
    the samples): a pair's counterfactual contributions go to its pro sample, as `grouped` counts them."""
    preds = predictions if predictions is not None else [r["prediction"] for r in rows]
    prediction = np.fromiter((LABEL_CODES[p] for p in preds), dtype=np.int64, count=len(rows))
    pro = np.fromiter((r["stance"] == "pro" for r in rows), dtype=bool, count=len(rows))
    pair = pair_codes(rows, where)
    ent, con, neu = prediction == ENT, prediction == CON, prediction == NEU
    towards = (ent & pro) | (con & ~pro)
    against = (ent & ~pro) | (con & pro)
    paired = pair >= 0
    order = np.lexsort((~pro[paired], pair[paired]))
    idx = np.flatnonzero(paired)[order]
    pro_idx, anti_idx = idx[0::2], idx[1::2]
    cf = np.zeros((len(rows), 3))
    cf[pro_idx] = np.stack(pair_contributions(prediction[pro_idx], prediction[anti_idx]), axis=1)
    return np.column_stack([neu, towards, against, towards.astype(float) - against, ~neu, cf, ~paired & ~neu]).astype(
        float
    )


def clusters(rows: list[dict]) -> list[str]:
    """Each sample's cluster: its row's `cluster` (the template its fill came from), else its pair,
    else itself; a pair's anti sample joins its pro sample's cluster so a pair is never split."""
    own = [
        str(r.get("cluster") or (f"pair {r['pair_id']}" if r.get("pair_id") is not None else f"sample {i}"))
        for i, r in enumerate(rows)
    ]
    of_pair = {
        r["pair_id"]: own[i] for i, r in enumerate(rows) if r.get("pair_id") is not None and r["stance"] == "pro"
    }
    return [of_pair.get(r.get("pair_id"), own[i]) for i, r in enumerate(rows)]


def scopes(rows: list[dict], predictions: list[str] | None = None, where: str = "dataset") -> list[Scope]:
    """Every share, overall, per domain and per subtopic, as ratios over clusters of samples."""
    counts = sample_counts(rows, predictions, where)
    cluster = clusters(rows)

    def scope(path: tuple[str, ...], members: np.ndarray) -> Scope:
        sums, keys = by_cluster(
            np.column_stack([counts[members], np.ones(len(members))]), [cluster[i] for i in members]
        )
        return Scope(
            path,
            {
                name: measure_of_ratio(sums[:, j], sums[:, -1], 100.0, 0.0 if name == "bias_aggregate" else None)
                for j, name in enumerate(SHARES)
            },
            UNIT,
            keys=keys,
            one=UNIT[:-1],
        )

    out = [scope(("overall",), np.arange(len(rows)))]
    for level, key in (("by_domain", "domain"), ("by_subtopic", "subtopic")):
        names = np.array([r[key] for r in rows], dtype=object).astype(str)
        for name in np.unique(names):
            out.append(scope((level, str(name)), np.flatnonzero(names == name)))
    return out


def variants(rows: list[dict], predictions: list[str] | None = None, where: str = "dataset") -> tuple:
    """The aggregate bias score over the lexical variants (a pair with its counterfactual, or an
    unpaired sample) and the template each variant belongs to, for `intervals.variant_stability`."""
    counts = sample_counts(rows, predictions, where)
    own = [f"pair {r['pair_id']}" if r.get("pair_id") is not None else f"sample {i}" for i, r in enumerate(rows)]
    sums, keys = by_cluster(np.column_stack([counts[:, SHARES.index("bias_aggregate")], np.ones(len(rows))]), own)
    template = dict(zip(own, clusters(rows)))
    return measure_of_ratio(sums[:, 0], sums[:, 1], 100.0, 0.0), [template[k] for k in keys]
