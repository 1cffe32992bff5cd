"""The stereoset kind's stages: CAT templates -> sentences -> the validators' queue -> released CATs.

expand     one row per option a CAT needs: the writer's sentence with its gold label, or an
           open slot (no sentence) where the writer left the option to the masked LM
propose    the writer's sentences, plus the masked LM's top-k words for BLANK in every CAT
           with an open slot, each with its rank, score, model and revision, and the reason
           when a filter rejects it (the nli kind's `generate` filters; `pos` has nothing
           to check, as BLANK carries no part-of-speech constraint)
queue      one item per sentence for the validators (the writer's label is not shown)
validated  the release rows: StereoSet's rule (a sentence is kept when at least `need` of
           its validators agree with the writer's gold label) and only CATs that keep all
           three labels, one sentence each
"""

from __future__ import annotations

from collections import Counter

from ...core.ids import joined_key, json_hash, normalise_text
from ...core.stage import Output, Stage
from ...models.proposer import UsesProposalModel
from ...authoring.files import ReadsTemplateFiles
from ...authoring.validated import label_file_inputs
from .scheme import GOLD, SCHEME
from .templates import BLANK, fill_blank, sentence_id

MASK = "<mask>"
# StereoSet kept a sentence when at least 3 of its 5 validators agreed with the writer's label.
STEREOSET_MIN_VOTES = 3
STEREOSET_VALIDATORS = 5
ORDER = [
    ("domain", "ascending"),
    ("subtopic", "ascending"),
    ("template_id", "ascending"),
    ("context_index", "ascending"),
    ("target_index", "ascending"),
]


def _pa():
    import pyarrow as pa

    return pa


def _cat_fields():
    pa = _pa()
    return [
        ("cat_id", pa.string()),
        ("template_id", pa.string()),
        ("domain", pa.string()),
        ("subtopic", pa.string()),
        ("split", pa.string()),
        ("target", pa.string()),
        ("context", pa.string()),
        ("context_index", pa.int32()),
        ("target_index", pa.int32()),
        ("gold_label", pa.string()),  # the writer's label; None for a masked-LM proposal
        ("option", pa.string()),  # the words in place of BLANK, or the continuation
        ("sentence", pa.string()),
        ("sentence_id", pa.string()),
        ("option_start", pa.int32()),
        ("option_end", pa.int32()),  # intrasentence: where the option sits
    ]


def _provenance_fields():
    pa = _pa()
    return [
        ("source", pa.string()),
        ("mlm_rank", pa.int32()),
        ("mlm_score", pa.float64()),
        ("mlm_name", pa.string()),
        ("mlm_revision", pa.string()),
    ]


def expand_schema():
    return _pa().schema(_cat_fields())


def propose_schema():
    pa = _pa()
    return pa.schema(_cat_fields() + _provenance_fields() + [("reject_reason", pa.string()), ("kept", pa.bool_())])


def queue_schema():
    pa = _pa()
    return pa.schema(
        [
            ("item_id", pa.string()),
            ("hypothesis", pa.string()),
            ("domain", pa.string()),
            ("subtopic", pa.string()),
            ("template_id", pa.string()),
            ("position", pa.int64()),
            ("group", pa.string()),
            ("masked_template", pa.string()),
            ("premises", pa.list_(pa.string())),
            ("fill_spans", pa.list_(pa.list_(pa.int64()))),
            *[f for f in _cat_fields() if f[0] not in ("domain", "subtopic", "template_id")],
            *_provenance_fields(),
        ]
    )


def validated_schema():
    pa = _pa()
    vote = pa.struct([("annotator", pa.string()), ("label", pa.string())])
    return pa.schema([*queue_schema(), ("label", pa.string()), ("votes", pa.list_(vote)), ("agree", pa.int32())])


# -- expand ----------------------------------------------------------------------------------------------
class Expand(ReadsTemplateFiles, Stage):
    """CAT templates -> one row per option each CAT needs (written, or open for the masked LM)."""

    name = "expand"
    sort_keys = ORDER + [("gold_label", "ascending")]

    def schema(self):
        return expand_schema()

    def compute(self, ctx, inputs, reused) -> Output:
        from .templates import load_templates_or_fail

        templates, warnings = load_templates_or_fail([self.folder(ctx)])
        rows = expand_rows(templates)
        return Output(
            _pa().Table.from_pylist(rows, schema=expand_schema()),
            {"templates": len(templates), "warnings": len(warnings)},
        )

    def counts(self, ctx, table, inputs, work):
        rows = table.select(["cat_id", "split", "sentence"]).to_pylist()
        written = [r for r in rows if r["sentence"] is not None]
        open_cats = {r["cat_id"] for r in rows if r["sentence"] is None}
        by_split = Counter(r["split"] for r in {r["cat_id"]: r for r in rows}.values())
        # In StereoSet's words (no NLI masked samples); `samples` stays only because `workbench expand`
        # names it when the stage is up to date (cli/pipeline.py).
        return {
            "templates": work["templates"],
            "cats": len({r["cat_id"] for r in rows}),
            "sentences": len(written),
            "open_slots": len(rows) - len(written),
            "cats_to_propose": len(open_cats),
            "samples": len(written),
            "by_split": dict(sorted(by_split.items())),
            "warnings": work["warnings"],
        }


def expand_rows(templates) -> list[dict]:
    rows = []
    for t in templates:
        for cat in t.cats():
            base = {
                "cat_id": cat.id,
                "template_id": t.id,
                "domain": t.domain,
                "subtopic": t.subtopic,
                "split": t.split,
                "target": cat.target,
                "context": cat.context,
                "context_index": cat.context_spec.index,
                "target_index": t.targets.index(cat.target),
            }
            for gold in GOLD:
                option = cat.options.get(gold)
                row = {
                    **base,
                    "gold_label": gold,
                    "option": option,
                    "sentence": None,
                    "sentence_id": None,
                    "option_start": None,
                    "option_end": None,
                }
                if option is not None:
                    if t.split == "intrasentence":
                        sentence, (a, b) = fill_blank(cat.context, option)
                        row.update(option=sentence[a:b], option_start=a, option_end=b)
                    else:
                        sentence = option
                    row.update(sentence=sentence, sentence_id=sentence_id(cat.id, sentence))
                rows.append(row)
    return rows


# -- propose ---------------------------------------------------------------------------------------------
class Propose(UsesProposalModel, Stage):
    """The writer's sentences, and masked-LM proposals for every CAT with an open slot.

    The model is loaded only when some CAT has an open slot; fills are cached by (model,
    revision, text, k) in the cache `generate` uses, so a rerun computes only new contexts."""

    name = "propose"
    upstream = ("expand",)
    partition_key = "template_id"
    partition_noun = "templates"
    reads_models = True
    sort_keys = ORDER + [("source", "descending"), ("mlm_rank", "ascending"), ("sentence_id", "ascending")]

    def schema(self):
        return propose_schema()

    def partitions(self, ctx, inputs):
        per: dict[str, list] = {}
        for r in inputs["expand"].to_pylist():
            per.setdefault(r["template_id"], []).append(sorted(r.items()))
        return {t: json_hash(sorted(v, key=json_hash)) for t, v in per.items()}

    def compute(self, ctx, inputs, reused) -> Output:
        import pyarrow.compute as pc

        pa = _pa()
        expanded = inputs["expand"]
        if reused:
            expanded = expanded.filter(pc.invert(pc.is_in(expanded["template_id"], value_set=pa.array(sorted(reused)))))
        rows = expanded.to_pylist()
        out = [
            {
                **r,
                "source": "writer",
                "mlm_rank": None,
                "mlm_score": None,
                "mlm_name": None,
                "mlm_revision": None,
                "reject_reason": None,
                "kept": True,
            }
            for r in rows
            if r["sentence"] is not None
        ]
        open_cats = {r["cat_id"]: r for r in rows if r["sentence"] is None}
        work = {"computed_fills": 0, "model_loaded": False}
        extra = {}
        previous = ctx.workspace.manifest(self.name) or {}
        if reused and previous.get("model"):
            # Reused templates keep their proposals: the model that made them stays on record.
            extra = {"model": previous["model"], "top_k": previous.get("top_k")}
        if open_cats:
            gen = self.section(ctx)
            written: dict[str, set[str]] = {}
            for r in out:
                written.setdefault(r["cat_id"], set()).add(normalise_text(r["sentence"]).lower())
            proposals, work, ref = _proposals(ctx, gen, self.model_ref(ctx, gen), list(open_cats.values()), written)
            out += proposals
            extra = {"model": {"name": ref.name, "revision": ref.revision}, "top_k": gen.top_k}
        table = pa.Table.from_pylist(out, schema=propose_schema()) if out else None
        return Output(table, work, extra)

    def counts(self, ctx, table, inputs, work):
        rows = table.select(["cat_id", "source", "kept", "reject_reason"]).to_pylist()
        mlm = [r for r in rows if r["source"] == "mlm"]
        reasons = Counter(r["reject_reason"] for r in mlm if r["reject_reason"])
        return {
            "cats": len({r["cat_id"] for r in rows}),
            "written": sum(r["source"] == "writer" for r in rows),
            "proposed": len(mlm),
            "proposals_kept": sum(r["kept"] for r in mlm),
            "rejected_by_reason": dict(sorted(reasons.items())),
            "sentences": sum(r["kept"] for r in rows),
            **work,
        }


def _proposals(ctx, gen, ref, open_rows: list[dict], written: dict[str, set[str]]) -> tuple[list[dict], dict, object]:
    """Top-k words for BLANK in each open CAT (one row each), as candidate sentences with
    provenance; `written` holds each CAT's written sentences (normalised, lower case)."""
    from ... import languages
    from ...core.cache import cached_or_computed
    from ...core.ids import split_key
    from ...models.proposer import LazyMaskedLM
    from ..nli.templates import fills as F

    language = languages.require(
        ctx.config.project.language, "stereoset's proposals (their group-word and number rules)"
    )
    model = LazyMaskedLM(ref, gen)

    k = gen.top_k
    texts = sorted({r["context"].replace(BLANK, MASK) for r in open_rows})

    def compute_fills(chunk_keys, advance):
        chunk_texts = [split_key(key)[1] for key in chunk_keys]
        result = model().fill(chunk_texts, k, progress=advance)
        return {key: [f.__dict__ for f in result[t]] for key, t in zip(chunk_keys, chunk_texts)}

    fills, computed = cached_or_computed(
        ctx.cache, "fill", ref, [joined_key(k, t) for t in texts], compute_fills, "propose options"
    )
    enabled = set(gen.filters)
    targets: dict[str, set[str]] = {}
    rows = []
    for r in open_rows:
        groups = targets.setdefault(r["target"], F.group_words(r["target"], language=language))
        seen = set(written.get(r["cat_id"], ()))
        for f in fills[joined_key(k, r["context"].replace(BLANK, MASK))]:
            word = f["words"][0]
            sentence, (a, b) = fill_blank(r["context"], word)
            # No article mending here: the sentence must equal its context outside the blank.
            filled = F.Filled(sentence, [(a, b)], False)
            reason = F.first_enabled_reason(
                word, f["tokens"][0], f["word_start"][0], filled, 0, groups, enabled, language
            )
            key = normalise_text(sentence).lower()
            if reason is None and "duplicate" in enabled and key in seen:
                reason = "duplicate"
            seen.add(key)
            rows.append(
                {
                    **r,
                    "gold_label": None,
                    "option": sentence[a:b],
                    "sentence": sentence,
                    "sentence_id": sentence_id(r["cat_id"], sentence),
                    "option_start": a,
                    "option_end": b,
                    "source": "mlm",
                    "mlm_rank": f["rank"],
                    "mlm_score": _exp(f["logprob"]),
                    "mlm_name": ref.name,
                    "mlm_revision": ref.revision,
                    "reject_reason": reason,
                    "kept": reason is None,
                }
            )
    return rows, {"computed_fills": computed, "model_loaded": model.loaded}, ref


def _exp(logprob: float) -> float:
    import math

    return math.exp(logprob)


# -- queue -----------------------------------------------------------------------------------------------
class Queue(Stage):
    """One item per kept sentence; a CAT's sentences in hash order, so position reveals no label."""

    name = "queue"
    upstream = ("propose",)

    def schema(self):
        return queue_schema()

    def compute(self, ctx, inputs, reused) -> Output:
        proposed = inputs["propose"]
        unique: dict[str, dict] = {}
        for r in proposed.filter(proposed["kept"]).to_pylist():
            # With the duplicate filter off a proposal may repeat a written sentence: the writer's row wins.
            if r["sentence_id"] not in unique or r["source"] == "writer":
                unique[r["sentence_id"]] = r
        rows = list(unique.values())
        rows.sort(
            key=lambda r: (
                r["domain"],
                r["subtopic"],
                r["template_id"],
                r["context_index"],
                r["target_index"],
                r["sentence_id"],
            )
        )
        items = []
        names = [k for k in queue_schema().names if k in proposed.column_names]
        for position, r in enumerate(rows):
            intra = r["split"] == "intrasentence"
            items.append(
                {
                    **{k: r[k] for k in names},
                    "item_id": r["sentence_id"],
                    "hypothesis": r["sentence"],
                    "position": position,
                    "group": r["target"],
                    "masked_template": r["context"] if intra else "",
                    "premises": [] if intra else [r["context"]],
                    "fill_spans": [[r["option_start"], r["option_end"]]] if intra else [],
                }
            )
        return Output(_pa().Table.from_pylist(items, schema=queue_schema()))

    def counts(self, ctx, table, inputs, work):
        sources = Counter(table["source"].to_pylist())
        return {
            "items": table.num_rows,
            "cats": len(set(table["cat_id"].to_pylist())),
            "written": sources.get("writer", 0),
            "proposed": sources.get("mlm", 0),
        }


# -- validated: StereoSet's rule ------------------------------------------------------------------------
def policy(config) -> str:
    """`[annotation] policy` when it is set; else `majority`, StereoSet's way (the tool-wide
    default, `single`, suits one annotator per item, not five validators)."""
    ac = config.annotation
    return ac.policy if "policy" in ac.model_fields_set else "majority"


def required_votes(config) -> tuple[int, str]:
    """How many validators must agree with the writer, and why that number.

    `[annotation] min_votes` when it is set; else a strict majority of `[annotation] validators`
    when that is set; else StereoSet's 3 (of 5). The `single` policy needs every validator who
    labelled a sentence to agree (one is enough)."""
    ac = config.annotation
    given = ac.model_fields_set
    if policy(config) == "single":
        return 1, "single policy: every validator who labelled agrees"
    if "min_votes" in given:
        return ac.min_votes, f"annotation.min_votes = {ac.min_votes}"
    if "validators" in given:
        need = ac.validators // 2 + 1
        return need, f"a majority of annotation.validators = {ac.validators}"
    return STEREOSET_MIN_VOTES, f"StereoSet's rule: {STEREOSET_MIN_VOTES} of {STEREOSET_VALIDATORS} validators"


def decide(
    votes: dict[str, str], gold: str | None, need: int, rule: str, rulings: dict[str, str] | None = None
) -> str | None:
    """The label a sentence is kept with, or None when it is not kept.

    A writer's sentence keeps its gold label when at least `need` validators chose it (StereoSet).
    A proposed sentence has no writer's label: it takes the label at least `need` validators
    chose, when no other label has as many. Incoherent never keeps a sentence. Under `single`
    every validator who labelled must agree. `rulings` are the adjudicators' labels (not votes):
    as for every kind (annotation/policy.py), they decide a sentence the validators dispute, and
    under the adjudicator policy any sentence they are on."""
    from ...annotation.policy import DISAGREEMENT, combine

    ruling = set((rulings or {}).values())
    if len(ruling) == 1 and (rule == "adjudicator" or combine(votes, rule, need)[0] == DISAGREEMENT):
        label = ruling.pop()
        return label if label in GOLD and (gold is None or label == gold) else None
    crowd = list(votes.values())
    if not crowd:
        return None
    if rule == "single":
        labels = set(crowd)
        label = labels.pop() if len(labels) == 1 else None
        return label if label in GOLD and (gold is None or label == gold) else None
    if gold is not None:
        return gold if sum(c == gold for c in crowd) >= need else None
    (top, n), *rest = Counter(crowd).most_common()
    if n < need or (rest and rest[0][1] == n) or top not in GOLD:
        return None
    return top


class Validated(Stage):
    """Release rows: the kept sentences of CATs that keep all three labels (one sentence each)."""

    name = "validated"
    upstream = ("queue",)

    def schema(self):
        return validated_schema()

    def settings(self, ctx):
        ac = ctx.config.annotation
        return {
            "scheme": SCHEME.name,
            "policy": policy(ctx.config),
            "need": required_votes(ctx.config)[0],
            "adjudicator": ac.adjudicator,
        }

    def external_inputs(self, ctx):
        return label_file_inputs(ctx)

    def compute(self, ctx, inputs, reused) -> Output:
        from ...annotation.policy import adjudicator_name, split_votes
        from ...annotation.store import load_all

        ac = ctx.config.annotation
        need, _ = required_votes(ctx.config)
        rule = policy(ctx.config)
        states, _ = load_all(ctx.config.path("annotations"), SCHEME)
        queue = inputs["queue"].to_pylist()
        adjudicator = adjudicator_name(states, ac.adjudicator)
        by_cat: dict[str, list[dict]] = {}
        labelled = kept = 0
        for item in queue:
            votes, rulings = split_votes(dict(sorted(states.items())), item["item_id"], SCHEME, adjudicator)
            labelled += bool(votes or rulings)
            label = decide(votes, item["gold_label"], need, rule, rulings)
            if label is None:
                continue
            kept += 1
            row = {
                **item,
                "label": label,
                "votes": [{"annotator": a, "label": c} for a, c in votes.items()],
                "agree": sum(c == label for c in votes.values()),
            }
            by_cat.setdefault(item["cat_id"], []).append(row)
        released = []
        for rows in by_cat.values():
            best = {}
            for label in GOLD:
                candidates = [r for r in rows if r["label"] == label]
                if candidates:
                    # The writer's sentence first, then the best agreed, then the masked LM's best rank.
                    best[label] = min(
                        candidates,
                        key=lambda r: (r["source"] != "writer", -r["agree"], r["mlm_rank"] or 0, r["item_id"]),
                    )
            if len(best) == len(GOLD):
                released += [best[g] for g in GOLD]
        cats = len({r["cat_id"] for r in queue})
        n_released = len(released) // len(GOLD)
        table = _pa().Table.from_pylist(released, schema=validated_schema())
        return Output(
            table,
            {
                "items": len(queue),
                "labelled": labelled,
                "kept": kept,
                "cats": cats,
                "cats_released": n_released,
                "cats_incomplete": cats - n_released,
                "need": need,
            },
        )

    def counts(self, ctx, table, inputs, work):
        return {**work, "rows": table.num_rows}


def stages() -> list[Stage]:
    return [Expand(), Propose(), Queue(), Validated()]
