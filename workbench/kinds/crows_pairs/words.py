"""What CrowS-Pairs annotators read: a pair whose direction decides the question.

The first sentence is about the group a pair is about; in a stereo pair it states a
stereotype of that group, in an anti-stereotype pair it goes against one. The direction itself
is not shown (it would tell the annotator what to find): it only picks the question.
"""

from __future__ import annotations

from dataclasses import replace

from ..base import TEXT, WHERE, AnnotatorWords, Field, ItemQuestion

PAIRED = "less stereotyping"  # the detail line the queue gives the second sentence under
DIRECTION = "direction"  # stereo or antistereo (CrowS-Pairs' stereo_antistereo)

QUESTION = (
    "Is this a CrowS-Pairs pair: the first sentence says what the question asks about its group, and the "
    "paired sentence says the same about a contrasting group, differing only in the group (valid); not such "
    "a pair (invalid); or not sensible sentences (incoherent)?"
)
STEREO = (
    "Does the first sentence state a stereotype about its group, with the paired sentence saying the same about "
    "a contrasting group and differing only in the group (valid); not such a pair (invalid); or not sensible "
    "sentences (incoherent)?"
)
ANTI = (
    "Does the first sentence go against a stereotype about its group (an anti-stereotype), with the paired "
    "sentence saying the same about a contrasting group and differing only in the group (valid); not such a pair "
    "(invalid); or not sensible sentences (incoherent)?"
)

WORDS = AnnotatorWords(
    question=QUESTION,
    per_item=ItemQuestion(DIRECTION, (("stereo", STEREO), ("antistereo", ANTI))),
    fields=(
        Field("first sentence", "the sentence about the group the pair is about", TEXT),
        Field(
            "paired with",
            "the same sentence about a contrasting group: the two should differ only in the group",
            PAIRED,
        ),
        Field("where", "bias type / template file", WHERE),
    ),
    hidden=(DIRECTION,),
    choices=(
        ("valid", "the pair is what the question asks"),
        ("invalid", "not such a pair (e.g. more than the group differs)"),
        ("incoherent", "not sensible sentences"),
    ),
    template="template file",
    rows="pairs",
    domain="bias type",
    domains="bias types",
    subtopic="template file",
    search="first sentences",
    content_note=(
        "The sentence pairs you are about to read state stereotypes about social groups, or go against "
        "them. Many are offensive by design: the benchmark tests whether language models find the more "
        "stereotyping sentence of a pair the likelier one."
    ),
    content_warning=(
        "Each pair states a stereotype about a social group, or goes against one, beside the same "
        "sentence about another group; the pairs are published to measure bias in models, not to "
        "endorse it."
    ),
    help=(
        (
            "Two kinds of pairs",
            (
                "In a stereo pair the first sentence states a stereotype of its group; in an "
                "anti-stereotype pair it goes against one. The question above the pair says which "
                "this one is: judge it by that question."
            ),
        ),
    ),
)

# The audit of a published pair (a renewal, docs/renewing.md): the pair's lines and, where the file
# has them, what CrowS-Pairs' own validators said of it (its `annotations`) beside its gold label.
VALIDATORS = "validators"

AUDIT_WORDS = replace(
    WORDS,
    fields=(
        *WORDS.fields[:2],
        Field(
            VALIDATORS,
            "what the original validators said: how many named each bias type, and the pair's own "
            "bias type (gold), as the published file has them",
            VALIDATORS,
        ),
        *WORDS.fields[2:],
    ),
    help=(
        *WORDS.help,
        (
            "The original validators",
            (
                "The validators line counts the bias types CrowS-Pairs' own annotators gave "
                "the pair (each could name several) and says the pair's published bias type "
                "(gold): a pair they disagreed on may be one to fix or drop."
            ),
        ),
    ),
)
