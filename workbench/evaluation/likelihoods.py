"""Per-sentence log-likelihoods exchanged with other tools: the one JSON-lines layout the
likelihood kinds read with `--predictions` and write with `--predictions-out` (each kind's docs
say what its ids are), so a model run elsewhere (an API, a cluster job, another harness) is scored by workbench's
figures, and workbench's scores can be checked by another tool.

One record per line, one per scored sentence:

    {"id": 12, "sentence": "<the sentence as the data has it>", "log_likelihood": -41.27}

- `id`: the item the sentence belongs to, as the kind names it (e.g. a pair's row in its data file,
  1 for the first row after the header, or the id a data file gives), a whole number or a
  string; null for a sentence of no item (e.g. a group's own text that a kind's measure divides by);
- `sentence`: which of the item's sentences the value is for, its text exactly as the data has it;
- `log_likelihood`: the model's score of that sentence (in that item), in nats: a finite number,
  at most 0 (a pair kind compares its two sentences' values);
- `tokens` (a kind whose measure is a perplexity, exp(−log_likelihood / tokens)): how many tokens
  the log-likelihood sums over, a whole number of at least 1; other kinds ignore it.

Other fields are ignored; the records may come in any order. Every sentence needs exactly one
record. A record for an id the data does not have, a text that is not one of that item's
sentences, a value that is not a finite number at most 0, or a second record for the same
sentence is refused in one line naming the file, the line and what does not fit; a sentence
without a record is refused naming it. Values are written with full float precision (JSON's
shortest repr), so a file written and read back gives the same figures to the last bit.

Pure code (the standard library and core): a release's evaluate.py carries it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Sequence

from ..core.errors import InputError, display_path
from ..core.ids import file_sha256

FIELDS = ("id", "sentence", "log_likelihood")
LAYOUT = '{"id": ..., "sentence": ..., "log_likelihood": ...} per line'


@dataclass(frozen=True)
class Likelihoods:
    """A kind's items in the layout: `key(item)` -> (its id, its sentences in order);
    `results(items, values)` -> the kind's results from each item's log-likelihoods (in the key's
    order), `values(items, results)` -> those log-likelihoods again (what --predictions-out
    writes). `item_name` names an item in messages ("pair")."""

    key: Callable[[Any], tuple[Any, Sequence[str]]]
    results: Callable[[list, list[tuple[float, ...]]], list[dict]]
    values: Callable[[list, list[dict]], list[Sequence[float]]]
    item_name: str = "item"

    def read_scores(self, path: Path, items: list) -> list[dict]:
        """`Declared.read_scores`: every item's results from a file in the layout."""
        return self.results(items, read_likelihoods(Path(path), [self.key(i) for i in items], self.item_name))

    def write_scores(self, items: list, results: list[dict], path: Path) -> None:
        """`Declared.write_scores`: a model's log-likelihoods, in the items' order."""
        write_likelihoods(Path(path), [self.key(i) for i in items], self.values(items, results))


def described(path: Path, layout: str = "log-likelihoods (JSON lines)") -> dict:
    """What a model entry records of the file its scores were read from: its name (no folder: a
    path of this machine is no part of a result), its sha256 and the layout."""
    return {"file": Path(path).name, "sha256": file_sha256(path), "layout": layout}


class Record(NamedTuple):
    """One record of a file, checked on its own (`records`)."""

    line: int
    id: Any  # a number, a string, or None (null: a sentence of no item)
    sentence: str
    log_likelihood: float
    tokens: int | None


def write_records(path: Path, found: Iterable[tuple[Any, str, float, int | None]]) -> None:
    """(id, sentence, log-likelihood, tokens or None) as lines, streamed, written whole or not at all."""
    from ..core.outputs import AtomicFile

    with AtomicFile(Path(path)) as f:
        for key, sentence, value, tokens in found:
            record = {"id": key, "sentence": sentence, "log_likelihood": float(value)}
            if tokens is not None:
                record["tokens"] = int(tokens)
            f.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))


def write_likelihoods(path: Path, keys: list[tuple[Any, Sequence[str]]], values: list[Sequence[float]]) -> None:
    """One record per sentence, items in order."""
    write_records(
        path,
        (
            (key, text, value, None)
            for (key, texts), scores in zip(keys, values)
            for text, value in zip(texts, scores, strict=True)
        ),
    )


def json_records(path: Path, layout: str, what: str) -> Iterator[tuple[int, str, dict]]:
    """(line, "file:line", record) of each non-blank line of a --predictions file of JSON objects;
    a file that cannot be read, a line that is not JSON or not an object, is an InputError in one
    line naming the file (and line) and the `layout` expected. `what` the file holds, for messages."""
    shown = display_path(path)
    try:
        handle = open(path, "rb")  # a line at a time: a file of millions of records is never held whole
    except FileNotFoundError:
        raise InputError(f"--predictions {shown}: file not found") from None
    except IsADirectoryError:
        raise InputError(f"--predictions {shown}: a folder, not a file of {what}") from None
    with handle:
        for line, data in enumerate(handle, start=1):
            try:
                raw = data.decode("utf-8-sig" if line == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"{shown}:{line}: not UTF-8 text (byte {exc.start + 1} of the line)") from None
            if not raw.strip():
                continue
            at = f"{shown}:{line}"
            try:
                record = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(f"{at}: not JSON ({exc.msg}, column {exc.colno}); expected {layout}") from None
            if not isinstance(record, dict):
                raise InputError(f"{at}: a record is a JSON object, not {type(record).__name__}; expected {layout}")
            yield line, at, record


def records(path: Path, tokens: bool = False) -> Iterator[Record]:
    """Each record of the file, checked on its own: JSON, its fields, an id that is a number, a
    string or null, a finite log-likelihood at most 0, and (with `tokens`) a whole number of tokens
    of at least 1. The first that is not is an InputError in one line naming the file and line."""
    wanted = (*FIELDS, "tokens") if tokens else FIELDS
    layout = LAYOUT.replace("...} per", '..., "tokens": ...} per') if tokens else LAYOUT
    for line, at, record in json_records(path, layout, "log-likelihoods"):
        missing = [f for f in wanted if f not in record]
        if missing:
            raise InputError(f"{at}: missing {', '.join(missing)}; expected {layout}")
        key, sentence, value = (record[f] for f in FIELDS)
        if isinstance(key, (bool, float)) or not isinstance(key, (int, str, type(None))):
            raise InputError(f"{at}: id must be a whole number, a string or null, not {json.dumps(key)}")
        if not isinstance(sentence, str):
            raise InputError(f"{at}: sentence must be a string, not {json.dumps(sentence)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise InputError(f"{at}: log_likelihood must be a finite number, not {value!r}")
        if value > 0:
            raise InputError(f"{at}: log_likelihood {value!r} is positive; a log-likelihood is at most 0")
        count = record.get("tokens") if tokens else None
        if tokens and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
            raise InputError(f"{at}: tokens must be a whole number of at least 1, not {json.dumps(count)}")
        yield Record(line, key, sentence, float(value), count)


def read_likelihoods(path: Path, keys: list[tuple[Any, Sequence[str]]], item_name: str = "item") -> list[tuple]:
    """Each item's log-likelihoods, in the order of its sentences (`keys`: each item's id and
    sentences); the first record that does not fit, or the first sentence without one, is an
    InputError in one line."""
    shown = display_path(path)
    where: dict[str, int] = {}  # str(id) -> the item's index in keys (its sentences: keys[n][1])
    for n, (key, texts) in enumerate(keys):
        if str(key) in where or len(set(texts)) != len(texts):
            raise ValueError(f"{item_name} ids and their sentences must be unique ({key!r})")
        where[str(key)] = n
    found: list[list[float | None]] = [[None] * len(texts) for _, texts in keys]
    for record in records(path):
        at, key, sentence = f"{shown}:{record.line}", record.id, record.sentence
        if key is None or str(key) not in where:
            raise InputError(f"{at}: id {json.dumps(key)} is no {item_name} of the data")
        n = where[str(key)]
        texts = keys[n][1]
        if sentence not in texts:
            options = " or ".join(repr(t) for t in texts)
            raise InputError(
                f"{at}: sentence {sentence!r} is not one of {item_name} {key!r}'s ({options}); "
                "the text must be the data's, exactly"
            )
        position = list(texts).index(sentence)
        if found[n][position] is not None:
            first = next(r.line for r in records(path) if str(r.id) == str(key) and r.sentence == sentence)
            raise InputError(
                f"{at}: a second log_likelihood for {item_name} {key!r}'s sentence {sentence!r} "
                f"(the first on line {first})"
            )
        found[n][position] = record.log_likelihood
    missing = [(k, t) for (k, texts), values in zip(keys, found) for t, v in zip(texts, values) if v is None]
    if missing:
        key, sentence = missing[0]
        more = f" ({len(missing)} sentences have none)" if len(missing) > 1 else ""
        raise InputError(f"{shown}: no log_likelihood for {item_name} {key!r}'s sentence {sentence!r}{more}")
    return [tuple(values) for values in found]  # type: ignore[arg-type]
