"""What StereoSet's validators read: the sentence, its target and its context, in StereoSet's terms."""

from __future__ import annotations

from dataclasses import replace

from ..base import FILL, GROUP, PREMISES, TEMPLATE, TEXT, WHERE, AnnotatorWords, Field
from .scheme import SCHEME

WORDS = AnnotatorWords(
    question=SCHEME.question,
    fields=(
        Field("sentence", "the sentence you judge", TEXT),
        Field("target", "the group or term the sentence is about", GROUP),
        # A two-sentence item's context comes before the sentence; a fill-in-the-blank item's is the
        # sentence with its BLANK. Both are the context StereoSet's validators read.
        Field(
            "context", "the sentence before it, or the sentence with the BLANK its option fills", (PREMISES, TEMPLATE)
        ),
        Field("filled in", "the option that fills the BLANK of the context (fill-in-the-blank items)", FILL),
        Field("where", "bias type / subtopic (the CAT file)", WHERE),
    ),
    choices=(
        ("stereotype", "states a common stereotype about the target"),
        ("anti-stereotype", "states the opposite of that stereotype"),
        ("unrelated", "makes no association with the target"),
        ("incoherent", "not a sensible sentence in its context"),
    ),
    template="CAT file",
    rows="sentences",
    domain="bias type",
    domains="bias types",
    search="sentences and contexts",
    content_note=(
        "The sentences you are about to read state stereotypes about social groups, their opposites, "
        "or unrelated things. Many are offensive by design: the benchmark tests which of them language "
        "models prefer."
    ),
    content_warning=(
        "The sentences state stereotypes about social groups, their opposites and unrelated "
        "associations; they are published to measure bias in models, not to endorse it."
    ),
    help=(
        (
            "Decisions",
            (
                "Judge the sentence as a continuation of its context. Stereotype = it states a widely held "
                "stereotype about the target; anti-stereotype = it states the opposite; unrelated = it makes "
                "no association with the target (but still makes sense); incoherent = it does not make sense. "
                "A sentence is kept when enough validators agree with the label its writer intended."
            ),
        ),
        (
            "Independent labels",
            (
                "StereoSet validates every sentence with several people, each on their own: label "
                "what you read, without looking at other annotators' labels."
            ),
        ),
    ),
)

# The audit of a published CAT (a renewal, docs/renewing.md): its context is the judged text, its
# three sentences are named by their gold labels, and the validators line says what StereoSet's
# own validators labelled each sentence (its published `labels`).
VALIDATORS = "validators"

AUDIT_WORDS = replace(
    WORDS,
    fields=(
        Field(
            "context",
            "the CAT's context: the sentence whose BLANK the options fill, or the sentence the three sentences follow",
            TEXT,
        ),
        Field("stereotype", "the sentence its writer meant as the stereotype (its gold label)", "stereotype"),
        Field("anti-stereotype", "the sentence meant as its opposite", "anti-stereotype"),
        Field("unrelated", "the sentence meant to make no association with the target", "unrelated"),
        Field(
            VALIDATORS,
            "what the original validators labelled each sentence (named by its gold label): how many "
            "gave each label, as the published file has them",
            VALIDATORS,
        ),
        Field("where", "bias type / CAT file (split and bias type)", WHERE),
    ),
    help=(
        (
            "The original validators",
            (
                "The validators line gives, for each sentence (named by the label its writer "
                "meant: its gold label), how many of StereoSet's own validators gave each label: "
                "a sentence they did not label as meant may be one to fix, or its CAT to drop."
            ),
        ),
    ),
)
