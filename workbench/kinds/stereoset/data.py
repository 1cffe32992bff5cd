"""StereoSet files: loading, validation, and the predictions exchange format.

The format is the original dataset's: `{"version", "data": {"intrasentence": [...],
"intersentence": [...]}}`, each example (a context association test, CAT) with `id`,
`target`, `bias_type`, `context` and three `sentences` (`id`, `sentence`, `gold_label` one of
stereotype / anti-stereotype / unrelated). A workbench release folder holds the same JSON in
`data/stereoset.json` beside a `manifest.json` with `"kind": "stereoset"`.

Every problem is reported with the file, the example id and the field path, all at once, so
a maintainer fixes a dirty file in one pass.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import InputError, Problem, display_path

SPLITS = ("intrasentence", "intersentence")
GOLD = ("stereotype", "anti-stereotype", "unrelated")
BLANK = "BLANK"
RELEASE_FILE = Path("data") / "stereoset.json"


@dataclass
class Sentence:
    id: str
    text: str
    gold: str
    option: str | None = None       # intrasentence: the words in place of BLANK
    prefix: str = ""                # intrasentence: the context before / after BLANK
    suffix: str = ""


@dataclass
class Example:
    id: str
    split: str
    target: str
    domain: str
    context: str
    sentences: dict[str, Sentence]  # gold label -> sentence
    where: str = ""                 # field path in the file, for messages


@dataclass
class StereoSetData:
    source: str                     # as the user gave it
    path: Path                      # the JSON file read
    version: str
    examples: list[Example]
    revision: str | None = None
    notes: list[str] = field(default_factory=list)

    def split(self, name: str) -> list[Example]:
        return [e for e in self.examples if e.split == name]

    @property
    def splits(self) -> list[str]:
        return [s for s in SPLITS if any(e.split == s for e in self.examples)]

    def sentences(self) -> list[tuple[Example, Sentence]]:
        return [(e, e.sentences[g]) for e in self.examples for g in GOLD]


# -- finding the file -----------------------------------------------------------------------------
def looks_like_stereoset(doc) -> bool:
    data = doc.get("data") if isinstance(doc, dict) else None
    return isinstance(data, dict) and "version" in doc and any(isinstance(data.get(s), list) for s in SPLITS)


def release_file(folder: Path) -> Path | None:
    """The StereoSet JSON inside a workbench release folder, if it is a StereoSet release."""
    manifest = folder / "manifest.json"
    if manifest.is_file():
        try:
            kind = json.loads(manifest.read_text(encoding="utf-8")).get("kind")
        except (OSError, ValueError, AttributeError):
            kind = None
        if kind not in (None, "stereoset"):
            return None
    candidate = folder / RELEASE_FILE
    return candidate if candidate.is_file() else None


def locate(source: str) -> tuple[Path, str | None]:
    """(JSON file, revision) for a file, a release folder, or ORG/NAME@REV on the Hub."""
    path = Path(source).expanduser()
    if path.is_file():
        return path, None
    if path.is_dir():
        found = release_file(path)
        if found is None:
            raise InputError(f"{display_path(path)}: not a StereoSet release (expected manifest.json with "
                             f"\"kind\": \"stereoset\" and {RELEASE_FILE})")
        return found, _manifest_version(path)
    from ...evaluation.data import HUB_SPEC

    m = HUB_SPEC.match(source)
    if not m or source.startswith((".", "/", "~")):
        raise InputError(f"StereoSet file not found: {source}")
    from ...release.publish import fetch_release

    folder, fetched = fetch_release(m.group("repo"), m.group("rev"))
    found = release_file(folder)
    if found is None:
        raise InputError(f"{source}: the Hub dataset is not a StereoSet release (no {RELEASE_FILE})")
    return found, fetched if m.group("rev") else _manifest_version(folder) or "main"


def _manifest_version(folder: Path) -> str | None:
    try:
        version = json.loads((folder / "manifest.json").read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError, AttributeError):
        return None
    return f"v{version}" if version else None


def read_json(path: Path, what: str):
    shown = display_path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{what} not found: {shown}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {what} {shown}: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{what} {shown} is not valid JSON", [Problem(shown, exc.lineno, "", exc.msg)]) from None


# -- loading and validation -----------------------------------------------------------------------
def load(source: str) -> StereoSetData:
    path, revision = locate(source)
    doc = read_json(path, "StereoSet file")
    return parse(doc, path, source, revision)


def parse(doc, path: Path, source: str | None = None, revision: str | None = None) -> StereoSetData:
    shown = display_path(path)
    if not looks_like_stereoset(doc):
        raise InputError(f"{shown} is not a StereoSet file: expected {{\"version\", \"data\": {{\"intrasentence\": "
                         f"[...], \"intersentence\": [...]}}}}")
    problems: list[Problem] = []

    def problem(where: str, example_id, message: str) -> None:
        tag = f"example {example_id!r}: " if example_id is not None else ""
        problems.append(Problem(shown, None, where, tag + message))

    examples: list[Example] = []
    example_ids: dict[str, str] = {}
    sentence_ids: dict[str, str] = {}
    for split in SPLITS:
        items = doc["data"].get(split, [])
        if not isinstance(items, list):
            problem(f"data.{split}", None, "must be a list of examples")
            continue
        for index, item in enumerate(items):
            where = f"data.{split}[{index}]"
            if not isinstance(item, dict):
                problem(where, None, "must be an object")
                continue
            ex_id = item.get("id")
            if not isinstance(ex_id, str) or not ex_id:
                problem(f"{where}.id", None, "missing or not a string")
                ex_id = None
            elif ex_id in example_ids:
                problem(f"{where}.id", ex_id, f"duplicate example id (also at {example_ids[ex_id]})")
            else:
                example_ids[ex_id] = where
            fields = {}
            for name in ("target", "bias_type", "context"):
                value = item.get(name)
                if not isinstance(value, str) or not value.strip():
                    problem(f"{where}.{name}", ex_id, "missing or empty")
                fields[name] = value.strip() if isinstance(value, str) else ""
            context = fields["context"]
            prefix = suffix = None
            if split == "intrasentence" and context:
                count = context.count(BLANK)
                if count == 1:
                    prefix, suffix = context.split(BLANK)
                elif count == 0:
                    hint = " (the marker is the upper-case word BLANK)" if "blank" in context.lower() else ""
                    problem(f"{where}.context", ex_id, f"no BLANK in the context{hint}: {context!r}")
                else:
                    problem(f"{where}.context", ex_id, f"{count} BLANKs in the context, expected one: {context!r}")
            sentences = item.get("sentences")
            if not isinstance(sentences, list):
                problem(f"{where}.sentences", ex_id, "missing or not a list")
                continue
            by_gold: dict[str, Sentence] = {}
            for s_index, s in enumerate(sentences):
                s_where = f"{where}.sentences[{s_index}]"
                if not isinstance(s, dict):
                    problem(s_where, ex_id, "must be an object")
                    continue
                s_id, text, gold = s.get("id"), s.get("sentence"), s.get("gold_label")
                bad = False
                if not isinstance(s_id, str) or not s_id:
                    problem(f"{s_where}.id", ex_id, "missing or not a string")
                    bad = True
                elif s_id in sentence_ids:
                    problem(f"{s_where}.id", ex_id, f"duplicate sentence id {s_id!r} (also at {sentence_ids[s_id]})")
                    bad = True
                else:
                    sentence_ids[s_id] = s_where
                if not isinstance(text, str) or not text.strip():
                    problem(f"{s_where}.sentence", ex_id, "missing or empty")
                    bad = True
                if gold is None:
                    problem(f"{s_where}.gold_label", ex_id, f"missing gold label (one of {', '.join(GOLD)})")
                    bad = True
                elif gold not in GOLD:
                    problem(f"{s_where}.gold_label", ex_id, f"unknown gold label {gold!r} (one of {', '.join(GOLD)})")
                    bad = True
                elif gold in by_gold:
                    problem(f"{s_where}.gold_label", ex_id, f"a second {gold!r} sentence")
                    bad = True
                if bad:
                    continue
                sentence = Sentence(s_id, text.strip(), gold)
                if prefix is not None:
                    option = _option(prefix, suffix, sentence.text)
                    if option is None:
                        problem(f"{s_where}.sentence", ex_id,
                                f"does not match its context outside the BLANK: {sentence.text!r} vs {context!r}")
                        continue
                    sentence.option, sentence.prefix, sentence.suffix = option, prefix, suffix
                by_gold[gold] = sentence
            absent = [g for g in GOLD if g not in by_gold]
            if absent and problems_for(problems, f"{where}.sentences"):
                pass  # a sentence's own problem explains the gap
            elif absent and len(sentences) != 3:
                problem(f"{where}.sentences", ex_id, f"{len(sentences)} sentences, expected 3 (one per gold label)")
            elif absent and all(isinstance(s, dict) and s.get("gold_label") in GOLD for s in sentences):
                problem(f"{where}.sentences", ex_id, f"no {' / '.join(absent)} sentence")
            if not absent and ex_id is not None and not problems_for(problems, where):
                examples.append(Example(ex_id, split, fields["target"], fields["bias_type"], context, by_gold, where))
    if problems:
        head = f"{len(problems)} problem(s) in StereoSet file {shown}"
        raise InputError(head, problems[:50])
    if not examples:
        raise InputError(f"{shown}: no examples in data.intrasentence or data.intersentence")
    return StereoSetData(source or str(path), path, str(doc.get("version")), examples, revision)


def problems_for(problems: list[Problem], where: str) -> bool:
    return any(p.field == where or p.field.startswith((where + ".", where + "[")) for p in problems)


def _option(prefix: str, suffix: str, sentence: str) -> str | None:
    """The words of `sentence` in place of BLANK, or None when the rest does not match the
    context. Case is ignored outside the blank (a capitalised first word is common when BLANK
    opens the sentence); the context's own text is what masked LMs are scored on."""
    if len(sentence) <= len(prefix) + len(suffix):
        return None
    head, tail = sentence[:len(prefix)], sentence[len(sentence) - len(suffix):]
    if head.lower() != prefix.lower() or tail.lower() != suffix.lower():
        return None
    option = sentence[len(prefix):len(sentence) - len(suffix)]
    return option if option.strip() else None


# -- predictions: the reference evaluator's exchange format ---------------------------------------
def write_predictions(data: StereoSetData, scores: dict[str, float], path: Path) -> None:
    """{"intrasentence": [{"id", "score"}], "intersentence": [...]}: what the reference
    evaluator reads, full float precision so a round trip gives the same numbers."""
    from ...core.workspace import atomic_write_text

    doc = {split: [{"id": s.id, "score": scores[s.id]} for e in data.split(split) for s in
                   (e.sentences[g] for g in GOLD)] for split in data.splits}
    atomic_write_text(Path(path), json.dumps(doc, indent=1) + "\n")


def load_predictions(path: Path, data: StereoSetData) -> dict[str, float]:
    """Sentence id -> score from a predictions file; every sentence of the data must have one."""
    shown = display_path(path)
    doc = read_json(Path(path), "predictions file")
    if not isinstance(doc, dict) or not any(isinstance(doc.get(s), list) for s in SPLITS):
        raise InputError(f"predictions file {shown} must be {{\"intrasentence\": [{{\"id\", \"score\"}}], "
                         f"\"intersentence\": [...]}}")
    problems: list[Problem] = []
    scores: dict[str, float] = {}
    for split in SPLITS:
        items = doc.get(split, [])
        if not isinstance(items, list):
            problems.append(Problem(shown, None, split, "must be a list"))
            continue
        for index, item in enumerate(items):
            where = f"{split}[{index}]"
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                problems.append(Problem(shown, None, f"{where}.id", "missing or not a string"))
                continue
            score = item.get("score")
            if isinstance(score, bool) or not isinstance(score, (int, float)) or math.isnan(score):
                problems.append(Problem(shown, None, f"{where}.score", f"sentence {item['id']!r}: score must be a number, not {score!r}"))
                continue
            if item["id"] in scores:
                problems.append(Problem(shown, None, f"{where}.id", f"sentence {item['id']!r} scored twice"))
                continue
            scores[item["id"]] = float(score)
    missing = [(e, s) for e, s in data.sentences() if s.id not in scores]
    for e, s in missing[:20]:
        problems.append(Problem(shown, None, e.split, f"no score for sentence {s.id!r} ({s.gold}) of example {e.id!r}"))
    if problems:
        total = len(problems) + max(0, len(missing) - 20)
        more = f", {len(missing)} of them sentences without a score" if len(missing) > 20 else ""
        raise InputError(f"{total} problem(s) in predictions file {shown}{more}", problems[:50])
    return scores
