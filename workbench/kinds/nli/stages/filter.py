"""Stage `filter`: adversarial filtering of candidates with NLI models.

Every kept candidate's (premise, hypothesis) pair goes through every filter model. All
samples are neutral by construction, so a model is "fooled" when it predicts anything but
neutral; a candidate is kept when at least `filter.min_fooled` models are fooled (BBNLI-next
used 1 of 3). Every model's label and probabilities are stored for every pair, kept or not.
Held-out evaluation models (`evaluate.models`) are never used here.
"""

from __future__ import annotations

from ....core.errors import StageError
from ....core.ids import json_hash
from ....core.progress import progress_bar
from ....core.stage import Output, Stage
from ..settings import filter_settings
from ..tables import CANDIDATE_ORDER, filter_schema


class Filter(Stage):
    name = "filter"
    upstream = ("generate",)
    format = 2
    partition_key = "template_id"
    partition_noun = "templates"
    sort_keys = CANDIDATE_ORDER
    reads_models = True

    def schema(self):
        return filter_schema()

    def settings(self, ctx):
        filter_settings(ctx.config)  # validated, defaults filled in
        return ctx.config.section_hash("filter", "llm")  # [llm]: how a causal LM among the models is asked

    def external_inputs(self, ctx):
        from ....models.loading import fingerprint

        return {f"model:{n}": fingerprint(n, None, ctx.config.root) for n in filter_settings(ctx.config).models}

    def _kept(self, inputs):
        generated = inputs["generate"]
        kept = generated.filter(generated["kept"])
        if kept.num_rows == 0:
            raise StageError("generation kept no candidates: nothing to filter (see `workbench stats`)")
        return kept

    def partitions(self, ctx, inputs):
        per: dict[str, list] = {}
        for r in self._kept(inputs).select(["template_id", "candidate_id", "premise", "hypothesis"]).to_pylist():
            per.setdefault(r["template_id"], []).append((r["candidate_id"], r["premise"], r["hypothesis"]))
        return {t: json_hash(sorted(v)) for t, v in per.items()}

    def models(self, ctx):
        from ..classifier import resolve_classifiers

        config = ctx.config
        return resolve_classifiers(
            filter_settings(config).models,
            root=config.root,
            overrides=filter_settings(config).label_overrides,
            where=lambda i: config.at(f"filter.models[{i}]"),
        )

    def compute(self, ctx, inputs, reused) -> Output:
        import pyarrow as pa
        import pyarrow.compute as pc

        from ....models.runtime import section_spec
        from ..classifier import classifier_factory, pair_key, predict_with_cache
        from ..served_judge import refuse_in_filter
        from ..settings import llm_asking

        fc = filter_settings(ctx.config)
        asking = llm_asking(ctx.config)
        models = self.models(ctx)
        model_info = [judge_info(ref, labels, asking) for ref, labels in models]
        kept = self._kept(inputs)
        if reused:
            kept = kept.filter(pc.invert(pc.is_in(kept["template_id"], value_set=pa.array(sorted(reused)))))
        todo = kept.to_pylist()  # only the templates to filter again become Python rows
        pairs = [(r["premise"], r["hypothesis"]) for r in todo]
        per_model, computed = {}, {}
        if todo:
            for ref, labels in models:
                factory = classifier_factory(ref, labels, fc.batch_size, section_spec(fc), asking)
                refuse_in_filter(factory)  # a served model asked by generation may leave a pair without a label
                preds, computed[ref.name] = predict_with_cache(ctx.cache, ref, pairs, factory, progress_bar)
                per_model[ref.name] = preds
        for r in todo:
            key = pair_key(r["premise"], r["hypothesis"])
            predictions = [
                {"model": name, "label": per_model[name][key].label, "probs": per_model[name][key].probs}
                for name in per_model
            ]
            fooled = [p["model"] for p in predictions if p["label"] != "neutral"]
            r.update(
                predictions=predictions,
                fooled_by=fooled,
                n_fooled=len(fooled),
                adversarial=len(fooled) >= fc.min_fooled,
            )
        table = pa.Table.from_pylist(todo, schema=filter_schema()) if todo else None
        work = {"computed_pairs": {ref.name: computed.get(ref.name, 0) for ref, _ in models}}
        return Output(table, work, {"models": model_info, "min_fooled": fc.min_fooled})

    def counts(self, ctx, table, inputs, work):
        import pyarrow.compute as pc

        fooled_lists = table["fooled_by"]
        flat = pc.list_flatten(fooled_lists)
        per_model = {r["values"]: r["counts"] for r in pc.value_counts(flat).to_pylist()} if len(flat) else {}
        histogram = {r["values"]: r["counts"] for r in pc.value_counts(table["n_fooled"]).to_pylist()}
        unique = table.select(["premise", "hypothesis"]).group_by(["premise", "hypothesis"]).aggregate([]).num_rows
        return {
            "candidates": table.num_rows,
            "unique_pairs": unique,
            "kept": pc.sum(table["adversarial"]).as_py() or 0,
            "fooled_per_model": {name: per_model.get(name, 0) for name in work["computed_pairs"]},
            "computed_pairs": work["computed_pairs"],
            "n_fooled_histogram": dict(sorted(histogram.items())),
        }


def judge_info(ref, labels: list[str], asking) -> dict:
    """How a filter model was asked, for the manifest and the card: a classifier by its labels (as
    before, so a release's record of its models stays the same); a causal LM (local or served: the
    filter asks both by log-likelihood) by its kind, prompt, answer words and chat template."""
    from ..classifier import _served_judge, is_causal_lm

    if not is_causal_lm(ref):
        return {"name": ref.name, "revision": ref.revision, "labels": labels}
    where = "served" if _served_judge(ref.name) is not None else "causal LM"
    return {
        "name": ref.name,
        "revision": ref.revision,
        "judge": f"{where}, by log-likelihood",
        "asked": asking.describe(),
    }


STAGE = Filter()
