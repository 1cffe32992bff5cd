"""`workbench evaluate --kind sos`: SOS_LM, each (profane, nice) pair scored as a CrowS pair.

Input: a CSV with `profane`, `nice`, `identity`, `attribute`, `marginalised` (true/false), or
the SOS author's names: `Toxic_sent` / `Non_Toxic_sent`, and `bias_type` values such as
`Religion_Marginalized` / `Religion_Non_Marginalized` in place of attribute + marginalised.
A workbench release (`manifest.json` with `"kind": "sos"`, `data/sos.csv`) has the first layout.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import InputError, Problem
from ...evaluation.versions import Compared
from ..crows_pairs.data import (
    Table,
    find_column,
    load_source,
    looks_like,
    problem,
    raise_problems,
)
from ..crows_pairs.evaluate import _fmt, score_with_models
from ..crows_pairs.metrics import pairs_document
from ...evaluation.intervals import Uncertainty, interval_columns, with_interval
from ..crows_pairs.scoring import likelihood_diff_line
from ...evaluation.output import short, write_outputs
from .metrics import COMPUTATION, TOKEN_RULE_NOTES
from .metrics import SOS_MEANING as MEANING
from .metrics import (HEADLINE, UNIT, attribute_name, marginalised_flag, normalised, oriented, profane_first,
                      sos_model_result, sos_scopes, target_at)

KIND = "sos"
DATA_NAME = "sos.csv"
PROFANE = ("profane", "Toxic_sent", "toxic", "profane_sent")
NICE = ("nice", "Non_Toxic_sent", "non_toxic", "nice_sent")
IDENTITY = ("identity", "target", "identity_term", "group")
ATTRIBUTE = ("attribute", "sensitive_attribute")
MARGINALISED = ("marginalised", "marginalized", "is_marginalised", "is_marginalized")
BIAS_TYPE = ("bias_type",)
DIRECTION = ("stereo_antistereo",)   # the SOS_LM script's file has it; only --token-rule reference reads it
BIAS_TYPE_FORM = re.compile(r"^(?P<attr>.+?)_(?P<flag>(?:non|not)_?margin\w*|margin\w*)$")


def detect(path: Path) -> bool:
    """An SOS CSV (profane/nice or Toxic_sent/Non_Toxic_sent columns) or an sos release folder."""
    return (looks_like(path, KIND, DATA_NAME, [("profane",), ("nice",)])
            or looks_like(path, KIND, DATA_NAME, [("Toxic_sent",), ("Non_Toxic_sent",)]))


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
    attr_col, marg_col, type_col = find_column(cols, *ATTRIBUTE), find_column(cols, *MARGINALISED), find_column(cols, *BIAS_TYPE)
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
        raise InputError(f"{table.shown}: missing column(s) {', '.join(m for m, _ in missing)}"
                         f"{' -- ' + why if why else ''}",
                         [Problem(table.shown, 1, f"column {name!r}", f"missing: expected {what} (found: "
                                  f"{', '.join(cols) or 'none'})") for name, what in missing])
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
            problems.append(problem(table, i, nice_col, "the same sentence as the profane one: a pair must differ "
                                                        "in the profane/nice word, or there is nothing to compare"))
        identity = row[identity_col].strip()
        if not identity:
            problems.append(problem(table, i, identity_col, "empty identity"))
        parsed = None
        if type_col is not None and (attr_col is None or marg_col is None):
            m = BIAS_TYPE_FORM.match(normalised(row[type_col]))
            if m:
                parsed = (attribute_name(m.group("attr")), not m.group("flag").startswith(("non", "not")))
            else:
                problems.append(problem(table, i, type_col, f"{row[type_col]!r} is not ATTRIBUTE_Marginalized or "
                                                            "ATTRIBUTE_Non_Marginalized (e.g. Religion_Marginalized)"))
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
                problems.append(problem(table, i, identity_col, (
                    f"identity {identity!r} is {attribute}/{'marginalised' if marginalised else 'non-marginalised'} "
                    f"here but {seen[1]}/{'marginalised' if seen[2] else 'non-marginalised'} in row {seen[0] + 1}; "
                    "an identity has one attribute and one marginalised flag")))
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


def evaluate(request, console) -> dict:
    if request.predictions is not None or request.predictions_out is not None:
        raise InputError("sos scores models directly: --predictions/--predictions-out are not used "
                         "(use --items for per-pair scores)")
    if len(request.sources) != 1:
        raise InputError(f"sos evaluates one file or release at a time (got {len(request.sources)})")
    if not request.models:
        raise InputError("no model: pass --model (a Hub name or a local folder)")
    token_rule = request.options.get("token_rule") or "fixed"
    data = load(request.sources[0])
    rows = list(range(1, len(data.profane) + 1))
    # The profane sentence is sent1 (the CrowS "stereo" orientation): SequenceMatcher sees it first.
    pairs, flipped = oriented(data.profane, data.nice, data.direction, token_rule)
    scored = score_with_models(request, pairs, rows, console, what="SOS pairs", target_at=target_at(token_rule))

    doc = pairs_document(KIND, data.table.label, len(rows), MEANING)
    doc.update(token_rule=token_rule, computation=COMPUTATION[token_rule])
    items = []
    uncertainty = Uncertainty(request.intervals, UNIT, HEADLINE)
    for ms in scored:
        entry, outcomes = sos_model_result(ms.rule, ms.revision, data.identity, data.attribute, data.marginalised,
                                           profane_first(ms.scores, flipped))
        doc["models"][ms.name] = entry
        uncertainty.add(ms.name, entry, sos_scopes(outcomes))
        for row, s, o in zip(data.table.rows, profane_first(ms.scores, flipped), outcomes):
            p, n = s.decided(ms.rule)
            items.append({"model": ms.name, **row, "profane_score": p, "nice_score": n, "score": o.hit, "neutral": o.neutral})

    notes = uncertainty.finish(doc)
    for t in tables(doc):
        console.print(t)
    console.print(MEANING + ".", markup=False)
    console.print(likelihood_diff_line(doc), markup=False, highlight=False)
    console.print(TOKEN_RULE_NOTES[token_rule] + ".", markup=False, highlight=False)
    for line in notes:
        console.print(line, markup=False, highlight=False)
    from .plots import plot_sos

    write_outputs(request, doc, csv_rows(doc), items, plot_sos, console)
    return doc


def tables(doc: dict):
    from rich.table import Table as RichTable

    models = doc["models"]
    first = next(iter(models.values()))
    by_attr = RichTable(title="SOS_LM (%) per attribute; 50 = unbiased",
                        caption="all = over the attribute's pairs; marg. / non-marg. = mean over those identities")
    by_attr.add_column("attribute")
    by_attr.add_column("pairs", justify="right")
    for name in models:
        by_attr.add_column(f"{short(name)}\nall / marg. / non-marg.", justify="right")
    attrs = list(first["by_attribute"])
    for attr in attrs:
        cells = [f"{_sos(m['by_attribute'][attr])} / {_fmt(m['by_attribute'][attr]['sos_marginalised'])} / "
                 f"{_fmt(m['by_attribute'][attr]['sos_non_marginalised'])}" for m in models.values()]
        by_attr.add_row(attr, str(first["by_attribute"][attr]["n"]), *cells, end_section=attr == attrs[-1])
    by_attr.add_row("overall", str(first["overall"]["n"]), *[_sos(m["overall"]) for m in models.values()])

    by_id = RichTable(title="SOS_LM (%) per identity; * = marginalised; 50 = unbiased")
    for col in ("attribute", "identity"):
        by_id.add_column(col)
    by_id.add_column("pairs", justify="right")
    for name in models:
        by_id.add_column(short(name), justify="right")
    for identity, v in first["by_identity"].items():
        by_id.add_row(v["attribute"], identity + (" *" if v["marginalised"] else ""), str(v["n"]),
                      *[_sos(m["by_identity"][identity]) for m in models.values()])
    return [by_attr, by_id]


def _sos(node: dict) -> str:
    return with_interval(node["sos"], node.get("intervals", {}).get("sos"))


def csv_rows(doc: dict) -> list[dict]:
    out = []
    for name, m in doc["models"].items():
        base = {"model": name, "score_rule": m["score_rule"]}
        out.append({**base, "level": "overall", "attribute": "", "group": "all", "marginalised": "",
                    "sos": m["overall"]["sos"], "n": m["overall"]["n"],
                    "likelihood_diff": m["overall"]["likelihood_diff"], **interval_columns(m["overall"], HEADLINE)})
        for attr, v in m["by_attribute"].items():
            out.append({**base, "level": "attribute", "attribute": attr, "group": attr, "marginalised": "",
                        "sos": v["sos"], "n": v["n"], **interval_columns(v, HEADLINE)})
            for flag, key, count in ((True, "sos_marginalised", "identities_marginalised"),
                                     (False, "sos_non_marginalised", "identities_non_marginalised")):
                out.append({**base, "level": "attribute_marginalised" if flag else "attribute_non_marginalised",
                            "attribute": attr, "group": attr, "marginalised": flag, "sos": v[key],
                            "n": "", "identities": v[count]})
        for identity, v in m["by_identity"].items():
            out.append({**base, "level": "identity", "attribute": v["attribute"], "group": identity,
                        "marginalised": v["marginalised"], "sos": v["sos"], "n": v["n"],
                        **interval_columns(v, HEADLINE)})
    return out


# `workbench evaluate A B`: each version evaluated alone, then these measures side by side.
COMPARED = Compared(keys=("model", "level", "group", "marginalised"), measures=("sos", "n"))


def measure_rows(doc: dict) -> list[dict]:
    return csv_rows(doc)
