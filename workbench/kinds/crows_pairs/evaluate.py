"""`workbench evaluate --kind crows-pairs`: Nangia et al.'s metric, as their script computes it.

Input: the original CrowS-Pairs CSV (`sent_more`, `sent_less`, `stereo_antistereo`,
`bias_type`; other columns are kept for `--items`), the French and revised English files as
distributed (tab-separated under a .csv name, an unnamed index column, no annotation columns,
the bias type `autre`), or a workbench release of the same layout (`manifest.json` with
`"kind": "crows-pairs"` and `data/pairs.csv`). Everything in the file is checked before a model
loads, so a typo in row 1,200 costs seconds, not a scoring run. A pair that cannot be compared
(an empty sentence, or the same sentence twice) is reported by line and skipped, and the output
counts it; `--strict` refuses the file instead.

Declared (`DECLARED`): workbench runs the loop, the intervals, the table, CSV, items file, JSON,
chart and the release's evaluate.py. A pair is scored as the reference script scores it
(scoring.py); the figures are metrics.py's: the metric, stereotype and anti-stereotype scores
(percent, 50 = unbiased; a tie is no hit and no verdict), with the counts and likelihood_diff
beside them. Each pair is its own resampling unit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...core.errors import InputError, ModelError, Problem
from ...evaluation.declared import ONE, Declared, Loaded, ScoresFile, Statistic
from ...evaluation.likelihoods import Likelihoods, described
from .data import MAX_PROBLEMS, Table, find_column, load_source, looks_like, problem, raise_problems
from .metrics import CROWS_MEANING as MEANING
from .metrics import TIED, UNBIASED, Outcome, measures
from .scoring import (
    CAUSAL_RULE,
    DECISIONS,
    DEFINITIONS,
    MASKED_RULE,
    NEAR_BOUNDARY,
    RULE_ALIASES,
    RULES,
    compare,
    likelihood_diff_line,
    model_result,
    oriented,
    prepare,
    rule_of,
    score_pairs,
)

KIND = "crows-pairs"
DATA_NAME = "pairs.csv"
REQUIRED = ("sent_more", "sent_less", "stereo_antistereo", "bias_type")
DIRECTIONS = ("stereo", "antistereo")


def detect(path: Path) -> bool:
    """A CrowS-Pairs CSV (sent_more and sent_less columns) or a crows-pairs release folder."""
    return looks_like(path, KIND, DATA_NAME, [("sent_more",), ("sent_less",)])


@dataclass
class Pairs:
    table: Table
    sent_more: list[str]
    sent_less: list[str]
    direction: list[str]
    bias_type: list[str]
    kept: list[int]  # the table's row index of each pair scored
    skipped: list[Problem]  # the pairs left out, each with its line and why

    def oriented(self) -> list[tuple[str, str]]:
        return oriented(self.sent_more, self.sent_less, self.direction)


def load(spec: str, strict: bool = False) -> Pairs:
    """Read and check a CrowS-Pairs source; every problem names file, line, row and column. A
    pair with an empty or repeated sentence is skipped (listed in `skipped`), or with `strict` a
    problem like the others."""
    table = load_source(spec, KIND, DATA_NAME)
    columns = required_columns(table)
    if not table.rows:
        raise InputError(f"{table.shown}: no pairs (only a header)")
    problems: list[Problem] = []
    pairs = check_pairs(table, columns, strict, problems)
    raise_problems(table, problems)
    if not pairs.kept:
        raise InputError(
            f"{table.shown}: no pair can be compared ({len(pairs.skipped)} skipped: empty or repeated sentences)",
            pairs.skipped[:MAX_PROBLEMS],
        )
    return pairs


def required_columns(table: Table) -> tuple[str, ...]:
    """The file's columns of REQUIRED (as spelt there); a missing one is an InputError naming each."""
    columns = {name: find_column(table.columns, name) for name in REQUIRED}
    missing = [name for name, col in columns.items() if col is None]
    if missing:
        from ..layout import format_hint

        why = format_hint(table.path) if getattr(table, "path", None) else ""
        raise InputError(
            f"{table.shown}: missing column(s) {', '.join(missing)}{' -- ' + why if why else ''}",
            [
                Problem(
                    table.shown,
                    1,
                    f"column {name!r}",
                    f"missing from the header (found: {', '.join(table.columns) or 'none'})",
                )
                for name in missing
            ],
        )
    return tuple(c for c in columns.values() if c is not None)


def check_pairs(table: Table, columns: tuple[str, ...], strict: bool, problems: list[Problem]) -> Pairs:
    """The pairs of `table` (all the file's rows, or a chunk of them) with every problem of its rows
    added to `problems`: an empty or repeated sentence is skipped (in `skipped`), or with `strict`
    a problem like the others."""
    more_col, less_col, dir_col, type_col = columns
    skipped: list[Problem] = []
    more, less, direction, types, kept = [], [], [], [], []
    for i, row in enumerate(table.rows):
        m, l = row[more_col], row[less_col]
        uncomparable = [
            problem(table, i, col, "empty sentence") for col, text in ((more_col, m), (less_col, l)) if not text.strip()
        ]
        if m.strip() and m.strip() == l.strip():
            uncomparable.append(
                problem(
                    table,
                    i,
                    less_col,
                    "the same sentence as sent_more: a pair must differ in "
                    "the words that name the group, or there is nothing to compare",
                )
            )
        if uncomparable and not strict:
            skipped.extend(uncomparable)
            continue
        problems.extend(uncomparable)
        d = row[dir_col].strip().lower()
        if d not in DIRECTIONS:
            problems.append(problem(table, i, dir_col, f"{row[dir_col]!r} is not one of: {', '.join(DIRECTIONS)}"))
        t = row[type_col].strip()
        if not t:
            problems.append(problem(table, i, type_col, "empty bias type"))
        more.append(m)
        less.append(l)
        direction.append(d)
        types.append(t)
        kept.append(i)
    return Pairs(table, more, less, direction, types, kept, skipped)


@dataclass(eq=False)
class Pair:
    """One pair to score: its row as read (the items file's columns) and data row number."""

    row: dict
    line: int
    sent_more: str
    sent_less: str
    direction: str
    bias_type: str


def read(spec: str, options: dict) -> Loaded:
    """`load` as the declaration reads a source: each pair kept, how the file was read, and the
    pairs skipped (each by line; the document counts them)."""
    pairs = load(spec, strict=options.get("strict", False))
    shown = pairs.table.shown
    notes = [f"{shown}: {note}" for note in pairs.table.notes]
    document = {}
    if pairs.skipped:
        rows = len({p.line for p in pairs.skipped})
        notes += [
            f"{shown}: {rows} pair(s) skipped, scored the other {len(pairs.kept)} (--strict refuses the file instead):",
            *(f"  {p}" for p in pairs.skipped[:MAX_PROBLEMS]),
        ]
        document["skipped"] = {
            "pairs": rows,
            "problems": [{"line": p.line, "where": p.field, "why": p.message} for p in pairs.skipped],
        }
    items = [
        Pair(pairs.table.rows[i], i + 1, *fields)
        for i, *fields in zip(pairs.kept, pairs.sent_more, pairs.sent_less, pairs.direction, pairs.bias_type)
    ]
    return Loaded(items, pairs.table.label, notes, document)


def record(row: dict, bad) -> Pair:
    """A row of a release's data/pairs.csv (the layout workbench writes) as a pair."""
    return Pair(
        row,
        bad.line - 1,
        row["sent_more"],
        row["sent_less"],
        row["stereo_antistereo"].strip().lower(),
        row["bias_type"].strip(),
    )


# --score-rule: the rule follows the model (auto); naming one checks the model is of that kind
SCORE_RULES = {
    "auto": "by the model: pll for a masked LM, logprob for a causal one",
    "pll": f"masked LMs: {RULES[MASKED_RULE]}",
    "logprob": f"causal LMs: {RULES[CAUSAL_RULE]}",
    MASKED_RULE: RULES[MASKED_RULE],
    CAUSAL_RULE: RULES[CAUSAL_RULE],
}


def rule_for(scorer, options: dict) -> str:
    """The model's rule; a --score-rule for the other kind of LM is refused."""
    rule, wanted = rule_of(scorer), RULE_ALIASES.get(options.get("score_rule"))
    if wanted is not None and wanted != rule:
        raise ModelError(
            f"{scorer.ref.name} is a {scorer.kind} LM; --score-rule {options['score_rule']} needs a "
            f"{'masked' if wanted == MASKED_RULE else 'causal'} LM"
        )
    return rule


def score(models, pairs: list[Pair], options: dict, progress) -> list[dict]:
    """Each pair scored by the model's rule (pseudo-log-likelihood or sentence log-probability) and
    decided as the reference decides it; near-boundary pairs are settled by canonical rescoring."""
    rule, directions = rule_for(models.model, options), [p.direction for p in pairs]
    scores = score_pairs(
        models.model,
        oriented([p.sent_more for p in pairs], [p.sent_less for p in pairs], directions),
        progress=progress,
    )
    _, per_pair = model_result(rule, None, directions, [p.bias_type for p in pairs], scores)
    return [
        {
            "sent_more_score": m,
            "sent_less_score": l,
            "score": o.hit,
            "neutral": o.neutral,
            "near_boundary": int(s.near_boundary),
            "same_tokens": int(s.same_tokens),
        }
        for (m, l, o), s in zip(per_pair, scores)
    ]


def pair_work(first: str, second: str):
    """Progress units of pairs whose sentences are the items' `first` and `second`: pairs for a
    masked LM, distinct sentences for a causal one."""

    def work(pairs: list, options: dict, models) -> int:
        scorer = models.model
        if scorer.kind == "masked":
            return len(pairs)
        return len({prepare(scorer, getattr(p, f)) for p in pairs for f in (first, second)})

    return work


def figures(level: str, pairs: list[Pair], results: list[dict]) -> dict:
    """metrics.py's figures of a group: the scores (as the statistics compute them), counts and
    likelihood_diff."""
    return measures(
        [
            Outcome(p.direction, r["score"], r["neutral"], abs(r["sent_more_score"] - r["sent_less_score"]))
            for p, r in zip(pairs, results)
        ]
    )


def about_pairs(definition: bool = True):
    """Per model: the rule it was scored by, the pairs settled near a boundary, notes about both."""

    def about(name: str, models, pairs: list, results: list[dict], options: dict) -> tuple[dict, list[str]]:
        if isinstance(models.model, ScoresFile):  # no model ran: the file it was read from
            read = described(models.model.path)
            return {"predictions": read, "pair_decision": READ_DECISION}, [
                f"{name}: log-likelihoods read from {read['file']} (sha256 {read['sha256'][:12]}…), no model ran"
            ]
        rule = rule_of(models.model)
        shown = name.rstrip("/").split("/")[-1]
        near = sum(r["near_boundary"] for r in results)
        notes = []
        same = [p.line for p, r in zip(pairs, results) if r["same_tokens"]]
        if same:
            rows = ", ".join(map(str, same[:10])) + (" …" if len(same) > 10 else "")
            notes.append(
                f"{shown}: {len(same)} pair(s) encode to the same tokens (row(s) {rows}); they score equal "
                "and count as neutral, as in the reference script"
            )
        if near:
            from ...models.lm_scoring import CANONICAL

            notes.append(
                f"{shown}: {near} pair(s) lay within float noise of their decision boundary; each was scored "
                f"again ({CANONICAL}) and decided on those scores, the same in every run"
            )
        return {
            "score_rule": rule,
            "score_rule_description": RULES[rule],
            **({"definition": DEFINITIONS[rule]} if definition else {}),
            "pair_decision": DECISIONS[rule],
            "near_boundary": {"n": near, "definition": NEAR_BOUNDARY},
        }, notes

    return about


READ_DECISION = "log-likelihoods as read from the file, exactly equal = neutral"


def pair_likelihoods(first: str, second: str) -> Likelihoods:
    """A pair kind's items in the log-likelihood layout: its id is its data row, its sentences
    `first` and `second` (their results' `<first>_score` and `<second>_score`), decided as a causal
    LM's pair is (a masked LM's run writes the rounded scores it was decided on, so those read
    back decide the same)."""

    def results(pairs: list, values: list[tuple[float, ...]]) -> list[dict]:
        out = []
        for a, b in values:
            hit, neutral = compare(a, b)
            out.append(
                {
                    f"{first}_score": a,
                    f"{second}_score": b,
                    "score": hit,
                    "neutral": neutral,
                    "near_boundary": 0,
                    "same_tokens": 0,
                }
            )
        return out

    return Likelihoods(
        key=lambda p: (p.line, (getattr(p, first), getattr(p, second))),
        results=results,
        values=lambda pairs, found: [(r[f"{first}_score"], r[f"{second}_score"]) for r in found],
        item_name="pair",
    )


LIKELIHOODS = pair_likelihoods("sent_more", "sent_less")


def summary(doc: dict) -> list[str]:
    """Each scoring rule's one-line definition, then each model's likelihood_diff."""
    rules = [r for r in dict.fromkeys(m.get("score_rule") for m in doc["models"].values()) if r in DEFINITIONS]
    return [*(["; ".join(DEFINITIONS[r] for r in rules)] if rules else []), likelihood_diff_line(doc)]


def _pct(hits, pairs):
    return 100.0 * hits / pairs


def _of(direction: str):
    return lambda p, r: float(p.direction == direction and not r["neutral"])


def _hit_of(direction: str):
    return lambda p, r: r["score"] * _of(direction)(p, r)


def _score(direction: str, title: str) -> Statistic:
    return Statistic(
        f"{direction}_score",
        title,
        (_hit_of(direction), _of(direction)),
        _pct,
        neutral=UNBIASED,
        digits=1,
        compared=False,
        chart=False,
    )


DECLARED = Declared(
    chat_template=True,  # its lm-eval task's multiple-choice requests
    kind=KIND,
    title="CrowS-Pairs",
    meaning=MEANING,
    data="data/" + DATA_NAME,
    required=REQUIRED,
    item=record,
    score=score,
    load=read,
    recognise=detect,
    group="bias_type",
    group_name="bias type",
    groups_name="bias types",
    unit="pair",
    units="pairs",
    item_name="pair",
    items_name="pairs",
    work=pair_work("sent_more", "sent_less"),
    item_row=lambda p: p.row,
    rules=SCORE_RULES,
    read_scores=LIKELIHOODS.read_scores,
    write_scores=LIKELIHOODS.write_scores,
    statistics=(
        Statistic("metric_score", "metric score", ("score", ONE), _pct, neutral=UNBIASED, digits=1),
        _score("stereo", "stereotype score"),
        _score("antistereo", "anti-stereotype score"),
    ),
    fields=figures,
    shown=("neutral",),
    compared_fields=("neutral",),
    about=about_pairs(),
    summary=summary,
    document_fields=lambda options: {"unit": "percent", "unbiased_value": UNBIASED},
    informative=lambda p, r: 1 - r["neutral"],
    uninformative=TIED,
    chart_note=lambda node: (
        ("-" if node["metric_score"] is None else f"{node['metric_score']:.0f}")
        + (f"\n{node['neutral']} tied" if node["neutral"] else "")
    ),  # a low bar may be mostly ties
)
