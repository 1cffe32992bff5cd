"""SOFA scoring at scale: throughput, flat memory, and the time the full public set would take.

    python -m benchmarks.run sofa                # the report's section (about 15 minutes here)
    python -m benchmarks.bench_sofa throughput   # one part, printed: throughput, memory or projection
    SOFA_BENCH_SCORE_LIMIT=0 python -m benchmarks.bench_sofa memory   # the model scores every probe

(a) throughput: the evaluator (`check` + `score_file`: CSV streamed, texts tokenised, cache
    looked up and written, log10 PPL* folded into the accumulator) on a synthetic probe file
    with the public set's shape, against a pure batched forward pass over the same unique
    texts (tokenised beforehand, untimed), and against a per-probe loop (one forward pass for
    the probe and one for its identity, as a script scoring probe by probe does);
(b) memory: peak RSS of a whole evaluation (check, scoring into a fresh SQLite cache,
    measures) of 100K, 500K and all 1,490,120 probes on the tiny model, each in its own process;
(c) projection: seconds per probe of a GPT-2-small-shaped causal LM (12 layers, 768 hidden,
    50,257-token vocabulary, random weights, ~124M parameters) measured through the evaluator
    on a sample sized to take a few minutes, against a pure forward pass of the same probes,
    times the public set's 1,490,120 probes.

Speed is read in process CPU seconds on one torch thread (common.Clock): the machine is shared.
For causal LMs the evaluator scores each identity's probes on one pass over BOS + identity
(`CausalLMScorer.prefixed_token_logprobs`), so it does less arithmetic than the pure forward
pass over whole probes and its ratio to that pass can exceed 1.
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

PUBLIC_PROBES = 1_490_120
PUBLIC_IDENTITIES = 408
SHAPE = (102, 102, 102, 102)  # 408 identities in four categories
BATCH = 64
THROUGHPUT_PROBES = 8192  # one chunk of the file: each identity's probes as often as in the public set's
LOOP_SAMPLE = 150
PROJECTION_SAMPLE = 1024
MEMORY_SIZES = (100_000, 500_000, PUBLIC_PROBES)
# Distinct texts each memory run scores with the model (0: all); past the limit a constant
# stands in, and the rest of the file still goes through reading, coding and aggregation.
# Scoring all of 1M probes with the tiny model takes about 7 minutes on this 2-core machine.
MEMORY_SCORE_LIMIT = int(os.environ.get("SOFA_BENCH_SCORE_LIMIT", "50000"))

MEMORY_SCRIPT = r"""
import json, resource, sys, tempfile, time
from pathlib import Path
from workbench.kinds.sofa import data, scoring
from workbench.kinds.sofa.metrics import summarise
from workbench.models.lm_loading import load_scorer
path, model, limit = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
def peak_mib():
    # VmHWM: this process's own peak RSS. ru_maxrss is not: Linux carries the parent's peak
    # across fork and exec, so a child of a big benchmark process reports the parent's.
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
import torch
torch.set_num_threads(1)  # the tiny model gains nothing from more; memory is what is measured here
start = time.perf_counter()
cat = data.check(path)
checked = time.perf_counter() - start
folder = Path(tempfile.mkdtemp(prefix="bench-sofa-cache-"))
scorer = load_scorer(model, device="cpu", batch_size=64, cache_path=folder / "c.sqlite")
loaded = peak_mib()
if limit:
    # Score the first `limit` distinct texts with the model; the rest of the file still streams
    # through reading, coding and aggregation with a constant stand-in perplexity.
    real, seen = scoring.sliced_perplexity, [0]
    def bounded(s, texts, progress=None, prefixes=None):
        take = max(0, min(len(texts), limit - seen[0]))
        seen[0] += take
        import numpy as np
        out = np.full(len(texts), 100.0)
        if take:
            out[:take] = real(s, texts[:take], progress, None if prefixes is None else prefixes[:take])
        if progress is not None:
            progress(len(texts) - take)
        return out
    scoring.sliced_perplexity = bounded
trace, marks = [], [cat.n_probes * k // 10 for k in range(1, 11)]
done = [0]
def advance(n):
    done[0] += n
    while marks and done[0] >= marks[0] + len(cat.identities):
        marks.pop(0)
        trace.append(round(int(open("/proc/self/statm").read().split()[1]) * resource.getpagesize() / 2**20, 1))
t = time.perf_counter()
acc = scoring.score_file(cat, scorer, model, advance)
doc = summarise(acc, cat.stereotype_ids, cat.stereotype_category, cat.categories, cat.identities, cat.units, cat.stereotype_text)
scored = time.perf_counter() - t
import shutil
shutil.rmtree(folder)
print(json.dumps({"probes": cat.n_probes, "check_seconds": round(checked, 2), "score_seconds": round(scored, 1),
                  "rss_after_model_load_mib": round(loaded, 1),
                  "peak_rss_mib": round(peak_mib(), 1),
                  "sofa": doc["overall"]["sofa"], "rss_trace_mib": trace}))
"""


def _probes(path: Path) -> tuple[list[str], list[str], list[str]]:
    """(probe texts, the identity of each probe, the distinct identities) of a probe file."""
    from workbench.kinds.sofa import data

    cat = data.check(path)
    probes, who = [], []
    for chunk in data.chunks(cat):
        probes += chunk.probes
        who += [cat.identities[i] for i in chunk.identity.tolist()]
    return probes, who, cat.identities


def pure_forward(tokenizer, model, texts: list[str], batch_size: int = BATCH) -> float:
    """Seconds for length-sorted batched forward passes over BOS + tokens, with each token's
    log-probability taken and brought to the host: the arithmetic the evaluator cannot avoid."""
    import torch

    from workbench.models.batching import length_sorted_batches, pad_batch

    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else bos
    seqs = [[bos, *ids] for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]
    start = time.perf_counter()
    with torch.inference_mode():
        for batch in length_sorted_batches([len(s) for s in seqs], batch_size):
            ids, mask = pad_batch([seqs[i] for i in batch], pad, model.device)
            logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()
            picked = logits.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1) - torch.logsumexp(logits, -1)
            picked.cpu()
    return time.perf_counter() - start


def per_probe_loop(tokenizer, model, probes: list[str], identities: list[str]) -> None:
    """The naive evaluation: for every probe, one forward pass for the probe and one for its
    identity (HF evaluate's rule, batch of one), then the ratio."""
    import math

    import torch

    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id

    def ppl(text: str) -> float:
        ids = torch.tensor([[bos, *tokenizer(text, add_special_tokens=False)["input_ids"]]])
        logits = model(ids).logits[0, :-1]
        return math.exp(torch.nn.functional.cross_entropy(logits.float(), ids[0, 1:]).item())

    with torch.inference_mode():
        for probe, identity in zip(probes, identities):
            math.log10(ppl(probe) / ppl(identity))


def _evaluate(scorer, path: Path) -> None:
    """check + score_file with a fresh, empty cache (the model stays loaded and warm, as the
    pure forward pass's does)."""
    from workbench.core.cache import Cache
    from workbench.kinds.sofa import data, scoring

    folder = Path(tempfile.mkdtemp(prefix="bench-sofa-cache-"))
    scorer.cache = Cache(folder / "cache.sqlite")
    scoring.score_file(data.check(path), scorer, "bench")
    scorer.cache.close()
    shutil.rmtree(folder)


def throughput(work: Path, size: str = "base", repeats: int = 3) -> dict:
    from workbench.kinds.sofa import scoring
    from workbench.kinds.sofa.example import write_synthetic
    from workbench.models.fixtures import build_clm
    from workbench.models.lm_loading import load_scorer

    from .common import Clock, best, interleaved

    model_dir = build_clm(work / f"clm-{size}", size=size, seed=0)
    path = work / "throughput.csv"
    write_synthetic(path, THROUGHPUT_PROBES, SHAPE, seed=1)
    probes, who, identities = _probes(path)
    texts = list(dict.fromkeys(identities + probes))
    scorer = load_scorer(str(model_dir), device="cpu", batch_size=BATCH)
    tok, model = scorer.tokenizer, scorer.model  # one model object for every contender
    sample = list(range(0, len(probes), len(probes) // LOOP_SAMPLE))[:LOOP_SAMPLE]
    with Clock("cpu1") as clock:
        pure_forward(tok, model, texts[:512])  # warm-up of every path
        scoring.text_perplexity(scorer, texts[:512])
        per_probe_loop(tok, model, probes[:10], who[:10])
        times = interleaved(
            clock,
            {
                "pure": lambda: pure_forward(tok, model, texts),
                "ours": lambda: _evaluate(scorer, path),
                "loop": lambda: per_probe_loop(tok, model, [probes[i] for i in sample], [who[i] for i in sample]),
            },
            repeats,
        )
        clock_text = clock.text
    pure, ours = best(times["pure"]), best(times["ours"])
    loop = best(times["loop"]) * len(probes) / len(sample)
    n_tokens = sum(len(x) + 1 for x in tok(texts, add_special_tokens=False)["input_ids"])
    return {
        "model": f"fixture GPT-2 {size} ({sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters)",
        "clock": clock_text,
        "probes": len(probes),
        "identities": len(identities),
        "texts_scored": len(texts),
        "tokens_per_text_with_bos": round(n_tokens / len(texts), 2),
        "batch_size": BATCH,
        "pure_forward_seconds": [round(t, 3) for t in times["pure"]],
        "evaluator_seconds": [round(t, 3) for t in times["ours"]],
        "per_probe_loop_seconds_on_sample": [round(t, 3) for t in times["loop"]],
        "evaluator_probes_per_second": round(len(probes) / ours, 1),
        "pure_forward_probes_per_second": round(len(probes) / pure, 1),
        "evaluator_vs_pure_forward_throughput": round(pure / ours, 3),
        "per_probe_loop_seconds_extrapolated": round(loop, 2),
        "evaluator_vs_per_probe_loop_speedup": round(loop / ours, 1),
    }


def memory(work: Path, sizes=MEMORY_SIZES, score_limit: int = MEMORY_SCORE_LIMIT) -> dict:
    """Peak RSS per size, and the RSS at each tenth of the largest run: a plateau there means
    the growth between sizes is the allocator settling, not state kept per probe."""
    from workbench.kinds.sofa.example import write_synthetic
    from workbench.models.fixtures import build_clm

    model_dir = build_clm(work / "clm-tiny", size="tiny", seed=0)
    env = {**os.environ, "WORKBENCH_PROGRESS": "0", "HF_HUB_OFFLINE": "1"}
    out = {}
    for n in sizes:
        path = work / f"mem-{n}.csv"
        write_synthetic(path, n, SHAPE, seed=2)
        proc = subprocess.run(
            [sys.executable, "-c", MEMORY_SCRIPT, str(path), str(model_dir), str(score_limit)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
            cwd=Path(__file__).resolve().parents[1],
        )
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr[-2000:])
        out[n] = json.loads(proc.stdout.strip().splitlines()[-1])
        path.unlink()
    small, large = out[sizes[0]], out[sizes[-1]]
    trace = large.pop("rss_trace_mib")
    for n in sizes[:-1]:
        out[n].pop("rss_trace_mib")
    half = trace[len(trace) // 2]
    return {
        "memory_model": "fixture GPT-2 tiny",
        "memory_scored_with_model": "every probe"
        if not score_limit
        else f"the first {score_limit:,} distinct texts per run",
        **{f"run_{n}": v for n, v in out.items()},
        "peak_rss_growth_pct": round(100 * (large["peak_rss_mib"] / small["peak_rss_mib"] - 1), 2),
        f"rss_trace_mib_{sizes[-1]}_per_tenth": trace,
        "rss_growth_second_half_pct": round(100 * (max(trace[len(trace) // 2 :]) / half - 1), 2),
    }


def projection(work: Path, sample: int = PROJECTION_SAMPLE) -> dict:
    """A GPT-2-small-shaped model with random weights, scored through the evaluator on a
    sample of probes, against a pure forward pass of the same texts; its seconds per probe
    times the public set's size."""
    import torch
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    from workbench.core.cache import Cache
    from workbench.kinds.sofa import data, scoring
    from workbench.kinds.sofa.example import write_synthetic
    from workbench.models.fixtures import build_clm
    from workbench.models.lm_scoring import CausalLMScorer
    from workbench.models.loading import ModelRef

    from .common import Clock

    tok_dir = build_clm(work / "clm-tok", size="tiny")  # only its BPE tokenizer is used
    tok = AutoTokenizer.from_pretrained(tok_dir)
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=50257,
        n_positions=1024,
        n_embd=768,
        n_layer=12,
        n_head=12,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
    )
    model = GPT2LMHeadModel(config).eval()
    params = sum(p.numel() for p in model.parameters())
    path = work / "projection.csv"
    write_synthetic(path, sample, SHAPE, seed=3)
    cat = data.check(path)
    probes, _, identities = _probes(path)

    def scorer(cache=None):
        return CausalLMScorer(
            ModelRef("gpt2-small-shape", "memory", "random"), tok, model, torch.device("cpu"), BATCH, cache
        )

    with Clock("cpu1") as clock:
        scoring.text_perplexity(scorer(), ["warm up the kernels"] * 8)
        s = scorer(Cache(work / "projection-cache.sqlite"))
        start = clock.now()
        scoring.sliced_perplexity(s, cat.identities)
        mid = clock.now()
        scoring.score_file(cat, s, "gpt2-small-shape")  # identities come from the cache now
        end = clock.now()
        pure = clock.time(pure_forward, tok, model, list(dict.fromkeys(probes)))
        clock_text = clock.text
    identity_s, probe_s = mid - start, end - mid
    per_probe = probe_s / cat.n_probes
    per_identity = identity_s / len(cat.identities)
    total = PUBLIC_PROBES * per_probe + PUBLIC_IDENTITIES * per_identity
    return {
        "projection_model": f"GPT-2-small shape, random weights ({params / 1e6:.1f}M parameters), CPU float32, batch {BATCH}",
        "projection_clock": clock_text,
        "projection_sample_probes": cat.n_probes,
        "projection_seconds": round(probe_s, 1),
        "projection_pure_forward_seconds": round(pure, 1),
        "projection_evaluator_vs_pure_forward": round(pure / probe_s, 3),
        "projection_seconds_per_probe": round(per_probe, 5),
        "projection_probes_per_second": round(1 / per_probe, 1),
        "projection_full_set_hours_one_core": round(total / 3600, 1),
    }


def run(ctx, parts=("throughput", "memory", "projection")) -> dict:
    """The report's section (see the module docstring for the three parts)."""
    from .common import summary

    work = ctx.work / "sofa"
    work.mkdir(parents=True, exist_ok=True)
    f: dict = {}
    notes = []
    if "throughput" in parts:
        f.update(throughput(work))
        notes.append(
            "throughput: evaluator = data.check + scoring.score_file into a fresh SQLite cache (CSV streamed, "
            "texts tokenised, cache read and written per batch, measures folded in); pure forward = the same "
            "unique texts pre-tokenised, length-sorted batches, full logits, per-token log-probs to the host; "
            "one warm model object for all; best of 3 interleaved runs of each"
        )
    if "memory" in parts:
        f.update(memory(work))
        notes.append(
            "memory: each size in its own process, peak RSS (VmHWM) after the whole evaluation (check, scoring into "
            "a fresh cache, measures); the synthetic files have the public shape (408 identities, 4 "
            "categories); "
            + (
                "every probe scored by the model"
                if not MEMORY_SCORE_LIMIT
                else f"the tiny model scores the first {MEMORY_SCORE_LIMIT:,} distinct texts of each "
                "file (identities included) and a constant stands in for the rest, which still "
                "go through reading, coding, the log10 ratio and the accumulator"
            )
        )
        notes.append(
            "memory trace: current RSS after each tenth of the largest run's probes; "
            "rss_growth_second_half_pct compares the highest of the second half with the midpoint"
        )
    if "projection" in parts:
        f.update(projection(work))
        notes.append(
            "projection: seconds per probe through the evaluator on the sample (identities scored first and "
            f"timed apart) x {PUBLIC_PROBES:,} probes + {PUBLIC_IDENTITIES} identities, on one core; the "
            "full run was not made here (about that many hours of CPU)"
        )
    full = f.get(f"run_{PUBLIC_PROBES}", {})
    figure = [f"{f['evaluator_probes_per_second']:,.0f} probes/s" if "evaluator_probes_per_second" in f else ""]
    if full:
        figure.append(
            f"all {PUBLIC_PROBES:,} probes streamed in {full['peak_rss_mib']:,.0f} MiB peak "
            f"({f['peak_rss_growth_pct']:+.1f}% from {MEMORY_SIZES[0]:,})"
        )
    if "projection_full_set_hours_one_core" in f:
        figure.append(
            f"GPT-2-small shape: {f['projection_evaluator_vs_pure_forward']:.2f}× its pure forward, full set "
            f"≈ {f['projection_full_set_hours_one_core']} h on one core"
        )
    return summary(
        title="sofa: SOFA's perplexity ratios, probe by probe, streamed (evaluator at scale)",
        workload=(
            f"{f.get('probes', THROUGHPUT_PROBES):,} probes (one chunk of a file of the public shape: 408 "
            f"identities, 4 categories), base-size fixture GPT-2, batch {BATCH}; memory: up to all "
            f"{PUBLIC_PROBES:,} probes; projection: a GPT-2-small-shaped model"
        ),
        figure="; ".join(x for x in figure if x),
        clock=f.get("clock", "process CPU seconds, one torch thread"),
        roof=f.get("evaluator_vs_pure_forward_throughput"),
        roof_what=(
            "pure batched forward pass (length-sorted batches of 64, full logits, log-probs to the host) over "
            "the same unique texts, pre-tokenised; the evaluator runs each identity's BOS + identity once for "
            "all its probes, so it does about a quarter less arithmetic than that pass"
        ),
        loop=f.get("evaluator_vs_per_probe_loop_speedup"),
        loop_what=(
            f"one forward pass for each probe and one for its identity, batch 1 (HF evaluate's rule, probe by "
            f"probe), timed on {LOOP_SAMPLE} probes and scaled"
        ),
        targets=["× roof ≥ 0.85, × plain loop ≥ 5, peak memory flat from 100K to all 1.49M probes (issue #33)"],
        figures=f,
        notes=notes,
    )


if __name__ == "__main__":
    os.environ.setdefault("WORKBENCH_PROGRESS", "0")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from .run import Context

    chosen = tuple(sys.argv[1:]) or ("throughput", "memory", "projection")
    work = Path(tempfile.mkdtemp(prefix="bench-sofa-"))
    try:
        print(json.dumps(run(Context(work), chosen), indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)
