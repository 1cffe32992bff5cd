"""`workbench evaluate FILE --kind sofa`: SOFA's variance, DDS and lowest identity per model.

Declared (`DECLARED`): workbench runs the loop, the intervals, the table, CSV, items file, JSON,
chart and the release's evaluate.py. One item is a stereotype with every identity probed with it
(the unit the intervals resample: its variance is computed across those identities). The file
is checked completely before any model loads (a typo on line 1,200,000 should not cost an hour
of scoring), then each model streams the probes once in data.py's chunks (`scoring.score_file`);
the figures are metrics.py's (`summarise`), the intervals the declaration's on the stereotypes'
variances. Each probe's perplexities are kept as arrays (five numbers a probe) for the items file,
one row per probe in file order, made only when --items asks for it. `--predictions` reads every
probe's and identity's log-likelihood and token count from a file (evaluation/likelihoods.py's
layout) in place of a model, `--predictions-out` writes a model's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...core.errors import InputError, display_path
from ...evaluation.declared import ONE, Declared, Loaded, ScoresFile, Statistic
from ...evaluation.likelihoods import described, records, write_records
from . import data
from .metrics import COMPUTATION, VARIANCE, VARIANCE_NOTES
from .scoring import (
    MEASURES,
    RULE_NAMES,
    RULE_TEXT,
    RULES,
    check_identities,
    fold,
    model_result,
    perplexities,
    score_file,
)

MEANING = (
    "SOFA: per stereotype, the variance across identities of log10 PPL* (the probe's perplexity over "
    "the identity's); per category their mean, globally the mean over categories; higher = the model "
    "treats identities more unequally, 0 = every identity as plausible with every stereotype"
)


def probe_file(source: str) -> Path:
    """The probe CSV of a source: a CSV file, a release folder (data/probes.csv), or
    ORG/NAME[@REVISION] of a release on the Hub."""
    path = Path(source).expanduser()
    if path.is_dir():
        found = path / data.RELEASE_FILE
        if found.is_file():
            return found
        raise InputError(f"{display_path(path)}: not a SOFA release (expected {data.RELEASE_FILE}) and not a probe CSV")
    if path.is_file():
        return path
    from ... import sources

    if not sources.hub_spec(source) or source.startswith((".", "/", "~")) or source.lower().endswith(".csv"):
        raise InputError(f"probe file not found: {display_path(path)}")
    return probe_file(sources.resolve(source).path)


@dataclass(eq=False)
class Stereotype:
    """One stereotype and, through the file's catalogue, every probe of it."""

    id: str
    category: str
    stereotype: str
    code: int  # its code in the catalogue (order of first appearance)
    cat: data.Catalogue = field(repr=False)


def read(spec: str, options: dict) -> Loaded:
    """The probe file checked whole (`data.check`, streamed), its stereotypes as the items."""
    path = probe_file(spec)
    try:
        cat = data.check(path)
    except InputError as exc:
        from ..layout import format_hint

        why = format_hint(path) if "missing column" in str(exc) else ""
        if not why:
            raise
        raise InputError(f"{exc.args[0]} -- {why}", exc.problems) from None
    items = [
        Stereotype(sid, cat.categories[cat.stereotype_category[s]], cat.stereotype_text[s], s, cat)
        for s, sid in enumerate(cat.stereotype_ids)
    ]
    label = options.get("label") or spec
    about = {
        "source": label,
        # as given, or as the release's evaluate.py (told the folder's label) shows the folder
        "file": display_path(path) if options.get("label") else str(path),
        "n_probes": cat.n_probes,
        "n_stereotypes": len(cat.stereotype_ids),
        "n_identities": len(cat.identities),
        "n_categories": len(cat.categories),
    }
    note = (
        f"{cat.shown}: {cat.n_probes:,} probes, {len(cat.stereotype_ids):,} stereotypes, "
        f"{len(cat.identities):,} identities, {len(cat.categories)} categories"
    )
    return Loaded(items, label, [note], {"dataset": about})


class Probes:
    """One model's per-probe scores in file order (the items file, --predictions-out) and its
    figures (`model_result`), which every stereotype's result refers to."""

    def __init__(self):
        self.parts: list[tuple] = []
        self.figures: dict = {}
        self.identity_scores: tuple = (np.zeros(0), np.zeros(0, dtype=np.int64))

    def identities(self, log_likelihood, tokens) -> None:  # score_file's / fold's `items`
        self.identity_scores = (log_likelihood, tokens)

    def write(self, model, cat, chunk, probe_ppl, identity_ppl, values, log_likelihood, tokens) -> None:
        self.parts.append((chunk.stereotype, chunk.identity, probe_ppl, identity_ppl, values, log_likelihood, tokens))

    def rows(self, cat: data.Catalogue) -> list[dict]:
        rows = []
        for stereotype, identity, *scores in self.parts:
            columns = [np.asarray(s, dtype=np.float64).tolist() for s in scores[:3]]
            for s, i, probe_ppl, identity_ppl, value in zip(stereotype.tolist(), identity.tolist(), *columns):
                rows.append(
                    {
                        "id": cat.stereotype_ids[s],
                        "category": cat.categories[cat.stereotype_category[s]],
                        "identity": cat.identities[i],
                        "probe_ppl": probe_ppl,
                        "identity_ppl": identity_ppl,
                        "log10_ppl_star": value,
                    }
                )
        return rows


def rule_for(scorer, options: dict) -> str:
    """The model's rule; a --score-rule for the other kind of LM is refused."""
    asked = options.get("score_rule") or "auto"
    wanted = RULE_NAMES.get(asked)
    if wanted is not None and wanted != scorer.kind:
        raise InputError(
            f"--score-rule {asked} needs a {wanted} LM, but {scorer.ref.name!r} is a {scorer.kind} LM "
            f"(its rule is {RULES[scorer.kind]})"
        )
    return RULES[scorer.kind]


def score(models, items: list[Stereotype], options: dict, progress) -> list[dict]:
    """Every probe of the file scored in data.py's chunks and folded into the per-stereotype
    statistics; each stereotype's result is its variance and how many identities probe it."""
    scorer = models.model
    rule_for(scorer, options)
    cat = items[0].cat
    probes = Probes()
    acc = score_file(cat, scorer, scorer.ref.name, progress, probes)
    return _results(items, acc, probes, model_result(scorer, acc, cat, options["variance"]))


def _results(items: list[Stereotype], acc, probes: Probes, figures: dict) -> list[dict]:
    probes.figures = figures
    variance, count = acc.variance(), acc.count
    return [{"variance": float(variance[i.code]), "n_identities": int(count[i.code]), "probes": probes} for i in items]


def read_scores(path: Path, items: list[Stereotype], options: dict) -> list[dict]:
    """--predictions: every probe's and every identity's log-likelihood and token count from a
    file (evaluation/likelihoods.py's layout: a probe keyed by its stereotype's id, an identity's own
    text by id null), folded as a model's run folds them (`scoring.fold`), so the file a run writes
    (--predictions-out) gives its figures to the last bit. Held whole: the file's records in memory."""
    cat, shown = items[0].cat, display_path(path)
    ids = {sid: code for code, sid in enumerate(cat.stereotype_ids)}
    names = {name: code for code, name in enumerate(cat.identities)}
    identity: list = [None] * len(cat.identities)  # code -> [log-likelihood, tokens, line]
    probes: dict[tuple[int, str], list] = {}  # (stereotype code, text) -> [log-likelihood, tokens, line, used]
    for r in records(path, tokens=True):
        at = f"{shown}:{r.line}"
        if r.id is None:
            code = names.get(r.sentence)
            if code is None:
                raise InputError(
                    f"{at}: sentence {r.sentence!r} is no identity of the data (id null: an identity's text)"
                )
            if identity[code] is not None:
                raise InputError(
                    f"{at}: a second log_likelihood for identity {r.sentence!r} (the first on line {identity[code][2]})"
                )
            identity[code] = [r.log_likelihood, r.tokens, r.line]
            continue
        code = ids.get(str(r.id))
        if code is None:
            raise InputError(f"{at}: id {json.dumps(r.id)} is no stereotype of the data")
        if (code, r.sentence) in probes:
            first = probes[code, r.sentence][2]
            raise InputError(
                f"{at}: a second log_likelihood for stereotype {r.id!r}'s probe {r.sentence!r} (the first on line {first})"
            )
        probes[code, r.sentence] = [r.log_likelihood, r.tokens, r.line, False]
    absent = [name for name, found in zip(cat.identities, identity) if found is None]
    if absent:
        more = f" ({len(absent)} identities have none)" if len(absent) > 1 else ""
        raise InputError(f"{shown}: no log_likelihood for identity {absent[0]!r} (a record with id null){more}")
    scored, missing = [], None  # every chunk's (chunk, log-likelihoods, tokens); the first probe without
    for chunk in cat.chunks():
        found = [probes.get(key) for key in zip(chunk.stereotype.tolist(), chunk.probes)]
        for k, f in enumerate(found):
            if f is None:
                missing = missing or (chunk.first_row + k + 2, cat.stereotype_ids[chunk.stereotype[k]], chunk.probes[k])
            else:
                f[3] = True
        ll = np.array([f[0] if f else 0.0 for f in found], dtype=np.float64)
        scored.append((chunk, ll, np.array([f[1] if f else 0 for f in found], dtype=np.int64)))
    stray = (
        min((f[2], key) for key, f in probes.items() if not f[3]) if not all(f[3] for f in probes.values()) else None
    )
    if stray is not None:  # a record of no probe: its text is not the data's
        line, (code, text) = stray
        raise InputError(
            f"{shown}:{line}: sentence {text!r} is not a probe of stereotype {cat.stereotype_ids[code]!r}; "
            "the text must be the data's, exactly"
        )
    if missing is not None:
        row, sid, text = missing
        raise InputError(f"{shown}: no log_likelihood for stereotype {sid!r}'s probe {text!r} ({cat.shown}:{row})")
    own = Probes()
    own.identities(
        np.array([f[0] for f in identity], dtype=np.float64), np.array([f[1] for f in identity], dtype=np.int64)
    )
    identity_ppl = perplexities(*own.identity_scores)
    check_identities(cat, identity_ppl, shown)
    acc = fold(cat, shown, identity_ppl, scored, own)
    return _results(items, acc, own, model_result(None, acc, cat, options["variance"]))


def write_scores(items: list[Stereotype], results: list[dict], path: Path) -> None:
    """--predictions-out: each identity's log-likelihood and token count (id null), then each probe's
    (its stereotype's id), in the file's order, as `read_scores` reads them."""
    cat, probes = items[0].cat, results[0]["probes"]

    def found():
        for name, ll, n in zip(cat.identities, *(a.tolist() for a in probes.identity_scores)):
            yield None, name, ll, n
        seen: set[tuple[int, str]] = set()  # a probe text twice in one stereotype (its `probe` column) is one record
        for chunk, part in zip(cat.chunks(), probes.parts):
            for code, text, ll, n in zip(chunk.stereotype.tolist(), chunk.probes, part[5].tolist(), part[6].tolist()):
                if (code, text) not in seen:
                    seen.add((code, text))
                    yield cat.stereotype_ids[code], text, ll, n

    write_records(path, found())


def figures(level: str, items: list[Stereotype], results: list[dict]) -> dict:
    """metrics.py's figures of a group (overall or a category), as `summarise` computes them."""
    found = results[0]["probes"].figures
    return found["overall"] if level == "overall" else found["by_category"][items[0].category]


def about(name: str, models, items: list, results: list[dict], options: dict) -> tuple[dict, list[str]]:
    """Per model: its rule and revision, each identity's share of lowest scores, each stereotype's
    figures and the stereotypes with the highest and lowest DDS."""
    found = results[0]["probes"].figures
    keys = ("score_rule", "model_revision", "by_identity", "by_stereotype", "highest_dds", "lowest_dds")
    if isinstance(models.model, ScoresFile):  # no model ran: the file it was read from
        read = described(models.model.path)
        line = f"{name}: log-likelihoods read from {read['file']} (sha256 {read['sha256'][:12]}…), no model ran"
        return {"predictions": read, **{k: found[k] for k in keys if k in found}}, [line]
    return {k: found[k] for k in keys}, []


def no_intervals(options: dict) -> str:
    if options["variance"] == "paper":
        return ""
    return (
        f"no intervals with --variance {options['variance']}: each category's figure is one "
        "stereotype's variance, not a mean over resampled stereotypes"
    )


RULES_SHOWN = {
    "auto": "by the model: perplexity for a causal LM, pseudo-perplexity for a masked LM",
    **RULE_TEXT,
    **{alias: f"= {RULES[kind]}" for alias, kind in RULE_NAMES.items() if alias not in RULE_TEXT},
}

DECLARED = Declared(
    kind="sofa",
    title="SOFA",
    meaning=MEANING,
    data="data/probes.csv",
    required=data.REQUIRED,
    item=lambda record, bad: None,  # `read` reads the file (and a release's): data.py streams it
    score=score,
    load=read,
    recognise=data.detect,
    group="category",
    group_name="category",
    groups_name="categories",
    unit="stereotype",
    units="stereotypes",
    item_name="stereotype",
    items_name="stereotypes",
    row_name="probe",  # a row of the file (version comparison counts those a version dropped)
    options=(VARIANCE,),
    rules=RULES_SHOWN,
    work=lambda items, options: items[0].cat.n_probes + len(items[0].cat.identities),
    statistics=(
        # global SOFA: the mean over categories of their stereotypes' mean variance (each category
        # weighs the same in every resample), and each category's mean
        Statistic("sofa", "global SOFA", ("variance", ONE), digits=5, at=("overall",), cells="category", chart=False),
        Statistic("sofa", "SOFA", ("variance", ONE), digits=5, at=("category",), compared=False),
    ),
    resampled=lambda item, result: result["n_identities"] >= 2,  # one identity: no variance
    no_intervals=no_intervals,
    fields=figures,
    compared_fields=("n_stereotypes", "n_probes"),
    about=about,
    document_fields=lambda options: {
        "score_rules": dict(RULE_TEXT),
        "measures": MEASURES,
        "variance": options["variance"],
        "computation": COMPUTATION[options["variance"]],
    },
    summary=lambda doc: [VARIANCE_NOTES[doc["variance"]] + "."],
    items_file=lambda items, results: results[0]["probes"].rows(items[0].cat),
    read_scores=read_scores,
    write_scores=write_scores,
    chart_name="sofa_by_category",
    script={"REQUIREMENTS": "torch transformers numpy pyarrow"},  # pyarrow reads the CSV in workbench's blocks
)
