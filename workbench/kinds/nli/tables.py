"""The NLI kind's workspace tables, typed: nested values are Arrow lists and structs, so no
stage re-parses JSON strings written by another.

    expand           masked samples (bindings: map placeholder -> word, groups: GROUP1/GROUP2,
                     mask_pos: per mask the allowed POS tags or null)
    generate         + candidate fields (fill: one word per mask, fill_spans: [start, end])
    filter           + predictions (one struct per filter model), fooled_by, adversarial
    fluency          triage score of each unique adversarial hypothesis (PLL, or a causal LM's log-prob)
    queue            one item per unique hypothesis (premises, fooled summary per model)
    counterfactuals  release rows (provenance stays a JSON string: it is part of the release format)
"""

from __future__ import annotations

import json


def _pa():
    import pyarrow as pa

    return pa


def sample_fields():
    pa = _pa()
    return [
        ("sample_id", pa.string()),
        ("template_id", pa.string()),
        ("domain", pa.string()),
        ("subtopic", pa.string()),
        ("subtopic_name", pa.string()),
        ("premise_index", pa.int64()),
        ("hypothesis_index", pa.int64()),
        ("kind", pa.string()),
        ("stance", pa.string()),
        ("written_stance", pa.string()),
        ("premise", pa.string()),
        ("hypothesis", pa.string()),
        ("hypothesis_template", pa.string()),
        ("question", pa.string()),
        ("true_label", pa.string()),
        ("bias_label", pa.string()),
        ("bindings", pa.map_(pa.string(), pa.string())),
        ("group", pa.string()),
        ("counterfactual_group", pa.string()),
        ("groups", pa.struct([("GROUP1", pa.string()), ("GROUP2", pa.string())])),
        ("n_masks", pa.int64()),
        ("mask_pos", pa.list_(pa.list_(pa.string()))),
        ("reference", pa.string()),
    ]


def expand_schema():
    # grammar: notes for annotators where agreement with a swapped group was not settled by the
    # parse (read by the queue; the later tables do not carry it)
    return _pa().schema(sample_fields() + [("grammar", _pa().list_(_pa().string()))])


def candidate_fields():
    pa = _pa()
    masked = [(n, t) for n, t in sample_fields() if n not in ("hypothesis", "n_masks", "mask_pos", "question")]
    return masked + [
        ("masked_hypothesis", pa.string()),
        ("candidate_id", pa.string()),
        ("hypothesis", pa.string()),
        ("hypothesis_id", pa.string()),
        ("fill", pa.list_(pa.string())),
        ("fill_tokens", pa.list_(pa.string())),
        ("fill_spans", pa.list_(pa.list_(pa.int64()))),
        ("mask_pos", pa.list_(pa.list_(pa.string()))),
        ("article_fixed", pa.bool_()),
        ("fill_rank", pa.int64()),
        ("fill_logprob", pa.float64()),
        ("fill_score", pa.float64()),
        ("mlm_name", pa.string()),
        ("mlm_revision", pa.string()),
        ("proposer", pa.string()),  # who proposed the fill, as [generate] names it (model or proposers)
        ("reject_reason", pa.string()),
        ("pos_found", pa.string()),
        ("kept", pa.bool_()),
    ]


def generate_schema():
    return _pa().schema(candidate_fields())


def prediction_type():
    pa = _pa()
    probs = pa.struct([("entailment", pa.float64()), ("neutral", pa.float64()), ("contradiction", pa.float64())])
    return pa.struct([("model", pa.string()), ("label", pa.string()), ("probs", probs)])


def filter_schema():
    pa = _pa()
    return pa.schema(
        candidate_fields()
        + [
            ("predictions", pa.list_(prediction_type())),
            ("fooled_by", pa.list_(pa.string())),
            ("n_fooled", pa.int64()),
            ("adversarial", pa.bool_()),
        ]
    )


def fluency_schema():
    pa = _pa()
    # pll: the text's log-likelihood under `scorer` (pll: the masked LM's pseudo-log-likelihood;
    # causal: a causal LM's log-probability); the column keeps its first name for readers.
    return pa.schema(
        [
            ("hypothesis_id", pa.string()),
            ("hypothesis", pa.string()),
            ("scorer", pa.string()),
            ("pll", pa.float64()),
            ("n_tokens", pa.int64()),
            ("pll_per_token", pa.float64()),
        ]
    )


def queue_schema():
    pa = _pa()
    fooled = pa.struct(
        [
            ("model", pa.string()),
            ("fooled", pa.int64()),
            ("of", pa.int64()),
            ("labels", pa.map_(pa.string(), pa.int64())),
            ("max_prob", pa.float64()),
        ]
    )
    return pa.schema(
        [
            ("item_id", pa.string()),
            ("hypothesis", pa.string()),
            ("fill", pa.list_(pa.string())),
            ("fill_spans", pa.list_(pa.list_(pa.int64()))),
            ("masked_template", pa.string()),
            ("masked_hypothesis", pa.string()),
            ("group", pa.string()),
            ("counterfactual_group", pa.string()),
            ("domain", pa.string()),
            ("subtopic", pa.string()),
            ("template_id", pa.string()),
            ("hypothesis_index", pa.int64()),
            ("stance", pa.string()),
            ("premises", pa.list_(pa.string())),
            ("fooled", pa.list_(fooled)),
            ("n_samples", pa.int64()),
            ("fluency", pa.float64()),
            ("position", pa.int64()),
            ("details", pa.list_(pa.struct([("label", pa.string()), ("text", pa.string())]))),  # grammar notes
        ]
    )


RELEASE_COLUMNS = [
    "id",
    "premise",
    "hypothesis",
    "label",
    "stance",
    "domain",
    "subtopic",
    "pair_id",
    "is_counterfactual",
    "provenance",
]


def release_schema():
    pa = _pa()
    return pa.schema([(c, pa.bool_() if c == "is_counterfactual" else pa.string()) for c in RELEASE_COLUMNS])


# Candidates in a stable order: per template, premise, hypothesis, sample, then fill rank and proposer.
CANDIDATE_ORDER = [
    ("template_id", "ascending"),
    ("premise_index", "ascending"),
    ("hypothesis_index", "ascending"),
    ("sample_id", "ascending"),
    ("fill_rank", "ascending"),
    ("proposer", "ascending"),
]


def bindings_dict(value) -> dict[str, str]:
    """A map column's value (a list of (key, value) pairs in Python) as a dict."""
    return dict(value or [])


def bindings_text(value) -> str:
    """The bindings as one canonical string, for sorting and display."""
    return json.dumps(bindings_dict(value), ensure_ascii=False, sort_keys=True)
