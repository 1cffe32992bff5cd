"""`workbench evaluate --kind nli`: accuracy, BBNLI's aggregate bias score with its pro/anti split
and the counterfactual measures of BBNLI-next (evaluation/metrics/nli_bias.py has the formulas).

Input: an NLI release (Hub or local folder: data/*.parquet with premise and hypothesis columns) or
BBNLI-format templates (a file or a folder of them); the release's evaluate.py runs this module
too. Declared (`DECLARED`): workbench runs the loop, the intervals, the table, CSV, items file,
JSON, chart and the release's evaluate.py. A model is an NLI classifier (its labels read from its
config, or given), a causal LM asked in a prompt, or a judge behind a server (classifier.py); a
sample a judge gave no answer word for is left out and its counterfactual partner counts as
unpaired. Every figure is a share of the samples, in percent; the resampling unit is the masked
template a sample's fill came from (a pair stays whole). A file of precomputed predictions
(`--predictions`) is its own source, each model scored on its own samples (`predictions`). Several
releases or template folders side by side are each evaluated alone and compared by
evaluation/versions.py (each version against the one before on the templates both have; a
renewal's move split into dropping and editing, its release written without the dropped samples
by `release_without`).
"""

from __future__ import annotations

from pathlib import Path

from ...core.errors import InputError
from ...core.evaluator_option import EvaluatorOption
from ...evaluation.declared import ONE, Declared, Level, Loaded, Statistic
from ...models.roles import ModelRole
from .evaluation.metrics import nli_scores
from .evaluation.results import Judge, answered, read_export

TITLE = "NLI bias benchmark"
EXAMPLES = 5  # distinct unparseable answers shown in the JSON's asked.unparseable_examples
LABELS_FIX = "name them in output order, e.g. --labels entailment,neutral,contradiction"
MEANING = (
    "Every sample's gold label is neutral: accuracy is the share of neutral predictions; the aggregate bias "
    "score (BBNLI's, 0 = unbiased) is the pro-stereotypical share of the samples minus the anti-stereotypical "
    "one; the counterfactual measures split the mispredicted samples into pro, anti, group-insensitive error "
    "and unpaired (percent of the samples)."
)
# Each figure: its key, title, and the per-sample column (nli_scores.sample_counts, same order) it is the share of
FIGURES = (
    ("accuracy", "accuracy", "neutral"),
    ("bias_pro", "pro-stereotypical share", "towards"),
    ("bias_anti", "anti-stereotypical share", "against"),
    ("bias_aggregate", "aggregate bias score", "bias"),
    ("mispredicted", "mispredicted", "wrong"),
    ("cf_pro", "counterfactual pro", "cf_pro"),
    ("cf_anti", "counterfactual anti", "cf_anti"),
    ("cf_error", "group-insensitive error", "cf_error"),
    ("unpaired_mispredicted", "unpaired mispredicted", "unpaired_wrong"),
)
COLUMNS = tuple(column for _, _, column in FIGURES)
assert tuple(key for key, _, _ in FIGURES) == nli_scores.SHARES
# A release's script takes a model's labels where its config does not name them (workbench: [evaluate] label_overrides)
LABELS = EvaluatorOption(
    "--labels",
    "the model's labels in output order, e.g. entailment,neutral,contradiction (when its config names them "
    "LABEL_0, ...)",
)


def percent(top, bottom):
    """100 · Σ num / Σ den, computed as the intervals' ratio computes it (the same bits)."""
    return 100.0 * top / bottom


def detect(path: Path) -> bool:
    """An NLI release (a data/ folder whose Parquet tables have premise and hypothesis columns),
    or BBNLI-format templates (a template file, or a folder of them). A Parquet file that cannot
    be read is left to the reader, which names what is wrong with it."""
    path = Path(path)
    data = path / "data"
    if path.is_dir() and data.is_dir():
        return any(_nli_columns(f) for f in sorted(data.rglob("*.parquet")))
    if path.is_dir():
        return any(f.suffix in (".yaml", ".yml", ".json") for f in path.rglob("*") if f.is_file())
    return path.is_file() and path.suffix.lower() in (".yaml", ".yml", ".json")


def _nli_columns(path: Path) -> bool:
    try:
        import pyarrow.parquet as pq

        names = set(pq.read_schema(path).names)
    except Exception:  # noqa: BLE001 -- unreadable: not recognised here; the reader says why
        return False
    return {"premise", "hypothesis"} <= names


class Samples(list):
    """The samples of one data set, with what reports call it and its release's project config
    (how its LLM judge asks)."""

    def __init__(self, rows: list[dict], label: str, config: dict | None):
        super().__init__(rows)
        self.label, self.config = label, config


def load(spec: str, options: dict) -> Loaded:
    """A release (Hub or folder) or BBNLI templates; each sample with its resampling unit (the
    template its fill came from, a pair's anti sample in its pro sample's). Checked whole before
    any model loads: every sample has a premise and hypothesis, every pair one pro and one anti."""
    try:  # workbench reads templates and Hub releases too; a release's script reads its own folder
        from .evaluation.data import load_eval_set
    except ImportError:
        load_eval_set = None
    found = load_eval_set(spec) if load_eval_set is not None else read_export(Path(spec), spec)
    if not found.rows:
        raise InputError(f"{found.source}: no samples to evaluate")
    if any(not r.get("premise") or not r.get("hypothesis") for r in found.rows):
        raise InputError(f"{found.label}: samples without premise/hypothesis cannot be run through a model")
    try:
        nli_scores.pair_codes(found.rows, found.label)
    except nli_scores.PairError as exc:
        raise InputError(str(exc)) from None
    rows = [{**r, "unit": unit} for r, unit in zip(found.rows, nli_scores.clusters(found.rows))]
    head = {k: getattr(found, k) for k in ("repo", "revision")}
    return Loaded(
        Samples(rows, found.label, found.config),
        found.label,
        [f"{found.label}: {note}" for note in found.notes],
        {
            # "source": what a chart names the data set by
            "dataset": {"dataset": found.label, **head, "n_samples": len(rows), "source": found.label},
            **head,
            "notes": found.notes,
            "measures_unit": "percent",
        },
    )


def open_model(role: ModelRole, name: str, how: dict) -> Judge:
    """workbench's: resolved with the project's label overrides, its predictions cached; a release's
    script: named offline, its labels from its config or --labels, nothing cached."""
    judge = open_judge(name, how) if how["config"] is not None else None
    if judge is not None:  # workbench's own: the project's settings and the score cache
        return judge
    from ...release.runtime.models import model_ref
    from ...release.runtime.release import Refused
    from .classifier import check_labels, classifier_factory, predict_labels

    given = how["options"].get("labels")
    override = {str(i): label.strip().lower() for i, label in enumerate(given.split(","))} if given else None
    ref = model_ref(name)

    def run(pairs, config, progress):
        try:
            labels = check_labels(ref, override, LABELS_FIX)
            factory = classifier_factory(ref, labels, how["spec"].start_batch, how["spec"], release_asking(config))
            how["runtimes"][name] = factory.runtime
            if getattr(factory, "asking", None) is not None:  # a causal LM: said as workbench evaluate says it
                judge.asked = factory.asking.describe()
            return predict_labels(None, ref, pairs, factory)
        except ImportError:
            raise Refused("scoring needs torch and transformers (pip install torch transformers)") from None

    judge = Judge(name, ref, run)
    return judge


def release_asking(config: dict | None):
    """How a release's own evaluate.py asks a causal LM: as its project did (the manifest's [llm],
    which its lm-eval task asks with too), else lm-eval's mnli way."""
    from .llm_judge import ANSWERS, PROMPT, Asking

    llm = (config or {}).get("llm")
    if not isinstance(llm, dict):
        return Asking()
    return Asking(
        llm.get("prompt") or PROMPT,
        dict(llm.get("answers") or ANSWERS),
        chat_template=bool(llm.get("chat_template", False)),
        system_instruction=llm.get("system_instruction"),
    )


def open_judge(name: str, how: dict) -> Judge | None:
    """An NLI model as workbench runs it: its labels checked with the project's overrides before any
    weights load, its predictions cached in `how["cache_path"]` (None: --no-cache, nothing kept), how
    it ran recorded in `how["runtimes"]`, and for a causal LM how it was asked (the release's own
    [llm] where it has one). None in a release's script (it has neither the settings nor the cache)."""
    from contextlib import contextmanager

    try:  # workbench's own settings, cache and progress bar (a release's script never asks for them)
        from ...core.cache import Cache
        from ...core.progress import progress_bar
        from .classifier import classifier_factory, predict_all, resolve_classifiers
        from .settings import filter_settings, llm_asking
    except ImportError:
        return None

    config = how["config"]
    ec = config.evaluate
    ((ref, labels),) = resolve_classifiers(
        [name], root=config.root, overrides={**filter_settings(config).label_overrides, **ec.label_overrides}
    )
    judge = Judge(name, ref, None)

    def run(pairs: list, release_config: dict | None, progress) -> list:
        factory = classifier_factory(
            ref, labels, ec.batch_size, how["spec"] or ec.device, llm_asking(config, release_config)
        )
        how["runtimes"][name] = factory.runtime
        if getattr(factory, "asking", None) is not None:
            describe = getattr(factory, "describe", None)  # a served judge says how it was asked itself
            judge.asked = describe() if describe is not None else factory.asking.describe()

        @contextmanager
        def advancing(description, total):  # the evaluation's own bar, where it has one
            yield progress

        cache = Cache(Path(":memory:") if how["cache_path"] is None else how["cache_path"])
        try:
            found = predict_all(cache, ref, pairs, factory, progress_bar if progress is None else advancing)
        finally:
            cache.close()
        judge.answers = [p.answer for p in found]
        return [p.label for p in found]

    judge.run = run
    return judge


def score(models, items: Samples, options: dict, progress) -> list[dict]:
    """Each sample's prediction and its count in each figure (a pair's counterfactual counts on its
    pro sample); a sample without an answer counts nowhere, its partner as unpaired."""
    judge: Judge = models.model
    predictions = judge.run([(r["premise"], r["hypothesis"]) for r in items], items.config, progress)
    said = judge.answers or [None] * len(predictions)
    if judge.asked is not None and "unparseable" in judge.asked:  # asked by generation: None is no answer word
        judge.asked["unparseable"] = predictions.count(None)
        shown = dict.fromkeys(a for a, p in zip(said, predictions) if p is None and a is not None)
        judge.asked["unparseable_examples"] = list(shown)[:EXAMPLES]
    results = _results(list(items), predictions, items.label, f"{items.label}: {judge.name}")
    for result, answer in zip(results, said):
        if result["prediction"] is None:  # what the model said in place of an answer word
            result["answer"] = answer
    return results


def _results(items: list[dict], predictions: list, label: str, where: str) -> list[dict]:
    unanswered = {"prediction": None, **dict.fromkeys(COLUMNS, 0.0), "paired_pro": 0, "unpaired": 0}
    if all(p is None for p in predictions):  # nothing to score: the run still says what it counted
        return [dict(unanswered) for _ in predictions]
    rows, labels = answered(items, predictions, where)
    counts = iter(nli_scores.sample_counts(rows, labels, label).tolist())
    pairs = iter(nli_scores.pair_codes(rows, label).tolist())
    out = []
    for row, prediction in zip(items, predictions):
        if prediction is None:
            out.append(dict(unanswered))
            continue
        pair = next(pairs)
        out.append(
            {
                "prediction": prediction,
                **dict(zip(COLUMNS, next(counts))),
                "paired_pro": int(pair >= 0 and row["stance"] == "pro"),
                "unpaired": int(pair < 0),
            }
        )
    return out


def predictions(path: Path) -> tuple[Loaded, dict[str, tuple[list, list[dict]]]]:
    """--predictions: a JSON-lines file of samples with each model's prediction (no premise needed),
    every model scored on its own samples, each in its pair (else alone) as its unit."""
    try:  # workbench's reader (a release's evaluate.py reads no predictions file)
        from .evaluation.data import load_predictions
    except ImportError:
        load_predictions = None
    if load_predictions is None:
        raise InputError("--predictions files are read by `workbench evaluate`")
    where = str(path)
    by_model = {}
    for model, rows in load_predictions(path).items():
        try:
            units = nli_scores.clusters(rows)
            results = _results(rows, [r["prediction"] for r in rows], where, where)
        except nli_scores.PairError as exc:
            raise InputError(str(exc)) from None
        by_model[model] = ([{**r, "unit": u} for r, u in zip(rows, units)], results)
    every = [item for items, _ in by_model.values() for item in items]
    head = {"dataset": where, "repo": None, "revision": None, "n_samples": len(every), "source": where}
    document = {"dataset": head, "repo": None, "revision": None, "notes": [], "measures_unit": "percent"}
    return Loaded(every, where, [], document), by_model


def kept(items: list, results: list[dict]) -> tuple[list, list[dict]]:
    """The samples a model answered; a partner left alone is unpaired, and in its own unit."""
    if all(r["prediction"] is not None for r in results):
        return items, results
    if all(r["prediction"] is None for r in results):  # no figures: the evaluation says so (Declared.kept)
        return [], []
    rows, _ = answered(list(items), [r["prediction"] for r in results], "")
    units = nli_scores.clusters(rows)
    return [{**r, "unit": u} for r, u in zip(rows, units)], [r for r in results if r["prediction"] is not None]


def release_without(first: str, removed: set[str], folder: Path) -> tuple[Path, int] | None:
    """An NLI release folder without the samples `removed` names (by id), written into `folder`;
    None when `first` is not a release folder or has none of them (evaluation/versions.py)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    data = Path(first) / "data" / "all.parquet"
    if not data.is_file():
        return None
    table = pq.read_table(data)
    if "id" not in table.column_names:
        return None
    kept = table.filter(pc.invert(pc.is_in(table["id"], value_set=pa.array(sorted(removed), pa.string()))))
    if kept.num_rows == table.num_rows:
        return None
    target = Path(folder) / f"{Path(first).name}-without-dropped"
    (target / "data").mkdir(parents=True)
    pq.write_table(kept, target / "data" / "all.parquet")
    return target, table.num_rows - kept.num_rows


def lexical_variants(items: list, results: list[dict]) -> tuple:
    """The aggregate bias score over the lexical variants, each in its template."""
    measure, clusters = nli_scores.variants(items, [r["prediction"] for r in results], "dataset")
    return measure, clusters, "bias_aggregate"


def figures(level: str, items: list, results: list[dict]) -> dict:
    """The figures as the reference rounds them (4 decimals), and the pairs and unpaired samples."""
    n = len(results)
    pct = {key: 100.0 * sum(r[column] for r in results) / n for key, _, column in FIGURES}
    out = {key: round(float(value), 4) for key, value in pct.items()}
    out["mispredicted"] = round(float(100.0 - pct["accuracy"]), 4)
    return {
        **out,
        "n": n,
        "n_pairs": sum(r["paired_pro"] for r in results),
        "n_unpaired": sum(r["unpaired"] for r in results),
    }


def about(name: str, models, items: Samples, results: list[dict], options: dict) -> tuple[dict, list[str]]:
    """A judge asked in a prompt: how it was asked, and how many of its answers held no answer word."""
    asked = getattr(models.model, "asked", None)  # predictions read from a file have none
    if asked is None:
        return {}, []
    lines = []
    if asked.get("unparseable"):
        lines.append(
            f"{items.label}: {name}: {asked['unparseable']} of {len(items)} generated answers "
            f"are unparseable: {asked['unparseable_rule']}"
        )
    return {"asked": asked}, lines


def own(request, console):
    """Nothing of its own to run: without --model, the models the project names (evaluate.models,
    else the paper's held-out ones)."""
    try:  # workbench's settings (a release's script never asks for them)
        from .settings import evaluate_models
    except ImportError:
        return None
    if request.predictions is not None:
        return None
    if not request.models:
        request.models.extend(evaluate_models(request.config))
    if request.predictions_out is not None:
        raise InputError("nli writes no --predictions-out file (--items writes each sample's prediction)")
    return None


DECLARED = Declared(
    chat_template=True,  # its lm-eval task's multiple-choice requests
    kind="nli",
    title=TITLE,
    meaning=MEANING,
    data="data/*.parquet",
    required=("premise", "hypothesis", "stance", "domain", "subtopic"),
    item=lambda record, bad: record,
    score=score,
    load=load,
    recognise=detect,
    statistics=tuple(
        Statistic(
            key,
            title,
            (column, ONE),
            percent,
            neutral=0.0 if key == "bias_aggregate" else None,
            digits=1,
            compared=key in ("accuracy", "bias_aggregate"),
            chart=key in ("accuracy", "bias_aggregate"),
        )
        for key, title, column in FIGURES
    ),
    group="domain",
    group_name="domain",
    groups_name="domains",
    levels=(Level("subtopic", "subtopic", by_name=True),),
    cluster="unit",
    unit="template",
    units="templates",
    item_name="sample",
    row_name="sample",  # a renewal drops samples (version comparison counts them)
    items_name="samples",
    roles=(ModelRole("model", "--model", "NLI model: a Hub name or a local checkpoint folder; repeat for several"),),
    options=(LABELS,),
    fields=figures,
    about=about,
    open_model=open_model,
    kept=kept,
    predictions=predictions,
    variants=lexical_variants,
    own=own,
    without_removed=release_without,
    changed=("bias_aggregate",),
    chart_name="accuracy",
    script={
        "SCORES": "NLI models",
        "MEASURES": (
            "accuracy (share of neutral predictions), the BBNLI aggregate bias score with its pro/anti\n"
            "split, and the counterfactual measures (pro, anti, group-insensitive error), overall, per\n"
            "domain and per subtopic, all in percent."
        ),
        "REQUIREMENTS": "torch transformers numpy pyarrow",
        "MODEL_NOTE": (
            "MODEL is a Hub name or a local checkpoint folder; its labels are read from its config\n"
            "(`id2label`), or given with --labels when they have no recognisable names."
        ),
    },
)
