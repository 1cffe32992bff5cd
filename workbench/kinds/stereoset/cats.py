"""StereoSet's CATs as read from its JSON: the data model and the parser that checks it.

The format is the original dataset's: `{"version", "data": {"intrasentence": [...],
"intersentence": [...]}}`, each example (a context association test, CAT) with `id`,
`target`, `bias_type`, `context` and three `sentences` (`id`, `sentence`, `gold_label` one of
stereotype / anti-stereotype / unrelated). Every problem is reported with the file, the
example id and the field path, all at once, so a maintainer fixes a dirty file in one pass.

Pure code (the standard library and `core.errors`): a release's standalone evaluate.py carries
it verbatim (see `release/standalone`), so the script splits a context at its BLANK and finds
each option exactly as `workbench evaluate` does. Finding and reading files is data.py's.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import InputError, Problem, display_path

SPLITS = ("intrasentence", "intersentence")
GOLD = ("stereotype", "anti-stereotype", "unrelated")
BLANK = "BLANK"


@dataclass
class Sentence:
    id: str
    text: str
    gold: str
    option: str | None = None  # intrasentence: the words in place of BLANK
    prefix: str = ""  # intrasentence: the context before / after BLANK
    suffix: str = ""


@dataclass
class Example:
    id: str
    split: str
    target: str
    domain: str
    context: str
    sentences: dict[str, Sentence]  # gold label -> sentence
    where: str = ""  # field path in the file, for messages


@dataclass
class StereoSetData:
    source: str  # as the user gave it
    path: Path  # the JSON file read
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


def looks_like_stereoset(doc) -> bool:
    data = doc.get("data") if isinstance(doc, dict) else None
    return isinstance(data, dict) and "version" in doc and any(isinstance(data.get(s), list) for s in SPLITS)


def release_revision(manifest: dict) -> str | None:
    """What a release folder's scores call its revision: its manifest's version as the tag (v1.0.0)."""
    version = manifest.get("version")
    return f"v{version}" if version else None


# -- validation -----------------------------------------------------------------------------------
def parse(doc, path: Path, source: str | None = None, revision: str | None = None) -> StereoSetData:
    shown = display_path(path)
    if not looks_like_stereoset(doc):
        raise InputError(
            f'{shown} is not a StereoSet file: expected {{"version", "data": {{"intrasentence": '
            f'[...], "intersentence": [...]}}}}'
        )
    problems: list[Problem] = []

    def problem(where: str, example_id, message: str) -> None:
        tag = f"example {example_id!r}: " if example_id is not None else ""
        problems.append(Problem(shown, None, where, tag + message))

    examples: list[Example] = []
    several_blanks: list[str] = []  # intrasentence examples whose context has more than one BLANK
    glued: list[str] = []  # sentences whose option the reference code reads differently
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
                    prefix, suffix = "", ""  # several BLANKs (the published files have some): see _options
                    several_blanks.append(ex_id)
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
                    if context.count(BLANK) > 1:
                        found = _options(context, sentence.text)
                    else:
                        option = _option(prefix, suffix, sentence.text)
                        found = None if option is None else (prefix, option, suffix)
                    if found is None:
                        problem(
                            f"{s_where}.sentence",
                            ex_id,
                            f"does not match its context outside the BLANK: {sentence.text!r} vs {context!r}",
                        )
                        continue
                    sentence.prefix, sentence.option, sentence.suffix = found
                    if reference_word(context, sentence.text) != sentence.option:
                        glued.append(s_id)
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
    notes = []
    if several_blanks:
        notes.append(
            f"{len(several_blanks)} intrasentence example(s) have several BLANKs in the context "
            f"({', '.join(several_blanks[:5])}{' …' if len(several_blanks) > 5 else ''}): the last BLANK's "
            "words are scored, the earlier BLANKs filled with the sentence's own words. warning: the "
            "reference code puts its mask string in every BLANK and reads the first mask's score; "
            "--masked-intrasentence reference reproduces it for masked LMs"
        )
    if glued:
        notes.append(
            f"warning: {len(glued)} sentence(s) have an option the reference code reads differently "
            f"({', '.join(glued[:5])}{' …' if len(glued) > 5 else ''}): it scores the sentence's word at "
            "the BLANK with every punctuation mark removed (a BLANK glued to characters, as in BLANK's, or "
            "an option with a hyphen); the workbench scores exactly the words in place of BLANK; "
            "--masked-intrasentence reference reproduces the reference for masked LMs"
        )
    return StereoSetData(source or str(path), path, str(doc.get("version")), examples, revision, notes=notes)


def reference_word(context: str, sentence: str) -> str | None:
    """What the reference code scores for an intrasentence sentence: the sentence's word at the
    index of the context's last word holding BLANK (split on single spaces), every ASCII
    punctuation mark removed; None when the sentence has no word there."""
    index = None
    for i, word in enumerate(context.split(" ")):
        if BLANK in word:
            index = i
    words = sentence.split(" ")
    if index is None or index >= len(words):
        return None
    return words[index].translate(str.maketrans("", "", string.punctuation))


def _options(context: str, sentence: str) -> tuple[str, str, str] | None:
    """(prefix, option, suffix) for a context with several BLANKs: every BLANK matches some
    words of the sentence (case is ignored elsewhere); the option is the last BLANK's words,
    the prefix the context before it with the earlier BLANKs filled by the sentence's words."""
    parts = context.split(BLANK)
    pattern = "(.+?)".join(re.escape(p) for p in parts[:-1]) + "(.+)" + re.escape(parts[-1])
    match = re.fullmatch(pattern, sentence, flags=re.IGNORECASE | re.DOTALL)
    if match is None or not all(g.strip() for g in match.groups()):
        return None
    fills = match.groups()
    prefix = "".join(part + fill for part, fill in zip(parts[:-2], fills[:-1])) + parts[-2]
    return prefix, fills[-1], parts[-1]


def problems_for(problems: list[Problem], where: str) -> bool:
    return any(p.field == where or p.field.startswith((where + ".", where + "[")) for p in problems)


def _option(prefix: str, suffix: str, sentence: str) -> str | None:
    """The words of `sentence` in place of BLANK, or None when the rest does not match the
    context. Case is ignored outside the blank (a capitalised first word is common when BLANK
    opens the sentence); the context's own text is what masked LMs are scored on."""
    if len(sentence) <= len(prefix) + len(suffix):
        return None
    head, tail = sentence[: len(prefix)], sentence[len(sentence) - len(suffix) :]
    if head.lower() != prefix.lower() or tail.lower() != suffix.lower():
        return None
    option = sentence[len(prefix) : len(sentence) - len(suffix)]
    return option if option.strip() else None
