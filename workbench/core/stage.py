"""The stage interface: what a step of a benchmark kind's pipeline declares and computes.

A stage does only its own work: from its upstream tables and the settings it reads to one
output table. Everything shared — freshness, running what is upstream, timing, manifests,
reuse of unchanged partitions, the model cache — is the `Pipeline`'s (core/pipeline.py), so
a new stage is one class with `compute` and a few declarations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from .config import Config
    from .workspace import Workspace


@dataclass
class StageContext:
    """What a stage may read besides its input tables."""

    config: "Config"
    workspace: "Workspace"
    options: dict[str, Any] = field(default_factory=dict)  # command-line overrides (e.g. model, top_k)
    _cache: Any = None

    @property
    def cache(self):
        """The one cache of model outputs (SQLite), opened on first use and shared by all stages."""
        if self._cache is None:
            from .cache import Cache

            self._cache = Cache(self.workspace.root / "cache" / "models.sqlite")
        return self._cache

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None


@dataclass
class Output:
    """What `compute` returns: the rows it made, and counts of the work it did."""

    table: "pa.Table | None"
    work: dict[str, Any] = field(default_factory=dict)  # e.g. computed_fills, model_loaded
    extra: dict[str, Any] = field(default_factory=dict)  # manifest additions (model names, ...)


class Stage:
    """Base class of every stage; subclasses set the declarations and implement `compute`."""

    name: str = ""
    upstream: tuple[str, ...] = ()
    # the columns it reads of an upstream table, where not all (upstream stage -> column names): the
    # others are not read from disk (an imported table's million JSON records take seconds to read)
    reads_columns: dict[str, tuple[str, ...]] = {}
    optional_upstream: tuple[str, ...] = ()  # read-only views may compute without these (an empty table)
    format: int = 1  # bump when the output's shape changes: old outputs become stale
    partition_key: str | None = None  # column by which unchanged previous rows are reused
    partition_noun: str = "partitions"  # how counts name them ("templates_reused")
    sort_keys: list[tuple[str, str]] | None = None
    reads_models: bool = False  # computing it loads models (read-only commands never do)
    # an expand stage that can give the published benchmark's own rows (`expand --original`, options['original'])
    has_original: bool = False

    def schema(self) -> "pa.Schema | None":
        """The output table's schema (typed columns: lists and structs, not JSON strings)."""
        return None

    def columns_read(self, ctx: StageContext) -> dict[str, tuple[str, ...]]:
        """`reads_columns`, where what it reads depends on the configuration."""
        return self.reads_columns

    def settings(self, ctx: StageContext) -> Any:
        """The configuration this stage reads; its hash decides freshness."""
        return {}

    def external_inputs(self, ctx: StageContext) -> dict[str, str]:
        """Content hashes of what it reads besides upstream tables (files, model weights)."""
        return {}

    def partitions(self, ctx: StageContext, inputs: dict[str, "pa.Table"]) -> dict[str, str]:
        """Per partition (value of `partition_key`), a hash of everything the stage reads for it."""
        return {}

    def compute(self, ctx: StageContext, inputs: dict[str, "pa.Table"], reused: set[str]) -> Output:
        """Rows for every partition not in `reused` (all rows when the stage is not partitioned)."""
        raise NotImplementedError

    def counts(self, ctx: StageContext, table: "pa.Table", inputs: dict[str, "pa.Table"], work: dict) -> dict:
        """Counts over the whole output (reused and new rows) for the manifest and the CLI."""
        return {"rows": table.num_rows, **work}

    def __repr__(self) -> str:
        return f"<stage {self.name}>"
