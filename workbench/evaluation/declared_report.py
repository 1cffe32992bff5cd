"""`workbench evaluate` for a kind that declares its evaluator (`declared.Declared`): the loop
with progress bars and the score cache, then the terminal table, the CSV of figures, the items
file, the JSON and the chart with error bars, and the figures `workbench evaluate A B` compares.
Every declared kind gets these the same way; the kind writes none of them.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from ..core.errors import InputError, ModelError, display_path
from ..models.roles import UNDER_TEST
from .declared import Declared, Level, Scored, ScoresFile
from .intervals import bar_errors, interval_columns, with_interval
from .output import chart_caption, prediction_files, save_chart, short, write_outputs
from .versions import Compared


class Unanswered(ModelError):
    """A model answered none of the items: its outputs are written (null figures, what it counted),
    then the run ends in this one line."""


def evaluator_of(module):
    """What `workbench evaluate` calls for a kind's evaluator module: the module itself, or for a
    module that declares (`DECLARED`) the evaluator made from its declaration."""
    declared = getattr(module, "DECLARED", None)
    return DeclaredEvaluator(declared) if isinstance(declared, Declared) else module


def load_role(role, name: str, *, root: Path | None, spec, runtimes: dict, cache_path: Path | None):
    """A role's model as `workbench evaluate` loads it: found locally or on the Hub, run as the
    model options say, its outputs cached in `cache_path`, how it ran recorded in `runtimes`."""
    from ..models.roles import CLASSIFIER, EMBEDDER, GENERATOR

    if role.uses == EMBEDDER:
        from ..models.embedding import open_embedder
        from ..models.loading import FIXTURE_HINT, resolve

        embedder = open_embedder(resolve(name, None, root), spec, FIXTURE_HINT)
        runtimes[name] = embedder.runtime
        return embedder
    if role.uses == CLASSIFIER:
        from ..models.classify import load_classifier

        return load_classifier(name, root=root, spec=spec, cache_path=cache_path, runtimes=runtimes)
    from ..models.lm_loading import load_scorer

    return load_scorer(
        name, root=root, spec=spec, runtimes=runtimes, cache_path=cache_path, served=role.uses == GENERATOR
    )


class DeclaredEvaluator:
    """The `Evaluator` of kinds/base.py, made from a declaration."""

    def __init__(self, declared: Declared):
        self.declared = declared
        keys = tuple(s.key for s in declared.statistics if s.compared)
        places = tuple(declared.place_columns(("overall",))) if declared.places else ("level", "group")
        self.COMPARED = Compared(
            keys=("model", *places),
            measures=declared.versions or (*keys, "n", *declared.compared_fields),
            changed=declared.changed,
            unit=declared.row_name or declared.unit,  # what a dropped row is called
        )
        self.MANY_SOURCES = declared.many_sources  # several sources go to the kind's `own` evaluator
        self.CHAT_TEMPLATE = declared.takes_chat_template
        # versions.py pairs each version with the one before on these, over the units both have
        self.PAIRED = keys
        self.overall: dict = {}  # the last evaluation's overall scope of each model
        if declared.without_removed is not None:  # versions.py looks for it on the evaluator
            self.without_removed = declared.without_removed

    def detect(self, path) -> bool:
        return self.declared.detect(path)

    def evaluate(self, request, console) -> dict:
        from .. import sources
        from ..core.progress import progress_bar

        d = self.declared
        self.overall = {}
        found = d.own(request, console) if d.own is not None else None
        if found is not None:  # a request the kind's own evaluator answers
            return found
        exchange = {"--predictions": (request.predictions, d.read_scores or d.predictions)}
        exchange["--predictions-out"] = (request.predictions_out, d.write_scores)
        unused = [flag for flag, (given, hook) in exchange.items() if given is not None and hook is None]
        if unused:  # named as given: the one the user typed, not its sibling
            raise InputError(
                f"{d.kind} scores models directly: {' and '.join(unused)} {'is' if len(unused) == 1 else 'are'} "
                "not used (--items writes each item's scores)"
            )
        own = request.predictions is not None and d.read_scores is None  # a file of predictions as the source
        if own and request.sources:
            raise InputError("give either datasets (with --model) or --predictions, not both")
        files = prediction_files(request)  # each model's file (read_scores), by the model it stands for
        if own and len(files) > 1:
            raise InputError(f"{d.kind} reads one --predictions file (its models are named inside it)")
        if request.predictions is not None and not own and not request.sources:
            raise InputError(
                f"--predictions files give {d.kind} scores of the {d.items_name} of a data set: name it too "
                f"(the file or release whose {d.items_name} they follow)"
            )
        if len(request.sources) != 1 and not own:
            raise InputError(f"{d.kind} evaluates one file or release at a time (got {len(request.sources)})")
        roles = {r.name: request.options.get(r.dest) for r in d.roles}
        models = _scored_models(request, d)
        by_model: dict = {}
        if own:
            source, by_model = d.predictions(Path(request.predictions))
            models = list(by_model)
        d.check_roles(models, roles)
        options = {o.dest: request.options.get(o.dest, o.default) for o in d.options}
        rule = d.rule(request.score_rule)
        if rule and request.predictions is None:  # scores read from a file follow no rule of ours
            options["score_rule"] = rule
        if d.check is not None:  # bad values refused before anything is read
            d.check(options)
        if not own:
            spec = request.sources[0]
            source = d.read_source(
                spec,
                {**options, "strict": getattr(request, "strict", False)},
                lambda: sources.data_file(spec, d.kind, d.data, d.suffixes),
            )
        for line in source.notes:  # checked whole before any model loads
            console.print(line, markup=False, highlight=False)
        d = d.given(options, source.items)

        def loaded(role, name):
            under_test = role.name == UNDER_TEST.name  # the other roles' models load as ever
            if own and under_test:
                return Scored(*by_model[name])
            if request.predictions is not None and under_test:
                return ScoresFile(files[name])
            if d.open_model is not None:  # the kind opens its own
                how = {"root": request.root, "spec": request.spec, "runtimes": request.runtimes}
                how.update(cache_path=request.cache_path, config=request.config, options=options)
                return d.open_model(role, name, how)
            return load_role(
                role,
                name,
                root=request.root,
                spec=request.spec,
                runtimes=request.runtimes,
                cache_path=request.cache_path,
            )

        @contextmanager
        def progress_for(name, total):
            with progress_bar(f"{short(name, models)}: {d.title}", total) as advance:
                yield advance

        notes: list[str] = []
        results: dict[str, tuple[list, list]] = {}

        def scored(name, items, found):
            results[name] = (items, found)

        doc, rows = d.evaluate_items(
            source.items,
            source.label,
            options,
            request.intervals,
            loaded,
            models,
            roles,
            progress_for,
            notes.append,
            source.document,
            keep_rows=request.items_out is not None,
            scored=scored,
            overall=self.overall,
        )
        for shown in tables(d, doc):
            console.print(shown)
        console.print(d.meaning, markup=False, highlight=False)
        for line in [*(d.summary(doc) if d.summary else []), *notes]:
            console.print(line, markup=False, highlight=False)
        for name, (items, found) in results.items() if request.predictions_out is not None else ():
            path = scores_path(Path(request.predictions_out), name, list(results))
            d.write_scores(items, found, path)
            console.print(f"wrote {display_path(path)}", markup=False)
        write_outputs(request, doc, csv_rows(d, doc), rows, lambda doc, folder: plot(d, doc, folder), console)
        unanswered = [
            f"{name}: {entry['unanswered']}" for name, entry in doc["models"].items() if "unanswered" in entry
        ]
        if unanswered:  # written first, so what it counted and what it said is kept
            raise Unanswered(f"{source.label}: {'; '.join(unanswered)}, so its figures are null (see the notes above)")
        return doc

    def measure_rows(self, doc: dict) -> list[dict]:
        return csv_rows(self.declared, doc)


def scores_path(base: Path, model: str, models: list[str]) -> Path:
    """Where --predictions-out writes a model's scores: the path given, or with several models
    NAME.<model>.json beside it, one file each (the model as tables show it, `--` for each `/`)."""
    if len(models) < 2:
        return base
    return base.with_name(f"{base.stem}.{short(model, models).replace('/', '--')}{base.suffix or '.json'}")


def _scored_models(request, d: Declared) -> list[str]:
    """The models to score, or the --predictions file in place of one; --predictions-out with several
    models checked, each model's file as every output is, before anything loads."""
    if request.predictions is not None:
        if request.models:
            raise InputError("give either --model or --predictions, not both")
        if request.predictions_out is not None:
            raise InputError(
                "--predictions-out writes model scores; with --predictions the scores are read from a file"
            )
        return list(prediction_files(request))
    if not request.models and d.read_scores is not None:
        raise InputError("no model: pass --model (a Hub name or a local folder), or --predictions FILE")
    models = list(dict.fromkeys(request.models))
    if request.predictions_out is not None and len(models) > 1:
        from ..core.outputs import check_outputs
        from .output import request_inputs

        check_outputs(
            [
                (f"--predictions-out for {m}", scores_path(Path(request.predictions_out), m, models), False)
                for m in models
            ],
            request_inputs(request),
        )
    return models


def _levels(d: Declared, entry: dict, only: Level | None = None):
    """(level, group, figures): overall (group "all", as every kind's CSV says it), then each group
    of each level (of `only` alone where given). A kind that places its groups (`Declared.places`):
    (path, label, figures) of each place, in the entry's order."""
    if d.places is not None:
        return [
            (path, " / ".join(str(v) for v in d.place_columns(path).values() if v != "all"), node)
            for path, node in _placed(d, entry)
        ]
    return [
        ("overall", "all", entry["overall"]),
        *(
            (lv.name.replace(" ", "_"), g, v)
            for lv in ((only,) if only else d.levels_all)
            for g, v in entry[lv.key].items()
        ),
    ]


def _placed(d: Declared, entry: dict, path: tuple[str, ...] = ()):
    """(path, figures) of every group in a model's entry, nested or not, in its order."""
    for key, value in entry.items():
        if not isinstance(value, dict) or key == "intervals":
            continue
        if "n" in value and any(s.key in value for s in d.statistics):
            yield (*path, key), value
        else:
            yield from _placed(d, value, (*path, key))


def _shown(d: Declared, level: str, group: str, node: dict) -> str:
    if isinstance(level, tuple):  # a place: its label
        return group
    if level == "overall":
        return "overall"
    found = next((lv for lv in d.levels_all if lv.name.replace(" ", "_") == level), None)
    return found.shown(group, node) if found else group


def tables(d: Declared, doc: dict) -> list:
    """The table of the groups, then one per further level."""
    return [table(d, doc), *(table(d, doc, level) for level in d.levels)]


def table(d: Declared, doc: dict, level: Level | None = None):
    """One row per group (of `level`; default: the group) and overall; per model, each statistic
    given there with its interval, and the fields the kind shows."""
    from rich.table import Table

    level = level or d.levels_all[0]
    stats = [s for s in d.statistics if not s.at or level.name in s.at]
    neutral = {s.neutral for s in stats}
    t = Table(
        title=f"{d.title}: "
        + ", ".join(s.title for s in stats)
        + (f" per {level.name}" if level != d.levels_all[0] else "")
        + (f" ({d.units} resampled)" if doc.get("uncertainty", {}).get("resamples") else "")
        + (f"; {next(iter(neutral)):g} = unbiased" if len(neutral) == 1 and None not in neutral else "")
    )
    t.add_column(" / ".join(d.place_columns(("overall",))) if d.places else level.name)
    t.add_column(d.items_name, justify="right")
    models = doc["models"]
    for name in models:
        for n, title in enumerate([s.title for s in stats] + list(d.shown)):
            t.add_column(f"{short(name, models)}\n{title}" if n == 0 else title, justify="right")
    # each model's groups by place: models scored on items of their own (`Declared.predictions`) may
    # lack a group, or count other items in one
    placed = [{(at, group): node for at, group, node in _levels(d, entry, level)} for entry in models.values()]
    rows = list(dict.fromkeys(key for found in placed for key in found))
    for k, (at, group) in enumerate(rows):
        cells, counts = [], []
        for found in placed:
            v = found.get((at, group), {})
            counts.append(str(v.get("n", "-")))
            cells += [with_interval(v.get(s.key), (v.get("intervals") or {}).get(s.key), s.digits) for s in stats] + [
                _cell(v.get(f)) for f in d.shown
            ]
        node = next(found[(at, group)] for found in placed if (at, group) in found)
        t.add_row(
            _shown(d, at, group, node),
            counts[0] if len(set(counts)) == 1 else "/".join(counts),
            *cells,
            end_section=k == 0,
        )
    for gap in d.gaps if level == d.levels_all[0] else ():
        for name, entry in models.items():
            v = entry["overall"]
            if gap.key in v:
                t.caption = (
                    (t.caption + "; " if t.caption else "")
                    + f"{short(name, models)}: {gap.title} {with_interval(v[gap.key], (v.get('intervals') or {}).get(gap.key), gap.digits)}"
                )
    return t


def _cell(value) -> str:
    return "-" if value is None else f"{value:.1f}" if isinstance(value, float) else str(value)


def csv_rows(d: Declared, doc: dict) -> list[dict]:
    """Per model, overall then each group: the statistics and gaps, n, the kind's further fields
    (`Declared.fields`, those that are one value), and the intervals' columns."""
    keys = tuple(s.key for s in d.statistics) + tuple(g.key for g in d.gaps)
    out = []
    for name, entry in doc["models"].items():
        for level, group, node in _levels(d, entry):
            present = tuple(k for k in keys if k in node)
            fields = {
                k: v
                for k, v in node.items()
                if k not in keys and k not in ("n", "intervals") and (v is None or isinstance(v, (str, int, float)))
            }
            out.append(
                {
                    "model": name,
                    **({"score_rule": entry["score_rule"]} if "score_rule" in entry else {}),
                    **(d.place_columns(level) if d.places else {"level": level, "group": group}),
                    **{k: node[k] for k in present},
                    "n": node["n"],
                    **fields,
                    **interval_columns(node, present),
                }
            )
    return out


def plot(d: Declared, doc: dict, folder: Path) -> Path:
    """One panel per charted statistic: a bar per group (and overall) per model, each with its
    interval as an error bar, and the statistic's no-bias line where it has one."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    charted = [s for s in d.statistics if s.chart] or list(d.statistics)
    models = doc["models"]
    level = next((lv for lv in d.levels_all if lv.name == d.chart_level), d.levels_all[0])
    levels = _levels(d, next(iter(models.values())), level)
    labels = [f"{_shown(d, at, g, node)}\n(n={node['n']})" for at, g, node in levels]
    if d.places is not None:  # a place's names one above the other: the labels stay narrow
        labels = [label.replace(" / ", "\n") for label in labels]
    width = 0.8 / max(1, len(models))
    fig, axes = plt.subplots(
        1,
        len(charted),
        figsize=(max(6.0, 0.5 * len(levels) * max(1, len(models)) + 2.5) * len(charted), 4.6),
        squeeze=False,
    )
    x = np.arange(len(levels))
    for ax, s in zip(axes[0], charted):
        for i, (name, entry) in enumerate(models.items()):
            nodes = [node for _, _, node in _levels(d, entry, level)]
            values = [node.get(s.key) for node in nodes]
            yerr, beyond = bar_errors(values, [(node.get("intervals") or {}).get(s.key) for node in nodes])
            at = x - 0.4 + width * (i + 0.5)
            ax.bar(
                at,
                [np.nan if v is None else v for v in values],
                width,
                label=short(name, models),
                yerr=yerr,
                error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "0.25"},
            )
            for left, node, value, above in zip(at, nodes, values, beyond) if d.chart_note else ():
                ax.annotate(
                    d.chart_note(node),
                    (left, (value or 0.0) + above),
                    xytext=(0, 3),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    fontsize=6,
                )
        if d.chart_note:  # room above the tallest bar for its note
            low, high = ax.get_ylim()
            ax.set_ylim(low, high + 0.25 * (high - low))
        if s.neutral is not None:
            ax.axhline(s.neutral, color="black", linestyle="--", linewidth=1, label=f"{s.neutral:g} = unbiased")
        ax.set_xticks(
            x, labels, fontsize=8, rotation=30 if len(levels) > 5 else 0, ha="right" if len(levels) > 5 else "center"
        )
        ax.set_title(s.title, fontsize=10)
    axes[0][0].legend(fontsize=8)
    gaps = "; ".join(
        f"{short(name, models)}: {g.title} {with_interval(entry['overall'].get(g.key), (entry['overall'].get('intervals') or {}).get(g.key), g.digits)}"
        for g in d.gaps
        for name, entry in models.items()
        if g.key in entry["overall"]
    )
    fig.suptitle(f"{d.title} per {level.name}\n{chart_caption(doc)}" + (f"\n{gaps}" if gaps else ""), fontsize=10)
    fig.tight_layout()
    path = folder / f"{d.chart_name or d.kind.replace('-', '_')}.png"
    save_chart(fig, path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path
