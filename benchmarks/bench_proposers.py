"""An LLM proposer beside the masked LM's fill, on the same slots, with tiny fixture models, on CPU.

The slots: the unique one-mask hypotheses of the example templates (two variants each). On
them, top 20:

- the masked LM's fill (`MaskedLM.fill`, tiny fixture BERT), the generate stage's default;
- an LLM proposer (`LLMProposer.propose`: the prompt, `generation.generate` greedy, the answer
  read) on two tiny GPT-2s: the random fixture causal LM, which never says EOS, so every slot
  runs to the proposer's token limit (5 k + 8 new tokens: the worst case), and the lister,
  which answers three words and EOS (a short answer, as an instruct model gives);
- the floor: `generation.generate` alone on the same prompts (roof: what the proposer adds, the
  prompt and the reading, over it);
- the plain loop: transformers' `model.generate` called once per slot, the naive way (timed on
  LOOP_SAMPLE slots and scaled to all).

Process CPU seconds on one torch thread, models loaded beforehand, best of 3 interleaved runs.
Then the generate stage with both proposers, cold and on a cached rerun (wall seconds, context).
"""

from __future__ import annotations

from .common import Clock, best, interleaved, scratch_project, summary, timer

K = 20
LOOP_SAMPLE = 8


def run(ctx) -> dict:
    from workbench.core.config import load_config
    from workbench.core.workspace import Workspace
    from workbench.kinds import pipeline_for
    from workbench.models.fixtures import build_clm, build_lister, build_mlm
    from workbench.models.generation import generate
    from workbench.models.llm_proposer import PROMPT, Asking, LLMProposer, render
    from workbench.models.loading import load, resolve
    from workbench.models.mlm import MaskedLM
    from workbench.models.runtime import LoadSpec

    folder = ctx.work / "proposers"
    mlm_dir = build_mlm(folder / "mlm-bert", "bert", seed=0)
    clm_dir = build_clm(folder / "clm-gpt2", seed=30)
    lister_dir = build_lister(folder / "lister", "calm\nkind, honest")
    project = scratch_project(folder / "project", mlm_dir, [], copies=2)
    config = load_config(project / "workbench.toml")
    pipeline_for(config).run("expand")
    samples = Workspace(config.path("workspace")).read("expand").to_pylist()
    texts = sorted({r["hypothesis"] for r in samples if r["n_masks"] == 1})
    f: dict = {"slots": len(texts), "top_k": K, "max_new_tokens": Asking().settings(K).max_new_tokens}

    ref = resolve(str(mlm_dir))
    tok, model, device = load(ref, "mlm", "cpu")
    lm = MaskedLM(ref, tok, model, device, batch_size=64)
    spec = LoadSpec(device="cpu", batch_size=64)
    proposers = {}
    for name, path in (("random", clm_dir), ("lister", lister_dir)):
        p = LLMProposer(str(path), resolve(str(path)), spec, Asking())
        p._open()
        proposers[name] = p
    prompts = [render(PROMPT, t, K) for t in texts]
    settings = Asking().settings(K)
    scorer = proposers["random"].model
    hf_model, hf_tok = scorer.model, scorer.tokenizer

    def naive():
        import torch

        with torch.inference_mode():
            for prompt in prompts[:LOOP_SAMPLE]:
                ids = torch.tensor([hf_tok(prompt, add_special_tokens=False)["input_ids"]])
                hf_model.generate(
                    ids,
                    attention_mask=torch.ones_like(ids),
                    max_new_tokens=settings.max_new_tokens,
                    do_sample=False,
                    pad_token_id=hf_tok.pad_token_id,
                )

    with Clock("cpu1") as clock:
        lm.fill(texts[:16], K)  # warm-up
        for p in proposers.values():
            p.propose(texts[:4], K)
        times = interleaved(
            clock,
            {
                "mlm_fill": lambda: lm.fill(texts, K),
                "llm_random": lambda: proposers["random"].propose(texts, K),
                "llm_lister": lambda: proposers["lister"].propose(texts, K),
                "generate_floor": lambda: generate(scorer, prompts, settings),
            },
            repeats=3,
        )
        loop_seconds = clock.time(naive) * len(texts) / LOOP_SAMPLE
        clock_text = clock.text
    for name, values in times.items():
        f[f"{name}_seconds"] = round(best(values), 4)
        f[f"{name}_ms_per_slot"] = round(1000 * best(values) / len(texts), 3)
    f["llm_random_vs_mlm_fill"] = round(f["llm_random_seconds"] / f["mlm_fill_seconds"], 1)
    f["llm_lister_vs_mlm_fill"] = round(f["llm_lister_seconds"] / f["mlm_fill_seconds"], 1)
    f["naive_generate_loop_seconds_extrapolated"] = round(loop_seconds, 3)
    roof = f["generate_floor_seconds"] / f["llm_random_seconds"]
    loop = loop_seconds / f["llm_random_seconds"]
    answers = proposers["random"].propose(texts, K)
    f["random_llm_words_per_slot"] = round(sum(len(a["words"]) for a in answers.values()) / len(texts), 2)
    f["random_llm_unread_items"] = sum(a["unread"] for a in answers.values())
    answers = proposers["lister"].propose(texts, K)
    f["lister_words_per_slot"] = round(sum(len(a["words"]) for a in answers.values()) / len(texts), 2)

    toml = project / "workbench.toml"
    toml.write_text(
        toml.read_text().replace(
            f'model = "{mlm_dir}"\n', f'model = "{mlm_dir}"\nproposers = ["{mlm_dir}", "{clm_dir}"]\n', 1
        )
    )
    config = load_config(toml)
    with timer(f, "stage_cold_seconds"):
        cold = pipeline_for(config).run("generate")
    with timer(f, "stage_cached_rerun_seconds"):
        again = pipeline_for(config).run("generate", force=True)
    f["stage_candidates_per_proposer"] = {
        name.rstrip("/").split("/")[-1]: n for name, n in cold["candidates_per_proposer"].items()
    }
    f["stage_rerun_computed"] = again["computed_fills"]
    f["stage_rerun_model_loaded"] = again["model_loaded"]
    return summary(
        title="proposers: an LLM proposer beside the masked LM's fill on the same slots (generate stage)",
        workload=(
            f"{len(texts)} unique one-mask hypotheses (the example templates × 2), top {K}, tiny fixture BERT "
            "MLM and tiny GPT-2s, batch 64"
        ),
        figure=(
            f"MLM fill {f['mlm_fill_ms_per_slot']:.2f} ms/slot; LLM {f['llm_lister_ms_per_slot']:.2f} ms/slot "
            f"(short answer) to {f['llm_random_ms_per_slot']:.1f} ms/slot ({f['max_new_tokens']} tokens)"
        ),
        clock=clock_text,
        roof=round(roof, 3),
        roof_what="generation.generate alone on the same prompts (the proposer's floor: prompt and reading add the rest)",
        loop=round(loop, 1),
        loop_what=(
            f"transformers' model.generate called once per slot (timed on {LOOP_SAMPLE} slots, scaled to all), "
            "on the random GPT-2"
        ),
        targets=["proposer × roof ≥ 0.9 (the prompt and the reading cost little); a cached rerun loads no model"],
        figures=f,
        notes=[
            "an LLM's cost is its answer's length: the random GPT-2 never stops (every slot runs to max_new_tokens), "
            "the lister stops after three words; a real instruct model lies between, at its own size",
            "the stage figures are wall seconds (expand done before), context only",
        ],
    )
