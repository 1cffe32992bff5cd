"""Renewing a published StereoSet file (docs/renewing.md): its dev JSON imported as a project whose
audit unit is a CAT (the context and its three sentences), and the StereoSet JSON of the CATs kept.

    workbench import stereoset.json --kind stereoset --out FOLDER
    expand -> queue -> validated -> released (the kept CATs, fixes applied) -> cats (their sentences)

The template files (`workbench-stereoset-published/1`, one per split and bias type) keep every CAT
as published: its id, target, context, place in its split, and each sentence's id, text, gold
label and the original annotators' `labels` (their `human_id`s unchanged), and the `layout` of the
published JSON (the order of its keys). A fix may change the context or any of the three sentences;
the release writes them back in StereoSet's layout (`build --layout original`: in the published
file's key order, with its `version`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ...authoring.renew import PAIR_AUDIT_SOURCE, audit_scheme
from ...authoring.files import nonempty_string
from ...authoring.stages import Authoring, Row
from ...core.errors import InputError, Problem, display_path
from ...core.stage import Output, Stage
from .cats import BLANK, GOLD, SPLITS
from .words import VALIDATORS

FORMAT = "workbench-stereoset-published/1"
SENTENCES = GOLD  # stereotype, anti-stereotype, unrelated: a fix's columns

# After Blodgett et al. (2021) on StereoSet: its pitfalls for a CAT.
AUDIT_SOURCE = PAIR_AUDIT_SOURCE
CAT_AUDIT = audit_scheme(
    "cat-audit",
    "CAT",
    (
        ("not-minimal", "the stereotype and anti-stereotype sentences differ in more than what they contrast"),
        ("group-unclear", "the target group is not identifiable, or the target is not a group"),
        ("stereotype-unclear", "which stereotype the CAT is about is unclear"),
        (
            "not-stereotype",
            "the 'stereotype' sentence is not a stereotype (e.g. a plain fact), or the labels are wrong",
        ),
        ("unnatural", "a sentence is ungrammatical or unnatural beyond a fix, or the unrelated one is related"),
    ),
    "Keep this CAT (context and its three sentences), fix a text, or drop it, and why?",
)


def _fixed():
    from ..base import TEXT

    return (("context", TEXT), *((g, g) for g in SENTENCES))


def fix_fields():
    """What a fix may change, each with where a queue item shows it: the context (the item's text)
    and the three sentences (its details)."""
    return _fixed()


# -- the import ---------------------------------------------------------------------------------------------
def _labels_ok(labels) -> bool:
    return isinstance(labels, list) and all(
        isinstance(v, dict) and isinstance(v.get("human_id"), str) and isinstance(v.get("label"), str) for v in labels
    )


def import_published(path: Path) -> tuple[dict[str, str], list[str]]:
    """A StereoSet JSON file -> one template file per (split, bias type), every CAT as published."""
    from ...authoring.renew import published_files
    from .data import from_hf, hf_records, load, read_json

    data = load(str(path))  # refuses a malformed file with every problem and its field path
    records = hf_records(Path(path)) if Path(path).suffix.lower() in (".jsonl", ".json") else None  # as load() reads
    doc = from_hf(records) if records is not None else read_json(Path(path), "StereoSet file")  # a BOM too
    groups: dict[str, list[dict]] = {}
    problems = [
        Problem(
            display_path(path),
            None,
            f"data.{split}[{i}].sentences[{k}].labels",
            'labels must be a list of {"human_id", "label"} mappings',
        )
        for split in SPLITS
        for i, cat in enumerate(doc["data"].get(split) or [])
        for k, s in enumerate(cat["sentences"])
        if not _labels_ok(s.get("labels", []))
    ]
    if problems:
        raise InputError(f"{len(problems)} problem(s) in StereoSet file {display_path(path)}", problems[:50])
    for split in SPLITS:
        for position, cat in enumerate(doc["data"].get(split) or []):
            entry = {
                "id": str(cat["id"]),
                "position": position,
                "target": cat["target"],
                "context": cat["context"],
                "sentences": [
                    {
                        "id": str(s["id"]),
                        "gold_label": s["gold_label"],
                        "sentence": s["sentence"],
                        "labels": [dict(v) for v in s.get("labels") or []],
                    }
                    for s in cat["sentences"]
                ],
            }
            groups.setdefault(f"{split}-{cat['bias_type']}", []).append(entry)

    layout = None if records is not None else published_layout(doc)

    def per_group(group: str) -> dict:
        split, bias_type = group.split("-", 1)
        return {
            "split": split,
            "bias_type": bias_type,
            "version": doc.get("version"),
            **({"layout": layout} if layout else {}),
        }

    return published_files(FORMAT, path, groups, per_group, key="cats", noun="CATs"), list(data.notes)


def published_layout(doc: dict) -> dict:
    """The order of the published JSON's keys, for a release laid out as it (`build --layout
    original`, release.write_original): the document's, its splits', and a CAT's, a sentence's and
    a label's (the first of each the file has)."""

    def keys(value) -> list[str]:
        return [str(k) for k in value] if isinstance(value, dict) else []

    data = doc.get("data") if isinstance(doc.get("data"), dict) else {}
    cats = [c for split in data.values() if isinstance(split, list) for c in split if isinstance(c, dict)]
    sentences = [s for c in cats for s in c.get("sentences") or [] if isinstance(s, dict)]
    labels = [v for s in sentences for v in s.get("labels") or [] if isinstance(v, dict)]
    return {
        "document": keys(doc),
        "splits": keys(data),
        "cat": keys(cats[0] if cats else {}),
        "sentence": keys(sentences[0] if sentences else {}),
        "label": keys(labels[0] if labels else {}),
    }


# -- the template files -------------------------------------------------------------------------------------
def _parse(raw, tid: str) -> tuple[list[Row], list]:
    problems: list = []
    data = raw.data
    split, bias_type = (
        data.get("split"),
        nonempty_string(data.get("bias_type"), raw, ("bias_type",), problems, "bias_type"),
    )
    if split not in SPLITS:
        problems.append(raw.problem(("split",), f"split must be one of {', '.join(SPLITS)}, not {split!r}"))
    version = data.get("version")  # the published file's `version` field, as it is (older imports have none)
    if isinstance(version, (list, dict)):
        problems.append(raw.problem(("version",), "version is the published file's version field, a text or a number"))
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
        cid = nonempty_string(cat.get("id"), raw, where + ("id",), problems, "id")
        # ids and texts exactly as published (double and trailing spaces kept), so `build --original` is the file itself
        target, context = (nonempty_string(cat.get(k), raw, where + (k,), problems, k) for k in ("target", "context"))
        if split == "intrasentence" and context is not None and BLANK not in context:
            problems.append(
                raw.problem(where + ("context",), f"an intrasentence context needs a {BLANK} (where the options go)")
            )
        sentences = cat.get("sentences")
        golds = (
            [s.get("gold_label") for s in sentences]
            if isinstance(sentences, list) and all(isinstance(s, dict) for s in sentences)
            else []
        )
        if sorted(golds) != sorted(SENTENCES):
            problems.append(
                raw.problem(
                    where + ("sentences",),
                    f"a CAT has three sentences, one each with gold_label {', '.join(SENTENCES)}",
                )
            )
            continue
        texts = {
            g: nonempty_string(s.get("sentence"), raw, where + ("sentences", k, "sentence"), problems, "sentence")
            for k, (g, s) in enumerate(zip(golds, sentences))
        }
        if None in (cid, target, context, *texts.values()) or not isinstance(cat.get("position"), int):
            if not isinstance(cat.get("position"), int):
                problems.append(raw.problem(where + ("position",), "position (its place in the split) is a number"))
            continue
        record = {
            "id": cid,
            "split": split,
            "bias_type": bias_type,
            "target": target,
            "context": context,
            "version": version,
            **({"layout": data["layout"]} if isinstance(data.get("layout"), dict) else {}),
            "position": cat["position"],
            **texts,
            "published": {"context": context, **texts},
            "sentences": [
                {"id": str(s.get("id")), "gold_label": s["gold_label"], "labels": list(s.get("labels") or [])}
                for s in sentences
            ],
        }
        votes = validators_line(sentences)
        rows.append(
            Row(
                record,
                cid,
                cid,
                context,
                bias_type or "",
                [*((g, texts[g]) for g in SENTENCES), *([(VALIDATORS, votes)] if votes else [])],
                where,
            )
        )
    return rows, problems


def validators_line(sentences: list) -> str | None:
    """What StereoSet's own validators said of a CAT's sentences (each sentence's `labels`), one
    line per sentence named by its gold label, the labels it got most first:
    "stereotype: stereotype 4 · anti-stereotype 1". None when no sentence has labels."""
    from collections import Counter

    lines = []
    for g in SENTENCES:
        for s in sentences:
            if s.get("gold_label") == g and s.get("labels"):
                counts = Counter(str(v.get("label")) for v in s["labels"] if isinstance(v, dict))
                lines.append(
                    f"{g}: "
                    + " · ".join(
                        f"{label} {n}" for label, n in sorted(counts.items(), key=lambda c: (-c[1], c[0] != g, c[0]))
                    )
                )
    return "\n".join(lines) or None


AUTHORING = Authoring(
    kind="stereoset",
    parse=_parse,
    columns=("id", "split", "bias_type", "target", "context", *SENTENCES),
    data_file="data/stereoset.json",
    unit="CAT",
    about="",
    fields="",
    top_level=frozenset({"split", "bias_type", "version", "cats", "layout"}),
    question=CAT_AUDIT.question,
    text_column="context",
    file_format=FORMAT,
)


def refresh(record: dict) -> dict:
    """A fixed CAT, rebuilt by its structure and checked: an intrasentence context keeps a BLANK;
    each sentence not fixed itself is the fixed context with that sentence's own words put in
    place of each BLANK (never a search for the old context's text, which a changed context no
    longer holds); and every sentence of the CAT must be its context with words in place of its
    BLANKs, else the fix cannot be applied and the build stops."""
    if record["split"] != "intrasentence":
        return record
    context, published = record["context"], record["published"]
    if BLANK not in context:
        raise InputError(f"the fixed context {context!r} has no {BLANK}")
    record = dict(record)
    unfixed = [g for g in SENTENCES if record[g] == published[g]]
    if context != published["context"] and unfixed:
        where = blank_map(published["context"], context)
        if where is None:
            raise InputError(
                f"the fixed context {context!r} has {context.count(BLANK)} {BLANK}(s) where the published "
                f"{published['context']!r} has {published['context'].count(BLANK)}, and its "
                f"{', '.join(unfixed)} sentence(s) have no words for the new one(s): fix them too, or keep "
                f"the published {BLANK}s"
            )
        for g in unfixed:
            words = fills(published["context"], published[g])
            if words is None:
                raise InputError(
                    f"its published {g} sentence {published[g]!r} does not match its published context "
                    f"{published['context']!r}: fix the sentence too"
                )
            record[g] = refill(context, [words[i] for i in where])
    for g in SENTENCES:
        if fills(context, record[g]) is None:
            raise InputError(
                f"the {g} sentence {record[g]!r} is not its context {context!r} with words in place of "
                f"{BLANK}: fix the sentence so that only the words at {BLANK} differ"
            )
    return record


def fills(context: str, sentence: str) -> list[str] | None:
    """The words of `sentence` in place of each BLANK of `context`, or None when the rest of the
    sentence is not the context (case ignored there, as the evaluator reads a CAT; cats.py)."""
    parts = context.strip().split(BLANK)
    if len(parts) < 2:
        return None
    pattern = "(.+?)".join(re.escape(p) for p in parts[:-1]) + "(.+)" + re.escape(parts[-1])
    found = re.fullmatch(pattern, sentence.strip(), flags=re.IGNORECASE | re.DOTALL)
    if found is None or not all(g.strip() for g in found.groups()):
        return None
    return list(found.groups())


def refill(context: str, words: list[str]) -> str:
    """`context` with words[i] in place of its i-th BLANK."""
    parts = context.split(BLANK)
    return parts[0] + "".join(w + p for w, p in zip(words, parts[1:]))


_TOKEN = re.compile(rf"{BLANK}|\w+|[^\w\s]")


def blank_map(published: str, fixed: str) -> list[int] | None:
    """For each BLANK of the fixed context, the published BLANK it stands for (so a sentence's
    words for that BLANK go there): in order when there are as many; when the fix filled some in
    (two BLANKs -> one), those that stay where the words around them are unchanged. None when a
    BLANK of the fixed context is new, or cannot be told apart."""
    from difflib import SequenceMatcher

    n_old, n_new = published.count(BLANK), fixed.count(BLANK)
    if n_new == n_old:
        return list(range(n_new))
    if n_new > n_old:
        return None
    a, b = _TOKEN.findall(published), _TOKEN.findall(fixed)
    mapped: dict[int, int] = {}
    for tag, i1, _, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            for k in range(j2 - j1):
                if b[j1 + k] == BLANK:
                    mapped[b[: j1 + k].count(BLANK)] = a[: i1 + k].count(BLANK)
    return [mapped[j] for j in range(n_new)] if len(mapped) == n_new else None


# -- the rows the StereoSet release writes --------------------------------------------------------------------
def _option(split: str, context: str, sentence: str) -> str:
    """The words in place of BLANK (the last BLANK's, as cats.py scores a context with several),
    or the whole sentence (intersentence)."""
    if split != "intrasentence":
        return sentence
    words = fills(context, sentence)
    return words[-1] if words else sentence


class Cats(Stage):
    """Each CAT of `upstream` as its three sentences, the rows the StereoSet release writes; `audit`
    is the audit's final decision on the CAT (keep or fix) when `upstream` is the renewed stage,
    kept apart from the published `labels` (the original validators' gold-label votes)."""

    format = 3  # 2: the published file's `version` on each row of the data as published; 3: its `layout`

    def __init__(self, name: str, upstream: str, published: bool = False):
        self.name, self.upstream, self.published = name, (upstream,), published

    def schema(self):
        import pyarrow as pa

        vote = pa.struct([("human_id", pa.string()), ("label", pa.string())])
        return pa.schema(
            [
                ("item_id", pa.string()),
                ("unit_id", pa.string()),
                ("cat_id", pa.string()),
                ("split", pa.string()),
                ("domain", pa.string()),
                ("subtopic", pa.string()),
                ("template_id", pa.string()),
                ("position", pa.int64()),
                ("target", pa.string()),
                ("context", pa.string()),
                ("hypothesis", pa.string()),
                ("option", pa.string()),
                ("label", pa.string()),
                ("source", pa.string()),
                ("mlm_rank", pa.int32()),
                ("mlm_score", pa.float64()),
                ("mlm_name", pa.string()),
                ("mlm_revision", pa.string()),
                ("votes", pa.list_(vote)),
                ("agree", pa.int32()),
                ("audit", pa.string()),
                ("version", pa.string()),
                ("layout", pa.string()),
            ]
        )

    def compute(self, ctx, inputs, reused) -> Output:
        import pyarrow as pa

        rows = []
        for r in inputs[self.upstream[0]].to_pylist():
            cat = json.loads(r["record"])
            for s in cat["sentences"]:
                g = s["gold_label"]
                rows.append(
                    {
                        "item_id": s["id"],
                        "unit_id": cat["id"],
                        "cat_id": cat["id"],
                        "split": cat["split"],
                        "domain": cat["bias_type"],
                        "subtopic": cat["target"],
                        "template_id": r["template_id"],
                        "position": cat["position"],
                        "target": cat["target"],
                        "context": cat["context"],
                        "hypothesis": cat[g],
                        "option": _option(cat["split"], cat["context"], cat[g]),
                        "label": g,
                        "source": "published",
                        "mlm_rank": None,
                        "mlm_score": None,
                        "mlm_name": None,
                        "mlm_revision": None,
                        "votes": s["labels"],
                        "agree": sum(v.get("label") == g for v in s["labels"]),
                        "audit": r.get("label"),
                        "version": json.dumps(cat["version"])
                        if self.published and cat.get("version") is not None
                        else None,
                        # how the published file was laid out, and its version (release.write_original)
                        "layout": json.dumps({**cat["layout"], "version": cat.get("version")}, ensure_ascii=False)
                        if isinstance(cat.get("layout"), dict)
                        else None,
                    }
                )
        return Output(pa.Table.from_pylist(rows, schema=self.schema()), {"sentences": len(rows)})

    def counts(self, ctx, table, inputs, work):
        return {"sentences": table.num_rows, "cats": len(set(table["cat_id"].to_pylist()))}


def stages() -> list:
    from ...authoring.renew import renewal_stages

    return [
        *renewal_stages(AUTHORING, CAT_AUDIT, _fixed(), refresh),
        Cats("published", "expand", published=True),
        Cats("cats", "released"),
    ]
