"""Stage `fluency`: a triage score for each unique hypothesis that reaches the queue.

Fluency is a triage score for the people labelling (the queue can be ordered by it), so it is
computed after adversarial filtering, for unique adversarial hypotheses only — not for every
kept candidate. `[fluency] scorer` picks how (see `settings.FluencySection`):

- `pll` (default): the masked LM's pseudo-log-likelihood, one masked copy per token (the
  [generate] model unless `[fluency] model` names another); the fills of one masked
  hypothesis share the copy masked at the fill, so texts are scored grouped by it;
- `causal`: a causal LM's log-probability of the text (BOS prepended), one pass per text.

Scores are cached by scorer, model revision and text, so reruns and interrupted runs cost
only what is new. The table's `pll` column holds the text's log-likelihood under the scorer
(`scorer` says which), `pll_per_token` the same per scored token.
"""

from __future__ import annotations

import dataclasses

from ....core.cache import cached_or_computed
from ....core.errors import ModelError
from ....core.stage import Output, Stage
from ....models.loading import runtime_for
from ....models.runtime import keyed_revision
from ..settings import fluency_settings
from ..tables import fluency_schema

NAMESPACE = "pll"
CAUSAL_NAMESPACE = "fluency-causal"
CHUNK = 1024  # texts per committed cache write: whole groups of fills share masked rows within one


def chosen(config) -> dict:
    """The scorer, model, revision, batch size and device the stage uses, defaults resolved."""
    fl, gen = fluency_settings(config), config.generate
    own = fl.model is not None
    return {
        "scorer": fl.scorer,
        "model": fl.model if own else gen.model,
        "revision": fl.revision if own else gen.revision,
        "field": "fluency.model" if own else "generate.model",
        "batch_size": fl.batch_size or gen.batch_size,
        "device": fl.device or gen.device,
        "dtype": fl.dtype or gen.dtype,
        "device_map": fl.device_map or gen.device_map,
    }


def spec_of(c: dict):
    """The model options `chosen` resolved, as the spec the scorer loads with."""
    from ....models.runtime import LoadSpec

    return LoadSpec(
        device=c["device"], dtype=c["dtype"] or "auto", batch_size=c["batch_size"], device_map=c["device_map"]
    )


def score_order(filtered) -> list[str]:
    """The unique adversarial hypotheses, grouped by the masked hypothesis they were filled
    from (the fills of one share the masked copy at the fill), then by text."""
    rows = filtered.filter(filtered["adversarial"]).select(["masked_hypothesis", "hypothesis"]).to_pylist()
    first: dict[str, str] = {}
    for r in rows:
        text, masked = r["hypothesis"], r["masked_hypothesis"] or ""
        if text not in first or masked < first[text]:
            first[text] = masked
    return sorted(first, key=lambda t: (first[t], t))


class Fluency(Stage):
    name = "fluency"
    upstream = ("filter",)
    format = 2
    reads_models = True
    sort_keys = [("hypothesis_id", "ascending")]

    def schema(self):
        return fluency_schema()

    def settings(self, ctx):
        c = chosen(ctx.config)
        return {"scorer": c["scorer"], "model": c["model"], "revision": c["revision"]}

    def external_inputs(self, ctx):
        from ....models.loading import fingerprint

        c = chosen(ctx.config)
        return {f"model:{c['model']}": fingerprint(c["model"], c["revision"], ctx.config.root)}

    def compute(self, ctx, inputs, reused) -> Output:
        import pyarrow as pa

        from ....models.loading import resolve

        filtered = inputs["filter"]
        adversarial = filtered.filter(filtered["adversarial"]).select(["hypothesis_id", "hypothesis"])
        unique = adversarial.group_by(["hypothesis_id", "hypothesis"]).aggregate([]).sort_by("hypothesis_id")
        texts = unique["hypothesis"].to_pylist()
        c = chosen(ctx.config)
        try:
            ref = resolve(c["model"], c["revision"], root=ctx.config.root)
        except ModelError as exc:
            raise ModelError(f"{ctx.config.at(c['field'])}: {exc}") from None
        state: dict = {}
        if c["scorer"] == "pll":
            namespace, label = NAMESPACE, "fluency (PLL)"

            def compute(chunk, advance):
                if "lm" not in state:
                    from ....models.loading import load
                    from ....models.mlm import MaskedLM

                    tok, mdl, device = load(ref, "mlm", spec_of(c))
                    state["lm"] = MaskedLM(ref, tok, mdl, device, c["batch_size"])
                return {t: list(v) for t, v in state["lm"].pseudo_log_likelihood(chunk, progress=advance).items()}
        else:
            namespace, label = CAUSAL_NAMESPACE, "fluency (causal LM)"

            def compute(chunk, advance):
                if "lm" not in state:
                    state["lm"] = causal_scorer(ref, c, ctx.config)
                rows = state["lm"].text_logprobs(chunk, "prepend")
                advance(sum(len(r) for r in rows))
                return {t: [sum(r), len(r)] for t, r in zip(chunk, rows)}

        keyed = dataclasses.replace(
            ref, revision=keyed_revision(ref, runtime_for(ref, "mlm" if c["scorer"] == "pll" else "causal", spec_of(c)))
        )
        plls, computed = cached_or_computed(
            ctx.cache,
            namespace,
            keyed,
            score_order(filtered),
            compute,
            label,
            unit_total=lambda ts: sum(max(1, len(t.split())) for t in ts),
            chunk=CHUNK,
        )
        totals = [plls[t][0] for t in texts]
        counts = [plls[t][1] for t in texts]
        table = pa.table(
            {
                "hypothesis_id": unique["hypothesis_id"],
                "hypothesis": unique["hypothesis"],
                "scorer": pa.array([c["scorer"]] * len(texts), pa.string()),
                "pll": pa.array(totals, pa.float64()),
                "n_tokens": pa.array(counts, pa.int64()),
                "pll_per_token": pa.array([t / n if n else None for t, n in zip(totals, counts)], pa.float64()),
            },
            schema=fluency_schema(),
        )
        return Output(
            table,
            {"hypotheses": table.num_rows, "computed_pll": computed, "model_loaded": "lm" in state},
            {"model": {"name": ref.name, "revision": ref.revision, "scorer": c["scorer"]}},
        )

    def counts(self, ctx, table, inputs, work):
        return dict(work)


def causal_scorer(ref, c: dict, config):
    """The `causal` scorer's model: a causal LM through the shared scoring layer (no cache of
    its own: the stage caches whole-text scores)."""
    from ....models.lm_scoring import open_scorer
    from ....models.loading import FIXTURE_HINT

    scorer = open_scorer(ref, spec_of(c), None, hint=FIXTURE_HINT)
    if scorer.kind != "causal":
        raise ModelError(
            f"{config.at(c['field'])}: [fluency] scorer = 'causal' needs a causal LM, but {ref.name!r} "
            "is a masked LM (use scorer = 'pll' for it)"
        )
    return scorer


STAGE = Fluency()
