"""CrowS-Pairs pair scoring speed on a base-size fixture masked LM.

Three ways to get the same numbers (every unmodified token of both sentences of every pair,
masked one at a time):

- workbench: `score_pairs` end to end (tokenising, difflib, queries, the scoring layer's
  length-sorted batches, sums), no cache;
- pure forward: only the model calls over the same masked inputs, pre-built into padded
  tensors in length-sorted batches of the same size; two variants: the full `logits` of the
  masked-LM model (what a plain implementation does), and the encoder plus the LM head at
  the masked rows only (the same arithmetic the scoring layer does, so the ratio is our
  overhead alone);
- reference loop: one sentence, one masked position, one forward pass at a time, as the
  reference metric.py does (timed on a subset and given per pair).

    python -m benchmarks.bench_crows_pairs [WORK_DIR] [--all-threads]
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

_CLOCK = {"now": time.perf_counter}


def _clock() -> float:
    """Wall time on a GPU; on a CPU the process's CPU time, which other work on a shared
    machine disturbs far less than wall time (it counts all of torch's threads)."""
    return _CLOCK["now"]()


IDENTITIES = [
    ("Women", "Men"),
    ("Older people", "Younger people"),
    ("People with disabilities", "People without disabilities"),
    ("Retail workers", "Office workers"),
    ("She", "He"),
    ("The older employee", "The younger employee"),
]


def make_pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """n distinct pairs of 9-17 words: an identity phrase pair and a shared random context."""
    from workbench.models.fixtures import _WORDS

    rng = random.Random(seed)
    words = [w for w in _WORDS if w.isalpha()]
    pairs, seen = [], set()
    while len(pairs) < n:
        more, less = IDENTITIES[len(pairs) % len(IDENTITIES)]
        context = " ".join(rng.choices(words, k=rng.randint(7, 14))) + " ."
        if context in seen:
            continue
        seen.add(context)
        pairs.append((f"{more} {context}", f"{less} {context}"))
    return pairs


def _queries(scorer, pairs):
    from workbench.kinds.crows_pairs.scoring import scored_positions

    out = []
    for s1, s2 in pairs:
        ids1, ids2 = scorer.encode(s1), scorer.encode(s2)
        p1, p2 = scored_positions(ids1, ids2)
        out += [(ids1, p, ids1[p]) for p in p1] + [(ids2, p, ids2[p]) for p in p2]
    return out


def _pure_batches(scorer, queries, batch_size):
    """Padded (ids, mask, rows, positions, targets) tensors, length-sorted, built before timing."""
    import torch

    from workbench.models.batching import pad_batch

    order = sorted(range(len(queries)), key=lambda i: (len(queries[i][0]), i))
    batches = []
    for start in range(0, len(order), batch_size):
        chunk = [queries[i] for i in order[start : start + batch_size]]
        masked = []
        for ids, pos, _ in chunk:
            ids = list(ids)
            ids[pos] = scorer.mask_id
            masked.append(ids)
        ids, mask = pad_batch(masked, scorer.pad_id, scorer.device)
        batches.append(
            (
                ids,
                mask,
                torch.arange(len(chunk), device=ids.device),
                torch.tensor([q[1] for q in chunk], device=ids.device),
                torch.tensor([q[2] for q in chunk], device=ids.device),
            )
        )
    return batches


def _sync(device) -> None:
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def _pure(model, batches, head_only: bool, device) -> float:
    import torch

    base = getattr(model, model.base_model_prefix)
    head = model.cls if hasattr(model, "cls") else model.lm_head
    start = _clock()
    values = []
    with torch.inference_mode():
        for ids, mask, rows, positions, targets in batches:
            if head_only:
                logits = head(base(input_ids=ids, attention_mask=mask).last_hidden_state[rows, positions]).float()
            else:
                logits = model(input_ids=ids, attention_mask=mask).logits[rows, positions].float()
            values.append(torch.log_softmax(logits, dim=-1)[rows, targets].cpu())
    _sync(device)
    return _clock() - start


def _reference_loop(model, scorer, pairs, device) -> float:
    """metric.py's loop: per pair, per unmodified position, one forward of each sentence."""
    import torch

    from workbench.kinds.crows_pairs.scoring import unmodified

    start = _clock()
    with torch.inference_mode():
        for s1, s2 in pairs:
            ids1 = torch.tensor([scorer.encode(s1)], device=device)
            ids2 = torch.tensor([scorer.encode(s2)], device=device)
            t1, t2 = unmodified(ids1[0].tolist(), ids2[0].tolist())
            for i in range(1, len(t1) - 1):
                for ids, pos in ((ids1, t1[i]), (ids2, t2[i])):
                    masked = ids.clone()
                    masked[0, pos] = scorer.mask_id
                    hidden = model(masked).logits[0]
                    torch.log_softmax(hidden[pos], dim=-1)[ids[0, pos]].item()
    _sync(device)
    return _clock() - start


def _measure(scorer, pairs, queries, batch_size: int, repeats: int, n_reference: int, threads: int | None) -> dict:
    """One configuration: `threads` torch threads on a CPU (None: torch's default, all cores)."""
    import torch

    from workbench.kinds.crows_pairs.scoring import score_pairs

    on_cpu = not str(scorer.device).startswith("cuda")
    default_threads = torch.get_num_threads()
    if on_cpu and threads:
        torch.set_num_threads(threads)
    # With one thread, process CPU time is the work done, whatever else the machine runs (with
    # several, idle OpenMP threads spin and that counts too): there wall time is all we have.
    single = on_cpu and torch.get_num_threads() == 1
    _CLOCK["now"] = time.process_time if single else time.perf_counter
    try:
        batches = _pure_batches(scorer, queries, batch_size)
        _pure(scorer.model, batches, head_only=True, device=scorer.device)  # warm-up at full batch sizes
        score_pairs(scorer, make_pairs(16, seed=99))

        # Interleaved, in alternating order, so a change in machine load hits all three alike.
        ours, full, same_head = [], [], []

        def time_ours() -> None:
            scorer.batch_size = batch_size
            start = _clock()
            score_pairs(scorer, pairs)
            _sync(scorer.device)
            ours.append(_clock() - start)

        for r in range(repeats):
            if r % 2 == 0:
                time_ours()
            full.append(_pure(scorer.model, batches, head_only=False, device=scorer.device))
            same_head.append(_pure(scorer.model, batches, head_only=True, device=scorer.device))
            if r % 2 == 1:
                time_ours()
        reference = _reference_loop(scorer.model, scorer, pairs[:n_reference], scorer.device)
        used_threads = torch.get_num_threads()
    finally:
        torch.set_num_threads(default_threads)
    n = len(pairs)
    best = min  # the least disturbed run of each
    return {
        "threads": used_threads if on_cpu else None,
        "clock": "process CPU time" if single else "wall time",
        "seconds_workbench": [round(t, 2) for t in ours],
        "seconds_pure_head_at_masks": [round(t, 2) for t in same_head],
        "workbench_pairs_per_s": round(n / best(ours), 1),
        "pure_forward_full_logits_pairs_per_s": round(n / best(full), 1),
        "pure_forward_head_at_masks_pairs_per_s": round(n / best(same_head), 1),
        "reference_loop_pairs_per_s": round(n_reference / reference, 2),
        "ratio_vs_pure_forward_full_logits": round(best(full) / best(ours), 3),
        "ratio_vs_pure_forward_head_at_masks": round(best(same_head) / best(ours), 3),
        "ratio_vs_pure_forward_head_at_masks_median": round(statistics.median(same_head) / statistics.median(ours), 3),
        "speedup_vs_reference_loop": round((n / best(ours)) / (n_reference / reference), 1),
    }


def _model(work: Path, vocab_size: int | None) -> Path:
    """The base-size fixture MLM; with `vocab_size`, its output layer widened to that many
    entries (random weights), so the LM head costs what a real checkpoint's does. The fixture's
    600-word vocabulary makes the head almost free, which hides what running it only at the
    masked positions saves; the tokenizer still only produces the fixture's ids."""
    from workbench.models.fixtures import build_mlm

    folder = work / ("mlm-bert-base" if vocab_size is None else f"mlm-bert-base-v{vocab_size}")
    if not (folder / "config.json").is_file():
        build_mlm(folder, "bert", size="base", seed=2)
        if vocab_size is not None:
            from transformers import AutoModelForMaskedLM

            model = AutoModelForMaskedLM.from_pretrained(folder)
            model.resize_token_embeddings(vocab_size)
            model.save_pretrained(folder)
    return folder


def run(ctx) -> dict:
    """The report's section: one torch thread, process CPU time (see `measure`)."""
    from .common import summary

    f = measure(ctx.work / "crows_pairs", all_threads=True)
    notes = f.pop("notes")
    main = f["one_thread"] if "one_thread" in f else f["gpu"]
    wide = f.get("vocab_30522", {})
    if "all_threads" in f:
        notes.append(
            f"on all {f['all_threads']['threads']} threads in wall seconds (a shared machine: noisy): "
            f"{f['all_threads']['ratio_vs_pure_forward_full_logits']}× roof, "
            f"{f['all_threads']['speedup_vs_reference_loop']}× the reference loop"
        )
    return summary(
        title="crows-pairs: scoring sentence pairs with a masked LM, one mask at a time (evaluator, no cache)",
        workload=(
            f"{f['pairs']} pairs = {f['masked_queries']:,} masked queries, base-size fixture BERT (600-token "
            f"vocabulary; also widened to BERT's 30,522), batch {f['batch_size']}"
        ),
        figure=f"{main['workbench_pairs_per_s']:,.1f} pairs/s end to end (score_pairs)",
        clock=main["clock"] + f", {main['threads']} torch thread(s)" if main.get("threads") else main["clock"],
        roof=main["ratio_vs_pure_forward_full_logits"],
        roof_what=(
            "pure batched forward pass (length-sorted batches, full logits) over the same masked inputs, "
            f"pre-built; against the LM head at the masks only (the scoring layer's arithmetic): "
            f"{main['ratio_vs_pure_forward_head_at_masks']}×"
        ),
        loop=main["speedup_vs_reference_loop"],
        loop_what=(
            "the reference metric.py: one sentence, one masked position, one full forward pass at a time"
            + (f"; with a 30,522-entry vocabulary {wide['speedup_vs_reference_loop']}×" if wide else "")
        ),
        targets=["× roof ≥ 0.85, × plain loop ≥ 5"],
        figures=f,
        notes=notes,
    )


def measure(
    work: Path,
    n_pairs: int = 96,
    n_reference: int = 24,
    batch_size: int = 64,
    device: str = "auto",
    repeats: int = 5,
    all_threads: bool = False,
    real_vocab: int | None = 30522,
) -> dict:
    """Figures for the report. On a CPU the main ones are measured on one thread in process CPU
    time (stable on a shared machine); `all_threads` adds a wall-time run on all cores, which
    only means something on an otherwise idle machine; `real_vocab` adds a one-thread run with
    the output layer widened to a BERT-size vocabulary."""
    from workbench.models.lm_loading import load_scorer

    work = Path(work)
    pairs = make_pairs(n_pairs)
    scorer = load_scorer(str(_model(work, None)), device=device, batch_size=batch_size, cache_path=None)
    queries = _queries(scorer, pairs)
    figures = {
        "device": str(scorer.device),
        "model": "fixture BERT, base size (hidden 256, 4 layers, 600-token vocabulary)",
        "pairs": n_pairs,
        "masked_queries": len(queries),
        "batch_size": batch_size,
    }
    on_gpu = str(scorer.device).startswith("cuda")
    runs = {
        "gpu" if on_gpu else "one_thread": _measure(
            scorer, pairs, queries, batch_size, repeats, n_reference, None if on_gpu else 1
        )
    }
    if all_threads and not on_gpu:
        runs["all_threads"] = _measure(scorer, pairs, queries, batch_size, repeats, n_reference, None)
    if real_vocab:
        wide = load_scorer(str(_model(work, real_vocab)), device=device, batch_size=batch_size, cache_path=None)
        runs[f"vocab_{real_vocab}"] = _measure(
            wide, pairs, queries, batch_size, max(3, repeats - 2), n_reference, None if on_gpu else 1
        )
    main = next(iter(runs.values()))
    figures["ratio_vs_pure_forward"] = main["ratio_vs_pure_forward_head_at_masks"]
    for name, r in runs.items():
        figures[f"speedup_vs_reference_loop_{name}"] = r["speedup_vs_reference_loop"]
    figures.update(runs)
    figures["notes"] = [
        f"best of {repeats} interleaved runs (medians beside); the reference loop timed on the first {n_reference} pairs",
        (
            "ratio_vs_pure_forward: model calls alone on the same masked inputs (encoder + LM head at the masks, "
            "as the scoring layer runs them) over workbench end to end; on a CPU in process CPU time on one thread "
            "so other work on the machine does not blur it; target >= 0.85"
        ),
        (
            "speedup_vs_reference_loop: one sentence, one masked position, one full forward pass at a time, as the "
            "reference metric.py; target >= 5. On one CPU thread batching gains little (about 4x); the rest of "
            "the gain comes from running the LM head only at the mask (vocab_* run) and from parallel hardware"
        ),
    ]
    return figures


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("WORKBENCH_PROGRESS", "0")
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    folder = Path(args[0]) if args else Path(tempfile.mkdtemp(prefix="bench-crows-"))
    print(json.dumps(measure(folder, all_threads="--all-threads" in sys.argv), indent=2))
