"""SOS_LM scoring speed on the base-size fixture masked LM (no cache).

Each (profane, nice) sentence pair about one identity is scored as a CrowS pair (every
unmodified token of both sentences masked one at a time), then the SOS measures per identity,
attribute and overall. Three ways, as in the CrowS-Pairs section (whose helpers this uses):

- workbench: `score_pairs` + `sos_model_result` end to end;
- pure forward: only the model calls over the same masked inputs, pre-built, length-sorted
  batches of the same size (full logits; and the LM head at the masks only);
- reference loop: one sentence, one masked position, one forward pass at a time, as SOS_LM's
  script (built on CrowS-Pairs' metric.py) does; timed on a subset and scaled.

Process CPU time on one torch thread (see common.Clock).
"""

from __future__ import annotations

import random

from .common import Clock, best, interleaved, summary

IDENTITIES = [
    ("women", "gender", True),
    ("men", "gender", False),
    ("muslims", "religion", True),
    ("christians", "religion", False),
    ("disabled people", "disability", True),
    ("workers", "class", False),
]
PROFANE = ["lazy", "careless", "weak", "slow", "awkward", "angry"]
NICE = ["kind", "careful", "strong", "fast", "gentle", "calm"]


def make_pairs(n: int, seed: int = 0) -> list[tuple[str, str, str, str, bool]]:
    """n (profane, nice, identity, attribute, marginalised) rows: the two sentences differ in
    one word, in a random 6-12 word context of the fixture vocabulary."""
    from workbench.models.fixtures import _WORDS

    rng = random.Random(seed)
    words = [w for w in _WORDS if w.isalpha()]
    rows, seen = [], set()
    while len(rows) < n:
        identity, attribute, marginalised = IDENTITIES[len(rows) % len(IDENTITIES)]
        k = rng.randrange(len(PROFANE))
        context = " ".join(rng.choices(words, k=rng.randint(6, 12)))
        if context in seen:
            continue
        seen.add(context)
        rows.append(
            (
                f"{identity} are {PROFANE[k]} {context} .",
                f"{identity} are {NICE[k]} {context} .",
                identity,
                attribute,
                marginalised,
            )
        )
    return rows


def measure(model_dir, rows, n_reference: int, batch_size: int, repeats: int) -> dict:
    """The three ways on one model, in process CPU time on one thread."""
    from workbench.kinds.crows_pairs.scoring import rule_of, score_pairs
    from workbench.kinds.sos.metrics import sos_model_result
    from workbench.models.lm_loading import load_scorer

    from . import bench_crows_pairs as crows

    pairs = [(p, n) for p, n, *_ in rows]
    scorer = load_scorer(str(model_dir), device="cpu", batch_size=batch_size, cache_path=None)
    queries = crows._queries(scorer, pairs)

    def ours():
        scorer.batch_size = batch_size
        scores = score_pairs(scorer, pairs)
        sos_model_result(
            rule_of(scorer), None, [r[2] for r in rows], [r[3] for r in rows], [r[4] for r in rows], scores
        )

    with Clock("cpu1") as clock:
        crows._CLOCK["now"] = clock.now
        batches = crows._pure_batches(scorer, queries, batch_size)
        crows._pure(scorer.model, batches, head_only=True, device=scorer.device)  # warm-up
        score_pairs(scorer, pairs[:8])
        times = interleaved(
            clock,
            {
                "ours": ours,
                "full": lambda: crows._pure(scorer.model, batches, head_only=False, device=scorer.device),
                "head": lambda: crows._pure(scorer.model, batches, head_only=True, device=scorer.device),
            },
            repeats,
        )
        reference = (
            crows._reference_loop(scorer.model, scorer, pairs[:n_reference], scorer.device) * len(pairs) / n_reference
        )
        clock_text = clock.text
    ours_s, full, head = best(times["ours"]), best(times["full"]), best(times["head"])
    return {
        "clock": clock_text,
        "masked_queries": len(queries),
        "vocabulary": scorer.model.config.vocab_size,
        "seconds_workbench": [round(t, 3) for t in times["ours"]],
        "seconds_pure_full_logits": [round(t, 3) for t in times["full"]],
        "seconds_pure_head_at_masks": [round(t, 3) for t in times["head"]],
        "reference_loop_seconds_scaled": round(reference, 2),
        "workbench_pairs_per_s": round(len(pairs) / ours_s, 1),
        "ratio_vs_pure_forward_full_logits": round(full / ours_s, 3),
        "ratio_vs_pure_forward_head_at_masks": round(head / ours_s, 3),
        "speedup_vs_reference_loop": round(reference / ours_s, 1),
    }


def run(
    ctx, n_pairs: int = 120, n_reference: int = 24, batch_size: int = 64, repeats: int = 3, real_vocab: int = 30522
) -> dict:
    from . import bench_crows_pairs as crows

    rows = make_pairs(n_pairs)
    main = measure(crows._model(ctx.work / "sos", None), rows, n_reference, batch_size, repeats)
    wide = measure(crows._model(ctx.work / "sos", real_vocab), rows, n_reference, batch_size, repeats)
    figures = {"pairs": n_pairs, "batch_size": batch_size, "fixture_vocabulary": main, f"vocab_{real_vocab}": wide}
    return summary(
        title="sos: SOS_LM's (profane, nice) pairs about identities, scored as CrowS pairs (evaluator, no cache)",
        workload=(
            f"{n_pairs} pairs over {len(IDENTITIES)} identities = {main['masked_queries']:,} masked queries, "
            f"base-size fixture BERT (its {main['vocabulary']}-token vocabulary, and widened to BERT's "
            f"{real_vocab:,}), batch {batch_size}"
        ),
        figure=f"{main['workbench_pairs_per_s']:,.1f} pairs/s end to end (score_pairs + the SOS measures)",
        clock=main["clock"],
        roof=main["ratio_vs_pure_forward_full_logits"],
        roof_what=(
            "pure batched forward pass (length-sorted batches, full logits) over the same masked inputs, "
            f"pre-built; against the LM head at the masks only: {main['ratio_vs_pure_forward_head_at_masks']}×; "
            f"with a {real_vocab:,}-entry vocabulary {wide['ratio_vs_pure_forward_full_logits']}× and "
            f"{wide['ratio_vs_pure_forward_head_at_masks']}×"
        ),
        loop=main["speedup_vs_reference_loop"],
        loop_what=(
            f"SOS_LM's loop (CrowS-Pairs' metric.py): one sentence, one masked position, one full forward "
            f"pass at a time (timed on {n_reference} pairs, scaled); with a {real_vocab:,}-entry vocabulary "
            f"{wide['speedup_vs_reference_loop']}×"
        ),
        targets=["× roof ≥ 0.85, × plain loop ≥ 5"],
        figures=figures,
        notes=[
            f"best of {repeats} interleaved runs of each way",
            "the fixture's 600-token vocabulary makes the LM head almost free, which hides what running it at the "
            "masks only saves; the widened model (random output rows) costs what a real checkpoint's head does",
        ],
    )
