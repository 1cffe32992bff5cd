"""Every stage of a renewal at scale (issue 54): `workbench import` of N synthetic CrowS-Pairs-layout
rows (bench_import's generator, never the published sentences), then `run` (expand, queue),
`annotate` (the session the TUI opens: its first item, then the next items as labels are given),
the Label Studio push's tasks and its pull (from a stand-in, no server), `build --original` and
`evaluate` of the release (from synthetic log-likelihoods, and with a tiny fixture masked LM),
each timed with its peak memory.

Each stage runs in a process of its own, so its peak memory (ru_maxrss) is its own; its seconds
are read inside the process around the stage alone (interpreter and imports not counted).

- annotate first: the queue table read and the `Session` built over it (annotation/session.py,
  store.py, as `workbench annotate` builds it), until its current item is known; the label store
  is empty. annotate next: the mean seconds of one label given (`Session.decide`, durable) and the
  next item reached, over NEXT_LABELS labels, in the same process (its peak is that process's).
- labelstudio push: the tasks `labelstudio push` sends (`sync.task_data` for every queue item, in
  its batches of 500), built and serialised as JSON, with no server: the client's share of a push.
  The server's own import of a million tasks is not measured here (tests/support/labelstudio_server.py
  starts a real one: too slow for this size).
- labelstudio pull: `labelstudio pull` of N tasks (about 1.3 annotations each: tests/support/
  labelstudio_standin.py's) from the stand-in, which serves them over HTTP a page of 1,000 at a
  time from a thread of the same process, into an empty label store.
- build: `build --original` (the published data as imported: no labels needed).
- evaluate (from log-likelihoods): `workbench evaluate` of the release with `--predictions`, a
  file of synthetic per-sentence log-likelihoods for every pair (written first, not timed): the
  whole command without any model, i.e. workbench's own share (reading, checks, figures, 1,000
  bootstrap resamples, JSON).
- evaluate (tiny MLM): `workbench evaluate` of the release with a tiny fixture masked LM, whole
  command. It has no --limit, and scores every pair; it runs only at sizes up to EVALUATE_MAX rows
  (10,000).

    python -m benchmarks.run stages_scale                        # SCALE_ROWS rows (default 10000)
    SCALE_ROWS=10000,100000 python -m benchmarks.run stages_scale
    python -m benchmarks.bench_stages_scale 10000 100000         # printed as a table
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .bench_import import write_rows
from .common import ROOT, summary

SIZES = [int(n) for n in os.environ.get("SCALE_ROWS", "10000").replace(",", " ").split()]
STAGES = (
    "import",
    "expand",
    "queue",
    "annotate_first",
    "annotate_next",
    "labelstudio_push",
    "labelstudio_pull",
    "build",
    "evaluate_likelihoods",
    "evaluate",
)
NAMES = {
    "labelstudio_push": "labelstudio push (no server)",
    "labelstudio_pull": "labelstudio pull (stand-in)",
    "build": "build --original",
    "evaluate_likelihoods": "evaluate (from log-likelihoods)",
    "evaluate": "evaluate (tiny MLM)",
}
NEXT_LABELS = 200
EVALUATE_MAX = 10_000

STEP = r"""
import json, resource, subprocess, sys, time
from pathlib import Path
step, source, project, extra = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
from workbench import kinds
from workbench.core.config import load_config
import pandas, pyarrow, pyarrow.parquet  # pyarrow loads pandas on its first array: an import, not counted
out, seconds = {}, None
if step == "import":
    from workbench.authoring.renew import import_project
    start = time.perf_counter()
    import_project(kinds.get("crows-pairs"), source, project, name="big", origin={"name": "synthetic"})
elif step in ("evaluate", "evaluate_likelihoods"):
    release = project / "exports" / "big" / "1.0.0"
    if step == "evaluate":
        given, name = ["--model", extra], extra
    else:  # a log-likelihood per sentence of every pair, as a model run elsewhere would write them
        import csv, random
        rng, given, name = random.Random(0), ["--predictions", str(project / "ll.jsonl")], "ll"
        with open(release / "data" / "pairs.csv", newline="", encoding="utf-8") as f, open(project / "ll.jsonl", "w") as o:
            for n, row in enumerate(csv.DictReader(f), start=1):
                for s in ("sent_more", "sent_less"):
                    o.write(json.dumps({"id": n, "sentence": row[s], "log_likelihood": -rng.uniform(10, 60)}) + "\n")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "workbench", "evaluate", str(release), *given,
                           "--json", str(project / "scores.json")], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr[-2000:])
    out["pairs"] = json.loads((project / "scores.json").read_text())["models"][name]["overall"]["n"]
else:
    config = load_config(project / "workbench.toml")
    kind = kinds.of_config(config)
    if step in ("expand", "queue"):
        start = time.perf_counter()
        kind.pipeline(config).run(step)
    elif step == "build":
        from workbench.release.build import build
        start = time.perf_counter()
        build(config, kind, "1.0.0", original=True, force=True)
    elif step == "annotate":
        from workbench.annotation.session import Session, items_from_table
        from workbench.annotation.store import LabelStore
        start = time.perf_counter()
        table = kind.pipeline(config).table(kind.queue_stage, write=False)
        store = LabelStore(config.path("annotations"), "bench", strict=False, scheme=kind.scheme)
        session = Session(items_from_table(table, config.annotation.order), store, scheme=kind.scheme, words=kind.words)
        assert session.current is not None
        first = time.perf_counter() - start
        out["first_peak_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        choice = kind.scheme.ids[0]
        start = time.perf_counter()
        for _ in range(int(extra)):
            session.decide(choice)
            assert session.current is not None
        out["next_seconds"] = round((time.perf_counter() - start) / int(extra), 5)
        store.close()
        seconds = first
    elif step == "labelstudio_push":
        from workbench.annotation.session import items_from_table
        from workbench.labelstudio.page import page_for
        from workbench.labelstudio.sync import task_data
        start = time.perf_counter()
        items = items_from_table(kind.pipeline(config).table(kind.queue_stage, write=False))
        page = page_for(kind.scheme, kind.words)
        sent = 0
        for b in range(0, len(items), 500):
            sent += len(json.dumps([{"data": task_data(i, page)} for i in items[b : b + 500]]))
        out["json_mib"] = round(sent / 2**20, 1)
    elif step == "labelstudio_pull":
        import os
        from support.labelstudio_standin import StandIn
        from workbench.labelstudio.page import page_for
        from workbench.labelstudio.sync import pull
        tasks = int(extra)  # one task per imported row, as push would make
        standin = StandIn(tasks, page_for(kind.scheme, kind.words).config(), list(kind.scheme.ids))
        toml = project / "workbench.toml"
        kept = toml.read_text()
        toml.write_text(kept + f'\n[labelstudio]\nurl = "{standin.url}"\npage_size = 1000\n')
        os.environ["LABEL_STUDIO_API_KEY"] = "0a1b2c3d4e5f60718293"
        try:
            config = load_config(toml)
            start = time.perf_counter()
            found = pull(config, None, kind.scheme, words=kind.words, project_id=1)
        finally:
            toml.write_text(kept)
            standin.close()
        out["labels"], out["requests"] = found["new_labels"], standin.task_requests
seconds = time.perf_counter() - start if seconds is None else seconds
peak = max(resource.getrusage(w).ru_maxrss for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
print(json.dumps({"seconds": round(seconds, 3), "peak_mib": round(peak / 1024), **out}))
"""


def step(name: str, source: Path, project: Path, extra: str = "") -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]), "WORKBENCH_PROGRESS": "0"}
    done = subprocess.run(
        [sys.executable, "-c", STEP, name, str(source), str(project), extra],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{name} failed: {(done.stderr or done.stdout).strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(work: Path, n: int, mlm: Path | None) -> dict:
    folder = work / f"rows{n}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    source = write_rows(folder / "pairs.csv", n)
    project = folder / "project"
    out: dict = {"rows": n}

    def record(name: str, found: dict) -> None:
        out[name] = found
        print(f"  {n:,} rows: {name} {found['seconds']} s, peak {found['peak_mib']:,} MiB", flush=True)

    for name in ("import", "expand", "queue"):
        record(name, step(name, source, project))
    both = step("annotate", source, project, str(NEXT_LABELS))
    record("annotate_first", {"seconds": both["seconds"], "peak_mib": both["first_peak_mib"]})
    record("annotate_next", {"seconds": both["next_seconds"], "peak_mib": both["peak_mib"]})
    shutil.rmtree(project / "annotations", ignore_errors=True)  # build --original reads no labels
    record("labelstudio_push", step("labelstudio_push", source, project))
    record("labelstudio_pull", step("labelstudio_pull", source, project, str(n)))
    shutil.rmtree(project / "annotations", ignore_errors=True)
    record("build", step("build", source, project))
    record("evaluate_likelihoods", step("evaluate_likelihoods", source, project))
    if mlm is not None and n <= EVALUATE_MAX:
        record("evaluate", step("evaluate", source, project, str(mlm)))
    shutil.rmtree(folder, ignore_errors=True)
    return out


def table(results: list[dict]) -> list[str]:
    """Markdown lines: stage x size, seconds and peak MiB."""
    lines = [
        "| stage | " + " | ".join(f"{r['rows']:,} rows" for r in results) + " |",
        "|---" * (len(results) + 1) + "|",
    ]
    for name in STAGES:
        cells = []
        for r in results:
            m = r.get(name)
            if m is None:
                cells.append("not run")
            elif name == "annotate_next":
                cells.append(f"{1000 * m['seconds']:.1f} ms/label ({m['peak_mib']:,} MiB)")
            else:
                cells.append(f"{m['seconds']:.1f} s ({m['peak_mib']:,} MiB)")
        lines.append(f"| {NAMES.get(name, name.replace('_', ' '))} | " + " | ".join(cells) + " |")
    return lines


def growth(results: list[dict]) -> list[str]:
    """Stages whose seconds per row (per label: annotate next) grow by more than half from the
    smallest size to the largest, or whose peak memory grows more than tenfold."""
    if len(results) < 2:
        return []
    first, last = results[0], results[-1]
    out = []
    for name in STAGES:
        if name not in first or name not in last:
            continue
        per = (lambda r: r[name]["seconds"]) if name == "annotate_next" else (lambda r: r[name]["seconds"] / r["rows"])
        a, b = per(first), per(last)
        if b > 1.5 * a and b - a > 1e-6:
            out.append(
                f"{name}: seconds per {'label' if name == 'annotate_next' else 'row'} {b / a:.1f}× from "
                f"{first['rows']:,} to {last['rows']:,} rows"
            )
    return out


def run(ctx, sizes: list[int] | None = None) -> dict:
    sizes = sorted(sizes or SIZES)
    mlm = None
    if min(sizes) <= EVALUATE_MAX:  # built in a process of its own: a child's peak memory starts at its parent's
        mlm = ctx.work / "scale-mlm"
        code = (
            "import sys; from pathlib import Path; from workbench.models.fixtures import build_mlm; "
            "build_mlm(Path(sys.argv[1]))"
        )
        subprocess.run(
            [sys.executable, "-c", code, str(mlm)], check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}
        )
    results = [measure(ctx.work / "stages_scale", n, mlm) for n in sizes]
    big = results[-1]
    worse = growth(results)
    return summary(
        title="every stage of a renewal on an imported CrowS-Pairs-layout file, at growing sizes",
        workload=f"{', '.join(f'{n:,}' for n in sizes)} synthetic CrowS-Pairs-layout rows",
        figure=", ".join(
            f"{s.replace('_', ' ')} {big[s]['seconds']:.1f} s ({big[s]['peak_mib']:,} MiB)"
            for s in STAGES
            if s in big and s != "annotate_next"
        )
        + f" at {big['rows']:,} rows",
        clock="wall seconds of each stage in its own process (interpreter and imports not counted)",
        roof=None,
        roof_what="not applicable: stages that run no model (evaluate's model is a tiny fixture)",
        loop=None,
        loop_what="not applicable: no reference code runs these stages",
        targets=["memory flat or near-flat in the rows; the annotation session's first item well under a few seconds"],
        figures={f"rows_{r['rows']}": r for r in results},
        notes=[*table(results), "", *(worse or ["no stage's seconds per row grew by half or more across the sizes"])],
    )


if __name__ == "__main__":
    import tempfile

    class _Ctx:
        work = Path(tempfile.mkdtemp(prefix="workbench-bench-scale-"))

    given = [int(a) for a in sys.argv[1:]] or SIZES
    result = run(_Ctx(), given)
    print("\n".join(result["notes"]))
    print(result["figure"])
