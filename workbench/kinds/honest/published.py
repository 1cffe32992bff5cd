"""A model's fills or completions read from a file (`--predictions`), in place of running it.

Two layouts, told apart by the first record:

- FairBelief's published beliefs, read as published: one JSON array per line,
  `[index, uuid, prompt, [fills or completions], type]` (a sixth element, retrieved documents,
  is allowed), line n standing for row n of the template file (every row, in its order). The
  prompt must be that row's template: `[M]` as the model's own mask token in brackets (`[MASK]`,
  `<mask>`, `<extra_id_0>`), or for a causal model the text before `[M]` (trailing spaces or not).
- JSON lines keyed by template: `{"template": "the woman is [M].", "fills": [...]}`, one record per
  template text in any order (a text the template file repeats takes the same fills on every row).

Every template gets the same number of fills, at least K (the first K are scored). Fills or
completions are told apart as the reference HONEST tool does (`honest_score_inner`): when the first
template's first entry holds a space, every entry is a completion, scored word by word
(completions.completion_category); otherwise each is one word, matched whole (Lexicon.category_of).

Pure code (the standard library, core.errors, parsing.py and completions.py): a release's
evaluate.py carries it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import InputError, display_path
from .completions import completion_category
from .parsing import SLOT, Lexicon, Template

FAIRBELIEF = "fairbelief"  # [index, uuid, prompt, [fills], type] per line, in the template file's row order
KEYED = "keyed"  # {"template": ..., "fills": [...]} per line
WORDS, COMPLETIONS = "words", "completions"
MASK_TOKEN = re.compile(r"\[[^\]\s]+\]|<[^>\s]+>")  # [MASK], <mask>, <extra_id_0>
MASK_TOKENS = ("[mask]", "[MASK]", "[M]", "[m]", "<mask>", "<MASK>")  # what FairBelief removes from a prompt


@dataclass(frozen=True)
class Read:
    """What was read from a file of fills, as the JSON records it."""

    file: str  # its name (no folder: a path of this machine is no part of a result)
    sha256: str
    layout: str  # FAIRBELIEF or KEYED
    entries: str  # WORDS or COMPLETIONS
    per_template: int  # fills per template in the file
    used: int  # the first K of them are scored

    def describe(self) -> dict:
        return {
            "file": self.file,
            "sha256": self.sha256,
            "layout": self.layout,
            "entries": self.entries,
            "fills_per_template": self.per_template,
            "fills_scored": self.used,
        }


class Fills(list):
    """One result per template row ({"fills", "hurtful", "prompt"}), with what was `read`."""

    def __init__(self, results: list[dict], read: Read):
        super().__init__(results)
        self.read = read


def fits(prompt: str, template: str) -> bool:
    """The prompt is this template: with [M] kept, as a mask token in brackets, or (a causal model's)
    the text before [M] with or without its trailing spaces."""
    before, _, after = template.partition(SLOT)
    if prompt == template or prompt.rstrip() == before.rstrip():
        return True
    if len(prompt) < len(before) + len(after) or not (prompt.startswith(before) and prompt.endswith(after)):
        return False
    return MASK_TOKEN.fullmatch(prompt[len(before) : len(prompt) - len(after)]) is not None


def entries_of(first: str) -> str:
    """WORDS or COMPLETIONS by the reference's test: the first template's first entry holds a space."""
    return COMPLETIONS if len(first.split(" ")) > 1 else WORDS


def _records(path: Path) -> list[tuple[int, object]]:
    shown = display_path(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{shown}: --predictions file not found") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{shown}: --predictions file is not UTF-8 text (byte {exc.start})") from None
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise InputError(f"{shown}:{number}: not JSON ({exc.msg}, column {exc.colno})") from None
    if not out:
        raise InputError(f"{shown}: no fills (an empty file)")
    return out


def _fills(value, shown: str, number: int, field: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(f, str) for f in value):
        raise InputError(f"{shown}:{number}: {field}: a list of strings (the fills or completions), not {value!r:.60}")
    return value


def _fairbelief(records, every: list[Template], shown: str, source: str) -> dict[int, tuple[int, str, list[str]]]:
    """id(template row) -> (line, prompt, fills): record n is row n of the template file."""
    out = {}
    for n, (number, record) in enumerate(records):
        if not isinstance(record, list) or len(record) not in (5, 6) or not isinstance(record[2], str):
            raise InputError(
                f"{shown}:{number}: not FairBelief's layout [index, uuid, prompt, [fills], type] "
                f"(the first line is; this one is {type(record).__name__})"
            )
        if n >= len(every):
            raise InputError(f"{shown}:{number}: a row beyond the {len(every)} template rows of {source}")
        row = every[n]
        if not fits(record[2], row.text):
            raise InputError(
                f"{shown}:{number}: prompt {record[2]!r} is not template row {n + 1} of {source} "
                f"({row.text!r}, line {row.line}): the file follows another template order or template file"
            )
        out[id(row)] = (number, record[2], _fills(record[3], shown, number, "fills"))
    if len(records) < len(every):
        missing = every[len(records)]
        raise InputError(
            f"{shown}: {len(records)} rows, {source} has {len(every)}: template row {len(records) + 1} "
            f"({missing.text!r}, line {missing.line}) has no fills"
        )
    return out


def _keyed(records, rows: list[Template], shown: str, source: str) -> dict[int, tuple[int, str, list[str]]]:
    """id(template row) -> (line, prompt, fills): each row takes its text's record."""
    by_text: dict[str, tuple[int, list[str]]] = {}
    texts = {t.text for t in rows}
    for number, record in records:
        if not isinstance(record, dict) or not isinstance(record.get("template"), str) or "fills" not in record:
            raise InputError(
                f'{shown}:{number}: a record {{"template": ..., "fills": [...]}} (the first line is one), '
                f"not {json.dumps(record)[:60]}"
            )
        text, fills = record["template"], _fills(record["fills"], shown, number, "fills")
        if text not in texts:
            raise InputError(f"{shown}:{number}: template {text!r} is not in {source}")
        if text in by_text and by_text[text][1] != fills:
            raise InputError(
                f"{shown}:{number}: template {text!r} again, with other fills (first at line {by_text[text][0]})"
            )
        by_text.setdefault(text, (number, fills))
    missing = next((t for t in rows if t.text not in by_text), None)
    if missing is not None:
        raise InputError(f"{shown}: no fills for template {missing.text!r} ({source} line {missing.line})")
    return {id(t): (by_text[t.text][0], t.text, by_text[t.text][1]) for t in rows}


def read_fills(path: Path, rows: list[Template], every: list[Template], source: str, lexicon: Lexicon, K: int) -> Fills:
    """Each template row's first K fills, their lexicon categories and its prompt (`rows`: the rows
    scored; `every`: all rows of the template file, in order; `source`: how messages name it)."""
    path = Path(path)
    shown = display_path(path)
    records = _records(path)
    layout = FAIRBELIEF if isinstance(records[0][1], list) else KEYED
    found = _fairbelief(records, every, shown, source) if layout == FAIRBELIEF else _keyed(records, rows, shown, source)
    first_line, _, first = min(found.values())
    for number, _, fills in sorted(found.values()):
        if len(fills) != len(first):
            raise InputError(
                f"{shown}:{number}: {len(fills)} fills, line {first_line} has {len(first)}: every template needs as many"
            )
    if len(first) < K:
        raise InputError(
            f"{shown}: {len(first)} fills per template, fewer than --top-k {K}: pass --top-k {len(first)} or less"
        )
    entries = entries_of(first[0]) if first else WORDS
    match = (lambda text: completion_category(lexicon, text)) if entries == COMPLETIONS else lexicon.category_of
    known: dict[str, str | None] = {}  # each distinct fill matched once (models repeat their fills)
    results = []
    for row in rows:
        _, prompt, fills = found[id(row)]
        kept = fills[:K]
        hurtful = [known[f] if f in known else known.setdefault(f, match(f)) for f in kept]
        results.append({"fills": kept, "hurtful": hurtful, "prompt": prompt})
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return Fills(results, Read(path.name, digest, layout, entries, len(first), K))


def text_for_agreement(prompt: str, fill: str) -> str:
    """FairBelief's sentence for a fill: the prompt without its mask token, a space, the fill."""
    for token in MASK_TOKENS:
        prompt = prompt.replace(token, "")
    return prompt + " " + fill
