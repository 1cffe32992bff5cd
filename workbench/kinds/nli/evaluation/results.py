"""What the NLI evaluators share besides the measures (scoring.py): reading a release's rows,
a model as it is run (`Judge`) and the samples a model answered.

The declaration (../evaluate.py), which is also a release's evaluate.py, reads the rows and
leaves out unanswered samples with these functions, so workbench and the script read the same
rows, refuse the same samples and name the data set the same way. Pure code (the standard
library and workbench's strict readers; pyarrow inside `read_parquet`): a release carries it in
its evaluator/ folder.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from dataclasses import dataclass, field
from pathlib import Path

from ....core.errors import InputError, ModelError, display_path
from ....core.files import read_parquet
from ....core.text import check_header, read_json

COLUMNS = ("premise", "hypothesis", "stance", "domain", "subtopic", "pair_id")


@dataclass
class EvalSet:
    source: str
    rows: list[dict]
    repo: str | None = None
    revision: str | None = None
    notes: list[str] = field(default_factory=list)
    config: dict | None = None  # a release's project config, from its manifest (how its LLM judge asks)

    @property
    def label(self) -> str:
        if self.repo:
            return f"{self.repo}@{self.revision}" if self.revision else self.repo
        return self.source


@dataclass
class Judge:
    """An NLI model as `score` runs it: `run(pairs, release config, progress)` -> a label per
    (premise, hypothesis), None where a generated answer holds no answer word; `asked`: how a
    judge asked in a prompt was asked (None for a classifier); `answers`: after a run, per pair,
    what a generated answer that held no answer word said (None elsewhere)."""

    name: str
    ref: Any
    run: Callable[[list, dict | None, Callable[[int], None]], list]
    asked: dict | None = None
    answers: list | None = None


def read_export(folder: Path, source: str) -> EvalSet:
    """A release folder's samples: data/all.parquet (else every Parquet file under data/), named
    by its manifest's repository and vVERSION when it has one."""
    data = folder / "data"
    files = (
        [data / "all.parquet"]
        if (data / "all.parquet").is_file()
        else sorted(data.rglob("*.parquet"))
        if data.is_dir()
        else []
    )
    if not files:
        raise InputError(f"{display_path(folder)}: no release data (expected data/all.parquet)")
    rows = []
    for f in files:
        table = read_parquet(f)
        check_header(table.column_names, display_path(f))  # to_pylist would keep a repeated column's last
        missing = {"premise", "hypothesis", "stance", "domain", "subtopic"} - set(table.column_names)
        if missing:
            raise InputError(f"{display_path(f)}: not an NLI release table: no column(s) {', '.join(sorted(missing))}")
        rows.extend(table.to_pylist())
    manifest = folder / "manifest.json"
    repo = revision = None
    if manifest.is_file():
        meta = read_json(manifest, "release manifest")
        if not isinstance(meta, dict):
            raise InputError(f"{display_path(manifest)}: the release manifest is not a JSON object")
        repo, revision = meta.get("repo"), meta.get("version") and f"v{meta['version']}"
        config = meta.get("config") if isinstance(meta.get("config"), dict) else None
    else:
        config = None
    return EvalSet(
        source,
        [{**{k: r.get(k) for k in COLUMNS}, "cluster": template_of(r.get("provenance"))} for r in rows],
        repo,
        revision,
        config=config,
    )


def template_of(provenance) -> str | None:
    """The masked template a release sample's fill came from (its provenance), the cluster its
    lexical variants share (a renewed BBNLI's: the audit item, the hypothesis its word combinations
    share); None when the row does not say."""
    import json

    try:
        found = json.loads(provenance) if isinstance(provenance, str) else None
    except ValueError:
        return None
    if not isinstance(found, dict) or found.get("template_id") is None:
        return None
    if found.get("audit_item"):  # a renewed BBNLI (kinds/nli/renew.py): its hypothesis, the same when fixed
        return found["audit_item"]
    return f"{found['template_id']}|{found.get('masked_template') or ''}"


def answered(rows: list[dict], predictions: list, where: str) -> tuple[list[dict], list[str]]:
    """The rows a model gave a label for, and those labels. A sample without one (None: a
    generated answer that reads as no answer word) is left out of the figures, and its
    counterfactual partner, now without a pair, counts among the unpaired samples: nothing is
    guessed. The caller counts and states what was left out."""
    if all(p is not None for p in predictions):
        return rows, predictions
    alone = {r.get("pair_id") for r, p in zip(rows, predictions) if p is None and r.get("pair_id") is not None}
    kept = [
        ({**r, "pair_id": None} if r.get("pair_id") in alone else r, p)
        for r, p in zip(rows, predictions)
        if p is not None
    ]
    if not kept:
        raise ModelError(
            f"{where}: none of the {len(rows)} answers reads as an answer word, so there is nothing to "
            "score; see the prompt and answers in [llm]"
        )
    return [r for r, _ in kept], [p for _, p in kept]
