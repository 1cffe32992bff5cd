"""Scaling of the data-parallel path: `workbench filter` on 2 processes x 1 thread (torchrun,
gloo) against 1 process x 1 thread, on the same project and the same uncached NLI work.

    python -m benchmarks.bench_distributed

Also the per-rank balance: the padded tokens each rank computes under the round-robin split of
the length-sorted batches (what `models/batching._run_shared` does).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import ROOT, scratch_project, summary


def _env() -> dict:
    e = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "WORKBENCH_PROGRESS": "0",
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": str(ROOT),
    }
    e.pop("WORLD_SIZE", None)
    return e


def _timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=_env(), check=True, capture_output=True, text=True)
    return time.perf_counter() - start


def rank_loads(lengths: list[int], batch_size: int, ranks: int) -> list[int]:
    """Padded tokens per rank when batch b of the length-sorted order goes to rank b % ranks."""
    order = sorted(lengths)
    loads = [0] * ranks
    for b, start in enumerate(range(0, len(order), batch_size)):
        batch = order[start : start + batch_size]
        loads[b % ranks] += max(batch) * len(batch)
    return loads


def run(ctx) -> dict:
    from workbench.core.config import load_config
    from workbench.kinds import pipeline_for
    from workbench.kinds.nli.settings import filter_settings

    models, work = ctx.models, ctx.work
    base = scratch_project(work / "dist-base", models["mlm-bert-base"], [models["nli-base"]], copies=4)
    pipeline_for(load_config(base / "workbench.toml")).run("generate")  # fills cached: only NLI work is timed
    one, two = work / "dist-one", work / "dist-two"
    for target in (one, two):
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(base, target)
    single = _timed([sys.executable, "-m", "workbench", "filter"], one)
    double = _timed(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node",
            "2",
            "-m",
            "workbench",
            "filter",
        ],
        two,
    )
    manifest = json.loads((one / ".workbench" / "filter" / "manifest.json").read_text())
    import pyarrow.parquet as pq

    same = pq.read_table(one / ".workbench" / "filter" / "data.parquet").equals(
        pq.read_table(two / ".workbench" / "filter" / "data.parquet")
    )
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(models["nli-base"]))
    rows = pq.read_table(one / ".workbench" / "filter" / "data.parquet").select(["premise", "hypothesis"]).to_pylist()
    pairs = sorted({(r["premise"], r["hypothesis"]) for r in rows})
    lengths = [len(ids) for ids in tok([p for p, _ in pairs], [h for _, h in pairs])["input_ids"]]
    batch = filter_settings(load_config(one / "workbench.toml")).batch_size
    loads = rank_loads(lengths, batch, 2)
    figures = {
        "unique_pairs_per_model": manifest["counts"]["unique_pairs"],
        "seconds_1_process_1_thread": round(single, 2),
        "seconds_2_processes_1_thread": round(double, 2),
        "speedup": round(single / double, 2),
        "scaling_efficiency": round(single / double / 2, 2),
        "outputs_identical": same,
        "padded_tokens_per_rank": loads,
        "rank_balance_max_over_mean": round(max(loads) / (sum(loads) / len(loads)), 3),
    }
    return summary(
        title="distributed: `workbench filter` on 2 processes (torchrun, gloo) against 1",
        workload=(
            f"{figures['unique_pairs_per_model']:,} unique (premise, hypothesis) pairs through the base-size fixture "
            "NLI model (the bench project at half size), fills cached"
        ),
        figure=(
            f"{figures['speedup']:.2f}× faster on 2 processes × 1 thread than on 1 × 1, outputs identical: "
            f"{same}; ranks within {100 * (figures['rank_balance_max_over_mean'] - 1):.1f}% of each other"
        ),
        clock="wall seconds of the whole command (start-up, model loading and torchrun's rendezvous included)",
        roof=figures["scaling_efficiency"],
        roof_what="linear scaling (2.00× on 2 processes): the share of it reached",
        loop=None,
        loop_what="not applicable: the comparison is one process against two",
        targets=["outputs identical to one process; ranks balanced"],
        figures=figures,
        notes=[
            "both runs start with the masked-LM fills cached, so the timed work is the NLI filter",
            "2 cores shared with other work: the efficiency is a lower bound",
        ],
    )


if __name__ == "__main__":
    from .run import Context

    print(json.dumps(run(Context(Path(tempfile.mkdtemp(prefix="workbench-bench-dist-")))), indent=2))
