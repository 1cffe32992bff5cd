"""The project's template format and its checks.

One file is one subtopic. The format is a superset of BBNLI's (see docs/templates.md):

    id, name, domain, category, phenomenon      who/what the subtopic is about
    groups: {GROUP1: .., GROUP2: ..}            the group pair swapped for the anti stance
    identities: {GROUP1: [..], GROUP2: [..]}    optional wider identity lists
    words: {NAME: [..]}                         word lists; every combination is expanded
    premises: [{text, reference}]               no masks here
    hypotheses: [{text, kind, stance, true_label, bias_label, question}]
    labels: [..]                                what integer labels index (BBNLI's order)
    source: {..}                                provenance of imported templates

`check_template` reports every problem it finds, each with its field path, and returns a
:class:`Template` only when there are no errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....core.errors import Problem
from ....core.ids import file_sha256
from ....authoring import text as tt
from ....authoring.files import RawFile, nonempty_string, unknown_fields

FORMAT = "workbench-template/1"
NLI_LABELS = ("entailment", "neutral", "contradiction")
BBNLI_LABEL_ORDER = ["contradiction", "neutral", "entailment"]
KINDS = ("bias", "test")
STANCES = ("pro", "anti")
TOP_LEVEL = {
    "format",
    "id",
    "name",
    "domain",
    "category",
    "phenomenon",
    "groups",
    "identities",
    "words",
    "premises",
    "hypotheses",
    "labels",
    "source",
}
HYPOTHESIS_KEYS = {"text", "kind", "stance", "true_label", "bias_label", "question"}
PREMISE_KEYS = {"text", "reference"}


@dataclass
class Premise:
    index: int
    text: str
    reference: str | None = None


@dataclass
class Hypothesis:
    index: int
    text: str
    kind: str
    stance: str
    true_label: str
    bias_label: str | None
    question: str | None = None

    @property
    def masked(self) -> bool:
        return bool(tt.masks(self.text))


@dataclass
class Template:
    id: str
    name: str
    domain: str
    groups: dict[str, str]
    words: dict[str, list[str]]
    premises: list[Premise]
    hypotheses: list[Hypothesis]
    category: str | None = None
    phenomenon: str | None = None
    identities: dict[str, list[str]] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    sha256: str = ""

    @property
    def masked_hypotheses(self) -> list[Hypothesis]:
        return [h for h in self.hypotheses if h.masked]


def _label(value: Any, labels: list[str], raw: RawFile, path: tuple, problems: list[Problem]) -> str | None:
    if isinstance(value, bool):
        problems.append(raw.problem(path, f"label must be a name {list(NLI_LABELS)} or an index, not {value!r}"))
        return None
    if isinstance(value, int):
        if not 0 <= value < len(labels):
            problems.append(
                raw.problem(path, f"label index {value} out of range 0..{len(labels) - 1} of labels {labels}")
            )
            return None
        return labels[value]
    if isinstance(value, str) and value.strip().lower() in NLI_LABELS:
        return value.strip().lower()
    problems.append(raw.problem(path, f"unknown label {value!r}; use one of {list(NLI_LABELS)} or an index"))
    return None


def check_template(raw: RawFile) -> tuple[Template | None, list[Problem]]:
    problems: list[Problem] = []
    data = raw.data
    if not isinstance(data, dict):
        return None, [raw.problem((), f"a template is a mapping of fields, not a {type(data).__name__}")]

    unknown_fields(raw, (), data, TOP_LEVEL, problems)
    fmt = data.get("format", FORMAT)
    if fmt != FORMAT:
        problems.append(raw.problem(("format",), f"unsupported format {fmt!r}; expected {FORMAT!r}"))

    tid = data.get("id", raw.path.stem)
    if not isinstance(tid, str) or not tid.strip():
        problems.append(raw.problem(("id",), "id must be a non-empty string"))
        tid = raw.path.stem
    name = nonempty_string(data.get("name", tid), raw, ("name",), problems, "name") or tid
    if "domain" not in data:
        problems.append(raw.problem(("domain",), "missing field: every template names its domain"))
    domain = nonempty_string(data.get("domain", ""), raw, ("domain",), problems, "domain") if "domain" in data else None

    labels = data.get("labels", BBNLI_LABEL_ORDER)
    if not (
        isinstance(labels, list) and labels and all(isinstance(x, str) and x.lower() in NLI_LABELS for x in labels)
    ):
        problems.append(raw.problem(("labels",), f"labels must list NLI label names from {list(NLI_LABELS)}"))
        labels = BBNLI_LABEL_ORDER
    labels = [x.lower() for x in labels]

    # Group pair.
    groups: dict[str, str] = {}
    g = data.get("groups")
    if g is None:
        problems.append(raw.problem(("groups",), "missing group pair: groups: {GROUP1: .., GROUP2: ..}"))
    elif not isinstance(g, dict):
        problems.append(raw.problem(("groups",), "groups must map GROUP1 and GROUP2 to group names"))
    else:
        for key in tt.GROUP_KEYS:
            if key not in g:
                problems.append(raw.problem(("groups",), f"missing group pair: {key} is not defined"))
            else:
                value = nonempty_string(g[key], raw, ("groups", key), problems, key)
                if value:
                    groups[key] = value.strip()
        for key in sorted(set(g) - set(tt.GROUP_KEYS)):
            problems.append(
                raw.problem(("groups", key), "only GROUP1 and GROUP2 belong in groups; wider lists go in identities")
            )
        if len(groups) == 2 and groups["GROUP1"].lower() == groups["GROUP2"].lower():
            problems.append(raw.problem(("groups",), "GROUP1 and GROUP2 name the same group"))

    identities: dict[str, list[str]] = {}
    ids_raw = data.get("identities")
    if ids_raw is not None:
        if not isinstance(ids_raw, dict):
            problems.append(raw.problem(("identities",), "identities must map GROUP1/GROUP2 to lists of names"))
        else:
            for key, values in ids_raw.items():
                if key not in tt.GROUP_KEYS:
                    problems.append(raw.problem(("identities", key), "identity lists are keyed GROUP1 or GROUP2"))
                elif not isinstance(values, list) or not values:
                    problems.append(raw.problem(("identities", key), "empty list: give at least one identity name"))
                elif not all(isinstance(v, str) and v.strip() for v in values):
                    problems.append(raw.problem(("identities", key), "identity names must be non-empty strings"))
                else:
                    identities[key] = list(values)

    # Word lists.
    words: dict[str, list[str]] = {}
    w = data.get("words", {})
    if not isinstance(w, dict):
        problems.append(raw.problem(("words",), "words must map placeholder names to lists of words"))
        w = {}
    for key, values in w.items():
        path = ("words", key)
        if not tt.PLACEHOLDER.fullmatch("{{" + str(key) + "}}"):
            problems.append(raw.problem(path, f"word list name {key!r} must be UPPER_CASE"))
            continue
        if key in tt.GROUP_KEYS:
            problems.append(raw.problem(path, f"{key} is the group pair; define it under groups"))
            continue
        if values is None:
            problems.append(raw.problem(path, f"placeholder {{{{{key}}}}} has no values"))
            continue
        if not isinstance(values, list):
            problems.append(raw.problem(path, "a word list must be a list of strings"))
            continue
        if not values:
            problems.append(raw.problem(path, f"empty list: placeholder {{{{{key}}}}} has no values"))
            continue
        bad = [i for i, v in enumerate(values) if not isinstance(v, str) or not v.strip()]
        for i in bad:
            problems.append(raw.problem(path + (i,), "word must be a non-empty string"))
        if not bad:
            words[str(key)] = list(values)
            seen: set[str] = set()
            for i, v in enumerate(values):
                if v in seen:
                    problems.append(raw.problem(path + (i,), f"duplicate word {v!r}", "warning"))
                seen.add(v)
    known = set(words) | set(tt.GROUP_KEYS) | {str(k) for k in w}
    used: set[str] = set()

    def check_text(value: str, path: tuple, allow_masks: bool, unknown_severity: str = "error") -> None:
        for msg in tt.syntax_problems(value):
            problems.append(raw.problem(path, msg))
        for name in tt.placeholders(value):
            used.add(name)
            if name not in known:
                problems.append(
                    raw.problem(path, f"unknown placeholder {{{{{name}}}}}: not in words or groups", unknown_severity)
                )
        if not allow_masks and tt.MASK_LIKE.search(value):
            problems.append(raw.problem(path, "masks are allowed in hypotheses only"))

    # Premises.
    premises: list[Premise] = []
    p = data.get("premises")
    if p is None:
        problems.append(raw.problem(("premises",), "missing field: a template needs at least one premise"))
    elif not isinstance(p, list) or not p:
        problems.append(raw.problem(("premises",), "empty list: a template needs at least one premise"))
    else:
        seen_premises: set[str] = set()
        for i, item in enumerate(p):
            path = ("premises", i)
            if isinstance(item, str):
                item = {"text": item}
            if not isinstance(item, dict):
                problems.append(raw.problem(path, "a premise is a string or {text, reference}"))
                continue
            unknown_fields(raw, path, item, PREMISE_KEYS, problems)
            value = nonempty_string(item.get("text"), raw, path + ("text",), problems, "premise text")
            if value is None:
                continue
            check_text(value, path + ("text",), allow_masks=False)
            if value in seen_premises:
                problems.append(raw.problem(path + ("text",), "duplicate premise", "warning"))
            seen_premises.add(value)
            ref = item.get("reference")
            premises.append(Premise(i, value, ref if isinstance(ref, str) else None))

    # Hypotheses.
    hypotheses: list[Hypothesis] = []
    h = data.get("hypotheses")
    if h is None:
        problems.append(raw.problem(("hypotheses",), "missing field: a template needs at least one hypothesis"))
    elif not isinstance(h, list) or not h:
        problems.append(raw.problem(("hypotheses",), "empty list: a template needs at least one hypothesis"))
    else:
        seen_hyp: dict[tuple[str, str], int] = {}
        for i, item in enumerate(h):
            path = ("hypotheses", i)
            if not isinstance(item, dict):
                problems.append(raw.problem(path, "a hypothesis is a mapping with text, kind, stance and labels"))
                continue
            unknown_fields(raw, path, item, HYPOTHESIS_KEYS, problems)
            value = nonempty_string(item.get("text"), raw, path + ("text",), problems, "hypothesis text")
            kind = item.get("kind", "bias")
            if kind not in KINDS:
                problems.append(raw.problem(path + ("kind",), f"kind must be one of {list(KINDS)}, not {kind!r}"))
            stance = item.get("stance", "pro")
            if stance not in STANCES:
                problems.append(
                    raw.problem(path + ("stance",), f"stance must be one of {list(STANCES)}, not {stance!r}")
                )
            if "true_label" not in item:
                problems.append(raw.problem(path + ("true_label",), "missing field: true_label"))
                true_label = None
            else:
                true_label = _label(item["true_label"], labels, raw, path + ("true_label",), problems)
            bias_label = None
            if item.get("bias_label") is not None:
                bias_label = _label(item["bias_label"], labels, raw, path + ("bias_label",), problems)
            elif kind == "bias":
                problems.append(raw.problem(path + ("bias_label",), "missing field: bias hypotheses need a bias_label"))
            question = item.get("question")
            if question is not None:
                question = nonempty_string(question, raw, path + ("question",), problems, "question")
                if question:
                    # Questions are BBNLI's QA form, not used for NLI: an unknown placeholder
                    # there renders empty (as in BBNLI) and is only a warning.
                    check_text(question, path + ("question",), allow_masks=False, unknown_severity="warning")
            if value is None:
                continue
            check_text(value, path + ("text",), allow_masks=True)
            key = (" ".join(value.split()), str(kind))
            if key in seen_hyp:
                problems.append(
                    raw.problem(path + ("text",), f"duplicate hypothesis (same as hypotheses[{seen_hyp[key]}])")
                )
            else:
                seen_hyp[key] = i
            if kind == "bias" and not any(n in tt.GROUP_KEYS for n in tt.placeholders(value)):
                problems.append(
                    raw.problem(
                        path + ("text",),
                        "bias hypothesis mentions no {{GROUP1}}/{{GROUP2}}: its anti stance equals its pro",
                        "warning",
                    )
                )
            if kind in KINDS and stance in STANCES and true_label is not None:
                hypotheses.append(Hypothesis(i, value, kind, stance, true_label, bias_label, question))

    for key in sorted(set(words) - used):
        problems.append(
            raw.problem(
                ("words", key),
                f"unused placeholder: {{{{{key}}}}} appears in no premise, hypothesis or question",
                "warning",
            )
        )

    if any(pr.severity == "error" for pr in problems):
        return None, problems
    template = Template(
        id=tid.strip(),
        name=name,
        domain=domain or "",
        groups=groups,
        words=words,
        premises=premises,
        hypotheses=hypotheses,
        category=data.get("category"),
        phenomenon=data.get("phenomenon"),
        identities=identities,
        source=data.get("source") or {},
        path=raw.path,
        sha256=file_sha256(raw.path) if raw.path.is_file() else "",  # "": a document held in a table, not a file
    )
    return template, problems
