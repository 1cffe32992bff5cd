"""`workbench evaluate --kind honest`: HONEST@k of masked or causal LMs on identity templates.

Each template's `[M]` slot gets the model's top-K fills (see fills.py for the rules); a fill
is hurtful when, accents stripped, it equals a lemma of the user's lexicon (case-sensitive),
and it counts for that lemma's first listed category. With `--score-rule generation` a causal
LM's K generated completions stand for the fills, each hurtful when one of its words is a
lemma (completions.py). measure.py turns the hits into the cumulative HONEST@k curve, per
group and per lexicon category.

Declared (`DECLARED`): workbench runs the loop, the intervals, the table, CSV, items file, JSON,
chart and the release's evaluate.py. An item is a template row, its result the row's fills and
their lexicon categories; HONEST@k (each k asked for) and each lexicon category's share are
statistics over templates: the rows of one template's wording (its identities) are one
resampling unit (scoring.template_of). A model's fills can be read from a file in place of
running it (`--predictions`, published.py's layouts: `read_scores`), and FairBelief's analyses of
the models together (Table 1, curves by group, family and size, agreement between their fills with
an embedding model) follow every model's figures (`across`, analyses.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import InputError, ModelError, display_path
from ...core.ids import file_sha256
from ...evaluation.declared import Declared, Loaded, Statistic
from ...models.roles import GENERATOR, UNDER_TEST, ModelRole
from . import data
from .analyses import (
    PERCENTILES,
    agreement,
    agreement_texts,
    cumulative_of,
    group_curves,
    mean_curves,
    per_rank_of,
    read_models_table,
    table_one,
)
from .completions import GENERATION, completions_for, reference_reading
from .fills import CAUSAL_RULES, MASKED_RULES, score_rule
from .measure import TOP_K, honest_scores, scope_figures
from .options import EMBEDDING, OPTIONS
from .parsing import Lexicon, Template, TemplateSet
from .published import COMPLETIONS, Fills, read_fills
from .scoring import (
    COUNTING,
    DEFINITION,
    MATCHING,
    UNIDECODE_MATCHING,
    distinct_texts,
    parse_ks,
    score_templates,
    scorer_revision,
    template_of,
)

KIND = "honest"
AUTO = "auto"  # the rule by the model: fill-mask for a masked LM, next-word for a causal one
RULES = {  # fills.py's rules (MASKED_RULES, CAUSAL_RULES), as --score-rule lists them
    AUTO: "by the model: fill-mask for a masked LM, next-word for a causal one",
    MASKED_RULES[0]: "masked LMs: the K most probable fills of the slot",
    CAUSAL_RULES[0]: "causal LMs: the K most probable word-starting next tokens, each completed to a word",
    CAUSAL_RULES[1]: "causal LMs: the K most probable word-starting next tokens, not completed",
    GENERATION: "causal LMs: K generated completions, scored word by word",
}


def detect(path: Path) -> bool:
    """A TSV with template_masked and identity columns, or a release folder holding one."""
    path = Path(path)
    if path.is_dir():
        manifest = path / "manifest.json"
        if not (manifest.is_file() and (path / data.RELEASE_TABLE).is_file()):
            return False
        try:
            return json.loads(manifest.read_text(encoding="utf-8")).get("kind") == KIND
        except (OSError, ValueError):
            return False
    header = data.header_of(path) if path.is_file() else []
    if header and header[0].startswith("{"):  # a JSON-lines export: the first record's fields
        try:
            with open(path, encoding="utf-8-sig") as fh:
                header = list(json.loads(fh.readline()))
        except (OSError, ValueError, TypeError, UnicodeDecodeError):
            return False
    return "template_masked" in header and "identity" in header


def _requested(options: dict) -> str | None:
    """The --score-rule asked for; None: the model's own."""
    rule = options.get("score_rule")
    return None if rule in (None, AUTO) else rule


def _ks(options: dict) -> list[int]:
    try:
        return parse_ks(options["top_k"])
    except ValueError as exc:
        raise InputError(f"--top-k: {exc}") from None


def check(options: dict) -> None:
    """Everything that can be wrong before a file is read or a model loaded."""
    ks = _ks(options)
    if min(ks) < 1:
        raise InputError(f"--top-k must be at least 1 (got {options['top_k']})")
    completions_for(_requested(options), max(ks), options)
    if options.get("models_table"):
        read_models_table(Path(options["models_table"]))
    if options.get("lexicon") is None:
        raise InputError(
            "honest needs the hurtful-word lexicon: pass --lexicon FILE.tsv (HurtLex's layout: "
            "lemma, category[, level]); workbench ships none"
        )


@dataclass
class Scored:
    """What every template row of one evaluation shares: the templates and lexicon as read, and
    the K values asked for (K, the largest, is how many fills a template gets)."""

    templates: TemplateSet
    lexicon: Lexicon
    ks: list[int]

    @property
    def K(self) -> int:
        return max(self.ks)


@dataclass(eq=False)
class Row:
    """One template row: what the items file shows of it, its resampling unit (its template's
    wording), and the evaluation it belongs to."""

    template: Template
    wording: str
    scored: Scored = field(repr=False)

    @property
    def group(self) -> str | None:
        return self.template.group


def load(spec: str, options: dict) -> Loaded:
    """The templates (a TSV, JSON lines, a release folder or a Hub release) and the lexicon."""
    check(options)
    label = options.get("label") or spec
    templates = data.read_templates(spec, options["group_by"], options.get("repeated_templates") or "rows")
    lexicon = data.read_lexicon(Path(options["lexicon"]), options.get("lemma_normalisation") or "workbench")
    scored = Scored(templates, lexicon, sorted(set(_ks(options))))
    rows = [Row(t, template_of(t), scored) for t in templates.templates]
    notes = [f"{spec}: {note}" for note in templates.notes] + [f"{options['lexicon']}: {n}" for n in lexicon.notes]
    return Loaded(rows, label, notes, document(label, scored))


def document(label: str, scored: Scored) -> dict:
    """The head of the JSON: what was read and how fills are counted."""
    templates, lexicon = scored.templates, scored.lexicon
    return {
        "source": label,
        "repo": templates.repo,
        "revision": templates.revision,
        "measures_unit": "percent",
        "top_k": scored.K,
        "top_ks": scored.ks,
        "definition": DEFINITION,
        "template_rows_read": templates.rows_read or len(templates.templates),
        "duplicated_templates": templates.duplicates,
        "repeated_templates": templates.repeated,
        "computation": COUNTING[templates.repeated],
        "group_by": templates.group_by,
        "lexicon": {
            "file": display_path(lexicon.path),
            "lemmas": len(lexicon.category),
            "categories": lexicon.categories,
            "rows_used": lexicon.rows_used,
            "rows_skipped_by_level": lexicon.rows_skipped,
            "level_filter": "conservative" if lexicon.level_filtered else None,
        },
        "lemma_normalisation": lexicon.normalisation,
        "matching": UNIDECODE_MATCHING if lexicon.normalisation == "unidecode" else MATCHING,
        "notes": [*templates.notes, *lexicon.notes],
    }


def _rule(model, options: dict) -> str:
    """The model's rule; a model behind a server generates and nothing else."""
    rule = score_rule(model.kind, _requested(options))
    if rule != GENERATION and getattr(model, "endpoint", None) is not None:
        raise ModelError(
            f"{model.endpoint.shown}: a served model only generates; --score-rule {rule} needs a checkpoint's "
            f"scores: use --score-rule {GENERATION}, or score the checkpoint itself (a local folder or a Hub name)"
        )
    return rule


def _completions(model, rows: list[Row], options: dict):
    found = completions_for(_requested(options), rows[0].scored.K, options)
    return found.for_model(model) if found is not None else None


def work(rows: list[Row], options: dict, models) -> int:
    """A progress unit per distinct text (per text and completion for the generation rule)."""
    own = _completions(models.model, rows, options)
    return len(distinct_texts([r.template for r in rows])) * (own.K if own is not None else 1)


def score(models, rows: list[Row], options: dict, progress) -> list[dict]:
    """Each row's fills (or completions) and their lexicon categories (None: not hurtful)."""
    scored = rows[0].scored
    rule = _rule(models.model, options)
    own = _completions(models.model, rows, options)
    _, fills, hits = score_templates(
        models.model, [r.template for r in rows], scored.lexicon, scored.K, rule, progress, own
    )
    return [{"fills": f, "hurtful": h} for f, h in zip(fills, hits)]


def read_predictions(path: Path, rows: list[Row]) -> list[dict]:
    """--predictions: a model's fills or completions from a file (published.py's layouts), in
    place of running it."""
    scored = rows[0].scored
    templates = scored.templates
    return read_fills(
        path, [r.template for r in rows], templates.every, display_path(templates.path), scored.lexicon, scored.K
    )


def about(name: str, models, rows: list[Row], results: list[dict], options: dict) -> tuple[dict, list[str]]:
    """A model's kind, revision and rule (and how its completions were made), or the file its fills
    were read from; and its share of hurtful fills per lexicon category."""
    model, scored = models.model, rows[0].scored
    by_category = honest_scores(
        [r["hurtful"] for r in results], [row.group for row in rows], scored.K, scored.lexicon.categories
    )["by_lexicon_category"]
    if isinstance(results, Fills):  # read from a file: no model ran
        read = results.read
        line = f"{name}: {read.per_template} {read.entries} per template read from {read.file} ({read.layout} layout)"
        if read.used < read.per_template:
            line += f"; the first {read.used} scored (--top-k {read.per_template} scores them all)"
        reading = _reference_reading(name, scored, results) if read.entries == COMPLETIONS else ({}, [])
        return {"predictions": read.describe(), "by_lexicon_category": by_category, **reading[0]}, [line, *reading[1]]
    own = _completions(model, rows, options)
    reading = _reference_reading(name, scored, results) if own is not None else ({}, [])
    return {
        "model_kind": model.kind,
        "revision": scorer_revision(model),
        "score_rule": _rule(model, options),
        **({"completions": own.describe()} if own is not None else {}),
        "by_lexicon_category": by_category,
        **reading[0],
    }, reading[1]


def _reference_reading(name: str, scored, results) -> tuple[dict, list[str]]:
    """Completions the reference tool's unidecode would read otherwise: counted in the JSON, and a
    warning naming the switch that reproduces the reference's figures."""
    found = reference_reading(scored.lexicon, [r["fills"] for r in results], [r["hurtful"] for r in results])
    if not found:
        return {}, []
    line = []
    if found["differ"]:
        shown = ", ".join(repr(t) for t in found["examples"])
        line = [
            f"warning: {name}: {found['differ']} of {found['of']} completions read differently under the reference "
            f"HONEST tool's unidecode normalisation (e.g. {shown}); --lemma-normalisation unidecode reproduces the "
            "reference's figures"
        ]
    return {"reference_reading_differs": found["differ"]}, line


def figures(level: str, rows: list[Row], results: list[dict]) -> dict:
    """measure.py's figures of a group (the curve, per-rank shares, hits) and HONEST@k at each k."""
    if not rows:
        return {}
    scored = rows[0].scored
    found = scope_figures([r["hurtful"] for r in results], scored.K)
    return {**found, "honest_at": {str(k): found["curve"][str(k)] for k in scored.ks}}


def _percent(hits, fills):
    return 100.0 * hits / fills


def _hits(k: int):
    return lambda row, result: sum(c is not None for c in result["hurtful"][:k])


def _in(category: str, K: int):
    return lambda row, result: sum(h == category for h in result["hurtful"][:K])


def _fills(k: int):
    return lambda row, result: k


def honest_at(k: int, key: str | None = None, compared: bool = False, title: str = "") -> Statistic:
    """HONEST@k: hurtful fills among the top k of each template / (templates × k), in percent."""
    return Statistic(
        key or f"honest@{k}",
        title or f"HONEST@{k}",
        (_hits(k), _fills(k)),
        _percent,
        compared=compared,
        chart=compared,
    )


def statistics(options: dict, rows: list[Row]) -> tuple[Statistic, ...]:
    """HONEST@k at each k asked for, HONEST@K (`honest`, the figure models are compared on), and
    overall each lexicon category's share of the top-K fills."""
    scored = rows[0].scored
    K = scored.K
    return (  # HONEST@K itself once, as `honest` (a second column of the same figure helps nobody)
        *(honest_at(k) for k in scored.ks if k != K),
        honest_at(K, "honest", compared=True, title=f"HONEST@{K}"),
        *(
            Statistic(
                f"category {c}",
                f"{c} (%)",
                (_in(c, K), _fills(K)),
                _percent,
                compared=False,
                chart=False,
                at=("overall",),
            )
            for c in scored.lexicon.categories
        ),
    )


def summary(doc: dict) -> list[str]:
    """HONEST@K per lexicon category, a line per model (their shares sum to HONEST@K)."""
    from ...evaluation.intervals import with_interval

    K = doc["top_k"]
    lines = []
    for name, entry in doc["models"].items():
        found = entry["overall"].get("intervals", {})
        shown = ", ".join(
            f"{c} {with_interval(v, found.get(f'category {c}'), 2)}" for c, v in entry["by_lexicon_category"].items()
        )
        lines.append(f"{short_name(name)}: HONEST@{K} per lexicon category (%): {shown}")
    return [*lines, doc["definition"] + "; " + doc["computation"], *across_lines(doc)]


def across(doc: dict, scored: dict, options: dict, others: dict) -> dict:
    """FairBelief's analyses of the models together (analyses.py): Table 1, the curves (per group,
    family and size) and, with an embedding model, the agreement between their fills."""
    if not scored:
        return {}
    first_rows = next(iter(scored.values()))[0]
    K = first_rows[0].scored.K
    table = read_models_table(Path(options["models_table"])) if options.get("models_table") else {}
    family = {m: table[m].family for m in scored if m in table}
    size = {m: table[m].size for m in scored if m in table and table[m].size}
    per_rank = {m: per_rank_of([r["hurtful"] for r in results], K) for m, (_, results) in scored.items()}
    how = options.get("group_curves") or "pooled"
    groups = {m: group_curves(rows, results, K, how) for m, (rows, results) in scored.items()}
    curve = lambda values: {"per_rank": values, "cumulative": cumulative_of(values)}  # noqa: E731
    rows_one = table_one(per_rank)
    for name, row in rows_one.items():
        row.update({"family": family.get(name), "size": size.get(name)})
    out: dict = {
        "k": K,
        "table_1": rows_one,
        "curves": {
            m: {"overall": curve(v), "by_group": {g: curve(c) for g, c in groups[m].items()}}
            for m, v in per_rank.items()
        },
        "group_curves": how,
        "notes": [],
    }
    if table:
        for key, of in (("by_family", family), ("by_size", size)):
            means = mean_curves(per_rank, of)
            by_group = {
                g: mean_curves({m: groups[m][g] for m in groups if g in groups[m]}, of)
                for g in dict.fromkeys(g for c in groups.values() for g in c)
            }
            out[key] = {
                value: {
                    "models": [m for m in scored if of.get(m) == value],
                    "overall": curve(c),
                    "by_group": {g: curve(found[value]) for g, found in by_group.items() if value in found},
                }
                for value, c in means.items()
            }
        unlisted = [m for m in scored if m not in table]
        if unlisted:
            out["notes"].append(f"not in the models table (no family or size): {', '.join(unlisted)}")
    embedder = others.get("embedder")
    if embedder is not None and len(scored) >= 2:
        text = options.get("agreement_text") or "appended"
        texts = {
            m: [
                agreement_texts(row.template.text, result.get("prompt") or row.template.text, result["fills"][:K], text)
                for row, result in zip(rows, results)
            ]
            for m, (rows, results) in scored.items()
        }
        found = agreement(embedder.encode, list(scored), texts, family)
        group_of = [row.group for row in first_rows]
        out["agreement"] = {
            "measure": "mean pairwise cosine similarity of the fills' sentence embeddings, per rank k, mean over templates",
            "text": text,
            "embedder": {"model": embedder.name, "revision": getattr(embedder, "revision", None)},
            "pairs": found["pairs"],
            "per_k": found["per_k"],
            "by_group": {
                g: {
                    name: per_t[[n for n, x in enumerate(group_of) if x == g]].mean(axis=0).tolist()
                    for name, per_t in found["per_template"].items()
                }
                for g in dict.fromkeys(x for x in group_of if x is not None)
            },
        }
    elif len(scored) >= 2:
        out["notes"].append("agreement between the models' fills: pass --embedding-model MODEL")
    return {"across_models": out}


def across_lines(doc: dict) -> list[str]:
    """Table 1 (a line per model, by family and size where a models table gives them) and the
    agreement's mean over k."""
    found = doc.get("across_models")
    if not found:
        return []
    K = found["k"]
    rows = found["table_1"]
    order = sorted(rows, key=lambda n: (rows[n]["family"] is None, rows[n]["family"] or "", list(rows).index(n)))
    lines = [f"Table 1 (FairBelief): per-rank HONEST over k = 1..{K} (%): mean ± std, q25/q50/q75/q90/q95, rank"]
    for name in order:
        row = rows[name]
        where = " ".join(x for x in (row["family"], row["size"]) if x)
        lines.append(
            f"  {short_name(name)}{f' [{where}]' if where else ''}: {row['mean']:.2f} ± {row['std']:.2f}, "
            + "/".join(f"{row[f'q{p}']:.2f}" for p in PERCENTILES)
            + f", rank {row['rank']} of {len(rows)}"
        )
    agreed = found.get("agreement")
    if agreed:
        shown = ", ".join(f"{name} {sum(v) / len(v):.3f}" for name, v in agreed["per_k"].items())
        lines.append(f"agreement (mean pairwise cosine similarity of the fills' embeddings, mean over k): {shown}")
    return [*lines, *found["notes"]]


def short_name(name: str) -> str:
    return name.rstrip("/").split("/")[-1]


def provenance(options: dict) -> dict:
    """The user's lexicon is no part of a release: the scores name it by its hash."""
    lexicon = Path(options["lexicon"])
    return {"lexicon": {"file": str(lexicon.resolve()), "sha256": file_sha256(lexicon)}}


DECLARED = Declared(
    kind=KIND,
    title="HONEST",
    meaning="HONEST@k: the share of hurtful fills among each template's top k fills, in percent; lower is better",
    data=data.RELEASE_TABLE.as_posix(),
    required=("template_masked", "identity"),
    item=lambda record, bad: None,  # read by `load` (TSV, JSON lines, release folders)
    score=score,
    load=load,
    recognise=detect,
    statistics=(honest_at(TOP_K, "honest", True, "HONEST"),),  # with the options: `statistics`
    statistics_for=statistics,
    group="group",
    cluster="wording",
    unit="template",
    units="templates",
    item_name="template",
    items_name="templates",
    roles=(ModelRole(UNDER_TEST.name, UNDER_TEST.flag, UNDER_TEST.help, GENERATOR), EMBEDDING),
    options=OPTIONS,
    rules=RULES,
    work=work,
    item_row=lambda r: {
        "line": r.template.line,
        "template": r.template.text,
        "identity": r.template.identity,
        "group": r.template.group,
    },
    chart_name="honest_curve",
    fields=figures,
    about=about,
    read_scores=read_predictions,
    across=across,
    summary=summary,
    check=check,
    provenance=provenance,
)
