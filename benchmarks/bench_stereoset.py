"""StereoSet scoring speed on the base-size fixture masked LM (no cache).

Three ways to get the same per-sentence scores for a generated StereoSet file (intrasentence:
every sub-token of each option, masked left to right; intersentence without an NSP head:
every continuation token masked in turn):

- workbench: `score_model` end to end (parsing done before; tokenising, offsets, query
  building, the scoring layer's length-sorted batches with the LM head at the masks, the
  reduction to scores);
- pure forward: only the model calls over the same masked inputs, pre-built into padded
  tensors in length-sorted batches of the same size; with the full `logits` (what a plain
  implementation computes) and with the encoder plus the LM head at the masked rows only
  (the scoring layer's arithmetic); and that over the distinct (sequence, mask position)
  rows only, since the scoring layer forwards a row once for all the targets asked at it
  (the first sub-token of a CAT's three options shares one row), so that ratio is our
  overhead alone;
- reference loop: one forward pass per sentence and masked position, batch size 1, as the
  reference evaluator's default: each masked text tokenised on its own, softmax over the
  vocabulary at every position, the target read at the mask (timed on a subset; the masked
  texts are built before timing).

    python -m benchmarks.bench_stereoset [WORK_DIR] [--cpu-time]
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

DOMAINS = ["gender", "age", "profession"]
TARGETS = ["women", "men", "older people", "children", "workers", "leaders", "employees", "family"]


def make_document(n_intra: int, n_inter: int, seed: int = 0) -> dict:
    """A StereoSet-format file of random CATs over the fixture vocabulary (meaningless text of
    realistic length: 8-16 word contexts, 5-10 word continuations, options of 1-3 sub-words)."""
    from workbench.models.fixtures import _PIECES, _WORDS

    rng = random.Random(seed)
    words = [w for w in _WORDS if w.isalpha()]
    suffixes = [p[2:] for p in _PIECES]
    data: dict[str, list] = {"intrasentence": [], "intersentence": []}
    for n in range(n_intra):
        context = rng.choices(words, k=rng.randint(8, 16))
        context.insert(rng.randint(1, len(context) - 1), "BLANK")
        text = " ".join(context) + "."
        options = []
        for _ in range(3):
            word = rng.choice(words)
            options.append(word + (rng.choice(suffixes) if rng.random() < 0.4 else ""))
        sentences = [
            {"id": f"i{n}-{g[:2]}", "sentence": text.replace("BLANK", o), "gold_label": g}
            for g, o in zip(("stereotype", "anti-stereotype", "unrelated"), options)
        ]
        data["intrasentence"].append(
            {
                "id": f"i{n}",
                "target": TARGETS[n % len(TARGETS)],
                "bias_type": DOMAINS[n % 3],
                "context": text,
                "sentences": sentences,
            }
        )
    for n in range(n_inter):
        context = " ".join(rng.choices(words, k=rng.randint(8, 14))) + "."
        sentences = [
            {
                "id": f"e{n}-{g[:2]}",
                "sentence": " ".join(rng.choices(words, k=rng.randint(5, 10))) + ".",
                "gold_label": g,
            }
            for g in ("stereotype", "anti-stereotype", "unrelated")
        ]
        data["intersentence"].append(
            {
                "id": f"e{n}",
                "target": TARGETS[n % len(TARGETS)],
                "bias_type": DOMAINS[n % 3],
                "context": context,
                "sentences": sentences,
            }
        )
    return {"version": "bench", "data": data}


def _queries(scorer, data) -> list[tuple[list[int], int, int]]:
    """The masked queries score_model asks for, built the same way, the mask in place."""
    from workbench.kinds.stereoset.scoring import (
        _frame,
        _with_stop,
        intrasentence_queries,
    )

    out = []
    for e in data.split("intrasentence"):
        for s in e.sentences.values():
            out += intrasentence_queries(scorer, s, True)
    lead, trail = _frame(scorer.tokenizer)
    for e in data.split("intersentence"):
        context = scorer.encode(_with_stop(e.context), add_special_tokens=False)
        for s in e.sentences.values():
            cont = scorer.encode(" " + s.text, add_special_tokens=False)
            ids = lead + context + cont + trail
            start = len(lead) + len(context)
            out += [(ids[:p] + [scorer.mask_id] + ids[p + 1 :], p, ids[p]) for p in range(start, start + len(cont))]
    return out


def _pure_batches(scorer, queries, batch_size):
    import torch

    from workbench.models.batching import pad_batch

    order = sorted(range(len(queries)), key=lambda i: (len(queries[i][0]), i))
    batches = []
    for start in range(0, len(order), batch_size):
        chunk = [queries[i] for i in order[start : start + batch_size]]
        ids, mask = pad_batch([q[0] for q in chunk], scorer.pad_id, scorer.device)
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


def _clock() -> float:
    """Wall seconds, or (run(cpu_time=True) on CPU) this process's CPU seconds: a shared
    machine's other load does not count, and with one torch thread they equal wall seconds
    on an idle machine."""
    return time.perf_counter() if CLOCK["wall"] else time.process_time()


CLOCK = {"wall": True}


def _sync(device) -> None:
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def _pure(model, batches, head_only: bool, device) -> float:
    import torch

    base = getattr(model, model.base_model_prefix)
    head = model.cls if hasattr(model, "cls") else model.lm_head
    start = _clock()
    with torch.inference_mode():
        for ids, mask, rows, positions, targets in batches:
            if head_only:
                logits = head(base(input_ids=ids, attention_mask=mask).last_hidden_state[rows, positions]).float()
            else:
                logits = model(input_ids=ids, attention_mask=mask).logits[rows, positions].float()
            torch.log_softmax(logits, dim=-1)[rows, targets].cpu()
    _sync(device)
    return _clock() - start


def _reference_inputs(scorer, queries) -> list[tuple[str, int]]:
    """Each query as the reference builds it before scoring: the masked text, and the target."""
    from workbench.kinds.stereoset.scoring import _frame

    lead, trail = _frame(scorer.tokenizer)
    return [(scorer.tokenizer.decode(ids[len(lead) : len(ids) - len(trail)]), target) for ids, _, target in queries]


def _reference_loop(scorer, inputs, device) -> float:
    """The reference evaluator's way, item by item: tokenise the masked text, one forward pass
    (batch size 1), softmax over the vocabulary at every position, read the target at the mask."""
    import torch

    tok, model, mask_id = scorer.tokenizer, scorer.model, scorer.mask_id
    start = _clock()
    with torch.inference_mode():
        for text, target in inputs:
            enc = tok(text, return_tensors="pt", return_token_type_ids=True)
            probs = model(
                enc["input_ids"].to(device),
                attention_mask=enc["attention_mask"].to(device),
                token_type_ids=enc["token_type_ids"].to(device),
            ).logits.softmax(dim=-1)
            probs[enc["input_ids"].to(device) == mask_id][0, target].item()
    _sync(device)
    return _clock() - start


def run(ctx) -> dict:
    """The report's section: one torch thread, process CPU time (see `measure`)."""
    from .common import summary

    f = measure(ctx.work / "stereoset", cpu_time=True)
    notes = f.pop("notes")
    wall = measure(ctx.work / "stereoset", cpu_time=False)  # all threads, wall seconds: context
    notes.append(
        f"on all {wall['torch_threads']} threads in wall seconds (a shared machine: noisy): "
        f"{wall['ratio_vs_pure_forward_full_logits']}× roof, {wall['speedup_vs_reference_loop']}× the "
        "reference loop"
    )
    f["all_threads_wall"] = {
        k: wall[k]
        for k in (
            "ratio_vs_pure_forward_full_logits",
            "speedup_vs_reference_loop",
            "workbench_sentences_per_s",
            "torch_threads",
        )
    }
    return summary(
        title="stereoset: scoring every sentence of a StereoSet file with a masked LM (evaluator, no cache)",
        workload=(
            f"{f['sentences']} sentences ({f['cats']['intrasentence']} intrasentence + {f['cats']['intersentence']} "
            f"intersentence CATs) = {f['masked_queries']:,} masked queries, base-size fixture BERT, batch {f['batch_size']}"
        ),
        figure=f"{f['workbench_sentences_per_s']:,.0f} sentences/s end to end (score_model)",
        clock=f["clock"] + f", {f['torch_threads']} torch thread(s)",
        roof=f["ratio_vs_pure_forward_full_logits"],
        roof_what=(
            "pure batched forward pass (length-sorted batches, full logits) over the same masked inputs, "
            f"pre-built; against the LM head at the masks only: {f['ratio_vs_pure_forward_head_at_masks']}×, "
            f"and over the distinct rows only (the scoring layer's exact arithmetic): "
            f"{f['ratio_vs_pure_forward_distinct_rows']}×"
        ),
        loop=f["speedup_vs_reference_loop"],
        loop_what=(
            "the reference evaluator's loop: one masked text per forward pass (batch 1), softmax over the "
            "vocabulary at every position"
        ),
        targets=["× roof ≥ 0.85, × plain loop ≥ 5"],
        figures=f,
        notes=notes,
    )


def measure(
    work: Path,
    n_intra: int = 150,
    n_inter: int = 50,
    n_reference: int = 150,
    batch_size: int = 64,
    device: str = "auto",
    repeats: int = 3,
    cpu_time: bool = False,
) -> dict:
    """Figures for the three ways. cpu_time: one torch thread and this process's CPU seconds
    instead of wall seconds with torch's default threads, for a machine other work shares
    (wall-clock ratios there move by tens of percent from run to run)."""
    from workbench.models.fixtures import build_mlm
    from workbench.models.lm_loading import load_scorer

    work = Path(work)
    model_dir = work / "mlm-bert-base"
    if not (model_dir / "config.json").is_file():
        build_mlm(model_dir, "bert", size="base", seed=2)
    scorer = load_scorer(str(model_dir), device=device, batch_size=batch_size, cache_path=None)
    import torch

    threads = torch.get_num_threads()
    if cpu_time:
        torch.set_num_threads(1)
    CLOCK["wall"] = not cpu_time or scorer.device.type != "cpu"
    try:
        return _measure(scorer, n_intra, n_inter, n_reference, batch_size, repeats, work)
    finally:
        torch.set_num_threads(threads)  # the setting is process-wide: other benchmarks run after this one


def _measure(scorer, n_intra, n_inter, n_reference, batch_size, repeats, work) -> dict:
    import torch

    from workbench.kinds.stereoset.data import parse
    from workbench.kinds.stereoset.scoring import score_model

    data = parse(make_document(n_intra, n_inter), work / "bench.json")
    n_sentences = 3 * (n_intra + n_inter)
    queries = _queries(scorer, data)
    score_model(scorer, parse(make_document(10, 5, seed=99), work / "warm.json"))  # warm-up

    seen: dict = {}
    for ids, pos, target in queries:
        seen.setdefault((tuple(ids), pos), (list(ids), pos, target))
    distinct = list(seen.values())
    subset = random.Random(1).sample(queries, min(n_reference, len(queries)))
    reference_inputs = _reference_inputs(scorer, subset)
    ours, full, same_head, rows_once, reference = [], [], [], [], []
    for _ in range(repeats):
        scorer.batch_size = batch_size
        start = _clock()
        score_model(scorer, data, "mean-prob")
        _sync(scorer.device)
        ours.append(_clock() - start)
        batches = _pure_batches(scorer, queries, batch_size)
        full.append(_pure(scorer.model, batches, head_only=False, device=scorer.device))
        same_head.append(_pure(scorer.model, batches, head_only=True, device=scorer.device))
        rows_once.append(
            _pure(scorer.model, _pure_batches(scorer, distinct, batch_size), head_only=True, device=scorer.device)
        )
        reference.append(_reference_loop(scorer, reference_inputs, scorer.device) * len(queries) / len(subset))

    best = min
    return {
        "device": str(scorer.device),
        "model": "fixture BERT base size (hidden 256, 4 layers)",
        "cats": {"intrasentence": n_intra, "intersentence": n_inter},
        "sentences": n_sentences,
        "masked_queries": len(queries),
        "distinct_forward_rows": len(distinct),
        "batch_size": batch_size,
        "torch_threads": torch.get_num_threads(),
        "clock": "wall seconds" if CLOCK["wall"] else "process CPU seconds",
        "workbench_sentences_per_s": round(n_sentences / best(ours), 1),
        "pure_forward_full_logits_sentences_per_s": round(n_sentences / best(full), 1),
        "pure_forward_head_at_masks_sentences_per_s": round(n_sentences / best(same_head), 1),
        "pure_forward_distinct_rows_sentences_per_s": round(n_sentences / best(rows_once), 1),
        "reference_loop_sentences_per_s": round(n_sentences / best(reference), 1),
        "ratio_vs_pure_forward_full_logits": round(best(full) / best(ours), 3),
        "ratio_vs_pure_forward_head_at_masks": round(best(same_head) / best(ours), 3),
        "ratio_vs_pure_forward_distinct_rows": round(best(rows_once) / best(ours), 3),
        "speedup_vs_reference_loop": round(best(reference) / best(ours), 1),
        "notes": [
            (
                f"best of {repeats} interleaved runs of each way; the reference loop timed on {len(subset)} "
                "random queries and scaled to all of them"
            ),
            (
                "clock: wall seconds with torch's default threads"
                if CLOCK["wall"]
                else "clock: this process's CPU seconds with one torch thread, so other work on a shared machine "
                "does not distort the ratios"
            ),
            (
                "targets: ratio vs pure batched forward >= 0.85; speedup vs the one-sentence-one-position "
                "reference loop >= 5"
            ),
        ],
    }


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("WORKBENCH_PROGRESS", "0")
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    folder = Path(args[0]) if args else Path(tempfile.mkdtemp(prefix="bench-stereoset-"))
    print(json.dumps(measure(folder, cpu_time="--cpu-time" in sys.argv), indent=2))
