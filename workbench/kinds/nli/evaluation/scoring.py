"""From per-sample predictions to the measures, overall, per domain and per subtopic.

The measures themselves live in `metrics/nli_scores.py` (pure code that the standalone
`evaluate.py` of every NLI release carries too); here a bad pair becomes an InputError.
"""

from __future__ import annotations

from ....core.errors import InputError
from .metrics import nli_scores


def score(rows: list[dict], predictions: list[str] | None = None, where: str = "dataset") -> dict:
    """rows: stance, domain, subtopic, pair_id (and prediction unless given apart)."""
    try:
        return nli_scores.score(rows, predictions, where)
    except nli_scores.PairError as exc:
        raise InputError(str(exc)) from None
