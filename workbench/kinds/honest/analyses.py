"""FairBelief's analyses of many models at once (Setzu et al.), from each model's HONEST figures
and fills; docs/fidelity.md gives each rule and where it departs from the paper's code.

- Table 1: per model, the per-rank HONEST (rank k's fills alone, k = 1 … K, in percent) summarised
  as its mean ± std (numpy's, ddof 0) and percentiles q25, q50, q75, q90, q95 (numpy.percentile,
  linear), and the model's rank among the models by that mean (1 = least hurtful; ties share the
  lowest rank).
- Curves: each model's cumulative HONEST@k and per-rank HONEST, overall and per group (in its
  entry already); with a models table, each family's and each size's mean curve over its models.
  `--group-curves identity-mean` gives a group's per-rank curve as FairBelief's notebook does: the
  unweighted mean over the group's identities of each identity's curve (default `pooled`: HONEST
  over the group's templates).
- Agreement: per rank k and template, the mean pairwise cosine similarity of the sentence
  embeddings of the models' fills ("template + fill": FairBelief's text, the prompt without its
  mask token, a space, the fill; or `--agreement-text filled`, the fill in the slot), then the mean
  over templates: among all models, within each family (two models or more) and across families
  (pairs of models of different families). FairBelief's code reports the mean cosine distance
  (scipy's pdist), which is 1 − this.

Pure code (numpy and the standard library; the embedder comes in as an argument): a release's
evaluate.py carries it.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...core.errors import InputError, display_path
from .parsing import SLOT
from .published import text_for_agreement

PERCENTILES = (25, 50, 75, 90, 95)
GROUP_CURVES = ("pooled", "identity-mean")  # --group-curves
AGREEMENT_TEXTS = ("appended", "filled")  # --agreement-text


@dataclass(frozen=True)
class Member:
    """A model's line of the models table."""

    family: str
    size: str


def read_models_table(path: Path) -> dict[str, Member]:
    """`--models-table`: a CSV with name and family columns (size optional), one model a row."""
    shown = display_path(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{shown}: models table not found") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{shown}: models table is not UTF-8 text (byte {exc.start})") from None
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in ("name", "family") if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(
            f"{shown}:1: the models table has no {' or '.join(missing)} column; it is a CSV with "
            f"name, family and size (found: {', '.join(reader.fieldnames or []) or 'nothing'})"
        )
    out: dict[str, Member] = {}
    for record in reader:
        name = (record.get("name") or "").strip()
        if not name or not (record.get("family") or "").strip():
            raise InputError(f"{shown}:{reader.line_num}: a model needs a name and a family")
        if name in out:
            raise InputError(f"{shown}:{reader.line_num}: model {name!r} is listed twice")
        out[name] = Member(record["family"].strip(), (record.get("size") or "").strip())
    return out


def table_one(per_rank: dict[str, list[float]]) -> dict[str, dict]:
    """Per model: mean, std and percentiles of its per-rank HONEST, and its rank by the mean."""
    out = {}
    for name, values in per_rank.items():
        v = np.asarray(values, dtype=float)
        out[name] = {
            "mean": float(v.mean()),
            "std": float(v.std()),
            **{f"q{p}": float(np.percentile(v, p)) for p in PERCENTILES},
        }
    for name in out:  # 1 + how many models have a lower mean: ties share the lowest rank
        out[name]["rank"] = 1 + sum(other["mean"] < out[name]["mean"] for other in out.values())
    return out


def per_rank_of(hits: list[list[str | None]], K: int) -> list[float]:
    """Rank k's share of hurtful fills over these templates, in percent, k = 1 … K."""
    counts = np.zeros(K)
    for row in hits:
        counts += np.fromiter((c is not None for c in row[:K]), dtype=float, count=K)
    return (100.0 * counts / len(hits)).tolist()


def cumulative_of(per_rank: list[float]) -> list[float]:
    """HONEST@k from the per-rank shares: the mean of the first k."""
    sums = np.cumsum(per_rank)
    return (sums / np.arange(1, len(per_rank) + 1)).tolist()


def group_curves(rows, results: list[dict], K: int, how: str) -> dict[str, list[float]]:
    """Each group's per-rank curve: over its templates (`pooled`) or the mean of its identities'."""
    groups: dict[str, dict[str, list]] = {}
    for row, result in zip(rows, results):
        if row.group is not None:
            groups.setdefault(row.group, {}).setdefault(row.template.identity, []).append(result["hurtful"])
    out = {}
    for group, by_identity in groups.items():
        if how == "pooled":
            out[group] = per_rank_of([h for hits in by_identity.values() for h in hits], K)
        else:
            curves = [per_rank_of(hits, K) for hits in by_identity.values()]
            out[group] = np.mean(np.asarray(curves), axis=0).tolist()
    return out


def mean_curves(curves: dict[str, list[float]], of: dict[str, str]) -> dict[str, list[float]]:
    """The mean curve of each value of `of` (model -> family or size) over its models."""
    members: dict[str, list[str]] = {}
    for name in curves:
        if of.get(name):
            members.setdefault(of[name], []).append(name)
    return {key: np.mean([curves[n] for n in names], axis=0).tolist() for key, names in members.items()}


def agreement_texts(template: str, prompt: str, fills: list[str], how: str) -> list[str]:
    """The sentence each fill is embedded in (AGREEMENT_TEXTS)."""
    if how == "filled":
        return [template.replace(SLOT, fill, 1) for fill in fills]
    return [text_for_agreement(prompt, fill) for fill in fills]


def pairwise_similarity(vectors: np.ndarray) -> np.ndarray:
    """(… × M × d) -> (… × M × M): each pair's cosine similarity (NaN where a vector is zero)."""
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = vectors / norms
    return np.einsum("...md,...nd->...mn", unit, unit)


def agreement(
    embed, models: list[str], texts: dict[str, list[list[str]]], families: dict[str, str]
) -> dict[str, object]:
    """Mean pairwise cosine similarity per rank (`texts[model][template][k]`, every model the same
    templates and K), over templates: among all models, within each family and across families.
    `embed(texts) -> vectors`; each distinct text is embedded once."""
    distinct = list(dict.fromkeys(t for m in models for row in texts[m] for t in row))
    number = {t: i for i, t in enumerate(distinct)}
    vectors = np.asarray(embed(distinct), dtype=float)
    index = np.array([[[number[t] for t in row] for row in texts[m]] for m in models])  # M × T × K
    T, K = index.shape[1], index.shape[2]
    sets: dict[str, np.ndarray] = {"all": np.triu(np.ones((len(models), len(models)), dtype=bool), 1)}
    family = [families.get(m, "") for m in models]
    for name in dict.fromkeys(f for f in family if f):
        inside = np.array([f == name for f in family])
        if inside.sum() >= 2:
            sets[f"within {name}"] = sets["all"] & np.outer(inside, inside)
    if len({f for f in family if f}) >= 2 and all(family):
        sets["across families"] = sets["all"] & np.not_equal.outer(np.array(family), np.array(family))
    per_k: dict[str, list[float]] = {name: [] for name in sets}
    per_template: dict[str, np.ndarray] = {name: np.zeros((T, K)) for name in sets}
    for k in range(K):
        cos = pairwise_similarity(vectors[index[:, :, k]].transpose(1, 0, 2))  # T × M × M
        for name, pairs in sets.items():
            values = cos[:, pairs].mean(axis=1)  # each template's mean over the pairs
            per_template[name][:, k] = values
            per_k[name].append(float(values.mean()))
    return {"per_k": per_k, "per_template": per_template, "pairs": {n: int(p.sum()) for n, p in sets.items()}}
