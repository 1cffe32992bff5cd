"""Renewing a published StereoSet file (docs/renewing.md): its dev JSON imported as a project whose
audit unit is a CAT (the context and its three sentences), and the StereoSet JSON of the CATs kept.

    workbench import stereoset.json --kind stereoset --out FOLDER
    expand -> queue -> validated -> released (the kept CATs, fixes applied) -> cats (their sentences)

The template files (`workbench-stereoset-published/1`, one per split and bias type) keep every CAT
as published: its id, target, context, place in its split, and each sentence's id, text, gold
label and the original annotators' `labels` (their `human_id`s unchanged). A fix may change the
context or any of the three sentences; the release writes them back in StereoSet's layout.
"""
from __future__ import annotations

import json
from pathlib import Path

from ...authoring.renew import PAIR_AUDIT_SOURCE, audit_scheme
from ...authoring.stages import Authoring, Row, text_field
from ...core.errors import InputError, Problem, display_path
from ...core.stage import Output, Stage
from .cats import BLANK, GOLD, SPLITS

FORMAT = "workbench-stereoset-published/1"
SENTENCES = GOLD                           # stereotype, anti-stereotype, unrelated: a fix's columns

# After Blodgett et al. (2021) on StereoSet: its pitfalls for a CAT.
AUDIT_SOURCE = PAIR_AUDIT_SOURCE
CAT_AUDIT = audit_scheme("cat-audit", "CAT", (
    ("not-minimal", "the stereotype and anti-stereotype sentences differ in more than what they contrast"),
    ("group-unclear", "the target group is not identifiable, or the target is not a group"),
    ("stereotype-unclear", "which stereotype the CAT is about is unclear"),
    ("not-stereotype", "the 'stereotype' sentence is not a stereotype (e.g. a plain fact), or the labels are wrong"),
    ("unnatural", "a sentence is ungrammatical or unnatural beyond a fix, or the unrelated one is related"),
), "Keep this CAT (context and its three sentences), fix a text, or drop it, and why?")


def _fixed():
    from ..base import TEXT

    return (("context", TEXT), *((g, g) for g in SENTENCES))


def fix_fields():
    """What a fix may change, each with where a queue item shows it: the context (the item's text)
    and the three sentences (its details)."""
    return _fixed()


# -- the import ---------------------------------------------------------------------------------------------
def _labels_ok(labels) -> bool:
    return isinstance(labels, list) and all(isinstance(v, dict) and isinstance(v.get("human_id"), str) and
                                            isinstance(v.get("label"), str) for v in labels)


def import_published(path: Path) -> tuple[dict[str, str], list[str]]:
    """A StereoSet JSON file -> one template file per (split, bias type), every CAT as published."""
    from ...authoring.renew import published_files
    from .data import load

    data = load(str(path))                # refuses a malformed file with every problem and its field path
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    groups: dict[str, list[dict]] = {}
    problems = [Problem(display_path(path), None, f"data.{split}[{i}].sentences[{k}].labels",
                        "labels must be a list of {\"human_id\", \"label\"} mappings")
                for split in SPLITS for i, cat in enumerate(doc["data"].get(split) or [])
                for k, s in enumerate(cat["sentences"]) if not _labels_ok(s.get("labels", []))]
    if problems:
        raise InputError(f"{len(problems)} problem(s) in StereoSet file {display_path(path)}", problems[:50])
    for split in SPLITS:
        for position, cat in enumerate(doc["data"].get(split) or []):
            entry = {"id": str(cat["id"]), "position": position, "target": cat["target"], "context": cat["context"],
                     "sentences": [{"id": str(s["id"]), "gold_label": s["gold_label"], "sentence": s["sentence"],
                                    "labels": [dict(v) for v in s.get("labels") or []]} for s in cat["sentences"]]}
            groups.setdefault(f"{split}-{cat['bias_type']}", []).append(entry)

    def per_group(group: str) -> dict:
        split, bias_type = group.split("-", 1)
        return {"split": split, "bias_type": bias_type}

    return published_files(FORMAT, path, groups, per_group, key="cats", noun="CATs"), list(data.notes)


# -- the template files -------------------------------------------------------------------------------------
def _parse(raw, tid: str) -> tuple[list[Row], list]:
    problems: list = []
    data = raw.data
    split, bias_type = data.get("split"), text_field(data.get("bias_type"), raw, ("bias_type",), problems, "bias_type")
    if split not in SPLITS:
        problems.append(raw.problem(("split",), f"split must be one of {', '.join(SPLITS)}, not {split!r}"))
    cats = data.get("cats")
    if not isinstance(cats, list) or not cats:
        problems.append(raw.problem(("cats",), "cats must be a non-empty list"))
        return [], problems
    rows = []
    for i, cat in enumerate(cats):
        where = ("cats", i)
        if not isinstance(cat, dict):
            problems.append(raw.problem(where, "a CAT is a mapping (id, position, target, context, sentences)"))
            continue
        cid, target, context = (text_field(cat.get(k), raw, where + (k,), problems, k) for k in ("id", "target",
                                                                                             "context"))
        if split == "intrasentence" and context is not None and BLANK not in context:
            problems.append(raw.problem(where + ("context",), f"an intrasentence context needs a {BLANK} (where the options go)"))
        sentences = cat.get("sentences")
        golds = [s.get("gold_label") for s in sentences] if isinstance(sentences, list) and \
            all(isinstance(s, dict) for s in sentences) else []
        if sorted(golds) != sorted(SENTENCES):
            problems.append(raw.problem(where + ("sentences",), f"a CAT has three sentences, one each with gold_label "
                                                                f"{', '.join(SENTENCES)}"))
            continue
        texts = {g: text_field(s.get("sentence"), raw, where + ("sentences", k, "sentence"), problems, "sentence")
                 for k, (g, s) in enumerate(zip(golds, sentences))}
        if None in (cid, target, context, *texts.values()) or not isinstance(cat.get("position"), int):
            if not isinstance(cat.get("position"), int):
                problems.append(raw.problem(where + ("position",), "position (its place in the split) is a number"))
            continue
        record = {"id": cid, "split": split, "bias_type": bias_type, "target": target, "context": context,
                  "position": cat["position"], **texts, "published": {"context": context, **texts},
                  "sentences": [{"id": str(s.get("id")), "gold_label": s["gold_label"],
                                 "labels": list(s.get("labels") or [])} for s in sentences]}
        rows.append(Row(record, cid, cid, context, bias_type or "", [(g, texts[g]) for g in SENTENCES], where))
    return rows, problems


AUTHORING = Authoring(
    kind="stereoset", parse=_parse, columns=("id", "split", "bias_type", "target", "context", *SENTENCES),
    data_file="data/stereoset.json", unit="CAT", about="", fields="",
    top_level=frozenset({"split", "bias_type", "cats"}), question=CAT_AUDIT.question, text_column="context",
    file_format=FORMAT)


def refresh(record: dict) -> dict:
    """A fixed CAT, checked: an intrasentence context keeps its BLANK, and its sentences not fixed
    themselves are the fixed context with their words in place of BLANK."""
    if record["split"] != "intrasentence":
        return record
    context, published = record["context"], record["published"]
    if BLANK not in context:
        raise InputError(f"the fixed context {context!r} has no {BLANK}")
    if context == published["context"]:
        return record
    refilled = {g: context.replace(BLANK, _option("intrasentence", published["context"], published[g]), 1)
                for g in SENTENCES if record[g] == published[g]}
    return {**record, **refilled}


# -- the rows the StereoSet release writes --------------------------------------------------------------------
def _option(split: str, context: str, sentence: str) -> str:
    if split != "intrasentence":
        return sentence
    before, _, after = context.partition(BLANK)
    if sentence.startswith(before) and sentence.endswith(after) and len(sentence) >= len(before) + len(after):
        return sentence[len(before):len(sentence) - len(after)]
    return sentence


class Cats(Stage):
    """Each CAT of `upstream` as its three sentences, the rows the StereoSet release writes; `audit`
    is the audit's final decision on the CAT (keep or fix) when `upstream` is the renewed stage,
    kept apart from the published `labels` (the original validators' gold-label votes)."""

    def __init__(self, name: str, upstream: str):
        self.name, self.upstream = name, (upstream,)

    def schema(self):
        import pyarrow as pa

        vote = pa.struct([("human_id", pa.string()), ("label", pa.string())])
        return pa.schema([("item_id", pa.string()), ("unit_id", pa.string()), ("cat_id", pa.string()),
                          ("split", pa.string()), ("domain", pa.string()), ("subtopic", pa.string()),
                          ("template_id", pa.string()), ("position", pa.int64()), ("target", pa.string()),
                          ("context", pa.string()), ("hypothesis", pa.string()), ("option", pa.string()),
                          ("label", pa.string()), ("source", pa.string()), ("mlm_rank", pa.int32()),
                          ("mlm_score", pa.float64()), ("mlm_name", pa.string()), ("mlm_revision", pa.string()),
                          ("votes", pa.list_(vote)), ("agree", pa.int32()), ("audit", pa.string())])

    def compute(self, ctx, inputs, reused) -> Output:
        import pyarrow as pa

        rows = []
        for r in inputs[self.upstream[0]].to_pylist():
            cat = json.loads(r["record"])
            for s in cat["sentences"]:
                g = s["gold_label"]
                rows.append({"item_id": s["id"], "unit_id": cat["id"], "cat_id": cat["id"], "split": cat["split"],
                             "domain": cat["bias_type"], "subtopic": cat["target"], "template_id": r["template_id"],
                             "position": cat["position"], "target": cat["target"], "context": cat["context"],
                             "hypothesis": cat[g], "option": _option(cat["split"], cat["context"], cat[g]),
                             "label": g, "source": "published", "mlm_rank": None, "mlm_score": None,
                             "mlm_name": None, "mlm_revision": None, "votes": s["labels"],
                             "agree": sum(v.get("label") == g for v in s["labels"]), "audit": r.get("label")})
        return Output(pa.Table.from_pylist(rows, schema=self.schema()), {"sentences": len(rows)})

    def counts(self, ctx, table, inputs, work):
        return {"sentences": table.num_rows, "cats": len(set(table["cat_id"].to_pylist()))}


def stages() -> list:
    from ...authoring.renew import renewal_stages

    return [*renewal_stages(AUTHORING, CAT_AUDIT, _fixed(), refresh), Cats("published", "expand"),
            Cats("cats", "released")]
