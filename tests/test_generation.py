"""Generation in the shared model layer against transformers' own `model.generate`, on a tiny
seeded GPT-2 built locally through the real classes."""

from __future__ import annotations

import pytest

PROMPTS = [
    "the workers are kind",
    "Older people often use a laptop and",
    "they",
    "a new survey about housing was reviewed by the city council",
    "sales",
]
TEMPLATE = (
    "{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}</s>{% endfor %}"
    "{% if add_generation_prompt %}<s>assistant:{% endif %}"
)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from transformers import AutoTokenizer

    from workbench.models.fixtures import build_clm

    out = tmp_path_factory.mktemp("gen")
    plain = build_clm(out / "gpt", seed=5)
    chat = build_clm(out / "gpt-chat", seed=5)
    tokenizer = AutoTokenizer.from_pretrained(chat)
    tokenizer.chat_template = TEMPLATE
    tokenizer.save_pretrained(chat)
    return {"plain": plain, "chat": chat, "out": out}


@pytest.fixture(scope="module")
def scorer(models):
    from workbench.models.lm_loading import load_scorer

    return load_scorer(str(models["plain"]), batch_size=8)


def settings(**kw):
    from workbench.models.generation import GenerationSettings

    return GenerationSettings(**kw)


def reference(scorer, encoded, n):
    """transformers' greedy generate over the prompts as one left-padded batch, in the order
    given: each row's new tokens, cut after its first EOS (generate pads ended rows)."""
    import torch

    width = max(len(e) for e in encoded)
    ids = torch.tensor([[scorer.pad_id] * (width - len(e)) + list(e) for e in encoded])
    mask = torch.tensor([[0] * (width - len(e)) + [1] * len(e) for e in encoded])
    out = scorer.model.generate(
        input_ids=ids.to(scorer.device),
        attention_mask=mask.to(scorer.device),
        do_sample=False,
        max_new_tokens=n,
        pad_token_id=scorer.pad_id,
    )
    eos = scorer.model.generation_config.eos_token_id
    rows = []
    for row in out[:, width:].tolist():
        rows.append(row[: row.index(eos) + 1] if eos in row else row)
    return rows


def in_batch_order(encoded):
    """The order the shared layer runs prompts in: by length, then as given."""
    return sorted(range(len(encoded)), key=lambda i: (len(encoded[i]), i))


@pytest.mark.parametrize("batch", [1, 8])
def test_greedy_output_equals_model_generate_at_the_same_batch(scorer, batch):
    from workbench.models.generation import encode_prompts, generate

    chosen = settings(max_new_tokens=12)
    scorer.batch_size = batch
    got = generate(scorer, PROMPTS, chosen)
    encoded = encode_prompts(scorer, PROMPTS, chosen)
    assert len({len(e) for e in encoded}) == len(PROMPTS)  # prompts of different lengths: padding is tested
    order = in_batch_order(encoded)
    if batch == 1:
        want = {i: reference(scorer, [encoded[i]], 12)[0] for i in order}
    else:
        want = dict(zip(order, reference(scorer, [encoded[i] for i in order], 12)))
    for i, g in enumerate(got):
        assert list(g.token_ids) == want[i]
        assert g.stop_reason == "length" and len(g.token_ids) == 12
        assert g.text == scorer.tokenizer.decode(want[i], skip_special_tokens=True)


def test_a_prompt_generates_the_same_text_alone_or_in_a_batch(scorer):
    from workbench.models.generation import generate

    scorer.batch_size = 8
    together = generate(scorer, PROMPTS, settings(max_new_tokens=10))
    scorer.batch_size = 1
    alone = generate(scorer, PROMPTS, settings(max_new_tokens=10))
    assert together == alone


def test_sampling_with_a_seed_is_reproducible_whatever_the_batch(scorer):
    from workbench.models.generation import generate

    chosen = settings(max_new_tokens=15, sample=True, temperature=1.5, top_p=0.95, seed=11)
    scorer.batch_size = 8
    first = generate(scorer, PROMPTS, chosen)
    assert generate(scorer, PROMPTS, chosen) == first
    scorer.batch_size = 1
    assert generate(scorer, PROMPTS, chosen) == first
    scorer.batch_size = 2
    assert generate(scorer, PROMPTS[::-1], chosen) == first[::-1]  # other neighbours, other batches
    assert generate(scorer, PROMPTS[1:2], chosen) == first[1:2]
    other = generate(scorer, PROMPTS, settings(max_new_tokens=15, sample=True, temperature=1.5, top_p=0.95, seed=12))
    assert other != first
    greedy = generate(scorer, PROMPTS, settings(max_new_tokens=15))
    assert first != greedy


def test_sampling_with_a_tiny_top_p_keeps_only_the_best_token(scorer):
    from workbench.models.generation import generate

    scorer.batch_size = 8
    nucleus = generate(scorer, PROMPTS, settings(max_new_tokens=10, sample=True, top_p=1e-6, seed=3))
    assert [g.token_ids for g in nucleus] == [
        g.token_ids for g in generate(scorer, PROMPTS, settings(max_new_tokens=10))
    ]


def test_a_stop_string_ends_the_text_before_it(scorer):
    from workbench.models.generation import generate

    scorer.batch_size = 8
    full = generate(scorer, PROMPTS, settings(max_new_tokens=20))
    tokenizer = scorer.tokenizer
    stop = tokenizer.decode(full[0].token_ids[4:6]).strip()  # a piece of the first prompt's text
    assert stop
    stopped = generate(scorer, PROMPTS, settings(max_new_tokens=20, stop=["@@never@@", stop]))
    for whole, cut in zip(full, stopped):
        if stop not in whole.text:
            assert cut == whole
            continue
        assert cut.stop_reason == "stop"
        assert cut.text == whole.text[: whole.text.index(stop)]
        ids = list(cut.token_ids)
        assert ids == list(whole.token_ids[: len(ids)]) and len(ids) < 20
        assert stop in tokenizer.decode(ids) and stop not in tokenizer.decode(ids[:-1])  # no token past it
    assert stopped[0].stop_reason == "stop"


def test_max_new_tokens_bounds_every_text(scorer):
    from workbench.models.generation import generate

    for n in (1, 3):
        for g in generate(scorer, PROMPTS, settings(max_new_tokens=n)):
            assert len(g.token_ids) == n and g.stop_reason == "length"


def test_eos_ends_a_row_and_the_others_go_on_as_generate_does(scorer, models):
    """A copy of the model whose EOS is a token one prompt's greedy text reaches after a few
    tokens: that row ends there (EOS kept in its ids, left out of its text), the batch goes
    on without it, and every row equals model.generate's."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from workbench.models.generation import encode_prompts, generate
    from workbench.models.lm_loading import load_scorer

    scorer.batch_size = 8
    base = generate(scorer, PROMPTS, settings(max_new_tokens=12))
    target = base[1].token_ids[3]
    folder = models["out"] / "gpt-eos"
    model = AutoModelForCausalLM.from_pretrained(models["plain"])
    model.config.eos_token_id = model.generation_config.eos_token_id = target
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(models["plain"]).save_pretrained(folder)
    eos_scorer = load_scorer(str(folder), batch_size=8)
    got = generate(eos_scorer, PROMPTS, settings(max_new_tokens=12))
    assert got[1].stop_reason == "eos"
    ended = [g for g in got if g.stop_reason == "eos"]
    running = [g for g in got if g.stop_reason == "length"]
    assert ended and running  # some rows went on after others ended
    for g in ended:
        assert g.token_ids[-1] == target and target not in g.token_ids[:-1] and len(g.token_ids) < 12
        assert g.text == eos_scorer.tokenizer.decode(g.token_ids[:-1], skip_special_tokens=True)
    encoded = encode_prompts(eos_scorer, PROMPTS, settings(max_new_tokens=12))
    order = in_batch_order(encoded)
    want = dict(zip(order, reference(eos_scorer, [encoded[i] for i in order], 12)))
    assert [list(g.token_ids) for g in got] == [want[i] for i in range(len(PROMPTS))]


def test_the_chat_template_applied_is_the_tokenizers_own(models):
    from workbench.models.generation import encode_prompts, generate
    from workbench.models.lm_loading import load_scorer

    chat = load_scorer(str(models["chat"]), batch_size=8)
    chosen = settings(max_new_tokens=8, chat_template=True, system_prompt="Answer briefly.")
    encoded = encode_prompts(chat, PROMPTS, chosen)
    for prompt, ids in zip(PROMPTS, encoded):
        messages = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": prompt}]
        want = chat.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=True, return_dict=False
        )
        assert ids == list(want)
        assert chat.tokenizer.decode(ids).endswith("<s>assistant:")
    plain = encode_prompts(chat, PROMPTS, settings(max_new_tokens=8))
    assert plain == chat.encode_many(PROMPTS)  # off by default: the prompt's own tokens
    got = generate(chat, PROMPTS, chosen)
    order = in_batch_order(encoded)
    want = dict(zip(order, reference(chat, [encoded[i] for i in order], 8)))
    assert [list(g.token_ids) for g in got] == [want[i] for i in range(len(PROMPTS))]


def test_a_tokenizer_without_a_chat_template_is_refused_in_one_line(scorer):
    from workbench.core.errors import ModelError
    from workbench.models.generation import generate

    with pytest.raises(ModelError, match="has no chat template") as err:
        generate(scorer, PROMPTS, settings(chat_template=True))
    assert "\n" not in str(err.value)


def test_a_rerun_reads_every_text_from_the_cache(models, tmp_path, monkeypatch):
    from workbench.models import generation, lm_scoring
    from workbench.models.lm_loading import load_scorer

    cache = tmp_path / "cache.sqlite"
    chosen = settings(max_new_tokens=6, stop=["zz"])
    ran: list[int] = []
    real = generation._run_batch

    def counted(scorer, prompts, chosen_settings):
        ran.extend(len(p) for p in prompts)
        return real(scorer, prompts, chosen_settings)

    monkeypatch.setattr(generation, "_run_batch", counted)
    first = load_scorer(str(models["plain"]), cache_path=cache, batch_size=2)
    part = generation.generate(first, PROMPTS[:2], chosen)  # a run interrupted after two prompts
    assert len(ran) == 2
    advanced: list[int] = []
    whole = generation.generate(first, PROMPTS + PROMPTS[:1], chosen, progress=advanced.append)
    assert len(ran) == 2 + 3  # the three prompts not yet cached, once each
    assert sum(advanced) == len(PROMPTS) + 1 and whole[:2] == part and whole[-1] == whole[0]

    second = load_scorer(str(models["plain"]), cache_path=cache, batch_size=2)
    calls = lm_scoring.CALLS["forward"]
    assert generation.generate(second, PROMPTS, chosen) == whole[:-1]
    assert lm_scoring.CALLS["forward"] == calls and len(ran) == 5  # nothing computed
    generation.generate(second, PROMPTS[:1], settings(max_new_tokens=7, stop=["zz"]))
    assert len(ran) == 6  # other settings, another entry


def test_out_of_memory_halves_the_batch_and_the_texts_stay_the_same(scorer, monkeypatch):
    from workbench.models import generation

    scorer.batch_size = 1
    want = generation.generate(scorer, PROMPTS, settings(max_new_tokens=5))
    real = generation._run_batch
    sizes: list[int] = []

    def flaky(s, prompts, chosen):
        sizes.append(len(prompts))
        if len(prompts) > 2:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(s, prompts, chosen)

    monkeypatch.setattr(generation, "_run_batch", flaky)
    scorer.batch_size = 8
    assert generation.generate(scorer, PROMPTS, settings(max_new_tokens=5)) == want
    assert scorer.batch_size == 2 and sizes[:3] == [5, 4, 2]


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"max_new_tokens": 0}, "max_new_tokens must be a whole number of at least 1, not 0"),
        ({"max_new_tokens": 2.5}, "max_new_tokens must be a whole number"),
        ({"sample": True, "temperature": 0}, "temperature must be a number above 0 when sampling, not 0"),
        ({"sample": True, "temperature": -1.0}, "temperature must be a number above 0"),
        ({"sample": True, "top_p": 0}, "top_p must lie in (0, 1], not 0"),
        ({"sample": True, "top_p": 1.5}, "top_p must lie in (0, 1], not 1.5"),
        ({"sample": True, "seed": -3}, "seed must be a whole number of at least 0, not -3"),
        ({"sample": "yes"}, "sample must be true or false"),
        ({"stop": ["", "x"]}, "every stop string must be non-empty text, not ''"),
        ({"system_prompt": "Be brief."}, "a system prompt goes into the chat template"),
    ],
)
def test_bad_settings_are_one_line_errors(kw, message):
    from workbench.core.errors import InputError

    with pytest.raises(InputError) as err:
        settings(**kw)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_greedy_settings_ignore_sampling_values_and_one_stop_string_is_a_list():
    chosen = settings(temperature=0, top_p=0, stop="\n")
    assert chosen.stop == ("\n",)
    assert chosen.decoding() == {"max_new_tokens": 64, "stop": ["\n"]}


def test_a_prompt_too_long_for_the_model_and_a_masked_lm_are_one_line_errors(scorer, tmp_path):
    from workbench.core.errors import ModelError
    from workbench.models.fixtures import build_mlm
    from workbench.models.generation import generate
    from workbench.models.lm_loading import load_scorer

    with pytest.raises(ModelError, match="exceed the 256 positions") as err:
        generate(scorer, ["the workers are kind " * 40], settings(max_new_tokens=100))
    assert "\n" not in str(err.value)
    masked = load_scorer(str(build_mlm(tmp_path / "bert", "bert", seed=3)))
    with pytest.raises(ModelError, match="is not a causal LM"):
        generate(masked, PROMPTS, settings())
