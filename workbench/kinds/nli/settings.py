"""The nli kind's own `workbench.toml` sections, `[expand]`, `[filter]`, `[fluency]` and `[llm]`,
and the paper's model defaults.

The adversarial filter keeps a masked-LM variant when at least `min_fooled` of these NLI
classifiers predict anything but neutral for it (BBNLI-next used the three below).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

PAPER_FILTER_MODELS = [
    "ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli",
    "ynie/electra-large-discriminator-snli_mnli_fever_anli_R1_R2_R3-nli",
    "ynie/bart-large-snli_mnli_fever_anli_R1_R2_R3-nli",
]
# Held out from filtering: the paper evaluated with it (used when [evaluate] models is empty).
PAPER_HELD_OUT = ["ynie/albert-xxlarge-v2-snli_mnli_fever_anli_R1_R2_R3-nli"]


class ExpandSection(BaseModel):
    """How templates become rows. By default each sentence is written as the project's language
    writes it (agreement with a swapped group, spelling where a placeholder meets a word, premises
    in sentence case): right for new text. `original` gives BBNLI's own expansion instead, string
    for string, so a maintainer renewing BBNLI reproduces its published rows exactly."""

    model_config = ConfigDict(extra="forbid")

    original: bool = Field(
        False,
        description="true: BBNLI's own expansion, each string rendered as written (no sentence case, agreement "
        "or respelling), reproducing its published rows; false: each sentence as the project's language "
        "writes it. `workbench expand --original` does the same for one run.",
    )


def expand_settings(config) -> ExpandSection:
    return config.section("expand", ExpandSection)


class FilterSection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    models: list[str] = Field(
        default_factory=lambda: list(PAPER_FILTER_MODELS),
        min_length=1,
        description="The NLI classifiers that filter the masked LM's variants (default: the paper's three).",
    )
    min_fooled: int = Field(
        1, ge=1, description="A variant is kept when at least this many filter models mispredict it."
    )
    batch_size: int = Field(32, ge=1, description="Premise-hypothesis pairs per forward pass.")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="auto (a GPU when there is one), cpu or cuda.")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto", description="Precision of the weights: auto (the checkpoint's own), float32, bfloat16 or float16."
    )
    device_map: Literal["auto"] | None = Field(
        None, description="auto: spread the layers over the GPUs, then the CPU, when a model does not fit one device."
    )
    label_overrides: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description="Per model, its output labels mapped to entailment/neutral/contradiction "
        "when its config does not name them.",
    )


def filter_settings(config) -> FilterSection:
    return config.section("filter", FilterSection)


class LLMSection(BaseModel):
    """How a causal LM named in [filter] models or evaluated is asked for an NLI label: the prompt
    (lm-evaluation-harness's mnli prompt by default) and one answer word per label, the one with
    the highest log-likelihood after the prompt being the model's label (see llm_judge)."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(
        "{premise}\nQuestion: {hypothesis} True, False or Neither?\nAnswer:",
        description="The prompt, with {premise} and {hypothesis} (lm-eval's mnli prompt).",
    )
    answers: dict[str, str] = Field(
        default_factory=lambda: {"entailment": "True", "neutral": "Neither", "contradiction": "False"},
        description="The answer word of each label (entailment, neutral, contradiction), read after a space.",
    )
    mode: Literal["auto", "log-likelihood", "generation"] = Field(
        "auto",
        description="How a model behind a server (http(s)://HOST:PORT/v1#MODEL) is asked: auto (by "
        "log-likelihood where its server gives prompt log-probabilities, else by generation, its "
        "answer's first word read as an answer word), log-likelihood (a server without them is "
        "refused) or generation. A local causal LM is always asked by log-likelihood.",
    )
    chat_template: bool = Field(
        False,
        description="Put the prompt in a user turn of the model's own chat template and score each answer "
        "word after the assistant's opening, as lm-evaluation-harness's --apply_chat_template (a model "
        "without one is refused); a served model is then asked by chat completions (generation).",
    )
    system_instruction: str | None = Field(
        None, description="With chat_template: a system turn before the prompt (lm-eval's --system_instruction)."
    )

    @model_validator(mode="after")
    def _askable(self):
        from .llm_judge import Asking

        Asking(
            self.prompt, dict(self.answers), self.mode, self.chat_template, self.system_instruction
        )  # the judge's checks
        return self


def llm_asking(config, release_config: dict | None = None):
    """The judge's way of asking: a release's own (its manifest's [llm], so evaluating a release
    asks as its lm-eval task does), else the project's [llm]."""
    from .llm_judge import Asking

    section = (
        LLMSection.model_validate(release_config["llm"])
        if release_config and release_config.get("llm")
        else config.section("llm", LLMSection)
    )
    return Asking(
        section.prompt, dict(section.answers), section.mode, section.chat_template, section.system_instruction
    )


class FluencySection(BaseModel):
    """How the queue's triage score is computed. `pll` (the default): the masked LM's
    pseudo-log-likelihood, one masked copy per token; `causal`: a causal LM's log-probability
    of the text, one pass per text (about as many times cheaper as a text has tokens; see
    benchmarks/REPORT.md for how well it ranks the queue like PLL)."""

    model_config = ConfigDict(extra="forbid")

    scorer: Literal["pll", "causal"] = Field(
        "pll", description="pll: the masked LM's pseudo-log-likelihood; causal: a causal LM's log-probability (faster)."
    )
    model: str | None = Field(None, description="pll: the [generate] model when unset; causal: required.")
    revision: str | None = Field(None, description="The model's Hub revision; unset: the latest.")
    batch_size: int | None = Field(None, ge=1, description="Unset: [generate] batch_size.")
    device: Literal["auto", "cpu", "cuda"] | None = Field(None, description="Unset: [generate] device.")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] | None = Field(
        None, description="Unset: [generate] dtype."
    )
    device_map: Literal["auto"] | None = Field(None, description="Unset: [generate] device_map.")

    @model_validator(mode="after")
    def _causal_needs_a_model(self):
        if self.scorer == "causal" and not self.model:
            raise ValueError("scorer = 'causal' needs model = a causal LM (a Hub id such as 'gpt2', or a local folder)")
        return self


def fluency_settings(config) -> FluencySection:
    return config.section("fluency", FluencySection)


def evaluate_models(config) -> list[str]:
    """The held-out models `workbench evaluate` scores when none are named."""
    return list(config.evaluate.models) or list(PAPER_HELD_OUT)


def check_settings(config) -> list:
    """`workbench validate`'s checks of [filter] and [fluency]: local model paths, held-out models
    that differ from the filter's, a rule the models can meet."""
    from ...core.errors import ConfigError, Problem
    from ...validation import check_models

    shown = config.shown_source
    problems = []
    try:
        fluency = fluency_settings(config)
        if fluency.model:
            problems += check_models(config, [("fluency.model", fluency.model)])
    except ConfigError as exc:
        problems += list(exc.problems)
    try:
        fc = filter_settings(config)
    except ConfigError as exc:
        return problems + list(exc.problems)
    problems += check_models(config, [(f"filter.models[{i}]", m) for i, m in enumerate(fc.models)])
    for name in sorted(set(fc.models) & set(config.evaluate.models)):
        problems.append(
            Problem(shown, None, "evaluate.models", f"{name!r} is also a filter model; held-out models must differ")
        )
    if fc.min_fooled > len(fc.models):
        problems.append(
            Problem(
                shown,
                None,
                "filter.min_fooled",
                f"{fc.min_fooled} exceeds the number of filter models ({len(fc.models)})",
            )
        )
    return problems
