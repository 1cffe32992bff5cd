"""NLI checkpoints' output labels mapped onto entailment / neutral / contradiction.

Pure code (standard library only): the classifier (classifier.py) imports it, in workbench and
in every NLI release's standalone `evaluate.py` (which runs copies of both files), so both read
a checkpoint's labels and pick its prediction the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

LABELS = ("entailment", "neutral", "contradiction")


@dataclass
class Prediction:
    """One model's answer for a premise-hypothesis pair: the label and a probability per label.
    A generated answer that reads as no label (label None) keeps what the model said in `answer`
    (its first ANSWER_CHARS characters), so the items file and the cache show it."""

    label: str | None
    probs: dict[str, float]
    answer: str | None = None

    def stored(self) -> dict:
        """What the prediction cache keeps: `answer` only where there is one (a classifier's entries
        stay as they were)."""
        out = {"label": self.label, "probs": self.probs}
        return out if self.answer is None else {**out, "answer": self.answer}


SYNONYMS = {
    "entailment": "entailment",
    "entail": "entailment",
    "entails": "entailment",
    "entailed": "entailment",
    "ent": "entailment",
    "e": "entailment",
    "neutral": "neutral",
    "neu": "neutral",
    "n": "neutral",
    "non-entailment": None,
    "contradiction": "contradiction",
    "contradict": "contradiction",
    "contradicts": "contradiction",
    "contra": "contradiction",
    "con": "contradiction",
    "c": "contradiction",
}
ANSWER_CHARS = 200  # of an unparseable generated answer, kept in the cache and the items file
PROB_DECIMALS = 6  # probabilities are stored rounded; the prediction is read from the rounded ones


def raw_label_names(id2label: dict) -> list[str]:
    """The checkpoint's label names in output-index order (config keys may be strings)."""
    return [str(id2label[k]) for k in sorted(id2label, key=int)]


def canonical_labels(raw_names: list[str], override: dict[str, str] | None = None) -> list[str] | None:
    """Canonical label for each output index, or None when they are not one of each.

    `override` maps a raw name or an output index (as text) to a canonical name."""
    override = {str(k).lower(): v.lower() for k, v in (override or {}).items()}
    out: list[str] = []
    for index, raw in enumerate(raw_names):
        key = raw.strip().lower()
        label = override.get(key, override.get(str(index)))
        if label is None:
            label = SYNONYMS.get(key)
        if label not in LABELS:
            return None
        out.append(label)
    return out if sorted(out) == sorted(LABELS) else None


def decide(probs: list[float], labels: list[str]) -> tuple[str, dict[str, float]]:
    """(predicted label, rounded probability per label); a tie after rounding goes to the
    label with the lower output index."""
    named = {labels[i]: round(p, PROB_DECIMALS) for i, p in enumerate(probs)}
    return max(named, key=named.get), named
