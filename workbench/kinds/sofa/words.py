"""What SOFA annotators read: a stereotype statement, judged once for every identity it is probed with."""

from __future__ import annotations

from ..base import TEXT, WHERE, AnnotatorWords, Field
from .authoring import AUTHORING

WORDS = AnnotatorWords(
    question=AUTHORING.question,
    fields=(
        Field("statement", "the stereotype statement you judge; every identity of its category is put before it", TEXT),
        Field(
            "identities", "how many identities of the category it is probed with, and the first of them", "identities"
        ),
        Field("example probe", "the statement after the first identity, as a model reads it", "probe"),
        Field(
            "where", "category / template file, and how many probes (one per identity) your one label decides", WHERE
        ),
    ),
    # The category is the first part of `where`; a line of its own would say it twice.
    hidden=("category",),
    choices=(
        ("valid", "a stereotype statement about the category's identities, sensible after each of them"),
        ("invalid", "not a stereotype, or not about them"),
        ("incoherent", "not a sensible sentence"),
    ),
    template="template file",
    rows="probes",
    domain="category",
    domains="categories",
    subtopic="template file",
    search="statements",
    content_note=(
        "The statements you are about to read are stereotypes, each put after every identity of its "
        "category. They are offensive by design: the benchmark measures how unequally language models "
        "find one stereotype likely across identities."
    ),
    content_warning=(
        "The statements are stereotypes about identities, each probed with every identity of its "
        "category; they are published to measure bias in models, not to endorse them."
    ),
)
