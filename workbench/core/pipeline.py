"""The pipeline runner: one list of stages, and the work every stage shares.

The runner decides freshness (upstream tables' hashes + the stage's external inputs + a hash
of its settings and of the code that computes it: the kind's package, version and code hash,
so an upgraded plugin re-runs its stages), runs what is upstream first, reuses unchanged
partitions of the previous output, times the stage, writes the table and its manifest, and
owns the one model cache.
Consumers ask for tables — `pipeline.table("queue")` — instead of running stages themselves;
`write=False` gives a read-only view that never touches the workspace.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Iterable

from . import distributed
from .errors import StageError
from .ids import json_hash
from .stage import Output, Stage, StageContext
from .workspace import Workspace

if TYPE_CHECKING:
    import pyarrow as pa

    from .config import Config


class Pipeline:
    def __init__(
        self,
        config: "Config",
        stages: Iterable[Stage],
        workspace: Workspace | None = None,
        options: dict[str, Any] | None = None,
        code: dict[str, Any] | None = None,
    ):
        self.stages: dict[str, Stage] = {}
        for stage in stages:
            missing = [u for u in stage.upstream if u not in self.stages]
            if missing:
                raise ValueError(f"stage {stage.name!r} comes before its upstream {missing}")
            self.stages[stage.name] = stage
        self.config = config
        self.workspace = workspace or Workspace(config.path("workspace"))
        self.ctx = StageContext(config, self.workspace, dict(options or {}))
        # what made the stages (kinds/code.py identity): part of every stage's config hash, and
        # recorded in its manifest; computed once, when the pipeline is made
        self.code = dict(code) if code else None

    # -- what a stage depends on ------------------------------------------------------------
    def stage(self, name: str) -> Stage:
        if name not in self.stages:
            raise StageError(f"no stage {name!r}; this project's stages are {', '.join(self.stages)}")
        return self.stages[name]

    def names(self) -> list[str]:
        return list(self.stages)

    def inputs(self, name: str) -> dict[str, str]:
        """Upstream tables by their data hash, plus the stage's external inputs; {} entries for
        upstream stages that have no output yet are left out (the state is then missing/stale)."""
        stage = self.stage(name)
        found = {}
        for up in stage.upstream:
            m = self.workspace.manifest(up)
            if m:
                found[up] = m["data_sha256"]
        return {**found, **stage.external_inputs(self.ctx)}

    def config_hash(self, name: str) -> str:
        stage = self.stage(name)
        fingerprint = {"format": stage.format, "settings": stage.settings(self.ctx)}
        if self.code is not None:
            fingerprint["code"] = self.code
        return json_hash(fingerprint)

    def state(self, name: str) -> str:
        """fresh (its inputs, its settings and everything upstream unchanged), stale, or missing.
        A stage whose upstream is stale is stale too, though its own inputs look the same."""
        own = self.workspace.state(name, self.inputs(name), self.config_hash(name))
        if own != "fresh":
            return own
        for up in self.stage(name).upstream:
            if self.workspace.manifest(up) is not None and self.state(up) != "fresh":
                return "stale"
        return own

    def states(self) -> list[tuple[str, str]]:
        return [(name, self.state(name)) for name in self.stages]

    # -- running ----------------------------------------------------------------------------
    def run(self, name: str, *, force: bool = False) -> dict:
        """Bring `name` up to date, running its stale upstream stages first. Returns its counts
        (with `skipped` when nothing had to be computed)."""
        stage = self.stage(name)
        existing = self.workspace.manifest(name)
        if existing and not force and any(self.workspace.manifest(u) is None for u in stage.upstream):
            # Detached: the output was brought here without what it was made from (a queue
            # handed to an annotator, a copied workspace). Use it as it is.
            return {"skipped": True, "detached": True, **existing.get("counts", {})}
        for up in stage.upstream:
            self.run(up)  # brings the whole chain above up to date; a fresh stage returns at once
        current, chash = self.inputs(name), self.config_hash(name)
        missing = [u for u in stage.upstream if u not in current]
        if missing:
            raise StageError(f"stage {missing[0]!r} has no output: run `workbench {missing[0]}` first")
        if not force and self.workspace.state(name, current, chash) == "fresh":
            return {"skipped": True, **self.workspace.manifest(name)["counts"]}
        started = time.perf_counter()
        try:
            table, counts, extra = self._compute(stage, chash, force=force)
        finally:
            self.ctx.close()
        if self.code is not None:
            extra = {**extra, "code": self.code}  # what `status` going stale after an upgrade refers to
        if distributed.is_main():  # every rank computed the same table; rank 0 alone writes it
            self.workspace.write(
                name, table, inputs=current, config_hash=chash, counts=counts, started=started, extra=extra
            )
        distributed.barrier()
        return {**counts, "seconds": round(time.perf_counter() - started, 3), "skipped": False}

    def run_all(self, to: str | None = None, *, force: bool = False) -> list[tuple[str, dict]]:
        """Every stage in order up to `to` (inclusive); with force, each is recomputed whatever
        its freshness (its upstream, forced just before it, is then fresh)."""
        names = self.names()
        last = names.index(self.stage(to).name) if to else len(names) - 1
        return [(n, self.run(n, force=force)) for n in names[: last + 1]]

    def table(self, name: str, *, write: bool = True) -> "pa.Table":
        """The stage's output. With write=True a stale stage (and its upstream) is run first.
        With write=False nothing is written: a fresh output is read; a stale one is computed in
        memory from the upstream outputs on disk (never for stages that load models)."""
        if write:
            self.run(name)
            return self.workspace.read(name)
        state = self.state(name)
        stage = self.stage(name)
        detached = state != "missing" and any(self.workspace.manifest(u) is None for u in stage.upstream)
        if state == "fresh" or detached:
            return self.workspace.read(name)
        if stage.reads_models:
            if state == "stale":
                return self.workspace.read(name)  # as last computed; a read never loads models
            raise StageError(f"stage {name!r} has no output yet: run `workbench {name}` first")
        try:
            table, _, _ = self._compute(stage, self.config_hash(name), force=False, readonly=True)
        finally:
            self.ctx.close()
        return table

    # -- the shared work of one stage -------------------------------------------------------
    def _upstream_tables(self, stage: Stage, readonly: bool) -> dict[str, "pa.Table"]:
        tables, columns = {}, stage.columns_read(self.ctx)
        for up in stage.upstream:
            upstream = self.stage(up)
            if (
                readonly
                and up in stage.optional_upstream
                and upstream.reads_models
                and self.workspace.manifest(up) is None
            ):
                tables[up] = upstream.schema().empty_table()  # a read never loads models: go without it
            elif readonly and self.state(up) != "fresh":
                tables[up] = self.table(up, write=False)
                if up in columns:
                    tables[up] = tables[up].select(list(columns[up]))
            else:
                tables[up] = self.workspace.read(up, columns=columns.get(up))
        return tables

    def _compute(self, stage: Stage, chash: str, *, force: bool, readonly: bool = False):
        import pyarrow as pa

        inputs = self._upstream_tables(stage, readonly)
        partitions = stage.partitions(self.ctx, inputs) if stage.partition_key else {}
        reuse_key = json_hash(stage.external_inputs(self.ctx))
        old, reused = (None, set()) if force else self._reusable(stage, partitions, chash, reuse_key)
        out: Output = stage.compute(self.ctx, inputs, reused)
        table = out.table
        schema = stage.schema()
        if old is not None:
            table = (
                old
                if table is None
                else pa.concat_tables([old, table.select(old.column_names)], promote_options="permissive")
            )
        if table is None:
            table = schema.empty_table() if schema is not None else pa.table({})
        if schema is not None and table.schema != schema:
            table = table.select(schema.names).cast(schema)
        if stage.sort_keys and table.num_rows:
            table = sorted_by(table, stage.sort_keys)
        counts = stage.counts(self.ctx, table, inputs, out.work)
        if stage.partition_key:
            counts[f"{stage.partition_noun}_reused"] = len(reused)
            counts[f"{stage.partition_noun}_computed"] = len(partitions) - len(reused)
        extra = dict(out.extra)
        if stage.partition_key:
            extra["partitions"] = partitions
            extra["reuse_key"] = reuse_key
        return table, counts, extra

    def _reusable(self, stage: Stage, partitions: dict[str, str], chash: str, reuse_key: str):
        """Rows of the previous output whose partition is unchanged, under the same settings
        and the same external inputs (models): (table or None, reused partition ids)."""
        manifest = self.workspace.manifest(stage.name)
        if (
            not partitions
            or not manifest
            or manifest.get("config_hash") != chash
            or manifest.get("reuse_key") != reuse_key
        ):
            return None, set()
        previous = manifest.get("partitions") or {}
        same = {p for p, fp in partitions.items() if previous.get(p) == fp}
        if not same:
            return None, set()
        try:
            table = self.workspace.read(stage.name)
        except StageError:
            return None, set()
        import pyarrow as pa
        import pyarrow.compute as pc

        kept = table.filter(pc.is_in(table[stage.partition_key], value_set=pa.array(sorted(same))))
        return kept, same


def sorted_by(table: "pa.Table", keys: list[tuple[str, str]]) -> "pa.Table":
    """`table.sort_by(keys)`, or the table itself when its rows are in that order already (an
    expand of a million rows usually is: no second copy of it)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    order = pc.sort_indices(table, sort_keys=keys)
    if pc.all(pc.equal(order, pa.array(np.arange(table.num_rows, dtype=order.type.to_pandas_dtype())))).as_py():
        return table
    return table.take(order)
