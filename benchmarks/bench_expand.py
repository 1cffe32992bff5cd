"""Expansion of the real BBNLI files: workbench's `expand_all` against BBNLI's own way, which
renders every row with Jinja2 and drops duplicates with pandas (tests/bbnli_reference.py, the
test suite's independent re-implementation of it)."""

from __future__ import annotations

import sys
import time

from .common import ROOT, summary


def run(ctx) -> dict:
    from workbench.kinds.nli.templates.expand import expand_all
    from workbench.kinds.nli.templates.loader import load_templates

    sys.path.insert(0, str(ROOT / "tests"))
    import bbnli_reference

    bbnli = ROOT.parent / "shared" / "bbnli"
    t0 = time.perf_counter()
    templates, _ = load_templates([bbnli])
    loaded = time.perf_counter() - t0
    ours, reference = [], []
    files = sorted(bbnli.rglob("*.json"))
    for r in range(5):
        s = time.perf_counter()
        rows = expand_all(templates)
        ours.append(time.perf_counter() - s)
        s = time.perf_counter()
        ref_rows = sum(len(bbnli_reference.expand_file.__wrapped__(f)) for f in files)  # no lru_cache: a cold run
        reference.append(time.perf_counter() - s)
    mid = lambda xs: sorted(xs)[len(xs) // 2]
    figures = {
        "bbnli_files": len(templates),
        "rows": len(rows),
        "reference_rows": ref_rows,
        "load_and_check_seconds": round(loaded, 4),
        "expand_seconds_median_of_5": round(mid(ours), 4),
        "reference_seconds_median_of_5": round(mid(reference), 4),
    }
    return summary(
        title="expand: BBNLI's 16 source files into masked samples (NLI loop stage)",
        workload=f"{len(templates)} BBNLI files → {len(rows):,} rows",
        figure=f"{len(rows) / mid(ours):,.0f} rows/s ({mid(ours):.2f} s; loading and checking the files {loaded:.2f} s)",
        clock="wall seconds (no model; median of 5)",
        roof=None,
        roof_what="not applicable: no model runs in this stage",
        loop=round(mid(reference) / mid(ours), 1),
        loop_what="BBNLI's way: every row rendered with Jinja2's NativeEnvironment, duplicates dropped with pandas "
        "(tests/bbnli_reference.py, which the tests check row for row against expand_all)",
        figures=figures,
        notes=["target (issue 2): expansion of the BBNLI files in well under a second"],
    )
