"""Stage `queue`: adversarial samples -> the annotation queue of unique hypotheses.

People validate unique generated hypotheses, not samples (BBNLI-next validated ~5K unique
hypotheses for 14.5K samples): one item per hypothesis_id, deduplicated across premises and
word bindings; its label later applies to every sample that carries it. The table is
precomputed so the labelling UI starts fast on tens of thousands of items.
"""

from __future__ import annotations

from collections import defaultdict

from .... import languages
from ....core.stage import Output, Stage
from ..tables import queue_schema


def _short(model: str) -> str:
    return model.rstrip("/").split("/")[-1]


def build_items(
    rows: list[dict],
    fluency: dict[str, float] | None = None,
    grammar: dict[str, list[str]] | None = None,
    language=None,
) -> list[dict]:
    """One item per unique adversarial hypothesis; `fluency` maps hypothesis_id to its
    pseudo-log-likelihood per token (the `fluency` stage); `grammar` maps sample_id to the notes
    expand left where agreement with a swapped group was not settled. With a `language`, the
    item's counterfactual is built as the release will build it, and its notes join them: the
    annotator reads them as "grammar" lines beside the hypothesis."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        if r["adversarial"]:
            groups[r["hypothesis_id"]].append(r)
    items = []
    for hid, members in groups.items():
        first = members[0]
        premises = list(dict.fromkeys(m["premise"] for m in members))
        fooled: dict[str, dict] = {}
        for m in members:
            for p in m["predictions"]:
                f = fooled.setdefault(
                    _short(p["model"]), {"fooled": 0, "of": 0, "labels": defaultdict(int), "max_prob": 0.0}
                )
                f["of"] += 1
                if p["label"] != "neutral":
                    f["fooled"] += 1
                    f["labels"][p["label"]] += 1
                    f["max_prob"] = max(f["max_prob"], p["probs"][p["label"]])
        summary = [
            {
                "model": name,
                "fooled": v["fooled"],
                "of": v["of"],
                "labels": dict(sorted(v["labels"].items())),
                "max_prob": round(v["max_prob"], 3),
            }
            for name, v in sorted(fooled.items())
        ]
        stances = sorted({m["stance"] for m in members})
        notes = list(dict.fromkeys(n for m in members for n in (grammar or {}).get(m["sample_id"]) or ()))
        if language is not None:
            notes += [n for n in counterfactual_notes(first, language) if n not in notes]
        items.append(
            {
                "item_id": hid,
                "hypothesis": first["hypothesis"],
                "fill": first["fill"],
                "fill_spans": first["fill_spans"],
                "masked_template": first["hypothesis_template"],
                "masked_hypothesis": first["masked_hypothesis"],
                "group": first["group"],
                "counterfactual_group": first["counterfactual_group"],
                "domain": first["domain"],
                "subtopic": first["subtopic"],
                "template_id": first["template_id"],
                "hypothesis_index": first["hypothesis_index"],
                "stance": stances[0] if len(stances) == 1 else "mixed",
                "premises": premises,
                "fooled": summary,
                "n_samples": len(members),
                "fluency": (fluency or {}).get(hid),
                "details": [{"label": "grammar", "text": n} for n in notes],
            }
        )
    items.sort(key=lambda i: (i["domain"], i["subtopic"], i["template_id"], i["hypothesis_index"], i["hypothesis"]))
    for position, item in enumerate(items):
        item["position"] = position
    return items


def counterfactual_notes(row: dict, language) -> list[str]:
    """The notes of the counterfactual the release will build from this sample (its text named)."""
    from ..templates.counterfactual import counterfactual_with_notes, written_groups
    from ..tables import bindings_dict

    text, notes = counterfactual_with_notes(
        row["hypothesis_template"],
        bindings_dict(row["bindings"]),
        row["groups"],
        list(row["fill"]),
        language,
        written_groups(row),
    )
    return [f"counterfactual {text!r}: {n}" for n in notes]


class Queue(Stage):
    name = "queue"
    upstream = ("filter", "fluency", "expand")
    optional_upstream = ("fluency",)  # `annotations stats` before `run`: items without fluency
    format = 3  # 3: grammar notes as detail lines

    def schema(self):
        return queue_schema()

    def settings(self, ctx):
        return languages.freshness(ctx.config)

    def compute(self, ctx, inputs, reused) -> Output:
        import pyarrow as pa
        import pyarrow.compute as pc

        filtered = inputs["filter"]
        rows = filtered.filter(filtered["adversarial"]).to_pylist() if pc.any(filtered["adversarial"]).as_py() else []
        fl = inputs["fluency"]
        fluency = dict(zip(fl["hypothesis_id"].to_pylist(), fl["pll_per_token"].to_pylist()))
        expanded = inputs["expand"]
        grammar = {}
        if "grammar" in expanded.column_names:
            grammar = {s: n for s, n in zip(expanded["sample_id"].to_pylist(), expanded["grammar"].to_pylist()) if n}
        language = languages.require(ctx.config.project.language, "queue (the counterfactuals' agreement rules)")
        return Output(pa.Table.from_pylist(build_items(rows, fluency, grammar, language), schema=queue_schema()))

    def counts(self, ctx, table, inputs, work):
        import pyarrow.compute as pc

        return {"items": table.num_rows, "samples": pc.sum(table["n_samples"]).as_py() or 0}


STAGE = Queue()
