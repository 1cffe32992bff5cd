"""Renewing BBNLI (docs/renewing.md): its source files imported as a project whose audit unit is a
bias hypothesis (with its question form), and the release BBNLI's own expansion gives of what the
audit kept.

    workbench import bbnli/ --kind nli --out FOLDER      a folder of BBNLI JSON files, or one file
    expand -> queue -> validated -> released            one row per bias hypothesis; fixes applied
    published_files -> published                        the source files as imported, their samples
    renewed_files -> samples                            the source files after the audit, their samples

The import converts each file losslessly into the project's template format (templates/bbnli.py;
`to_bbnli` gives the file back), keeping its place in the folder. A hypothesis's audit item is
`<subtopic>/bias/<n>`: the n-th entry of the file's `bias_hypothesis_stereotypical`, a name that
stays when its text is fixed or another hypothesis is dropped. A fix may change the hypothesis and
its question; both keep to the placeholders the subtopic defines. The test hypotheses (ordinary
NLI items) are not audited: they stay in the source files as published.

The samples are BBNLI's bias samples: every premise x word combination x hypothesis, once with the
groups as written (pro) and once swapped in premise and hypothesis (anti, the pair's
counterfactual), exact repeats dropped. The release writes them in the NLI release layout and the
source files under `bbnli/`, in BBNLI's own format, so either can be used.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...authoring import text as tt
from ...authoring.files import RawFile, dump_yaml, find_template_files
from ...authoring.renew import PAIR_AUDIT_SOURCE, audit_scheme
from ...authoring.stages import Authoring, Row
from ...core.errors import InputError, Problem, display_path
from ...core.ids import short_hash
from ...core.stage import Output, Stage
from ..base import TEXT, WHERE, AnnotatorWords, Field
from .templates.schema import FORMAT, TOP_LEVEL

AUDIT_SOURCE = (
    PAIR_AUDIT_SOURCE + "; for what a bias hypothesis must be, Akyürek, Paik, Kocyigit, Akbiyik, Runyun "
    'and Wijaya (2022), "On Measuring Social Biases in Prompt-Based Multi-Task Learning", Findings of '
    "NAACL 2022 (BBNLI: neutral given every premise, stating the subtopic's stereotype of a group)"
)
HYPOTHESIS_AUDIT = audit_scheme(
    "hypothesis-audit",
    "hypothesis",
    (
        (
            "not-neutral",
            "a premise entails or contradicts it, for some words or with the groups swapped (its gold "
            "label is neutral)",
        ),
        ("not-stereotype", "it does not state the subtopic's stereotype of a group"),
        ("swap-fails", "with the two groups swapped it is not the stereotype's opposite, or makes no sense"),
        ("stereotype-unclear", "which stereotype it expresses is unclear"),
        ("unnatural", "ungrammatical or unnatural for some words of its word lists, beyond a fix"),
    ),
    "Keep this hypothesis, fix its text (and question), or drop it, and why?",
)
FIXED = (("hypothesis", TEXT), ("question", "question"))  # what a fix may change
PREMISE_LIST = "premise list"  # the detail with every premise (not `premises`: the queue column NLI items show)
BBNLI_KEYS = (
    "id",
    "premise",
    "test_hypothesis",
    "bias_hypothesis_stereotypical",
    "test_question",
    "bias_question_stereotypical",
    "answer_choices",
    "data",
    "GROUP1",
    "GROUP2",
    "name",
    "phenomenon",
    "group",
    "domain",
    "reference",
)  # the order BBNLI's files have

AUDIT_WORDS = AnnotatorWords(
    question=HYPOTHESIS_AUDIT.question,
    fields=(
        Field(
            "hypothesis",
            "the hypothesis as its file writes it: {{GROUP1}} and {{GROUP2}} are the subtopic's "
            "groups, other {{NAMES}} its word lists",
            TEXT,
        ),
        Field("as written", "the hypothesis with the groups as written and the first word of each list (pro)"),
        Field("swapped", "the same with the two groups swapped (anti): the counterfactual every sample gets"),
        Field("question", "its question form, which a fix keeps in step with the hypothesis"),
        Field("words", "the subtopic's word lists: every combination is a sample"),
        Field("premises", "every premise it is paired with, numbered (groups as written, first words)", PREMISE_LIST),
        Field("samples", "how many premise-hypothesis pairs it makes"),
        Field("where", "domain / subtopic file", WHERE),
    ),
    template="subtopic file",
    rows="samples",
    help=(
        (
            "Audit",
            (
                "BBNLI pairs each hypothesis with every premise of its subtopic (premises 1, 2, ...) and "
                "every word combination, once as written and once with the groups swapped. Its gold label is "
                "neutral: keep it only when no premise settles it, for any words, either way round. A fix "
                "may change the hypothesis and its question, with the subtopic's placeholders."
            ),
        ),
    ),
)


# -- the import ----------------------------------------------------------------------------------------------------
def import_published(path: Path) -> tuple[dict[str, str], list[str]]:
    """BBNLI source files (a folder searched recursively, or one file) -> the project's template files,
    one per subtopic in the same place of the folder, each converted losslessly."""
    from .templates.bbnli import read_bbnli, to_bbnli

    path = Path(path)
    files, problems = find_template_files([path])
    files = [f for f in files if f.suffix == ".json"]
    if not files:
        raise InputError(
            f"{display_path(path)}: no BBNLI JSON file there (BBNLI publishes one .json file per "
            "subtopic, with premise, bias_hypothesis_stereotypical and data)"
        )
    base = path if path.is_dir() else path.parent
    out: dict[str, str] = {}
    ids: dict[str, str] = {}
    for f in files:
        data, found = read_bbnli(f)
        problems += found
        if data is None or any(p.severity == "error" for p in found):
            continue
        relative = f.relative_to(base).as_posix()
        data["source"]["file"] = relative
        if data["id"] in ids:
            problems.append(
                Problem(
                    display_path(f),
                    None,
                    "",
                    f"a second subtopic named {data['id']!r} (also {ids[data['id']]}): rename one file",
                )
            )
            continue
        ids[data["id"]] = relative
        if to_bbnli(data) != json.loads(Path(f).read_text(encoding="utf-8-sig")):
            problems.append(
                Problem(
                    display_path(f),
                    None,
                    "",
                    f"fields the import cannot keep (it keeps BBNLI's {', '.join(BBNLI_KEYS)})",
                )
            )
        out[str(Path(relative).with_suffix(".yaml"))] = dump_yaml(data)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise InputError(f"{len(errors)} problem(s) in the BBNLI files of {display_path(path)}", errors[:50])
    return out, [str(Problem(_relative(p.file, base), p.line, p.field, p.message, p.severity)) for p in problems]


def _relative(file: str, base: Path) -> str:
    try:
        return Path(file).resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return file


# -- the template files -----------------------------------------------------------------------------------------
def _plain(data):
    return json.loads(json.dumps(data, ensure_ascii=False))  # YAML's mappings as plain dicts


def _template(document: dict, tid: str):
    from .templates.schema import check_template

    template, problems = check_template(RawFile(Path(f"{tid}.yaml"), document, tid))
    if template is None:
        raise InputError(f"subtopic {tid}: " + "; ".join(p.message for p in problems if p.severity == "error"))
    return template


def _values(template, swapped: bool) -> dict[str, str]:
    """The first word of every list, and the groups as written (or swapped)."""
    g1, g2 = template.groups["GROUP1"], template.groups["GROUP2"]
    first = {k: v[0] for k, v in template.words.items() if v}
    return {**first, "GROUP1": g2 if swapped else g1, "GROUP2": g1 if swapped else g2}


def _parse(raw, tid: str) -> tuple[list[Row], list]:
    from .templates.expand import expand_template
    from .templates.schema import check_template

    template, problems = check_template(raw)
    if template is None:
        return [], problems
    document = _plain(raw.data)
    samples: dict[int, int] = {}
    for s in expand_template(template):
        samples[s["hypothesis_index"]] = samples.get(s["hypothesis_index"], 0) + 1
    known = sorted({*template.words, *tt.GROUP_KEYS})
    pro, anti = _values(template, False), _values(template, True)
    words = "; ".join(f"{k}: {' | '.join(v)}" for k, v in template.words.items())
    rows = []
    for n, h in enumerate(h for h in template.hypotheses if h.kind == "bias"):
        unit = f"{tid}/bias/{n}"
        record = {
            "template_id": tid,
            "bias": n,
            "hypothesis": h.text,
            "question": h.question or "",
            "placeholders": known,
            "names_group": bool(set(tt.placeholders(h.text)) & set(tt.GROUP_KEYS)),
            "document": document,
        }
        premises = "\n".join(f"{k}. {tt.render(p.text, pro)}" for k, p in enumerate(template.premises, start=1))
        details = [
            ("as written", tt.render(h.text, pro)),
            ("swapped", tt.render(h.text, anti)),
            *((("question", h.question),) if h.question else ()),
            ("words", words),
            (PREMISE_LIST, premises),
            ("samples", f"{samples.get(h.index, 0)} (premises x word combinations x both ways round)"),
        ]
        rows.append(Row(record, unit, unit, h.text, template.domain, details, ("hypotheses", h.index)))
    return rows, problems


AUTHORING = Authoring(
    kind="nli",
    parse=_parse,
    columns=("subtopic", "bias", "hypothesis", "question"),
    data_file="data/all.parquet",
    unit="bias hypothesis",
    about="",
    fields="",
    top_level=frozenset(TOP_LEVEL - {"format", "id"}),
    question=HYPOTHESIS_AUDIT.question,
    text_column="hypothesis",
    file_format=FORMAT,
)


def refresh(record: dict) -> dict:
    """A fixed hypothesis, checked: it and its question use only the subtopic's placeholders, and
    the hypothesis still names a group when it named one (a bias hypothesis states something of one)."""
    known = set(record["placeholders"])
    for column in ("hypothesis", "question"):
        text = record.get(column) or ""
        problems = tt.syntax_problems(text)
        if problems:
            raise InputError(f"the fixed {column} {text!r}: {problems[0]}")
        unknown = [p for p in tt.placeholders(text) if p not in known]
        if unknown:
            raise InputError(
                f"the fixed {column} {text!r} uses {{{{{unknown[0]}}}}}, which its subtopic does not "
                f"define (it has {', '.join('{{' + k + '}}' for k in sorted(known))})"
            )
    if record.get("names_group") and not set(tt.placeholders(record["hypothesis"])) & set(tt.GROUP_KEYS):
        raise InputError(
            f"the fixed hypothesis {record['hypothesis']!r} names no group ({{{{GROUP1}}}} or "
            "{{GROUP2}}): a bias hypothesis states something of one"
        )
    return record


# -- the source files and samples, before and after the audit ---------------------------------------------------
def audited_documents(expand: list[dict], released: list[dict] | None) -> list[dict]:
    """Per subtopic: its document with the bias hypotheses the audit kept (fixes applied; all of them
    as published when `released` is None), and the audit item of each hypothesis left (None: a
    test hypothesis)."""
    records = [json.loads(r["record"]) for r in expand]
    kept = None if released is None else {r["item_id"]: json.loads(r["record"]) for r in released}
    out, done = [], set()
    for record in records:
        tid = record["template_id"]
        if tid in done:
            continue
        done.add(tid)
        document = dict(record["document"])
        hypotheses, units, n = [], [], 0
        for h in document.get("hypotheses", []):
            if h.get("kind") != "bias":
                hypotheses.append(h)
                units.append(None)
                continue
            unit, n = f"{tid}/bias/{n}", n + 1
            if kept is not None and unit not in kept:
                continue  # dropped by the audit
            if kept is not None:
                fixed = kept[unit]
                h = {**h, "text": fixed["hypothesis"], **({"question": fixed["question"]} if fixed["question"] else {})}
            hypotheses.append(h)
            units.append(unit)
        out.append({"template_id": tid, "document": {**document, "hypotheses": hypotheses}, "units": units})
    return out


def bbnli_text(document: dict) -> str:
    """A subtopic's document as BBNLI's JSON file, its keys in BBNLI's order."""
    from .templates.bbnli import to_bbnli

    data = to_bbnli(document)
    ordered = {k: data[k] for k in BBNLI_KEYS if k in data}
    return json.dumps({**ordered, **data}, ensure_ascii=False, indent=2) + "\n"


def _files_schema():
    import pyarrow as pa

    return pa.schema(
        [
            ("template_id", pa.string()),
            ("path", pa.string()),
            ("text", pa.string()),
            ("document", pa.string()),
            ("units", pa.list_(pa.string())),
        ]
    )


class SourceFiles(Stage):
    """The BBNLI source files of every subtopic: as imported (`renewed` False) or as the audit leaves them."""

    def __init__(self, name: str, renewed: bool):
        self.name, self.renewed = name, renewed
        self.upstream = ("expand", "released") if renewed else ("expand",)

    def schema(self):
        return _files_schema()

    def compute(self, ctx, inputs, reused) -> Output:
        import pyarrow as pa

        released = inputs["released"].to_pylist() if self.renewed else None
        docs = audited_documents(inputs["expand"].to_pylist(), released)
        rows = [
            {
                "template_id": d["template_id"],
                "path": d["document"]["source"]["file"],
                "text": bbnli_text(d["document"]),
                "document": json.dumps(d["document"], ensure_ascii=False),
                "units": d["units"],
            }
            for d in docs
        ]
        return Output(pa.Table.from_pylist(rows, schema=_files_schema()), {"files": len(rows)})

    def counts(self, ctx, table, inputs, work):
        return {"files": table.num_rows}


def sample_rows(files: list[dict]) -> list[dict]:
    """BBNLI's bias samples of the files' documents, as NLI release rows: each sample with the groups
    as written and its swapped twin share a pair id; ids come from the audit item, the premise and
    the texts, so a sample keeps its id when another hypothesis is dropped. As in BBNLI's own CSV,
    a sample whose question form differs by words its hypothesis does not use is a row of its own
    (the same premise and hypothesis, another question): the n-th of them is paired with the n-th
    of its twins."""
    from collections import Counter

    from .tables import bindings_text
    from .templates.expand import expand_template

    rows = []
    for f in files:
        template = _template(json.loads(f["document"]), f["template_id"])
        units = f["units"]
        nth: Counter = Counter()
        for s in expand_template(template):
            if s["kind"] != "bias":
                continue
            unit = units[s["hypothesis_index"]]
            bindings = bindings_text(s["bindings"])
            place = (unit, s["premise_index"], bindings)
            n = nth[(place, s["stance"])]
            nth[(place, s["stance"])] += 1
            provenance = {
                "template_id": s["template_id"],
                "audit_item": unit,
                "file": f["path"],
                "hypothesis_template": s["hypothesis_template"],
                "premise_index": s["premise_index"],
                "bindings": json.loads(bindings),
                "question": s["question"],
            }
            rows.append(
                {
                    "id": short_hash(
                        unit, str(s["premise_index"]), s["stance"], s["premise"], s["hypothesis"], s["question"] or ""
                    ),
                    "premise": s["premise"],
                    "hypothesis": s["hypothesis"],
                    "label": s["true_label"],
                    "stance": s["stance"],
                    "domain": s["domain"],
                    "subtopic": s["subtopic"],
                    "pair_id": short_hash("pair", unit, str(s["premise_index"]), bindings, str(n)),
                    "is_counterfactual": s["stance"] != s["written_stance"],
                    "provenance": json.dumps(provenance, ensure_ascii=False, sort_keys=True),
                }
            )
    return rows


class Samples(Stage):
    """The samples BBNLI's expansion makes of `upstream`'s source files: the rows a release writes."""

    def __init__(self, name: str, files: str):
        self.name, self.upstream = name, (files,)

    def schema(self):
        from .tables import release_schema

        return release_schema()

    def compute(self, ctx, inputs, reused) -> Output:
        import pyarrow as pa

        rows = sample_rows(inputs[self.upstream[0]].to_pylist())
        return Output(pa.Table.from_pylist(rows, schema=self.schema()), {"samples": len(rows)})

    def counts(self, ctx, table, inputs, work):
        return {"samples": table.num_rows, "pairs": len(set(table["pair_id"].to_pylist()))}


def stages() -> list:
    from ...authoring.renew import renewal_stages

    return [
        *renewal_stages(AUTHORING, HYPOTHESIS_AUDIT, FIXED, refresh),
        SourceFiles("published_files", renewed=False),
        Samples("published", "published_files"),
        SourceFiles("renewed_files", renewed=True),
        Samples("samples", "renewed_files"),
    ]


def write_sources(release, staging: Path) -> None:
    """A renewal's release carries its BBNLI source files (as imported, or after the audit) under bbnli/."""
    table = release.workspace.read("published_files" if release.original else "renewed_files")
    for r in table.to_pylist():
        target = staging / "bbnli" / r["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(r["text"], encoding="utf-8")
