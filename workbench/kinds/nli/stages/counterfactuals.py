"""Stage `counterfactuals`: validated samples -> release samples with their group counterfactuals.

For every adversarial sample whose hypothesis was finally labelled valid (under the
annotation policy), the release keeps the sample (stance as the annotators labelled it) and
adds its group counterfactual: the group swapped in the hypothesis only, the premise
unchanged, the other stance. Counterfactuals are always included, without filtering (as in
BBNLI-next). When the counterfactual is itself a kept sample, the two are paired instead.
"""

from __future__ import annotations

import json

from .... import languages
from ....core.errors import StageError
from ....core.ids import normalise_text, short_hash
from ....core.stage import Output, Stage
from ..tables import bindings_dict, bindings_text, release_schema
from ....authoring.validated import label_file_inputs
from ..templates.counterfactual import counterfactual_with_notes, sentence_case, written_groups


def _key(premise: str, hypothesis: str) -> tuple[str, str]:
    return premise, normalise_text(hypothesis).lower()


def build_release_rows(rows: list[dict], finals: dict, language=None) -> tuple[list[dict], dict]:
    valid = []
    for r in rows:
        final = finals.get(r["hypothesis_id"])
        if r["adversarial"] and final is not None and final.kept:
            valid.append((r, final.stance))
    valid.sort(
        key=lambda v: (
            v[0]["domain"],
            v[0]["subtopic"],
            v[0]["template_id"],
            v[0]["premise_index"],
            v[0]["hypothesis_index"],
            bindings_text(v[0]["bindings"]),
            v[0]["stance"],
            v[0]["fill_rank"],
        )
    )
    by_key = {}
    for r, stance in valid:
        by_key.setdefault(_key(r["premise"], r["hypothesis"]), (r, stance))
    out: list[dict] = []
    paired: dict[tuple, str] = {}
    counts = {
        "validated_samples": len(by_key),
        "counterfactuals_added": 0,
        "paired_with_existing": 0,
        "unpaired": 0,
        "counterfactuals_noted": 0,
    }

    def row(r, hypothesis, stance, pair_id, is_cf, notes=()):
        provenance = {
            "template_id": r["template_id"],
            "candidate_id": r["candidate_id"],
            "hypothesis_id": r["hypothesis_id"],
            "fill": " | ".join(r["fill"]),
            "mlm_rank": r["fill_rank"],
            "mlm": r["mlm_name"],
            "mlm_revision": r["mlm_revision"],
            "fooled_by": list(r["fooled_by"]),
            "masked_template": r["hypothesis_template"],
            **({"grammar": list(notes)} if notes else {}),
        }  # where the parse left agreement unsettled
        premise = sentence_case(r["premise"])  # as hypotheses are (expand writes them so since its format 4)
        return {
            "id": short_hash(premise, hypothesis, stance),
            "premise": premise,
            "hypothesis": hypothesis,
            "label": "neutral",
            "stance": stance,
            "domain": r["domain"],
            "subtopic": r["subtopic"],
            "pair_id": pair_id,
            "is_counterfactual": is_cf,
            "provenance": json.dumps(provenance, sort_keys=True, ensure_ascii=False),
        }

    for key, (r, stance) in by_key.items():
        if key in paired:
            continue  # already the counterfactual partner of an earlier sample
        hypothesis = sentence_case(r["hypothesis"])
        cf_text, notes = counterfactual_with_notes(
            r["hypothesis_template"],
            bindings_dict(r["bindings"]),
            r["groups"],
            list(r["fill"]),
            language,
            written_groups(r),
        )
        if cf_text is None:
            out.append(row(r, hypothesis, stance, None, False))
            counts["unpaired"] += 1
            continue
        pair_id = short_hash("pair", r["candidate_id"])
        other = "anti" if stance == "pro" else "pro"
        out.append(row(r, hypothesis, stance, pair_id, False))
        cf_key = _key(r["premise"], cf_text)
        if cf_key in by_key and cf_key not in paired and cf_key != key:
            partner, _partner_stance = by_key[cf_key]
            out.append(row(partner, sentence_case(partner["hypothesis"]), other, pair_id, False))
            counts["paired_with_existing"] += 1
        else:
            out.append(row(r, cf_text, other, pair_id, True, notes))
            counts["counterfactuals_added"] += 1
            counts["counterfactuals_noted"] += bool(notes)
        paired[key] = paired[cf_key] = pair_id
    counts["release_samples"] = len(out)
    return out, counts


class Counterfactuals(Stage):
    name = "counterfactuals"
    upstream = ("filter", "queue")
    format = 3  # 3: agreement by syntax, written groups, grammar notes in the provenance

    def schema(self):
        return release_schema()

    def settings(self, ctx):
        return {
            **{
                k: v
                for k, v in ctx.config.annotation.model_dump().items()
                if k in ("policy", "min_votes", "adjudicator")
            },
            **languages.freshness(ctx.config),
        }

    def external_inputs(self, ctx):
        return label_file_inputs(ctx)

    def compute(self, ctx, inputs, reused) -> Output:
        import pyarrow as pa

        from ....annotation.summary import final_labels_for
        from ..scheme import NLI_SCHEME

        language = languages.require(ctx.config.project.language, "counterfactuals (their agreement rules)")
        labels = final_labels_for(ctx.config, inputs["queue"]["item_id"].to_pylist(), NLI_SCHEME)
        filtered = inputs["filter"]
        rows, counts = build_release_rows(filtered.filter(filtered["adversarial"]).to_pylist(), labels.finals, language)
        statuses: dict[str, int] = {}
        for f in labels.finals.values():
            key = f.category if f.status == "final" else f.status
            statuses[key] = statuses.get(key, 0) + 1
        counts["item_labels"] = dict(sorted(statuses.items()))
        if not rows:
            raise StageError(
                "no validated samples yet: label items valid with `workbench annotate` first "
                f"(labels so far: {counts['item_labels']})"
            )
        counts["warnings"] = len(labels.warnings)
        return Output(
            pa.Table.from_pylist(rows, schema=release_schema()), counts, {"policy": ctx.config.annotation.policy}
        )

    def counts(self, ctx, table, inputs, work):
        return dict(work)


STAGE = Counterfactuals()
