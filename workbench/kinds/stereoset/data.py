"""StereoSet files: finding and loading them, and the predictions exchange format.

The format is the original dataset's (see cats.py, which parses it). A workbench release
folder holds the same JSON in `data/stereoset.json` beside a `manifest.json` with
`"kind": "stereoset"`.

Every problem is reported with the file, the example id and the field path, all at once, so
a maintainer fixes a dirty file in one pass.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from ...core.errors import InputError, Problem, display_path
from ...core.text import DuplicateKey, duplicate_key_message, loads
from .cats import (  # noqa: F401 -- the data model and parser, imported from here by callers
    BLANK,
    GOLD,
    SPLITS,
    Example,
    Sentence,
    StereoSetData,
    looks_like_stereoset,
    parse,
    problems_for,
    release_revision,
)

RELEASE_FILE = Path("data") / "stereoset.json"


# -- finding the file -----------------------------------------------------------------------------
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
            raise InputError(
                f"{display_path(path)}: not a StereoSet release (expected manifest.json with "
                f'"kind": "stereoset" and {RELEASE_FILE})'
            )
        return found, _manifest_version(path)
    from ... import sources

    hub = sources.hub_spec(source)
    if not hub or not hub[1] or source.startswith((".", "/", "~")):
        raise InputError(f"StereoSet file not found: {source}")
    fetched = sources.resolve(source)
    found = release_file(fetched.path)
    if found is None:
        raise InputError(f"{source}: the Hub dataset is not a StereoSet release (no {RELEASE_FILE})")
    return found, fetched.revision


def _manifest_version(folder: Path) -> str | None:
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        return release_revision(manifest)
    except (OSError, ValueError, AttributeError):
        return None


def read_json(path: Path, what: str):
    shown = display_path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a file saved with a byte-order mark reads the same
    except FileNotFoundError:
        raise InputError(f"{what} not found: {shown}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {what} {shown}: {exc}") from None
    try:
        return loads(text)  # a key named twice in an object is refused, not read as its last value
    except DuplicateKey as exc:
        raise InputError(duplicate_key_message(shown, exc, what)) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{what} {shown} is not valid JSON",
            [Problem(shown, exc.lineno, f"column {exc.colno}", f"{exc.msg} (expected valid JSON)")],
        ) from None


def with_lines(error: InputError, path: Path) -> InputError:
    """`parse`'s problems, each with the line of the example or sentence it names (where its id
    appears in the file first): a JSON path says where, the line lets an editor jump there."""
    import re
    from dataclasses import replace

    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError):
        return error
    first: dict[str, int] = {}

    def line_of(ident: str) -> int | None:
        if ident not in first:
            quoted = json.dumps(ident)
            first[ident] = next((n for n, text in enumerate(lines, start=1) if quoted in text), None)
        return first[ident]

    named = re.compile(r"(?:example|sentence) '([^']+)'")
    error.problems = [
        replace(p, line=line_of(m.group(1))) if p.line is None and (m := named.search(p.message)) else p
        for p in error.problems
    ]
    return error


# -- the Hugging Face layout ------------------------------------------------------------------------
HF_GOLD = ("anti-stereotype", "stereotype", "unrelated")  # the HF dataset's ClassLabel names, in order
HF_NOTE = (
    "read as the Hugging Face layout (one example per record, `sentences` as lists; an example is "
    "intrasentence when its context holds BLANK; integer gold labels are the dataset's ClassLabel: "
    "0 anti-stereotype, 1 stereotype, 2 unrelated)"
)


def hf_records(path: Path, strict: bool = False) -> list | None:
    """The records of a Hugging Face export of StereoSet (JSON lines, or a JSON list), or None
    when the file is not one. A record: id, target, bias_type, context and `sentences` as a dict
    of lists (sentence, id, gold_label[, labels]). `strict` (loading, not detecting): a key
    named twice in an object is an InputError naming it and its line."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    stripped = text.lstrip()
    records: list = []
    parse = loads if strict else json.loads
    number = 1
    try:
        if stripped.startswith("["):
            records = parse(text)
        elif stripped.startswith("{"):
            for number, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    records.append(parse(line))
            number = 1
    except DuplicateKey as exc:
        raise InputError(duplicate_key_message(display_path(path), exc, "StereoSet file", number - 1)) from None
    except ValueError:
        return None
    if not records or not isinstance(records, list):
        return None
    first = records[0]
    if not (
        isinstance(first, dict)
        and "context" in first
        and isinstance(first.get("sentences"), dict)
        and "sentence" in first["sentences"]
    ):
        return None
    return records


def from_hf(records: list) -> dict:
    """The published layout of a Hugging Face export (see hf_records)."""
    data: dict[str, list] = {"intrasentence": [], "intersentence": []}
    for record in records:
        if not isinstance(record, dict):
            data["intersentence"].append(record)  # parse() names it
            continue
        sentences = record.get("sentences") if isinstance(record.get("sentences"), dict) else {}
        texts = sentences.get("sentence") or []
        ids = sentences.get("id") or [None] * len(texts)
        golds = sentences.get("gold_label") or [None] * len(texts)
        rows = []
        for text, sid, gold in zip(texts, ids, golds):
            if isinstance(gold, int) and not isinstance(gold, bool) and 0 <= gold < len(HF_GOLD):
                gold = HF_GOLD[gold]
            rows.append({"id": sid, "sentence": text, "gold_label": gold})
        example = {k: record.get(k) for k in ("id", "target", "bias_type", "context")}
        example["sentences"] = rows
        split = "intrasentence" if BLANK in str(record.get("context") or "") else "intersentence"
        data[split].append(example)
    return {"version": "huggingface", "data": data}


# -- loading ------------------------------------------------------------------------------------
def load(source: str) -> StereoSetData:
    path, revision = locate(source)
    records = hf_records(path, strict=True) if path.suffix.lower() in (".jsonl", ".json") else None
    if records is not None:
        loaded = parse(from_hf(records), path, source, revision)
        loaded.notes.insert(0, HF_NOTE)
        return loaded
    doc = read_json(path, "StereoSet file")
    try:
        return parse(doc, path, source, revision)
    except InputError as exc:
        raise with_lines(exc, path) from None


# -- predictions: the reference evaluator's exchange format ---------------------------------------
def write_predictions(data: StereoSetData, scores: dict[str, float], path: Path) -> None:
    """{"intrasentence": [{"id", "score"}], "intersentence": [...]}: what the reference
    evaluator reads, full float precision so a round trip gives the same numbers."""
    from ...core.outputs import atomic_write_text

    doc = {
        split: [{"id": s.id, "score": scores[s.id]} for e in data.split(split) for s in (e.sentences[g] for g in GOLD)]
        for split in data.splits
    }
    atomic_write_text(Path(path), json.dumps(doc, indent=1) + "\n")


def load_predictions(path: Path, data: StereoSetData) -> dict[str, float]:
    """Sentence id -> score from a predictions file; every sentence of the data must have one."""
    shown = display_path(path)
    doc = read_json(Path(path), "predictions file")
    if not isinstance(doc, dict) or not any(isinstance(doc.get(s), list) for s in SPLITS):
        raise InputError(
            f'predictions file {shown} must be {{"intrasentence": [{{"id", "score"}}], "intersentence": [...]}}'
        )
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
                problems.append(
                    Problem(
                        shown, None, f"{where}.score", f"sentence {item['id']!r}: score must be a number, not {score!r}"
                    )
                )
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
