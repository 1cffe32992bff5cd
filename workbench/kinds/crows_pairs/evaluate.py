"""`workbench evaluate --kind crows-pairs`: Nangia et al.'s metric, as their script computes it.

Input: the original CrowS-Pairs CSV (`sent_more`, `sent_less`, `stereo_antistereo`,
`bias_type`; other columns are kept for `--items`), the French and revised English files as
distributed (tab-separated under a .csv name, an unnamed index column, no annotation columns,
the bias type `autre`), or a workbench release of the same layout (`manifest.json` with
`"kind": "crows-pairs"` and `data/pairs.csv`). Everything in the file is checked before a model
loads, so a typo in row 1,200 costs seconds, not a scoring run. A pair that cannot be compared
(an empty sentence, or the same sentence twice) is reported by line and skipped, and the output
counts it; `--strict` refuses the file instead.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import InputError, ModelError, Problem
from ...evaluation.versions import Compared
from ...core.progress import progress_bar
from ...evaluation.intervals import Uncertainty, interval_columns, with_interval
from ...evaluation.output import short, write_outputs
from .data import MAX_PROBLEMS, Table, find_column, load_source, looks_like, problem, raise_problems
from .metrics import CROWS_MEANING as MEANING
from .metrics import HEADLINE, UNIT, pairs_document, scopes
from .scoring import (
    MASKED_RULE,
    PairScore,
    check_rule,
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
    kept: list[int]                 # the table's row index of each pair scored
    skipped: list[Problem]          # the pairs left out, each with its line and why

    def oriented(self) -> list[tuple[str, str]]:
        return oriented(self.sent_more, self.sent_less, self.direction)


def load(spec: str, strict: bool = False) -> Pairs:
    """Read and check a CrowS-Pairs source; every problem names file, line, row and column. A
    pair with an empty or repeated sentence is skipped (listed in `skipped`), or with `strict` a
    problem like the others."""
    table = load_source(spec, KIND, DATA_NAME)
    columns = {name: find_column(table.columns, name) for name in REQUIRED}
    missing = [name for name, col in columns.items() if col is None]
    if missing:
        from ..layout import format_hint

        why = format_hint(table.path) if getattr(table, "path", None) else ""
        raise InputError(f"{table.shown}: missing column(s) {', '.join(missing)}{' -- ' + why if why else ''}",
                         [Problem(table.shown, 1, f"column {name!r}", f"missing from the header (found: "
                                  f"{', '.join(table.columns) or 'none'})") for name in missing])
    if not table.rows:
        raise InputError(f"{table.shown}: no pairs (only a header)")
    more_col, less_col, dir_col, type_col = (columns[n] for n in REQUIRED)
    problems: list[Problem] = []
    skipped: list[Problem] = []
    more, less, direction, types, kept = [], [], [], [], []
    for i, row in enumerate(table.rows):
        m, l = row[more_col], row[less_col]
        uncomparable = [problem(table, i, col, "empty sentence") for col, text in ((more_col, m), (less_col, l))
                        if not text.strip()]
        if m.strip() and m.strip() == l.strip():
            uncomparable.append(problem(table, i, less_col, "the same sentence as sent_more: a pair must differ in "
                                                            "the words that name the group, or there is nothing to compare"))
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
    raise_problems(table, problems)
    if not kept:
        raise InputError(f"{table.shown}: no pair can be compared ({len(skipped)} skipped: empty or repeated "
                         "sentences)", skipped[:MAX_PROBLEMS])
    return Pairs(table, more, less, direction, types, kept, skipped)


def report_skipped(pairs: Pairs, doc: dict, console) -> None:
    """Say which pairs were skipped and why, each by line, and count them in the output."""
    if not pairs.skipped:
        return
    rows = len({p.line for p in pairs.skipped})
    console.print(f"{pairs.table.shown}: {rows} pair(s) skipped, scored the other {len(pairs.kept)} "
                  "(--strict refuses the file instead):", markup=False, highlight=False)
    for p in pairs.skipped[:MAX_PROBLEMS]:
        console.print(f"  {p}", markup=False, highlight=False)
    doc["skipped"] = {"pairs": rows, "problems": [{"line": p.line, "where": p.field, "why": p.message}
                                                  for p in pairs.skipped]}


def evaluate(request, console) -> dict:
    if request.predictions is not None or request.predictions_out is not None:
        raise InputError("crows-pairs scores models directly: --predictions/--predictions-out are not used "
                         "(use --items for per-pair scores)")
    if len(request.sources) != 1:
        raise InputError(f"crows-pairs evaluates one file or release at a time (got {len(request.sources)})")
    if not request.models:
        raise InputError("no model: pass --model (a Hub name or a local folder)")
    pairs = load(request.sources[0], strict=request.strict)
    for note in pairs.table.notes:
        console.print(f"{pairs.table.shown}: {note}", markup=False, highlight=False)
    rows = [i + 1 for i in pairs.kept]
    scored = score_with_models(request, pairs.oriented(), rows, console, what="CrowS pairs")

    doc = pairs_document(KIND, pairs.table.label, len(rows), MEANING)
    report_skipped(pairs, doc, console)
    items = []
    uncertainty = Uncertainty(request.intervals, UNIT, HEADLINE)
    for ms in scored:
        entry, per_pair = model_result(ms.rule, ms.revision, pairs.direction, pairs.bias_type, ms.scores)
        doc["models"][ms.name] = entry
        uncertainty.add(ms.name, entry, scopes([o for _, _, o in per_pair], pairs.bias_type))
        for row, (m, l, o) in zip((pairs.table.rows[i] for i in pairs.kept), per_pair):
            items.append({"model": ms.name, **row, "sent_more_score": m, "sent_less_score": l, "score": o.hit,
                          "neutral": o.neutral})

    notes = uncertainty.finish(doc)
    for t in tables(doc):
        console.print(t)
    console.print(MEANING + ".", markup=False)
    console.print(likelihood_diff_line(doc), markup=False, highlight=False)
    for line in notes:
        console.print(line, markup=False, highlight=False)
    from .plots import plot_crows

    write_outputs(request, doc, csv_rows(doc), items, plot_crows, console)
    return doc


@dataclass
class ModelScores:
    name: str
    rule: str
    revision: str | None
    scores: list[PairScore]


def score_with_models(request, pairs: Sequence[tuple[str, str]], rows: Sequence[int], console,
                      what: str = "pairs", target_at: int | None = None) -> list[ModelScores]:
    """Load each requested model and score all pairs with it. `rows` are the pairs' data-row
    numbers, for the note about pairs no model can tell apart; `target_at` as in `score_pairs`."""
    from ...models.lm_loading import load_scorer
    from ...models.lm_scoring import CANONICAL

    wanted = check_rule(request.score_rule)
    results = []
    for name in request.models:
        scorer = load_scorer(name, root=request.root, spec=request.spec, runtimes=request.runtimes,
                             cache_path=request.cache_path)
        rule = rule_of(scorer)
        if wanted is not None and wanted != rule:
            raise ModelError(f"{name} is a {scorer.kind} LM; --score-rule {request.score_rule} needs a "
                             f"{'masked' if wanted == MASKED_RULE else 'causal'} LM")
        units = len(pairs) if scorer.kind == "masked" else len({prepare(scorer, t) for pair in pairs for t in pair})
        with progress_bar(f"{short(name)}: {what}", units) as advance:
            scores = score_pairs(scorer, pairs, progress=advance, target_at=target_at)
        same = [r for r, s in zip(rows, scores) if s.same_tokens]
        if same:
            shown = ", ".join(map(str, same[:10])) + (" …" if len(same) > 10 else "")
            console.print(f"{short(name)}: {len(same)} pair(s) encode to the same tokens (row(s) {shown}); "
                          "they score equal and count as neutral, as in the reference script", markup=False)
        near = sum(s.near_boundary for s in scores)
        if near:
            console.print(f"{short(name)}: {near} pair(s) lay within float noise of their decision boundary; each was "
                          f"scored again ({CANONICAL}) and decided on those scores, the same in every run",
                          markup=False)
        ref = getattr(scorer, "ref", None)
        results.append(ModelScores(name, rule, getattr(ref, "revision", None), scores))
    return results


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def tables(doc: dict):
    from rich.table import Table as RichTable

    from .scoring import DEFINITIONS

    rules = dict.fromkeys(m.get("score_rule") for m in doc["models"].values())
    caption = "; ".join(DEFINITIONS[r] for r in rules if r in DEFINITIONS)   # each measure's one-line definition
    t = RichTable(title="CrowS-Pairs (%): metric / stereotype / anti-stereotype score; 50 = unbiased",
                  caption=caption or None)
    t.add_column("bias type")
    t.add_column("pairs", justify="right")
    models = doc["models"]
    for name in models:
        t.add_column(f"{short(name)}\nmetric / stereo / anti", justify="right")
        t.add_column("neutral", justify="right")
    first = next(iter(models.values()))
    for group in [*first["by_bias_type"], "overall"]:
        cells = []
        for m in models.values():
            v = m["overall"] if group == "overall" else m["by_bias_type"][group]
            metric = with_interval(v["metric_score"], v.get("intervals", {}).get("metric_score"))
            cells += [f"{metric} / {_fmt(v['stereo_score'])} / {_fmt(v['antistereo_score'])}", str(v["neutral"])]
        n = (first["overall"] if group == "overall" else first["by_bias_type"][group])["n"]
        t.add_row(group, str(n), *cells, end_section=group == list(first["by_bias_type"])[-1])
    return [t]


def csv_rows(doc: dict) -> list[dict]:
    keys = ("metric_score", "stereo_score", "antistereo_score", "n", "neutral", "n_stereo", "n_antistereo",
            "likelihood_diff")
    out = []
    for name, m in doc["models"].items():
        out.append({"model": name, "score_rule": m["score_rule"], "level": "overall", "group": "all",
                    **{k: m["overall"][k] for k in keys}, **interval_columns(m["overall"], keys[:3])})
        for group, v in m["by_bias_type"].items():
            out.append({"model": name, "score_rule": m["score_rule"], "level": "bias_type", "group": group,
                        **{k: v[k] for k in keys}, **interval_columns(v, keys[:3])})
    return out


# `workbench evaluate A B`: each version evaluated alone, then these measures side by side.
COMPARED = Compared(keys=("model", "level", "group"), measures=("metric_score", "n", "neutral"))


def measure_rows(doc: dict) -> list[dict]:
    return csv_rows(doc)
