"""BBNLI source files, read as they are and converted losslessly into the project's format.

BBNLI keeps hypotheses in four parallel lists (test/bias x hypothesis/question) with labels
as indices into `answer_choices`; the project's format keeps one list of hypotheses, each
with its question. Everything else (references, phenomenon, category, the original id,
name and answer choices) is kept so nothing of the source is lost.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ....core.errors import Problem
from ....authoring.files import RawFile
from .schema import FORMAT

BBNLI_KEYS = {"premise", "bias_hypothesis_stereotypical", "test_hypothesis", "data", "GROUP1", "GROUP2"}


def is_bbnli(data: Any) -> bool:
    return isinstance(data, dict) and ("bias_hypothesis_stereotypical" in data or "test_hypothesis" in data)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _first(value: Any) -> Any:
    """BBNLI stores each group as a one-element list; tolerate a bare string too."""
    if isinstance(value, list) and len(value) == 1:
        return value[0]
    return value


def convert(raw: RawFile) -> tuple[dict | None, list[Problem]]:
    """BBNLI dict -> project-format dict; fills raw.field_map so problems name BBNLI fields."""
    src = raw.data
    problems: list[Problem] = []
    fmap = {"words": "data", "groups.GROUP1": "GROUP1", "groups.GROUP2": "GROUP2", "labels": "answer_choices"}
    out: dict[str, Any] = {"format": FORMAT}
    out["id"] = raw.path.stem
    out["name"] = src.get("name", raw.path.stem)
    if "domain" in src:
        out["domain"] = src["domain"]
    for ours, theirs in (("category", "group"), ("phenomenon", "phenomenon")):
        if theirs in src:
            out[ours] = src[theirs]
    groups = {}
    for key in ("GROUP1", "GROUP2"):
        if key in src:
            value = _first(src[key])
            if isinstance(value, list):
                problems.append(raw.problem((key,), f"expected one group name, got {len(value)}"))
            groups[key] = value
    if groups or "GROUP1" in src or "GROUP2" in src:
        out["groups"] = groups
    if "data" in src:
        out["words"] = src["data"]
    choices = src.get("answer_choices")
    if choices is not None:
        out["labels"] = choices

    refs = src.get("reference") or []
    premises = src.get("premise")
    if premises is not None:
        if isinstance(premises, list):
            out["premises"] = []
            for i, p in enumerate(premises):
                item: dict[str, Any] = {"text": p}
                if i < len(refs) and refs[i] is not None:
                    item["reference"] = refs[i]
                out["premises"].append(item)
                fmap[f"premises[{i}].text"] = f"premise[{i}]"
            if len(refs) != len(premises) and "reference" in src:
                problems.append(
                    raw.problem(("reference",), f"{len(refs)} references for {len(premises)} premises", "warning")
                )
        else:
            out["premises"] = premises
            fmap["premises"] = "premise"

    hyps: list[dict[str, Any]] = []
    for kind, hkey, qkey in (
        ("test", "test_hypothesis", "test_question"),
        ("bias", "bias_hypothesis_stereotypical", "bias_question_stereotypical"),
    ):
        entries = src.get(hkey, [])
        questions = src.get(qkey, [])
        if not isinstance(entries, list):
            problems.append(raw.problem((hkey,), "expected a list of [text, label(s)]"))
            continue
        for j, entry in enumerate(entries):
            n = 2 if kind == "test" else 3
            if not isinstance(entry, list) or len(entry) != n:
                problems.append(
                    raw.problem((hkey, j), f"expected [text, {'true_label' if n == 2 else 'true_label, bias_label'}]")
                )
                continue
            i = len(hyps)
            h: dict[str, Any] = {"text": entry[0], "kind": kind, "stance": "pro", "true_label": entry[1]}
            if kind == "bias":
                h["bias_label"] = entry[2]
            if j < len(questions) and isinstance(questions[j], list) and questions[j]:
                h["question"] = questions[j][0]
            hyps.append(h)
            fmap[f"hypotheses[{i}].text"] = f"{hkey}[{j}][0]"
            fmap[f"hypotheses[{i}].true_label"] = f"{hkey}[{j}][1]"
            fmap[f"hypotheses[{i}].bias_label"] = f"{hkey}[{j}][2]"
            fmap[f"hypotheses[{i}].question"] = f"{qkey}[{j}][0]"
            fmap[f"hypotheses[{i}]"] = f"{hkey}[{j}]"
        if questions and len(questions) != len(entries):
            problems.append(
                raw.problem((qkey,), f"{len(questions)} questions for {len(entries)} hypotheses", "warning")
            )
    if hyps or "test_hypothesis" in src or "bias_hypothesis_stereotypical" in src:
        out["hypotheses"] = hyps
    out["source"] = {
        "format": "bbnli",
        "file": raw.path.name,
        "id": src.get("id"),
        "name": src.get("name"),
    }
    raw.field_map.update(fmap)
    return out, problems


def read_bbnli(path: Path) -> tuple[dict | None, list[Problem]]:
    """A BBNLI source file converted into the project's format and checked as a template (None
    when it cannot be read or is not BBNLI), with every problem found, named in BBNLI's fields."""
    from ....authoring.files import read_file
    from ....core.errors import display_path
    from .schema import check_template

    raw, problems = read_file(path)
    if raw is None:
        return None, problems
    if not is_bbnli(raw.data):
        return None, problems + [
            Problem(
                display_path(path), None, "", "not a BBNLI file (no bias_hypothesis_stereotypical or test_hypothesis)"
            )
        ]
    data, found = convert(raw)
    _, checked = check_template(RawFile(raw.path, data, raw.shown, field_map=raw.field_map))
    return data, problems + found + checked


def to_bbnli(template: dict) -> dict:
    """The inverse of `convert`: used to check that an import loses nothing."""
    src = template.get("source") or {}
    out: dict[str, Any] = {"id": src.get("id"), "premise": [p["text"] for p in template["premises"]]}
    for kind, hkey, qkey in (
        ("test", "test_hypothesis", "test_question"),
        ("bias", "bias_hypothesis_stereotypical", "bias_question_stereotypical"),
    ):
        hyps = [h for h in template["hypotheses"] if h["kind"] == kind]
        out[hkey] = [[h["text"], h["true_label"]] + ([h["bias_label"]] if kind == "bias" else []) for h in hyps]
        out[qkey] = [
            [h["question"], h["true_label"]] + ([h["bias_label"]] if kind == "bias" else [])
            for h in hyps
            if "question" in h
        ]
    if "labels" in template:
        out["answer_choices"] = template["labels"]
    out["data"] = template.get("words", {})
    out["GROUP1"] = [template["groups"]["GROUP1"]]
    out["GROUP2"] = [template["groups"]["GROUP2"]]
    out["name"] = src.get("name", template.get("name"))
    if "phenomenon" in template:
        out["phenomenon"] = template["phenomenon"]
    if "category" in template:
        out["group"] = template["category"]
    out["domain"] = template.get("domain")
    out["reference"] = [p.get("reference") for p in template["premises"]]
    return out


def dump_yaml(data: dict, path: Path) -> None:
    """Write a template as YAML that a person can edit (block style, long lines kept)."""
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.allow_unicode = True
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        yaml.dump(data, f)
    tmp.replace(path)
