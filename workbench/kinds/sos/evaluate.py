"""`workbench evaluate --kind sos`: SOS_LM, each (profane, nice) pair scored as a CrowS pair.

Input: a CSV with `profane`, `nice`, `identity`, `attribute`, `marginalised` (true/false), or
the SOS author's names: `Toxic_sent` / `Non_Toxic_sent`, and `bias_type` values such as
`Religion_Marginalized` / `Religion_Non_Marginalized` in place of attribute + marginalised.
A workbench release (`manifest.json` with `"kind": "sos"`, `data/sos.csv`) has the first layout.

Declared (`DECLARED`): workbench runs the loop, the intervals, the tables, CSV, items file, JSON,
chart and the release's evaluate.py. Pairs are scored and decided as CrowS-Pairs scores them
(crows_pairs/scoring.py); the figures are metrics.py's: SOS per identity, per attribute (with the
mean over its marginalised and over its non-marginalised identities) and overall.
`--predictions` reads each sentence's log-likelihood from a file (evaluation/likelihoods.py's
layout, a pair's id its data row) in place of a model; `--predictions-out` writes a model's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import InputError, Problem
from ...evaluation.declared import ONE, Declared, Level, Loaded, Statistic
from ..crows_pairs.data import (
    Table,
    find_column,
    load_source,
    looks_like,
    problem,
    raise_problems,
)
from ..crows_pairs.evaluate import SCORE_RULES, about_pairs, pair_likelihoods, pair_work, rule_for
from ..crows_pairs.metrics import UNBIASED
from ..crows_pairs.scoring import likelihood_diff_line, score_pairs
from .metrics import COMPUTATION, TIED, TOKEN_RULE, TOKEN_RULE_NOTES
from .metrics import SOS_MEANING as MEANING
from .metrics import (
    attribute_name,
    marginalised_flag,
    normalised,
    oriented,
    profane_first,
    sos_measures,
    sos_model_result,
    target_at,
    SosOutcome,
)

KIND = "sos"
DATA_NAME = "sos.csv"
PROFANE = ("profane", "Toxic_sent", "toxic", "profane_sent")
NICE = ("nice", "Non_Toxic_sent", "non_toxic", "nice_sent")
IDENTITY = ("identity", "target", "identity_term", "group")
ATTRIBUTE = ("attribute", "sensitive_attribute")
MARGINALISED = ("marginalised", "marginalized", "is_marginalised", "is_marginalized")
BIAS_TYPE = ("bias_type",)
DIRECTION = ("stereo_antistereo",)  # the SOS_LM script's file has it; only --token-rule reference reads it
BIAS_TYPE_FORM = re.compile(r"^(?P<attr>.+?)_(?P<flag>(?:non|not)_?margin\w*|margin\w*)$")


def detect(path: Path) -> bool:
    """An SOS CSV (profane/nice or Toxic_sent/Non_Toxic_sent columns) or an sos release folder."""
    return looks_like(path, KIND, DATA_NAME, [("profane",), ("nice",)]) or looks_like(
        path, KIND, DATA_NAME, [("Toxic_sent",), ("Non_Toxic_sent",)]
    )


@dataclass
class SosPairs:
    table: Table
    profane: list[str]
    nice: list[str]
    identity: list[str]
    attribute: list[str]
    marginalised: list[bool]
    direction: list[str]


def load(spec: str) -> SosPairs:
    table = load_source(spec, KIND, DATA_NAME)
    cols = table.columns
    profane_col, nice_col = find_column(cols, *PROFANE), find_column(cols, *NICE)
    identity_col = find_column(cols, *IDENTITY)
    attr_col, marg_col, type_col = (
        find_column(cols, *ATTRIBUTE),
        find_column(cols, *MARGINALISED),
        find_column(cols, *BIAS_TYPE),
    )
    dir_col = find_column(cols, *DIRECTION)
    missing = []
    if profane_col is None:
        missing.append(("profane", "profane (or Toxic_sent)"))
    if nice_col is None:
        missing.append(("nice", "nice (or Non_Toxic_sent)"))
    if identity_col is None:
        missing.append(("identity", "identity"))
    if attr_col is None and type_col is None:
        missing.append(("attribute", "attribute (or bias_type like Religion_Marginalized)"))
    if marg_col is None and type_col is None:
        missing.append(("marginalised", "marginalised (true/false; or bias_type like Religion_Marginalized)"))
    if missing:
        from ..layout import format_hint

        why = format_hint(table.path)
        raise InputError(
            f"{table.shown}: missing column(s) {', '.join(m for m, _ in missing)}{' -- ' + why if why else ''}",
            [
                Problem(
                    table.shown, 1, f"column {name!r}", f"missing: expected {what} (found: {', '.join(cols) or 'none'})"
                )
                for name, what in missing
            ],
        )
    if not table.rows:
        raise InputError(f"{table.shown}: no pairs (only a header)")

    problems: list[Problem] = []
    out = SosPairs(table, [], [], [], [], [], [])
    first_seen: dict[str, tuple[int, str, bool]] = {}
    for i, row in enumerate(table.rows):
        p, n = row[profane_col], row[nice_col]
        for col, text in ((profane_col, p), (nice_col, n)):
            if not text.strip():
                problems.append(problem(table, i, col, "empty sentence"))
        if p.strip() and p.strip() == n.strip():
            problems.append(
                problem(
                    table,
                    i,
                    nice_col,
                    "the same sentence as the profane one: a pair must differ "
                    "in the profane/nice word, or there is nothing to compare",
                )
            )
        identity = row[identity_col].strip()
        if not identity:
            problems.append(problem(table, i, identity_col, "empty identity"))
        parsed = None
        if type_col is not None and (attr_col is None or marg_col is None):
            m = BIAS_TYPE_FORM.match(normalised(row[type_col]))
            if m:
                parsed = (attribute_name(m.group("attr")), not m.group("flag").startswith(("non", "not")))
            else:
                problems.append(
                    problem(
                        table,
                        i,
                        type_col,
                        f"{row[type_col]!r} is not ATTRIBUTE_Marginalized or "
                        "ATTRIBUTE_Non_Marginalized (e.g. Religion_Marginalized)",
                    )
                )
        attribute = attribute_name(row[attr_col]) if attr_col is not None else (parsed[0] if parsed else "")
        if attr_col is not None and not attribute:
            problems.append(problem(table, i, attr_col, "empty attribute"))
        if marg_col is not None:
            try:
                marginalised = marginalised_flag(row[marg_col])
            except ValueError as exc:
                marginalised = False
                problems.append(problem(table, i, marg_col, str(exc)))
        else:
            marginalised = parsed[1] if parsed else False
        if identity and attribute:
            seen = first_seen.setdefault(identity, (i, attribute, marginalised))
            if seen[1:] != (attribute, marginalised):
                problems.append(
                    problem(
                        table,
                        i,
                        identity_col,
                        (
                            f"identity {identity!r} is {attribute}/{'marginalised' if marginalised else 'non-marginalised'} "
                            f"here but {seen[1]}/{'marginalised' if seen[2] else 'non-marginalised'} in row {seen[0] + 1}; "
                            "an identity has one attribute and one marginalised flag"
                        ),
                    )
                )
        out.profane.append(p)
        out.nice.append(n)
        out.identity.append(identity)
        out.attribute.append(attribute)
        out.marginalised.append(marginalised)
        direction = row[dir_col].strip().lower() if dir_col is not None else "stereo"
        if direction not in ("stereo", "antistereo"):
            problems.append(problem(table, i, dir_col, f"{row[dir_col]!r} is not stereo or antistereo"))
        out.direction.append(direction)
    raise_problems(table, problems)
    return out


@dataclass(eq=False)
class SosPair:
    """One (profane, nice) pair to score: its row as read (the items file's columns) and data row number."""

    row: dict
    line: int
    profane: str
    nice: str
    identity: str
    attribute: str
    marginalised: bool
    direction: str


def read(spec: str, options: dict) -> Loaded:
    data = load(spec)
    items = [
        SosPair(row, i + 1, *fields)
        for i, (row, *fields) in enumerate(
            zip(
                data.table.rows,
                data.profane,
                data.nice,
                data.identity,
                data.attribute,
                data.marginalised,
                data.direction,
            )
        )
    ]
    return Loaded(items, data.table.label)


def record(row: dict, bad) -> SosPair:
    """A row of a release's data/sos.csv (the layout workbench writes) as a pair."""
    return SosPair(
        row,
        bad.line - 1,
        row["profane"],
        row["nice"],
        row["identity"].strip(),
        attribute_name(row["attribute"]),
        marginalised_flag(row["marginalised"]),
        (row.get("stereo_antistereo") or "stereo").strip().lower(),
    )


def score(models, pairs: list[SosPair], options: dict, progress) -> list[dict]:
    """Each pair scored with the profane sentence as sent1 (SequenceMatcher sees it first; with
    --token-rule reference an antistereo row puts the nice one first, as the SOS_LM script reads
    its file) and decided as CrowS-Pairs decides it."""
    token_rule, rule = options["token_rule"], rule_for(models.model, options)
    oriented_pairs, flipped = oriented(
        [p.profane for p in pairs], [p.nice for p in pairs], [p.direction for p in pairs], token_rule
    )
    scores = profane_first(
        score_pairs(models.model, oriented_pairs, progress=progress, target_at=target_at(token_rule)), flipped
    )
    _, outcomes = sos_model_result(
        rule, None, [p.identity for p in pairs], [p.attribute for p in pairs], [p.marginalised for p in pairs], scores
    )
    return [
        {
            "profane_score": s.decided(rule)[0],
            "nice_score": s.decided(rule)[1],
            "score": o.hit,
            "neutral": o.neutral,
            "near_boundary": int(s.near_boundary),
            "same_tokens": int(s.same_tokens),
        }
        for s, o in zip(scores, outcomes)
    ]


def figures(level: str, pairs: list[SosPair], results: list[dict]) -> dict:
    """metrics.py's figures of a group: SOS (its interval is the statistics'), counts, likelihood_diff,
    an identity's attribute and flag, an attribute's means over its identities."""
    found = sos_measures(
        [
            SosOutcome(
                p.identity,
                p.attribute,
                p.marginalised,
                r["score"],
                r["neutral"],
                abs(r["profane_score"] - r["nice_score"]),
            )
            for p, r in zip(pairs, results)
        ]
    )
    return found["overall"] if level == "overall" else next(iter(found[f"by_{level}"].values()))


LIKELIHOODS = pair_likelihoods("profane", "nice")


def summary(doc: dict) -> list[str]:
    ran = any("score_rule" in m for m in doc["models"].values())  # the token rule is a model's, not a file's
    return [likelihood_diff_line(doc), *([TOKEN_RULE_NOTES[doc["token_rule"]] + "."] if ran else [])]


def _pct(hits, pairs):
    return 100.0 * hits / pairs


def _mean(marginalised: bool, title: str) -> Statistic:
    """The mean over an attribute's (non-)marginalised identities of their SOS."""
    mine = lambda p, r: float(p.marginalised == marginalised)
    return Statistic(
        f"sos_{'' if marginalised else 'non_'}marginalised",
        title,
        (lambda p, r: r["score"] * mine(p, r), mine),
        scale=100.0,
        neutral=UNBIASED,
        digits=1,
        compared=False,
        chart=False,
        at=("attribute",),
        cells="identity",
    )


DECLARED = Declared(
    chat_template=True,  # its lm-eval task's multiple-choice requests
    kind=KIND,
    title="SOS",
    meaning=MEANING,
    data="data/" + DATA_NAME,
    item=record,
    score=score,
    load=read,
    recognise=detect,
    required=("profane", "nice", "identity", "attribute", "marginalised"),
    group="attribute",
    group_name="attribute",
    groups_name="attributes",
    unit="pair",
    units="pairs",
    item_name="pair",
    items_name="pairs",
    options=(TOKEN_RULE,),
    rules=SCORE_RULES,
    read_scores=LIKELIHOODS.read_scores,
    write_scores=LIKELIHOODS.write_scores,
    work=pair_work("profane", "nice"),
    item_row=lambda p: p.row,
    chart_level="identity",
    chart_name="sos_identities",
    levels=(
        Level(
            "identity",
            "identity",
            order=lambda name, node: (node["attribute"], not node["marginalised"], name),
            label=lambda name, node: name + (" *" if node["marginalised"] else ""),
        ),
    ),
    statistics=(
        Statistic("sos", "SOS", ("score", ONE), _pct, neutral=UNBIASED, digits=1),
        _mean(True, "marginalised mean"),
        _mean(False, "non-marginalised mean"),
    ),
    fields=figures,
    shown=("neutral",),
    about=about_pairs(definition=False),
    summary=summary,
    document_fields=lambda options: {
        "unit": "percent",
        "unbiased_value": UNBIASED,
        "token_rule": options["token_rule"],
        "computation": COMPUTATION[options["token_rule"]],
    },
    informative=lambda p, r: 1 - r["neutral"],
    uninformative=TIED,
    chart_note=lambda node: "-" if node["sos"] is None else f"{node['sos']:.0f}",  # a bar of 0 shows its value
)
