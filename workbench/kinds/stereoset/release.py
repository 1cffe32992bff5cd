"""How a StereoSet release folder is laid out, what its card says and how versions compare.

    data/stereoset.json      the released CATs in StereoSet's own format, so the reference
                             evaluator (and `workbench evaluate`) read it as they read the original
    data/stereoset.parquet   one row per released sentence with its provenance and votes and, in
                             a renewal, the audit's decision on its CAT (the Hub's table view and
                             `datasets` load this one)

Validators appear under an opaque id (a hash of their name), as in StereoSet's `human_id`.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from ...core.ids import short_hash
from ...release import generic
from .scheme import GOLD

JSON_FILE = "data/stereoset.json"
PARQUET_FILE = "data/stereoset.parquet"
FORMAT = "workbench-stereoset/1"
SPLITS = ("intrasentence", "intersentence")


def human_id(annotator: str) -> str:
    return short_hash("stereoset-validator", annotator, length=12)


def _order(r: dict) -> tuple:
    if r.get("position") is not None:  # an imported CAT: its place in the published file
        return (SPLITS.index(r["split"]), r["position"], 0, "", 0, 0, 0)
    return (
        SPLITS.index(r["split"]),
        r["domain"],
        r["subtopic"],
        r["template_id"],
        r["context_index"],
        r["target_index"],
        GOLD.index(r["label"]),
    )


def release_schema():
    import pyarrow as pa

    vote = pa.struct([("human_id", pa.string()), ("label", pa.string())])
    return pa.schema(
        [
            ("id", pa.string()),
            ("cat_id", pa.string()),
            ("split", pa.string()),
            ("domain", pa.string()),
            ("subtopic", pa.string()),
            ("template_id", pa.string()),
            ("target", pa.string()),
            ("context", pa.string()),
            ("sentence", pa.string()),
            ("option", pa.string()),
            ("gold_label", pa.string()),
            ("source", pa.string()),
            ("mlm_rank", pa.int32()),
            ("mlm_score", pa.float64()),
            ("mlm_name", pa.string()),
            ("mlm_revision", pa.string()),
            ("votes", pa.list_(vote)),
            ("agree", pa.int32()),
            ("audit", pa.string()),
        ]
    )


def _votes(r: dict) -> list[dict]:
    if r["votes"] and all(v.get("human_id") for v in r["votes"]):  # an imported file's labels, as published
        return [{"human_id": v["human_id"], "label": v["label"]} for v in r["votes"]]
    return sorted(
        ({"human_id": human_id(v["annotator"]), "label": v["label"]} for v in r["votes"]),
        key=lambda v: (v["human_id"], v["label"]),
    )


def stereoset_document(rows: list[dict]) -> dict:
    """The StereoSet JSON of the release rows (three per CAT). Only the four StereoSet labels
    appear in `labels` (the reference loader accepts no others): incoherent votes stay in the
    Parquet file."""
    data: dict[str, list] = {s: [] for s in SPLITS}
    cats: dict[str, dict] = {}
    for r in sorted(rows, key=_order):
        cat = cats.get(r["cat_id"])
        if cat is None:
            cat = cats[r["cat_id"]] = {
                "id": r["cat_id"],
                "target": r["target"],
                "bias_type": r["domain"],
                "context": r["context"],
                "sentences": [],
            }
            data[r["split"]].append(cat)
        cat["sentences"].append(
            {
                "id": r["item_id"],
                "sentence": r["hypothesis"],
                "gold_label": r["label"],
                "labels": [v for v in _votes(r) if v["label"] in (*GOLD, "related")],
            }
        )
    # the published file's own `version` for the data as published (build --original), else this format's
    versions = {r.get("version") for r in rows}
    return {
        "version": json.loads(versions.pop()) if len(versions) == 1 and None not in versions else FORMAT,
        "data": data,
    }


def write_release(rows: list[dict], staging: Path, document: dict | None = None) -> list[str]:
    """Both data files (the JSON: `document`, else `stereoset_document`); returns the domains."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = sorted(rows, key=_order)
    (staging / "data").mkdir(parents=True, exist_ok=True)
    text = json.dumps(stereoset_document(rows) if document is None else document, indent=2, ensure_ascii=False) + "\n"
    (staging / JSON_FILE).write_text(text, encoding="utf-8")
    table = pa.Table.from_pylist(
        [
            {
                "id": r["item_id"],
                "cat_id": r["cat_id"],
                "split": r["split"],
                "domain": r["domain"],
                "subtopic": r["subtopic"],
                "template_id": r["template_id"],
                "target": r["target"],
                "context": r["context"],
                "sentence": r["hypothesis"],
                "option": r["option"],
                "gold_label": r["label"],
                "source": r["source"],
                "mlm_rank": r["mlm_rank"],
                "mlm_score": r["mlm_score"],
                "mlm_name": r["mlm_name"],
                "mlm_revision": r["mlm_revision"],
                "votes": _votes(r),
                "agree": r["agree"],
                "audit": r.get("audit"),
            }
            for r in rows
        ],
        schema=release_schema(),
    )
    pq.write_table(table, staging / PARQUET_FILE, compression="zstd", write_statistics=False, store_schema=True)
    return sorted({r["domain"] for r in rows})


def write_original(rows: list[dict], staging: Path) -> list[str] | None:
    """The release laid out as the published JSON (`build --layout original`): its `version` as
    published (the release's own version is in manifest.json and the card), its splits, each CAT's
    and sentence's keys in the published order, the original validators' `labels` as published;
    dropped CATs left out, fixed ones with their new texts. None when the rows do not record the
    published layout (a Hugging Face copy, or an import from before layouts were recorded)."""
    found = {r.get("layout") for r in rows}
    if not rows or len(found) != 1 or None in found:
        return None
    layout = json.loads(found.pop())
    doc = stereoset_document(rows)
    doc["version"] = layout.get("version")

    def ordered(value: dict, keys) -> dict:
        return {**{k: value[k] for k in keys or () if k in value}, **value}

    splits = layout.get("splits") or list(doc["data"])
    data = {k: doc["data"][k] for k in splits if k in doc["data"]}
    for cats in data.values():
        for k, cat in enumerate(cats):
            for sentence in cat["sentences"]:
                sentence["labels"] = [ordered(v, layout.get("label")) for v in sentence["labels"]]
            cat["sentences"] = [ordered(s, layout.get("sentence")) for s in cat["sentences"]]
            cats[k] = ordered(cat, layout.get("cat"))
    document = {"version": doc["version"], "data": data}
    if "version" not in (layout.get("document") or ["version"]):
        del document["version"]
    return write_release(rows, staging, ordered(document, layout.get("document")))


def read_release(folder: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(Path(folder) / PARQUET_FILE).to_pylist()


# -- card ---------------------------------------------------------------------------------------------------
ABOUT = (
    "Context association tests (CATs) in StereoSet's format: each has a target term, a context and three "
    "sentences, one stereotypical, one anti-stereotypical and one unrelated. Intrasentence CATs fill a BLANK "
    "in the context; intersentence CATs continue it. A language model's preferences among the three give "
    "the language-modelling score (lms), the stereotype score (ss, 50 is unbiased) and their combination, icat."
)

FIELDS = """`data/stereoset.json` is StereoSet's own layout (`{"version", "data": {"intrasentence": [...],
"intersentence": [...]}}`; each CAT with `id`, `target`, `bias_type`, `context` and `sentences` with `id`,
`sentence`, `gold_label` and the validators' `labels`), so StereoSet's reference evaluator reads it.

`data/stereoset.parquet` has one row per sentence: `id`, `cat_id`, `split`, `domain`, `subtopic`,
`template_id`, `target`, `context`, `sentence`, `option` (the words in place of BLANK, or the
continuation), `gold_label`, `source` (`writer`, or `mlm` for a masked-LM proposal, with `mlm_rank`,
`mlm_score`, `mlm_name`, `mlm_revision`), `votes` (each validator's opaque `human_id` and label),
`agree` (how many chose the released label) and `audit` (in a renewed release, the audit's final
decision on the sentence's CAT, `keep` or `fix`; empty otherwise). The audit's decisions are not
validators' labels: they appear in `audit` only, never in the JSON's `labels`."""


def _counts(workspace, stage: str) -> dict:
    return (workspace.manifest(stage) or {}).get("counts", {})


def funnel(release) -> str:
    from .stages import required_votes

    ws = release.workspace
    expand, propose, queue, validated = (_counts(ws, s) for s in ("expand", "propose", "queue", "validated"))
    model = (ws.manifest("propose") or {}).get("model")
    need, how = required_votes(release.config)
    rejected = ", ".join(f"{k} {v}" for k, v in (propose.get("rejected_by_reason") or {}).items()) or "none"
    steps = [
        ["CATs written (templates x targets)", expand.get("cats", 0)],
        ["sentences written by the writers", expand.get("sentences", 0)],
        ["CATs with options left to the masked LM", expand.get("cats_to_propose", 0)],
        [
            "sentences proposed by the masked LM" + (f" ({Path(model['name']).name})" if model else ""),
            propose.get("proposed", 0),
        ],
        [f"proposals past the filters (rejected: {rejected})", propose.get("proposals_kept", 0)],
        ["sentences validated (the queue)", queue.get("items", 0)],
        ["sentences labelled by at least one validator", validated.get("labelled", 0)],
        [f"sentences kept (at least {need} validators agree with the writer)", validated.get("kept", 0)],
        ["CATs released (stereotype, anti-stereotype and unrelated all kept)", validated.get("cats_released", 0)],
        ["sentences released", len(release.rows)],
    ]
    per = Counter((r["split"], r["domain"]) for r in release.rows if r["label"] == GOLD[0])
    lines = [
        "## Validation funnel",
        "",
        (
            f"Every sentence was labelled stereotype / anti-stereotype / unrelated / incoherent by validators who did "
            f"not see the writer's label. A written sentence is kept when at least {need} validators chose the writer's "
            f"label ({how}); StereoSet had five validators per sentence and kept it when at least three agreed. A "
            f"proposed sentence takes the label at least {need} validators agree on. A CAT is released only when all "
            f"three labels are kept, one sentence each (the writer's first)."
        ),
        "",
        generic.markdown_table(["step", "count"], steps),
        "",
        generic.markdown_table(["split", "domain", "CATs"], [[s, d, n] for (s, d), n in sorted(per.items())]),
        "",
    ]
    return "\n".join(lines)


def card(release) -> str:
    text = generic.card(release, kind_name="stereoset", about=ABOUT, fields=FIELDS, data_files={"all": PARQUET_FILE})
    if release.config.origin is not None:  # a renewal: its audit is in the closing sections
        return text
    return text.rstrip("\n") + "\n\n" + funnel(release)


# What a release says of each sentence besides its text (changes.released): the CAT's context and target, the
# sentence's gold label and split. A fixed context is an edit of its sentences, though their texts stay.
released_fields = ("context", "target", "gold_label", "split")


def identity(r: dict) -> tuple[str, str, str, str]:
    """What changes are counted by: the sentence's id and text, its domain and its template."""
    return r["id"], r["sentence"], r["domain"], r["template_id"]


def unit(r: dict) -> str:
    """The audit item a released row belongs to (a renewal's unit is the CAT)."""
    return r["cat_id"]


def edit(r: dict) -> tuple[str, str]:
    """A released CAT has one sentence per gold label: a new sentence there is an edit of it
    (changes.compare); a CAT's id comes from its target and context, not its sentences."""
    return f"{r['cat_id']} {r['gold_label']}", "sentence edited"
