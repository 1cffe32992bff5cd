"""The vLLM backend (models/vllm_model.py) on a CPU: vLLM needs a CUDA GPU and none is here, so
these tests put in its place a stand-in with vLLM's call shapes (`LLM.generate` / `LLM.chat`
with `SamplingParams` and `TokensPrompt`, `RequestOutput.outputs[0]` with text, finish_reason and
stop_reason, `prompt_logprobs` as one dict of token id -> Logprob per prompt position, None at
the first), computed by the tiny transformers model itself. What they check is workbench's side:
the token ids sent, the positions summed, the stop handling, the cache and the name routing —
that the backend scores the same tokens as the transformers scorer and generates the same
texts. They do not check vLLM itself (docs/llms.md says so).
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass

import pytest

from workbench.core.errors import ModelError


@dataclass
class Logprob:
    logprob: float


@dataclass
class Completion:
    text: str
    finish_reason: str
    stop_reason: object


@dataclass
class RequestOutput:
    outputs: list
    prompt_logprobs: list | None


class SamplingParams:
    def __init__(self, max_tokens=16, temperature=1.0, top_p=1.0, seed=None, stop=None, prompt_logprobs=None):
        self.max_tokens, self.temperature, self.stop, self.prompt_logprobs = (
            max_tokens,
            temperature,
            stop,
            prompt_logprobs,
        )


class FakeLLM:
    """vLLM's LLM on a transformers causal LM, greedy only (what the tests ask)."""

    calls = 0
    poison = None  # when set, what the last prompt position's log-probability becomes

    def __init__(self, model: str, dtype: str = "auto"):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.tok = AutoTokenizer.from_pretrained(model)
        self.model = AutoModelForCausalLM.from_pretrained(model).eval()

    def get_tokenizer(self):
        return self.tok

    def _ids(self, prompt) -> list[int]:
        return (
            list(prompt["prompt_token_ids"])
            if isinstance(prompt, dict)
            else list(self.tok(prompt, add_special_tokens=False)["input_ids"])
        )

    def generate(self, prompts, params, use_tqdm=True):
        import torch

        FakeLLM.calls += 1
        outs = []
        for prompt in prompts:
            ids = self._ids(prompt)
            with torch.no_grad():
                logits = self.model(torch.tensor([ids])).logits[0].float()
                made = self.model.generate(
                    torch.tensor([ids]),
                    max_new_tokens=params.max_tokens,
                    do_sample=False,
                    pad_token_id=self.tok.eos_token_id,
                )
            new = made[0, len(ids) :].tolist()
            text = self.tok.decode(new, skip_special_tokens=True)
            finish, reason = ("length" if len(new) >= params.max_tokens else "stop"), None
            for stop in params.stop or []:
                if stop in text:  # vLLM leaves the stop string out and names it
                    text, finish, reason = text[: text.index(stop)], "stop", stop
            logprobs = None
            if params.prompt_logprobs is not None:
                table = torch.log_softmax(logits, -1)
                logprobs = [None] + [{ids[i]: Logprob(float(table[i - 1, ids[i]]))} for i in range(1, len(ids))]
                if FakeLLM.poison is not None:
                    logprobs[-1] = {ids[-1]: Logprob(FakeLLM.poison)}
            outs.append(RequestOutput([Completion(text, finish, reason)], logprobs))
        return outs

    def chat(self, conversations, params, use_tqdm=True):
        return self.generate(
            [self.tok.apply_chat_template(c, tokenize=False, add_generation_prompt=True) for c in conversations], params
        )


@pytest.fixture
def fake_vllm(monkeypatch):
    module = types.ModuleType("vllm")
    module.LLM, module.SamplingParams = FakeLLM, SamplingParams
    inputs = types.ModuleType("vllm.inputs")
    inputs.TokensPrompt = lambda prompt_token_ids: {"prompt_token_ids": prompt_token_ids}
    module.inputs = inputs
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setitem(sys.modules, "vllm.inputs", inputs)
    return module


PAIRS = [("The nurse said that", "she was late"), ("Older workers", "take their time"), ("A man", "is here")]


def test_log_likelihoods_are_the_transformers_scorers(fake_vllm, fixture_models, tmp_path):
    from workbench.models.lm_loading import load_scorer
    from workbench.models.lm_scoring import continuation_logprobs

    model = fixture_models["clm-gpt2"]
    served = load_scorer(f"vllm:{model}", served=True, cache_path=tmp_path / "c.sqlite")
    scorer = load_scorer(str(model))
    ours = served.continuation_logprobs([(f"{p} {c}", len(c) + 1) for p, c in PAIRS])
    theirs = [v for v, _ in continuation_logprobs(scorer, PAIRS)]
    assert ours == pytest.approx(theirs, abs=1e-4)
    # lm-eval's multiple choice on the same calls: the best answer is the one scored highest
    choices = served.choice_logprobs([("Who was late? Answer:", ["the nurse", "the man"])])
    direct = served.continuation_logprobs(
        [("Who was late? Answer: the nurse", 10), ("Who was late? Answer: the man", 8)]
    )
    assert choices[0] == pytest.approx(direct)
    # cached: the same questions again call vLLM no more
    calls = FakeLLM.calls
    again = load_scorer(f"vllm:{model}", served=True, cache_path=tmp_path / "c.sqlite")
    assert again.continuation_logprobs([(f"{p} {c}", len(c) + 1) for p, c in PAIRS]) == ours
    assert FakeLLM.calls == calls + 0 and again.runtime.record()["device_type"] == "cuda"


@pytest.mark.parametrize("poison", [float("nan"), float("inf"), 0.5])
def test_a_log_probability_that_is_none_is_refused_and_never_cached(
    fake_vllm, fixture_models, tmp_path, monkeypatch, poison
):
    import sqlite3

    from workbench.models.lm_loading import load_scorer

    monkeypatch.setattr(FakeLLM, "poison", poison)
    texts = [(f"{p} {c}", len(c) + 1) for p, c in PAIRS]
    served = load_scorer(f"vllm:{fixture_models['clm-gpt2']}", served=True, cache_path=tmp_path / "c.sqlite")
    with pytest.raises(ModelError, match="gave a log-probability that is not a finite number at most 0") as refused:
        served.continuation_logprobs(texts)
    assert "\n" not in str(refused.value)
    assert sqlite3.connect(tmp_path / "c.sqlite").execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 0
    monkeypatch.setattr(FakeLLM, "poison", None)
    calls = FakeLLM.calls
    assert all(v < 0 for v in served.continuation_logprobs(texts)) and FakeLLM.calls == calls + 1


def test_generation_is_the_shared_generations(fake_vllm, fixture_models, tmp_path):
    from workbench.models.generation import GenerationSettings, generate
    from workbench.models.lm_loading import load_scorer

    model = fixture_models["clm-gpt2"]
    served = load_scorer(f"vllm:{model}", served=True)
    scorer = load_scorer(str(model))
    settings = GenerationSettings(max_new_tokens=6)
    prompts = [p for p, _ in PAIRS]
    assert [g.text for g in generate(served, prompts, settings)] == [
        g.text for g in generate(scorer, prompts, settings)
    ]
    local = generate(scorer, prompts[:1], GenerationSettings(max_new_tokens=6))[0].text
    word = local.split()[1] if len(local.split()) > 1 else local.strip()
    cut = generate(served, prompts[:1], GenerationSettings(max_new_tokens=6, stop=(word,)))[0]
    assert cut.stop_reason == "stop" and word not in cut.text and local.startswith(cut.text)


def test_names_route_and_refuse_in_one_line(fake_vllm, fixture_models, monkeypatch):
    from workbench.kinds.nli.served_judge import served_ref
    from workbench.models.lm_loading import load_scorer

    model = fixture_models["clm-gpt2"]
    with pytest.raises(ModelError, match="vLLM serves generation and continuation log-likelihoods only"):
        load_scorer(f"vllm:{model}")  # a scorer's per-token scores: refused before loading
    assert served_ref(f"vllm:{model}").location == str(model)
    monkeypatch.setitem(sys.modules, "vllm", None)  # not installed
    with pytest.raises(ModelError, match=r"pip install 'bias-workbench\[vllm\]'"):
        load_scorer(f"vllm:{model}", served=True)
