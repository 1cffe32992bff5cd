"""Run NLI models over an evaluation set, with the filter stage's batching, label
normalisation and prediction cache, and score the predictions."""

from __future__ import annotations

from pathlib import Path

from ....core.config import Config
from ....core.progress import progress_bar
from ....evaluation.intervals import Settings, compare_versions
from .data import EvalSet, load_eval_set
from .metrics.nli_scores import HEADLINE
from .results import Judge, score_models


def predict(
    eval_set: EvalSet,
    model: str,
    config: Config,
    cache_path: Path | None,
    spec=None,
    runtimes: dict | None = None,
    asked: dict | None = None,
) -> list[str]:
    """The label `model` predicts for each row; `asked` gets, for a causal LM, how it was asked."""
    how = {"config": config, "cache_path": cache_path, "spec": spec, "runtimes": {} if runtimes is None else runtimes}
    judge = open_judge(model, how)
    labels = judge.run([(r["premise"], r["hypothesis"]) for r in eval_set.rows], eval_set.config, None)
    if asked is not None and judge.asked is not None:
        asked[model] = judge.asked
        if "unparseable" in judge.asked:  # asked by generation: None is no answer word
            judge.asked["unparseable"] = labels.count(None)
    return labels


def open_judge(name: str, how: dict):
    """An NLI model as workbench runs it (a `results.Judge`, as kinds/nli/evaluate.py runs it): its labels checked
    with the project's overrides before any weights load, its predictions cached in
    `how["cache_path"]` (None: --no-cache, nothing kept), how it ran recorded in `how["runtimes"]`,
    and for a causal LM how it was asked (the release's own [llm] where it has one)."""
    from contextlib import contextmanager

    from ....core.cache import Cache
    from ..classifier import classifier_factory, predict_labels, resolve_classifiers
    from ..settings import filter_settings, llm_asking

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
            return predict_labels(cache, ref, pairs, factory, progress_bar if progress is None else advancing)
        finally:
            cache.close()

    judge.run = run
    return judge


def evaluate_datasets(
    specs: list[str],
    models: list[str],
    config: Config,
    cache_path: Path,
    load=None,
    runtimes: dict | None = None,
    intervals: Settings | None = None,
    names: dict[str, str] | None = None,
) -> list[dict]:
    """`load`: the model options (models.runtime.LoadSpec); `runtimes` gets how each model ran;
    `names`: what a data set is called instead of its path (one written for the comparison)."""
    results, overall = [], []
    for spec in specs:
        eval_set = load_eval_set(spec)
        if names and spec in names:
            eval_set.source = names[spec]
        overall.append({})
        asked: dict[str, dict] = {}
        results.append(
            score_models(
                eval_set,
                models,
                lambda model: predict(eval_set, model, config, cache_path, load, runtimes, asked),
                intervals=intervals,
                overall=overall[-1],
            )
        )
        for model, how in asked.items():  # an LLM judge: the JSON says how it was asked
            results[-1]["models"][model]["asked"] = how
            if how.get("unparseable"):  # said in the terminal too (the evaluator prints the notes)
                results[-1]["notes"].append(
                    f"{model}: {how['unparseable']} of {len(eval_set.rows)} generated answers "
                    f"are unparseable: {how['unparseable_rule']}"
                )
    settings = intervals or Settings()
    for i in range(1, len(results)):  # each data set against the one before it (versions side by side)
        if settings.resamples > 0:
            labels = (results[i - 1]["dataset"], results[i]["dataset"])
            results[i]["uncertainty"]["versions"] = [
                compare_versions(overall[i - 1][m], overall[i][m], HEADLINE, settings, m, labels) for m in models
            ]
    return results
