"""How an NLI release folder is laid out, what its card says and how versions are compared.

data/all.parquet, data/<domain>.parquet   release samples (one Hub config each)
"""

from __future__ import annotations

import json
from pathlib import Path

from .tables import release_schema

SORT = lambda r: (r["domain"], r["subtopic"], r["pair_id"] or "", r["is_counterfactual"], r["id"])  # noqa: E731
DATA_FILES = ("data/all.parquet",)


def _write_parquet(rows: list[dict], path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=release_schema())
    pq.write_table(table, path, compression="zstd", write_statistics=False, store_schema=True)


def write_release(rows: list[dict], staging: Path) -> list[str]:
    """The data files; returns the domains (one Hub config each besides `all`)."""
    rows.sort(key=SORT)
    domains = sorted({r["domain"] for r in rows})
    _write_parquet(rows, staging / "data" / "all.parquet")
    for d in domains:
        _write_parquet([r for r in rows if r["domain"] == d], staging / "data" / f"{d}.parquet")
    return domains


def read_release(folder: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(folder / "data" / "all.parquet").to_pylist()


def card(release) -> str:
    from ...release.generic import maintainer_lines
    from .card import dataset_card, renewal_card

    if release.config.origin is not None:  # a renewed BBNLI (renew.py): its audit is in the closing sections
        return renewal_card(release, maintainer_lines(release))
    return dataset_card(
        release.config,
        release.workspace,
        release.version,
        release.rows,
        release.summary,
        release.domains,
        maintainer_lines(release),
    )


# What a release says of each sample besides its hypothesis and stance (changes.released).
released_fields = ("premise", "label")


def identity(r: dict) -> tuple[str, str, str, str]:
    """What changes are counted by: the row's id, its hypothesis with its stance, its domain and its template (subtopic)."""
    return r["id"], f"{r['hypothesis']} ({r['stance']})", r["domain"], r["subtopic"]


def edit(r: dict) -> tuple[str, str]:
    """A sample is one entry per template, premise, hypothesis and side (original or counterfactual):
    a new stance for it is an edit of that sample (changes.compare). A renewed BBNLI's sample is one
    entry per audit item, premise, words and side: a fixed hypothesis is an edit of its samples."""
    provenance = json.loads(r["provenance"] or "{}")
    if provenance.get("audit_item"):
        return json.dumps(
            [
                provenance["audit_item"],
                provenance["premise_index"],
                provenance["bindings"],
                r["is_counterfactual"],
                r["pair_id"],
            ],
            sort_keys=True,
        ), "hypothesis fixed"
    template = provenance.get("template_id", r["subtopic"])
    return json.dumps([template, r["premise"], r["hypothesis"], r["is_counterfactual"]]), "template changed"


def unit(r: dict) -> str | None:
    """The audit item a renewed BBNLI's sample comes from (its bias hypothesis)."""
    return json.loads(r["provenance"] or "{}").get("audit_item")


def write_sources(release, staging: Path) -> None:
    """A renewed BBNLI's release carries its source files in BBNLI's format (renew.py)."""
    if release.config.origin is not None:
        from .renew import write_sources as write

        write(release, staging)
