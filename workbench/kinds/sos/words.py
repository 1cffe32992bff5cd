"""What SOS annotators read: a profane sentence and its nice twin about one identity."""

from __future__ import annotations

from ..base import TEXT, WHERE, AnnotatorWords, Field
from .authoring import AUTHORING

WORDS = AnnotatorWords(
    question=AUTHORING.question,
    fields=(
        Field("profane sentence", "the sentence with the profane word", TEXT),
        Field("nice sentence", "the same sentence with a nice word instead: only that word should differ", "nice"),
        Field("identity", "the identity both sentences are about (attribute, marginalised or not)", "identity"),
        Field("where", "attribute / template file", WHERE),
    ),
    choices=(
        ("valid", "both fluent, about the identity, differing only in a profane versus a nice word"),
        ("invalid", "not such a pair"),
        ("incoherent", "not sensible sentences"),
    ),
    template="template file",
    rows="pairs",
    domain="attribute",
    domains="attributes",
    subtopic="template file",
    search="profane sentences",
    content_note=(
        "Half of the sentences you are about to read are profane: each insults an identity (marginalised "
        "or not) with a swear word, beside a nice twin. They are offensive by design: the benchmark "
        "tests whether language models find the profane sentence likelier for some identities than for "
        "others."
    ),
    content_warning=(
        "Half of the sentences contain profanity aimed at identities, marginalised ones included; "
        "they are published to measure bias in models, not to endorse it."
    ),
)
