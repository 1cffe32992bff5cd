"""lm-evaluation-harness and workbench side by side on the same CrowS-Pairs-layout task (issue #37).

The same data file, the same causal model (the base-size fixture GPT-2), the same batch size
and the same threads (OMP_NUM_THREADS) for both, each in its own process, as a user runs them:

- lm-eval: `lm_eval --model hf --model_args pretrained=M --tasks T --include_path <release>/lm_eval_tasks
  --device cpu --batch_size B`, on the task folder a release carries (release/lmeval.py);
- workbench: `workbench evaluate <file> --kind crows-pairs --model M --device cpu --batch-size B --no-cache`.

Two figures, in CPU seconds (one thread each, so other work on this shared machine barely moves
them; wall seconds are recorded beside): the whole process (the child's CPU from launch to
exit: imports, task indexing, model loading, scoring, output) and the scoring phase (the
process's CPU inside lm-eval's `HFLM.loglikelihood`, tokenising and scoring every request, and
inside workbench's `score_pairs`, tokenising and scoring every pair). Runs interleave (lm-eval,
workbench, workbench, lm-eval, ...) and the best of each is compared. Both must give the same
pct_stereotype and likelihood_diff.
"""

from __future__ import annotations

import csv
import json
import os
import resource
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from .common import summary

LM_EVAL = textwrap.dedent("""
    import json, sys, time
    import lm_eval
    from lm_eval.models.huggingface import HFLM

    spent, got = {"scoring": 0.0}, {}
    real_ll, real_eval = HFLM.loglikelihood, lm_eval.simple_evaluate

    def loglikelihood(self, *args, **kwargs):
        start = time.process_time()
        out = real_ll(self, *args, **kwargs)
        spent["scoring"] += time.process_time() - start
        return out

    def simple_evaluate(*args, **kwargs):
        results = real_eval(*args, **kwargs)
        got.update(results["results"])
        return results

    HFLM.loglikelihood, lm_eval.simple_evaluate = loglikelihood, simple_evaluate
    from lm_eval.__main__ import cli_evaluate

    out = sys.argv[1]
    sys.argv = ["lm_eval", *sys.argv[2:]]
    cli_evaluate()
    with open(out, "w") as f:
        json.dump({"scoring": spent["scoring"], "results": got}, f)
""")

WORKBENCH = textwrap.dedent("""
    import json, sys, time
    from workbench.kinds.crows_pairs import evaluate

    spent, real = {"scoring": 0.0}, evaluate.score_pairs

    def score_pairs(*args, **kwargs):
        start = time.process_time()
        out = real(*args, **kwargs)
        spent["scoring"] += time.process_time() - start
        return out

    evaluate.score_pairs = score_pairs
    from workbench.cli.main import main

    out = sys.argv[1]
    sys.argv = ["workbench", *sys.argv[2:]]
    try:
        main()
    except SystemExit as exc:
        if exc.code:
            raise
    with open(out, "w") as f:
        json.dump(spent, f)
""")


def write_task(folder: Path, n_pairs: int) -> tuple[Path, str]:
    """A release-like folder: data/pairs.csv (n synthetic pairs) and the kind's lm-eval task."""
    from workbench.release import lmeval

    from .bench_sos import make_pairs

    (folder / "data").mkdir(parents=True, exist_ok=True)
    data = folder / "data" / "pairs.csv"
    with open(data, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "sent_more", "sent_less", "stereo_antistereo", "bias_type"])
        for i, (more, less, _, attribute, _) in enumerate(make_pairs(n_pairs)):
            w.writerow([i, more, less, "stereo", attribute])
    lmeval.write_tasks("crows-pairs", "bench_lmeval_crows", None, folder)
    return data, "bench_lmeval_crows"


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _timed(argv: list[str], env: dict, cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one process from launch to exit."""
    start, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:3]} failed:\n{done.stderr[-3000:]}")
    return wall, cpu


def measure(work: Path, model: Path, n_pairs: int, batch_size: int, threads: int, repeats: int) -> dict:
    data, task = write_task(work / "task", n_pairs)
    env = {
        **os.environ,
        "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "WORKBENCH_PROGRESS": "0",
        "HF_HOME": str(work / "hf"),
        "XDG_CACHE_HOME": str(work / "cache"),
    }
    lm_out, wb_out, wb_json = work / "lm.json", work / "wb_timing.json", work / "wb.json"
    runs = {
        "lm_eval": (
            [
                sys.executable,
                "-c",
                LM_EVAL,
                str(lm_out),
                "--model",
                "hf",
                "--model_args",
                f"pretrained={model}",
                "--tasks",
                task,
                "--include_path",
                str(work / "task" / "lm_eval_tasks"),
                "--device",
                "cpu",
                "--batch_size",
                str(batch_size),
            ],
            lm_out,
        ),
        "workbench": (
            [
                sys.executable,
                "-c",
                WORKBENCH,
                str(wb_out),
                "evaluate",
                str(data),
                "--kind",
                "crows-pairs",
                "--model",
                str(model),
                "--device",
                "cpu",
                "--batch-size",
                str(batch_size),
                "--no-cache",
                "--json",
                str(wb_json),
            ],
            wb_out,
        ),
    }
    walls: dict[str, list[float]] = {n: [] for n in runs}
    cpus: dict[str, list[float]] = {n: [] for n in runs}
    scoring: dict[str, list[float]] = {n: [] for n in runs}
    order = list(runs)
    for r in range(repeats):
        for name in order[r % 2 :] + order[: r % 2]:
            argv, out = runs[name]
            wall, cpu = _timed(argv, env, work)
            walls[name].append(round(wall, 3))
            cpus[name].append(round(cpu, 3))
            scoring[name].append(round(json.loads(out.read_text())["scoring"], 3))
    theirs = json.loads(lm_out.read_text())["results"][task]
    ours = json.loads(wb_json.read_text())["models"][str(model)]["overall"]
    agree = (
        f"{100 * theirs['pct_stereotype,none']:.1f}" == f"{ours['metric_score']:.1f}"
        and abs(theirs["likelihood_diff,none"] - ours["likelihood_diff"]) < 1e-3
    )
    best = {n: (min(cpus[n]), min(scoring[n]), min(walls[n])) for n in runs}
    return {
        "pairs": n_pairs,
        "batch_size": batch_size,
        "threads": threads,
        "process_cpu_seconds": cpus,
        "process_wall_seconds": walls,
        "scoring_cpu_seconds": scoring,
        "ratio_scoring": round(best["lm_eval"][1] / best["workbench"][1], 3),
        "ratio_whole_process": round(best["lm_eval"][0] / best["workbench"][0], 3),
        "ratio_whole_process_wall": round(best["lm_eval"][2] / best["workbench"][2], 3),
        "lm_eval_pct_stereotype": theirs["pct_stereotype,none"],
        "workbench_metric_score": ours["metric_score"],
        "lm_eval_likelihood_diff": round(theirs["likelihood_diff,none"], 6),
        "workbench_likelihood_diff": round(ours["likelihood_diff"], 6),
        "same_figures": agree,
    }


def run(ctx, n_pairs: int = 600, batch_size: int = 16, threads: int = 1, repeats: int = 3) -> dict:
    from importlib.metadata import PackageNotFoundError, version

    from workbench.models.fixtures import build_clm

    try:
        lm_eval_version = version("lm_eval")
    except PackageNotFoundError:
        from .run import Unavailable

        raise Unavailable("lm-eval is not installed (pip install 'bias-workbench[lm-eval]')") from None
    work = ctx.work / "lmeval"
    model = work / "clm-gpt2-base"
    if not (model / "config.json").is_file():
        build_clm(model, size="base", seed=31)
    f = measure(work, model, n_pairs, batch_size, threads, repeats)
    f["lm_eval_version"] = lm_eval_version
    return summary(
        title="lmeval: lm-evaluation-harness vs workbench on one CrowS-Pairs task (release task folder, no cache)",
        workload=(
            f"{n_pairs} pairs, base-size fixture GPT-2 (causal), batch {batch_size}, {threads} thread(s), "
            f"lm-eval {lm_eval_version} (hf model type) and `workbench evaluate`, each a process of its own"
        ),
        figure=(
            f"scoring {f['ratio_scoring']}× lm-eval's speed, whole process {f['ratio_whole_process']}×; "
            f"same figures: {'yes' if f['same_figures'] else 'NO'}"
        ),
        clock=f"process CPU seconds, OMP_NUM_THREADS={threads} in both processes",
        roof=None,
        roof_what="not measured here (see the crows_pairs section for the scoring layer's roof)",
        loop=f["ratio_whole_process"],
        loop_what=(
            "here the plain loop's column holds the whole process's speed over lm-eval's (launch to exit, "
            f"best of {repeats}; in wall seconds {f['ratio_whole_process_wall']}×); the scoring phase "
            f"alone: {f['ratio_scoring']}×"
        ),
        targets=["scoring ≥ 1.0× lm-eval's at the same batch size; whole process ahead"],
        figures=f,
        notes=[
            f"best of {repeats} interleaved runs of each tool",
            (
                "scoring phase: lm-eval's HFLM.loglikelihood (tokenising + scoring its 2 requests per pair) against "
                "workbench's score_pairs (tokenising + scoring each distinct sentence)"
            ),
        ],
    )
