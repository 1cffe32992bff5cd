"""Renewing a big benchmark (issue 54): `workbench import` of N CrowS-Pairs-layout rows, then `run`
(expand, queue) and `build --original` on the project, each stage timed, with its peak memory.

The baseline is pandas reading the same CSV and writing it as Parquet: the least an import does
(the file read, its rows stored as a table), measured in the same run. Every step runs in a
process of its own, so its peak memory is its own (ru_maxrss); its seconds are read inside the
process around the step alone (the interpreter and imports not counted, for the baseline too).
The rows are generated here (sentences of our own, CrowS-Pairs' columns: an unnamed index, the
two sentences, direction, bias type, annotations, writer and annotators).

    python -m benchmarks.run import                               # IMPORT_ROWS rows (default 10000)
    IMPORT_ROWS=10000,100000,1000000 python -m benchmarks.run import
    python -m benchmarks.bench_import 10000 100000               # the same, printed as a table

Wall seconds on a shared machine: both the import and its baseline are read in the same run, so
their ratio is what to compare; a stage's seconds per row across sizes shows what grows worse than
linearly.
"""

from __future__ import annotations

import csv
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

from workbench.kinds.crows_pairs.data import HF_CLASS_LABELS

from .common import ROOT, summary

SIZES = [int(n) for n in os.environ.get("IMPORT_ROWS", "10000").replace(",", " ").split()]
STAGES = ("import", "expand", "queue", "build")
HEADER = [
    "",
    "sent_more",
    "sent_less",
    "stereo_antistereo",
    "bias_type",
    "annotations",
    "anon_writer",
    "anon_annotators",
]
BIAS = list(HF_CLASS_LABELS["bias_type"])  # CrowS-Pairs' nine bias types
GROUPS = [
    ("tall people", "short people"),
    ("night workers", "day workers"),
    ("city folk", "village folk"),
    ("painters", "plumbers"),
    ("runners", "swimmers"),
]
VERBS = ["forget", "enjoy", "avoid", "repair", "collect", "study", "paint", "carry", "measure", "describe"]
THINGS = ["old maps", "blue kettles", "wooden chairs", "paper kites", "garden tools", "loud radios", "spare keys"]
WHEN = ["every morning", "on weekends", "after lunch", "in winter", "at night", "before work"]


def write_rows(path: Path, n: int, seed: int = 0) -> Path:
    """n CrowS-Pairs-layout rows of our own: each pair's sentences differ in the group only."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8", newline="") as f:
        out = csv.writer(f)
        out.writerow(HEADER)
        for i in range(n):
            a, b = rng.choice(GROUPS)
            rest = f"{rng.choice(VERBS)} {rng.choice(THINGS)} {rng.choice(WHEN)} number {i} ."
            bias = BIAS[i % len(BIAS)]
            votes = [[bias] if rng.random() < 0.8 else [] for _ in range(5)]
            out.writerow(
                [
                    i,
                    f"{a.capitalize()} {rest}",
                    f"{b.capitalize()} {rest}",
                    "stereo" if rng.random() < 0.85 else "antistereo",
                    bias,
                    str(votes),
                    f"a{rng.randrange(400)}",
                    str([f"a{rng.randrange(400)}" for _ in range(5)]),
                ]
            )
    return path


# One step in a process of its own: its seconds around the step alone, and the process's peak memory.
STEP = r"""
import json, resource, sys, time
from pathlib import Path
step, source, project = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
if step == "pandas":
    import pandas as pd
    start = time.perf_counter()
    pd.read_csv(source).to_parquet(project.with_suffix(".pandas.parquet"))
else:
    from workbench import kinds
    from workbench.authoring.renew import import_project
    from workbench.core.config import load_config
    from workbench.release.build import build
    import pandas, pyarrow, pyarrow.parquet  # pyarrow loads pandas on its first array: an import, not counted
    if step == "import":
        start = time.perf_counter()
        import_project(kinds.get("crows-pairs"), source, project, name="big", origin={"name": "synthetic"})
    else:
        config = load_config(project / "workbench.toml")
        kind = kinds.of_config(config)
        start = time.perf_counter()
        if step == "build":
            build(config, kind, "1.0.0", original=True)
        else:
            kind.pipeline(config).run(step)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": round(seconds, 3), "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
"""


def step(name: str, source: Path, project: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WORKBENCH_PROGRESS": "0"}
    done = subprocess.run(
        [sys.executable, "-c", STEP, name, str(source), str(project)], capture_output=True, text=True, env=env, cwd=ROOT
    )
    if done.returncode != 0:
        raise RuntimeError(f"{name} failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(work: Path, n: int) -> dict:
    """Every step at n rows: the baseline, then import, expand, queue and build on the project."""
    folder = work / f"rows{n}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    source = write_rows(folder / "pairs.csv", n)
    project = folder / "project"
    out = {"rows": n, "csv_mib": round(source.stat().st_size / 2**20, 1)}
    out["pandas"] = step("pandas", source, project)
    for name in STAGES:
        out[name] = step(name, source, project)
        print(f"  {n:,} rows: {name} {out[name]['seconds']} s, peak {out[name]['peak_mib']} MiB", flush=True)
    out["table_mib"] = round(sum(p.stat().st_size for p in (project / "templates").glob("*.parquet")) / 2**20, 1)
    out["import_over_pandas"] = round(out["import"]["seconds"] / out["pandas"]["seconds"], 2)
    shutil.rmtree(project / "exports", ignore_errors=True)
    return out


def table(results: list[dict]) -> list[str]:
    """Markdown lines: stage x size, seconds (peak MiB), and microseconds per row."""
    head = "| stage | " + " | ".join(f"{r['rows']:,} rows" for r in results) + " |"
    lines = [head, "|---" * (len(results) + 1) + "|"]
    for name in ("pandas", *STAGES):
        cells = [
            f"{r[name]['seconds']:.1f} s ({r[name]['peak_mib']:,} MiB), {1e6 * r[name]['seconds'] / r['rows']:.0f} µs/row"
            for r in results
        ]
        lines.append(f"| {'pandas read_csv + to_parquet' if name == 'pandas' else name} | " + " | ".join(cells) + " |")
    lines.append("| import ÷ pandas | " + " | ".join(f"{r['import_over_pandas']}×" for r in results) + " |")
    return lines


def growth(results: list[dict]) -> list[str]:
    """Each stage whose seconds per row grow by more than half from the smallest size to the largest."""
    if len(results) < 2:
        return []
    first, last = results[0], results[-1]
    out = []
    for name in ("pandas", *STAGES):
        a, b = (r[name]["seconds"] / r["rows"] for r in (first, last))
        if b > 1.5 * a:
            out.append(
                f"{name}: {1e6 * a:.0f} µs/row at {first['rows']:,} rows, {1e6 * b:.0f} at {last['rows']:,} "
                f"({b / a:.1f}×): grows worse than linearly"
            )
    return out


def run(ctx, sizes: list[int] | None = None) -> dict:
    sizes = sorted(sizes or SIZES)
    results = [measure(ctx.work / "import", n) for n in sizes]
    big = results[-1]
    worse = growth(results)
    return summary(
        title="workbench import of a CrowS-Pairs-layout file, then run and build on it",
        workload=f"{', '.join(f'{n:,}' for n in sizes)} synthetic CrowS-Pairs-layout rows "
        f"({big['csv_mib']} MiB at {big['rows']:,})",
        figure=f"import of {big['rows']:,} rows {big['import']['seconds']:.1f} s = {big['import_over_pandas']}× pandas "
        f"read_csv + to_parquet ({big['pandas']['seconds']:.1f} s); peak {big['import']['peak_mib']:,} MiB "
        f"(pandas {big['pandas']['peak_mib']:,}); expand {big['expand']['seconds']:.0f} s, queue "
        f"{big['queue']['seconds']:.0f} s, build {big['build']['seconds']:.0f} s",
        clock="wall seconds of each step in its own process (interpreter and imports not counted)",
        roof=round(big["pandas"]["seconds"] / big["import"]["seconds"], 3),
        roof_what="pandas reading the same CSV and writing it as Parquet (the least an import does), same run",
        loop=None,
        loop_what="no plain loop: the YAML import this replaces took 184 s for 10,000 rows (issue 54)",
        targets=["import of 1,000,000 rows at most 5× pandas read_csv + to_parquet, memory flat in the file's size"],
        figures={f"rows_{r['rows']}": r for r in results},
        notes=[*table(results), "", *(worse or ["no stage's seconds per row grew by half or more across the sizes"])],
    )


if __name__ == "__main__":
    import tempfile

    class _Ctx:
        work = Path(tempfile.mkdtemp(prefix="workbench-bench-import-"))

    given = [int(a) for a in sys.argv[1:]] or SIZES
    result = run(_Ctx(), given)
    print("\n".join(result["notes"]))
    print(result["figure"])
