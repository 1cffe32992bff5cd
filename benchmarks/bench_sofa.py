"""SOFA scoring at scale: throughput, flat memory, and the time the full public set would take.

    python -m benchmarks.bench_sofa              # everything (about 25 minutes on 2 cores), printed as JSON
    python -m benchmarks.bench_sofa throughput   # one part: throughput, memory or projection
    SOFA_BENCH_SCORE_LIMIT=20000 python -m benchmarks.bench_sofa memory   # model scores a bounded subset

(a) throughput: the evaluator (`check` + `score_file`: CSV streamed, texts tokenised, cache
    looked up and written, log10 PPL* folded into the accumulator) on a synthetic probe file
    with the public set's shape, against a pure batched forward pass over the same unique
    texts (tokenised beforehand, untimed), and against a per-probe loop (one forward pass for
    the probe and one for its identity, as a script scoring probe by probe does);
(b) memory: peak RSS of a whole evaluation (check, scoring into a fresh SQLite cache,
    measures) of 100K and of 1M probes on the tiny model, each in its own process;
(c) projection: seconds per probe of a GPT-2-small-shaped causal LM (12 layers, 768 hidden,
    50,257-token vocabulary, random weights, ~124M parameters) measured through the evaluator
    on a sample, times the public set's 1,490,120 probes.
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
SHAPE = (102, 102, 102, 102)          # 408 identities in four categories
BATCH = 64
THROUGHPUT_PROBES = 2000
LOOP_SAMPLE = 300
PROJECTION_SAMPLE = 768
# Distinct texts the memory runs score with the model (0: all); past the limit a constant
# stands in, and the rest of the file still goes through reading, coding and aggregation.
# Scoring all of 1M probes with the tiny model takes about 7 minutes on this 2-core machine.
MEMORY_SCORE_LIMIT = int(os.environ.get("SOFA_BENCH_SCORE_LIMIT", "0"))

MEMORY_SCRIPT = r"""
import json, resource, sys, tempfile, time
from pathlib import Path
from workbench.kinds.sofa import data, scoring
from workbench.kinds.sofa.metrics import summarise
from workbench.models.lm_loading import load_scorer
path, model, limit = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
import torch
torch.set_num_threads(1)  # the tiny model gains nothing from more; memory is what is measured here
start = time.perf_counter()
cat = data.check(path)
checked = time.perf_counter() - start
folder = Path(tempfile.mkdtemp(prefix="bench-sofa-cache-"))
scorer = load_scorer(model, device="cpu", batch_size=64, cache_path=folder / "c.sqlite")
loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if limit:
    # Score the first `limit` distinct texts with the model; the rest of the file still streams
    # through reading, coding and aggregation with a constant stand-in perplexity.
    real, seen = scoring.sliced_perplexity, [0]
    def bounded(s, texts, progress=None):
        take = max(0, min(len(texts), limit - seen[0]))
        seen[0] += take
        import numpy as np
        out = np.full(len(texts), 100.0)
        if take:
            out[:take] = real(s, texts[:take], progress)
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
                  "rss_after_model_load_mib": round(loaded / 1024, 1),
                  "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
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


def per_probe_loop(tokenizer, model, probes: list[str], identities: list[str]) -> float:
    """Seconds for the naive evaluation: for every probe, one forward pass for the probe and one
    for its identity (HF evaluate's rule, batch of one), then the ratio."""
    import math

    import torch

    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id

    def ppl(text: str) -> float:
        ids = torch.tensor([[bos, *tokenizer(text, add_special_tokens=False)["input_ids"]]])
        logits = model(ids).logits[0, :-1]
        return math.exp(torch.nn.functional.cross_entropy(logits.float(), ids[0, 1:]).item())

    start = time.perf_counter()
    with torch.inference_mode():
        for probe, identity in zip(probes, identities):
            math.log10(ppl(probe) / ppl(identity))
    return time.perf_counter() - start


def _evaluate_seconds(scorer, path: Path) -> float:
    """Seconds of check + score_file with a fresh, empty cache (the model stays loaded and warm,
    as the pure forward pass's does)."""
    from workbench.core.cache import Cache
    from workbench.kinds.sofa import data, scoring

    folder = Path(tempfile.mkdtemp(prefix="bench-sofa-cache-"))
    scorer.cache = Cache(folder / "cache.sqlite")
    start = time.perf_counter()
    scoring.score_file(data.check(path), scorer, "bench")
    seconds = time.perf_counter() - start
    scorer.cache.close()
    shutil.rmtree(folder)
    return seconds


def throughput(work: Path, size: str = "base", repeats: int = 5) -> dict:
    from workbench.kinds.sofa import scoring
    from workbench.kinds.sofa.example import write_synthetic
    from workbench.models.fixtures import build_clm
    from workbench.models.lm_loading import load_scorer

    model_dir = build_clm(work / f"clm-{size}", size=size, seed=0)
    path = work / "throughput.csv"
    write_synthetic(path, THROUGHPUT_PROBES, SHAPE, seed=1)
    probes, who, identities = _probes(path)
    texts = list(dict.fromkeys(identities + probes))
    scorer = load_scorer(str(model_dir), device="cpu", batch_size=BATCH)
    tok, model = scorer.tokenizer, scorer.model               # one model object for every contender
    pure_forward(tok, model, texts[:512])                     # warm-up of both paths
    scoring.text_perplexity(scorer, texts[:512])
    pure, ours = [], []
    for _ in range(repeats):                                   # interleaved, so load changes hit both
        pure.append(pure_forward(tok, model, texts))
        ours.append(_evaluate_seconds(scorer, path))
    loop = per_probe_loop(tok, model, probes[:LOOP_SAMPLE], who[:LOOP_SAMPLE]) * len(probes) / LOOP_SAMPLE
    n_tokens = sum(len(x) + 1 for x in tok(texts, add_special_tokens=False)["input_ids"])
    return {
        "model": f"fixture GPT-2 {size} ({sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters)",
        "probes": len(probes), "identities": len(identities), "texts_scored": len(texts),
        "tokens_per_text_with_bos": round(n_tokens / len(texts), 2), "batch_size": BATCH,
        "pure_forward_seconds": round(min(pure), 3),
        "evaluator_seconds": round(min(ours), 3),
        "evaluator_probes_per_second": round(len(probes) / min(ours), 1),
        "pure_forward_probes_per_second": round(len(probes) / min(pure), 1),
        "evaluator_vs_pure_forward_throughput": round(min(pure) / min(ours), 3),
        "per_probe_loop_seconds_extrapolated": round(loop, 2),
        "evaluator_vs_per_probe_loop_speedup": round(loop / min(ours), 1),
    }


def memory(work: Path, sizes=(100_000, 1_000_000), score_limit: int = MEMORY_SCORE_LIMIT) -> dict:
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
        proc = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, str(path), str(model_dir), str(score_limit)],
                              capture_output=True, text=True, env=env, check=False, cwd=Path(__file__).resolve().parents[1])
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr[-2000:])
        out[n] = json.loads(proc.stdout.strip().splitlines()[-1])
        path.unlink()
    small, large = (out[n] for n in sizes)
    trace = large.pop("rss_trace_mib")
    small.pop("rss_trace_mib")
    half = trace[len(trace) // 2]
    return {
        "memory_model": "fixture GPT-2 tiny",
        "memory_scored_with_model": "every probe" if not score_limit else f"the first {score_limit:,} distinct texts per run",
        **{f"run_{n}": v for n, v in out.items()},
        "peak_rss_growth_pct": round(100 * (large["peak_rss_mib"] / small["peak_rss_mib"] - 1), 2),
        f"rss_trace_mib_{sizes[-1]}_per_tenth": trace,
        "rss_growth_second_half_pct": round(100 * (max(trace[len(trace) // 2:]) / half - 1), 2),
    }


def projection(work: Path, sample: int = PROJECTION_SAMPLE) -> dict:
    """A GPT-2-small-shaped model with random weights, scored through the evaluator on a
    sample of probes; its seconds per probe times the public set's size."""
    import torch
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    from workbench.kinds.sofa import data, scoring
    from workbench.kinds.sofa.example import write_synthetic
    from workbench.models.fixtures import build_clm
    from workbench.models.lm_scoring import CausalLMScorer
    from workbench.models.loading import ModelRef

    tok_dir = build_clm(work / "clm-tok", size="tiny")          # only its BPE tokenizer is used
    tok = AutoTokenizer.from_pretrained(tok_dir)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12,
                        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    model = GPT2LMHeadModel(config).eval()
    params = sum(p.numel() for p in model.parameters())
    path = work / "projection.csv"
    write_synthetic(path, sample, SHAPE, seed=3)
    cat = data.check(path)
    from workbench.core.cache import Cache

    def run() -> tuple[float, float]:
        scorer = CausalLMScorer(ModelRef("gpt2-small-shape", "memory", "random"), tok, model, torch.device("cpu"),
                                BATCH, Cache(work / "projection-cache.sqlite"))
        start = time.perf_counter()
        scoring.sliced_perplexity(scorer, cat.identities)
        mid = time.perf_counter()
        scoring.score_file(cat, scorer, "gpt2-small-shape")   # identities come from the cache now
        return mid - start, time.perf_counter() - mid

    scoring.text_perplexity(CausalLMScorer(ModelRef("warm", "memory", "w"), tok, model, torch.device("cpu"), BATCH),
                            ["warm up the kernels"] * 8)
    identity_s, probe_s = run()
    per_probe = probe_s / cat.n_probes
    per_identity = identity_s / len(cat.identities)
    total = PUBLIC_PROBES * per_probe + PUBLIC_IDENTITIES * per_identity
    return {
        "projection_model": f"GPT-2-small shape, random weights ({params / 1e6:.1f}M parameters), CPU float32, batch {BATCH}",
        "projection_sample_probes": cat.n_probes,
        "projection_seconds_per_probe": round(per_probe, 5),
        "projection_probes_per_second": round(1 / per_probe, 1),
        "projection_full_set_hours": round(total / 3600, 1),
        "projection_torch_threads": torch.get_num_threads(),
    }


def run(work: Path, parts=("throughput", "memory", "projection"), save_report: bool = False) -> dict:
    """The figures of the chosen parts; `save_report` also files them in benchmarks/REPORT.md
    and results.json under a `sofa` section (left to benchmarks.run, which owns those files)."""
    import torch

    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    figures: dict = {"cpu_threads": torch.get_num_threads(), "load_average_at_start": round(os.getloadavg()[0], 2)}
    notes = []
    if "throughput" in parts:
        figures.update(throughput(work))
        notes.append("throughput: evaluator = data.check + scoring.score_file into a fresh SQLite cache (CSV streamed, "
                     "texts tokenised, cache read and written per batch, measures folded in); pure forward = the same "
                     "unique texts pre-tokenised, length-sorted batches, per-token log-probs to the host; one warm model "
                     "object for both; best of 5, interleaved")
        notes.append(f"per-probe loop: a forward pass for each probe and one for its identity, timed on {LOOP_SAMPLE} "
                     "probes and scaled to the file")
    if "memory" in parts:
        figures.update(memory(work))
        notes.append("memory: each size in its own process, ru_maxrss after the whole evaluation (check, scoring into a "
                     "fresh cache, measures); the synthetic files have the public shape (408 identities, 4 categories); "
                     + ("every probe scored by the model" if not MEMORY_SCORE_LIMIT else
                        f"the model scores the first {MEMORY_SCORE_LIMIT:,} distinct texts of each file (identities "
                        "included) and a constant stands in for the rest, which still go through reading, coding, the "
                        "log10 ratio and the accumulator"))
        notes.append("memory trace: current RSS after each tenth of the largest run's probes; "
                     "rss_growth_second_half_pct compares the highest of the second half with the midpoint")
    if "projection" in parts:
        figures.update(projection(work))
        notes.append("projection: seconds per probe through the evaluator on the sample (identities scored first and "
                     f"timed apart) x {PUBLIC_PROBES:,} probes + {PUBLIC_IDENTITIES} identities")
    figures["notes"] = [*notes, ("targets: evaluator_vs_pure_forward_throughput >= 0.85, evaluator_vs_per_probe_loop_speedup "
                                 ">= 5, peak RSS flat (within a few %) from 100K to 1M probes")]
    if save_report:
        from .common import save

        save("sofa (evaluator at scale, CPU)", figures)
    return figures


if __name__ == "__main__":
    os.environ.setdefault("WORKBENCH_PROGRESS", "0")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    chosen = tuple(sys.argv[1:]) or ("throughput", "memory", "projection")
    work = Path(tempfile.mkdtemp(prefix="bench-sofa-"))
    try:
        print(json.dumps(run(work, chosen), indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)
