"""What `workbench evaluate` hands to a benchmark kind's evaluator.

Every kind's evaluator module (named by its `Kind.evaluator`) exposes:

    detect(path: Path) -> bool
        True when a file or release folder has this kind's shape (used when --kind is not given).
    evaluate(request: EvaluateRequest, console) -> dict
        Scores request.models (or request.predictions) on request.sources, prints the terminal
        tables on `console`, writes the outputs the request names (json/csv/plots/items/...)
        and returns the JSON document (`{"kind": ..., "models": {...}}`).

Errors a user can cause are raised as `InputError`/`ModelError` with file, row and column.
Models are loaded with `request.spec` (the shared model options) and recorded in
`request.runtimes`; `request.annotations()` (that record, and the warnings of sources scored
--unverified) goes into the JSON (`kinds.report.write_outputs` adds it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .intervals import Settings


@dataclass
class EvaluateRequest:
    sources: list[str]  # files / release folders / ORG/NAME@REV as given
    models: list[str] = field(default_factory=list)  # Hub names or local folders, as given
    predictions: Path | None = None  # score precomputed predictions instead of models (the first file)
    # every --predictions file by the model it stands for (NAME=FILE, else the file's stem), in order
    named_predictions: dict[str, Path] = field(default_factory=dict)
    predictions_out: Path | None = None  # write per-item scores in the kind's exchange format
    json_out: Path | None = None
    csv_out: Path | None = None
    plots: Path | None = None  # folder for PNG charts
    items_out: Path | None = None  # per-item rows (csv / parquet / jsonl by the kind)
    score_rule: str | None = None  # kind-specific scoring rule (e.g. mean-prob)
    options: dict[str, Any] = field(default_factory=dict)  # the options the kind's evaluator declares
    batch_size: int = 32
    device: str = "auto"
    cache_path: Path | None = None  # SQLite cache of model outputs (None: no cache)
    root: Path = field(default_factory=Path.cwd)  # where relative model paths resolve
    config: Any = None  # the project's Config (defaults such as evaluate.models)
    load: Any = None  # models.runtime.LoadSpec: the model options (None: device/batch_size)
    runtimes: dict = field(default_factory=dict)  # model -> how it ran (models.runtime.Runtime), for the JSON
    unverified: list = field(default_factory=list)  # sources scored without a manifest (--unverified): warnings
    intervals: Settings = field(default_factory=Settings)  # --ci-level, --bootstrap, --seed
    strict: bool = False  # --strict: refuse a source with bad rows instead of skipping them
    kind: str = ""  # the kind scored (for the provenance record)
    kind_code: dict | None = None  # its package, version and code hash (contract/code.py), for the provenance
    cache_usage_at_start: dict | None = None  # the cache's read/written counts before this run (core.cache.usage)

    @property
    def spec(self):
        """The model options every kind loads its models with (`--device`, `--dtype`, ...)."""
        from ..models.runtime import LoadSpec

        return self.load or LoadSpec(device=self.device, default_batch=self.batch_size)

    def annotations(self) -> dict:
        """What every JSON document records besides the measures: how the models ran (see
        models.runtime), what exactly was scored (evaluation.provenance) and, for sources scored
        --unverified, the warning saying so."""
        from ..models.runtime import runtime_record
        from .provenance import provenance

        return {
            "runtime": runtime_record(self.spec, self.runtimes),
            "provenance": provenance(self),
            **({"unverified": list(self.unverified)} if self.unverified else {}),
        }
