"""Generation in the shared model layer (`workbench.models.generation`) against transformers'
own `model.generate`.

A base-size GPT-2 built locally generates 32 new tokens greedily for each of 32 prompts of
different lengths. Contenders, interleaved, on the same model object:

- ours: `generate(scorer, prompts)` at batch 32 (length-sorted, left-padded, KV cache; no score cache);
- generate (roof): `model.generate(do_sample=False)` over the same 32 prompts as one left-padded
  batch, in the same order: the same rows, so the same tokens (checked);
- one at a time (plain loop): `model.generate` per prompt, as a script without batching does it.

Also: ours one prompt at a time, and ours sampling (temperature 1, top-p 0.95) at batch 32.
Read in process CPU seconds on one torch thread (common.Clock): the machine is shared
(GENERATION_DEVICE=cuda runs it on a GPU, in wall seconds).

    python -m benchmarks.bench_generation            # prints the JSON (make bench SECTION=generation)
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

N_PROMPTS = int(os.environ.get("GENERATION_PROMPTS", "32"))
NEW_TOKENS = int(os.environ.get("GENERATION_NEW_TOKENS", "32"))
REPEATS = int(os.environ.get("GENERATION_REPEATS", "5"))
DEVICE = os.environ.get("GENERATION_DEVICE", "cpu")  # cuda: read in wall seconds instead


def make_prompts(n: int) -> list[str]:
    """n prompts of 3 to about 25 words, from the fixture vocabulary's words."""
    from .common import EXTRA_WORDS

    groups = ["workers", "people", "students", "neighbours", "doctors", "women", "men", "parents"]
    out = []
    for i in range(n):
        words = [EXTRA_WORDS[(i * 7 + k) % len(EXTRA_WORDS)] for k in range(i % 11)]
        tail = " and ".join(words[: 1 + i % 4])
        out.append(" ".join(f"the {groups[i % len(groups)]} are {', '.join(words)} {tail} because they".split()))
    return out


def _padded(scorer, encoded):
    import torch

    width = max(len(e) for e in encoded)
    ids = torch.tensor([[scorer.pad_id] * (width - len(e)) + list(e) for e in encoded])
    mask = torch.tensor([[0] * (width - len(e)) + [1] * len(e) for e in encoded])
    return ids, mask, width


def hf_generate(scorer, encoded, n: int, **sampling) -> list[list[int]]:
    """`model.generate` over the prompts as one left-padded batch: each row's new tokens up to its EOS."""
    import torch

    ids, mask, width = _padded(scorer, encoded)
    with torch.inference_mode():
        out = scorer.model.generate(
            input_ids=ids.to(scorer.device),
            attention_mask=mask.to(scorer.device),
            max_new_tokens=n,
            pad_token_id=scorer.pad_id,
            **(sampling or {"do_sample": False}),
        )
    eos = scorer.model.generation_config.eos_token_id
    return [row[: row.index(eos) + 1] if eos in row else row for row in out[:, width:].tolist()]


def measure(model_dir: Path, repeats: int = REPEATS) -> dict:
    from workbench.models.generation import GenerationSettings, encode_prompts, generate
    from workbench.models.lm_loading import load_scorer

    from .common import Clock, best, interleaved

    prompts = make_prompts(N_PROMPTS)
    scorer = load_scorer(str(model_dir), device=DEVICE, batch_size=N_PROMPTS)  # no cache: every run computes
    one = load_scorer(str(model_dir), device=DEVICE, batch_size=1)
    one.model = scorer.model
    greedy = GenerationSettings(max_new_tokens=NEW_TOKENS)
    sampling = GenerationSettings(max_new_tokens=NEW_TOKENS, sample=True, top_p=0.95, seed=0)
    encoded = encode_prompts(scorer, prompts, greedy)
    order = sorted(range(len(encoded)), key=lambda i: (len(encoded[i]), i))  # the batch ours runs
    batch = [encoded[i] for i in order]
    results: dict = {}

    def ours():
        results["ours"] = generate(scorer, prompts, greedy)

    def hf():
        results["hf"] = hf_generate(scorer, batch, NEW_TOKENS)

    def hf_loop():
        results["hf_loop"] = [hf_generate(scorer, [e], NEW_TOKENS)[0] for e in encoded]

    def ours_one():
        results["ours_one"] = generate(one, prompts, greedy)

    def ours_sampling():
        results["ours_sampling"] = generate(scorer, prompts, sampling)

    with Clock("cpu1" if DEVICE == "cpu" else "wall") as clock:
        ours(), hf(), hf_loop(), ours_one(), ours_sampling()  # warm-up of every path
        times = interleaved(
            clock,
            {
                "ours": ours,
                "generate": hf,
                "generate one at a time": hf_loop,
                "ours one at a time": ours_one,
                "ours sampling": ours_sampling,
            },
            repeats,
        )
        clock_text = clock.text
    got = [list(g.token_ids) for g in results["ours"]]
    same_batch = got == [dict(zip(order, results["hf"]))[i] for i in range(len(prompts))]
    same_alone = [list(g.token_ids) for g in results["ours_one"]] == results["hf_loop"]
    tokens = sum(len(g) for g in got)
    sampled = sum(len(g.token_ids) for g in results["ours_sampling"])
    seconds = {name: best(t) for name, t in times.items()}
    per_s = {name: round((sampled if name == "ours sampling" else tokens) / s, 1) for name, s in seconds.items()}
    lengths = [len(e) for e in encoded]
    return {
        "model": f"fixture GPT-2 base ({sum(p.numel() for p in scorer.model.parameters()) / 1e6:.1f}M parameters, "
        f"vocabulary {len(scorer.tokenizer)})",
        "clock": clock_text,
        "prompts": len(prompts),
        "max_new_tokens": NEW_TOKENS,
        "prompt_tokens_min_max": [min(lengths), max(lengths)],
        "tokens_generated": tokens,
        "rows_ended_by_eos": sum(g.stop_reason == "eos" for g in results["ours"]),
        "same_tokens_as_generate_at_batch": same_batch,
        "same_tokens_as_generate_one_at_a_time": same_alone,
        "seconds_best": {k: round(v, 4) for k, v in seconds.items()},
        "seconds_all": {k: [round(x, 4) for x in v] for k, v in times.items()},
        "tokens_per_second": per_s,
        "ours_vs_generate_same_batch": round(seconds["generate"] / seconds["ours"], 3),
        "ours_vs_generate_one_at_a_time": round(seconds["generate one at a time"] / seconds["ours"], 2),
        "ours_one_at_a_time_vs_generate_one_at_a_time": round(
            seconds["generate one at a time"] / seconds["ours one at a time"], 3
        ),
    }


def run(ctx=None) -> dict:
    from workbench.models.fixtures import build_clm

    from .common import summary

    work = Path(ctx.work if ctx is not None else tempfile.mkdtemp(prefix="bench-generation-"))
    model_dir = work / "gen-clm-gpt2-base"
    if not model_dir.is_dir():
        build_clm(model_dir, size="base", seed=31)
    f = measure(model_dir)
    ratio, loop = f["ours_vs_generate_same_batch"], f["ours_vs_generate_one_at_a_time"]
    same = "yes" if f["same_tokens_as_generate_at_batch"] else "NO"
    return {
        "status": "ok",
        **summary(
            title="generation: batched, KV-cached generation in the shared model layer vs transformers' generate",
            workload=(
                f"{f['prompts']} prompts ({f['prompt_tokens_min_max'][0]}-{f['prompt_tokens_min_max'][1]} tokens) × "
                f"{f['max_new_tokens']} new tokens, greedy, batch {f['prompts']}, {f['model']}, {DEVICE}"
            ),
            figure=(
                f"{f['tokens_per_second']['ours']} tokens/s, {ratio}× model.generate's at the same batch "
                f"(same tokens: {same}); {loop}× generate one prompt at a time"
            ),
            clock=f["clock"],
            roof=ratio,
            roof_what="here the roof's column holds the speed over `model.generate(do_sample=False)` on the same "
            "left-padded batch (the same rows, so the same tokens)",
            loop=loop,
            loop_what="`model.generate` one prompt at a time, as a script without batching does it",
            targets=["≥ 0.9× model.generate's tokens/s at the same batch, with the same tokens"],
            figures=f,
            notes=[
                f"best of {REPEATS} interleaved runs of each contender",
                (
                    "ours at batch 1 against generate one at a time: "
                    f"{f['ours_one_at_a_time_vs_generate_one_at_a_time']}×; ours sampling (top-p 0.95): "
                    f"{f['tokens_per_second']['ours sampling']} tokens/s"
                ),
            ],
        ),
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
    sys.exit(0)
