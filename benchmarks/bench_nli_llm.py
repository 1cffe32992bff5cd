"""NLI by a causal LM: workbench's judge against lm-evaluation-harness's hf backend on the same prompts.

The same pairs, the same prompt and answers (lm-eval's mnli way: "{premise}\\nQuestion:
{hypothesis} True, False or Neither?\\nAnswer:", answers " True" / " Neither" / " False"), the
same base-size GPT-2 fixture (with a BOS-only tokenizer, as real causal LMs have), the same
batch size and one thread:

- lm-eval: `HFLM(pretrained=M, batch_size=B).loglikelihood(requests)`, three requests per pair;
- workbench: `LLMJudge.predict_stream` (lm_scoring.choice_logprobs: the three answers of a pair
  share one pass over its prompt).

CPU seconds of the scoring call alone (models loaded beforehand), best of 3 interleaved runs;
both must pick the same label for every pair.

    python -m benchmarks.bench_nli_llm          # prints the JSON (make bench SECTION=nli_llm)
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

N_PAIRS = int(os.environ.get("NLI_LLM_PAIRS", "300"))
BATCH = 32


def _pairs(n: int) -> list[tuple[str, str]]:
    from workbench.models.fixtures import _WORDS

    rng = random.Random(0)
    words = [w for w in _WORDS if w.isalpha()]
    return [
        (
            " ".join(rng.choice(words) for _ in range(rng.randint(8, 20))).capitalize() + ".",
            " ".join(rng.choice(words) for _ in range(rng.randint(4, 10))).capitalize() + ".",
        )
        for _ in range(n)
    ]


def run(ctx=None) -> dict:
    import torch
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    from workbench.kinds.nli.label_mapping import LABELS
    from workbench.kinds.nli.llm_judge import Asking, LLMJudge
    from workbench.models.fixtures import build_clm, with_causal_tokenizer
    from workbench.models.lm_loading import load_scorer

    torch.set_num_threads(1)
    work = Path(ctx.work if ctx is not None else tempfile.mkdtemp(prefix="nli-llm-"))
    base = work / "nli-llm-gpt2-base"
    if not base.is_dir():
        build_clm(base, size="base", seed=41)
    model = with_causal_tokenizer(base, work / "nli-llm-gpt2-base-bos")
    pairs = _pairs(N_PAIRS)
    asking = Asking()
    answers = [asking.answers[label] for label in LABELS]
    requests = [
        Instance("loglikelihood", {}, (asking.render(p, h), " " + a), i)
        for i, (p, h) in enumerate(pairs)
        for a in answers
    ]
    lm = HFLM(pretrained=str(model), device="cpu", batch_size=BATCH)
    scorer = load_scorer(str(model), batch_size=BATCH)

    def theirs() -> list[str]:
        values = [ll for ll, _ in lm.loglikelihood(requests, disable_tqdm=True)]
        return [LABELS[max(range(3), key=lambda k: (values[3 * i + k], -k))] for i in range(len(pairs))]

    def ours() -> list[str]:
        scorer._prefix_ok = None
        got: list = []
        LLMJudge(scorer, asking).predict_stream(pairs, lambda chunk, preds: got.extend(p.label for p in preds))
        return got

    best = {"lm-eval": float("inf"), "workbench": float("inf")}
    labels = {}
    for _ in range(3):
        for name, fn in (("lm-eval", theirs), ("workbench", ours)):
            start = time.process_time()
            labels[name] = fn()
            best[name] = min(best[name], time.process_time() - start)
    same = sum(a == b for a, b in zip(labels["lm-eval"], labels["workbench"]))
    ratio = best["lm-eval"] / best["workbench"]
    return {
        "status": "ok",
        "pairs": len(pairs),
        "batch_size": BATCH,
        "threads": 1,
        "cpu_seconds": {k: round(v, 3) for k, v in best.items()},
        "same_labels": same,
        "speed_vs_lm_eval": round(ratio, 2),
        "figure": f"workbench {ratio:.2f}x lm-eval's hf backend on {len(pairs)} NLI prompts x 3 answers "
        f"(CPU s {best['workbench']:.2f} vs {best['lm-eval']:.2f}); same label for {same}/{len(pairs)}",
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
    sys.exit(0)
