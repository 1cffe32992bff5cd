"""Do pair decisions depend on batch size and thread count? What settling near-boundary pairs costs.

For a base-size masked LM (BERT) and causal LM (GPT-2) built locally, 400 CrowS-style pairs are
scored in two configurations that differ only in batch size (and, on a CPU, thread count):

- plain: how far the scores move between the two (max |Δ| in nats), and how many pairs are
  decided differently when each is decided on its own plain scores (the flips a user could see
  between two runs before pairs near a boundary were settled);
- settled (`score_pairs` as shipped): how many pairs lay near a boundary and were scored again
  canonically, how many decisions differ between the two configurations (must be 0), and the
  time of the settled run against the plain one.

On a GPU each available precision is measured (float32, bfloat16).

    python -m benchmarks.bench_determinism            # prints the JSON (make bench SECTION=determinism)
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

N_PAIRS = int(os.environ.get("DETERMINISM_PAIRS", "400"))


def _pairs(n: int) -> list[tuple[str, str]]:
    from .bench_crows_pairs import make_pairs

    return make_pairs(n)


def _decisions(scores, rule: str) -> list[tuple[int, int]]:
    from workbench.kinds.crows_pairs.scoring import compare

    return [compare(*s.decided(rule)) for s in scores]


def measure(model_dir: Path, device: str, dtype: str, configs: list[tuple[int, int]]) -> dict:
    """Plain and settled scoring of the same pairs under each (batch size, threads) config."""
    import torch

    from workbench.kinds.crows_pairs import scoring
    from workbench.models import lm_scoring
    from workbench.models.lm_loading import load_scorer
    from workbench.models.runtime import LoadSpec

    pairs = _pairs(N_PAIRS)
    plain, settled, seconds = [], [], {"plain": 0.0, "settled": 0.0}
    rule = None
    for batch, threads in configs:
        torch.set_num_threads(threads)
        scorer = load_scorer(str(model_dir), spec=LoadSpec(device=device, dtype=dtype, batch_size=batch))
        rule = scoring.rule_of(scorer)
        noise = dict(lm_scoring.RELATIVE_NOISE)
        try:
            lm_scoring.RELATIVE_NOISE.update(dict.fromkeys(noise, 0.0))  # nothing settled: the plain scores
            start = time.perf_counter()
            plain.append(scoring.score_pairs(scorer, pairs))
            seconds["plain"] += time.perf_counter() - start
        finally:
            lm_scoring.RELATIVE_NOISE.update(noise)
        scorer.batch_size = batch
        start = time.perf_counter()
        settled.append(scoring.score_pairs(scorer, pairs))
        seconds["settled"] += time.perf_counter() - start
    a, b = plain
    moved = [abs(x - y) for p, q in zip(a, b) for x, y in ((p.score1, q.score1), (p.score2, q.score2))]
    return {
        "rule": rule,
        "device": device,
        "dtype": dtype,
        "configs (batch, threads)": configs,
        "pairs": len(pairs),
        "plain max |delta| nats": max(moved),
        "plain scores that moved": sum(m > 0 for m in moved),
        "plain decisions that differ": sum(x != y for x, y in zip(_decisions(a, rule), _decisions(b, rule))),
        "settled pairs near a boundary": [sum(s.near_boundary for s in run) for run in settled],
        "settled decisions that differ": sum(
            x != y for x, y in zip(_decisions(settled[0], rule), _decisions(settled[1], rule))
        ),
        "settled time / plain time": round(seconds["settled"] / seconds["plain"], 3),
    }


def run(ctx=None) -> dict:
    import torch

    from workbench.models.fixtures import build_clm, build_mlm

    work = Path(ctx.work if ctx is not None else tempfile.mkdtemp(prefix="determinism-"))
    models = {"mlm-bert-base": work / "det-mlm-bert-base", "clm-gpt2-base": work / "det-clm-gpt2-base"}
    if not models["mlm-bert-base"].is_dir():
        build_mlm(models["mlm-bert-base"], "bert", size="base", seed=2)
    if not models["clm-gpt2-base"].is_dir():
        build_clm(models["clm-gpt2-base"], size="base", seed=31)
    gpu = torch.cuda.is_available()
    threads = torch.get_num_threads()
    runs = []
    for name, folder in models.items():
        if gpu:
            for dtype in ("float32", "bfloat16"):
                runs.append({"model": name, **measure(folder, "cuda", dtype, [(64, threads), (7, threads)])})
        else:
            runs.append({"model": name, **measure(folder, "cpu", "float32", [(64, threads), (7, 1)])})
    differ = sum(r["settled decisions that differ"] for r in runs)
    flips = sum(r["plain decisions that differ"] for r in runs)
    return {
        "status": "ok",
        "runs": runs,
        "figure": f"{differ} settled decisions differ across batch size/threads (plain: {flips} of "
        f"{sum(r['pairs'] for r in runs)}); settled/plain time "
        + ", ".join(f"{r['model']} {r['dtype']} {r['settled time / plain time']}x" for r in runs),
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
    sys.exit(0)
