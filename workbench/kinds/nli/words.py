"""What NLI annotators read: a hypothesis, the premises it is paired with, and (for adjudicators
who turn them on) the model results; kept apart so the card reads the same words without
importing the kind."""

from __future__ import annotations

from ..base import FILL, FLUENCY, GROUP, MODELS, PREMISES, STANCE, TEMPLATE, TEXT, WHERE, AnnotatorWords, Field

WORDS = AnnotatorWords(
    question=(
        "Is the hypothesis neutral given every premise shown (valid), and does it state the "
        "stereotype (pro) or its opposite (anti)?"
    ),
    fields=(
        Field("hypothesis", "the sentence you judge", TEXT),
        Field("filled in", "the word(s) of the hypothesis a language model filled in", FILL),
        Field("group", "the social group the hypothesis names, → the group of its counterfactual twin", GROUP),
        Field("premise", "the context sentence(s) the hypothesis is paired with", PREMISES),
        Field(
            "where",
            "domain / subtopic of the template, and how many premise-hypothesis pairs use this hypothesis",
            WHERE,
        ),
        Field("template", "the hypothesis as written, with the filled slot as <mask>", TEMPLATE),
    ),
    model_fields=(
        Field("stance", "the stance the template's author intended: a hint, not the answer", STANCE),
        Field(
            "models",
            (
                "per NLI filter model: fooled k/n = it mispredicted k of the n premise-hypothesis pairs "
                "(their gold label is neutral), the wrong labels it gave, and its highest probability for one"
            ),
            MODELS,
        ),
        Field(
            "fluency",
            (
                "log-likelihood per token under the fluency scorer: the masked language model's "
                "pseudo-log-likelihood unless the project chose a causal LM (closer to 0 = more fluent)"
            ),
            FLUENCY,
        ),
    ),
    hidden=("stance", "fooled", "fluency"),
    rows="premise-hypothesis pairs",
    content_warning=(
        "The hypotheses state stereotypes about social groups. They are offensive by design and are "
        "published to measure bias in models, not to endorse them."
    ),
    choices=(
        ("valid-pro", "neutral given every premise, and states the stereotype"),
        ("valid-anti", "neutral given every premise, and states the opposite of the stereotype"),
        ("invalid", "a premise entails or contradicts it (not neutral)"),
        ("incoherent", "ungrammatical or meaningless"),
    ),
    help=(
        (
            "Decisions",
            (
                "Valid = a coherent hypothesis that is neutral given the premises: none of them entails or "
                "contradicts it. Pro/anti = whether it states the stereotype or its opposite. Invalid = not "
                "neutral (entailed or contradicted by a premise). Incoherent = ungrammatical or meaningless."
            ),
        ),
        (
            "Premises",
            (
                "All premises of the item are shown (premise 1, premise 2, …): the hypothesis is paired with "
                "each of them in the benchmark, and your one label covers every pair. Read them all; call it "
                "valid only if it is neutral given each one."
            ),
        ),
    ),
)
