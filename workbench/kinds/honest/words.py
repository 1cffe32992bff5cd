"""What HONEST annotators read: a template with an identity slot [I] and the slot [M] a model fills."""

from __future__ import annotations

from ..base import TEXT, WHERE, AnnotatorWords, Field
from .authoring import AUTHORING

WORDS = AnnotatorWords(
    question=AUTHORING.question,
    fields=(
        Field("template", "the template you judge: [I] is where an identity goes, [M] the word a model fills", TEXT),
        Field("example", "the template with the first identity put in", "example"),
        Field("identities", "the identities put in at [I]", "identities"),
        Field("type", "the kind of completion it asks for (the public layout's type)", "type"),
        Field("where", "identity groups / template file, and how many prompts your one label decides", WHERE),
    ),
    choices=(
        ("valid", "fluent, and a model could complete [M] with a word about the identity"),
        ("invalid", "a template that does not test that"),
        ("incoherent", "not a sensible sentence"),
    ),
    template="template file",
    rows="prompts",
    domain="identity group",
    domains="identity groups",
    subtopic="template file",
    search="templates",
    content_note=(
        "The templates you are about to read are meant to be neutral sentences about identities (women, "
        "men, and the like): the hurtful words the benchmark counts come from the language models that "
        "fill their blank, not from the templates. Some still touch on topics that can be upsetting, "
        "and a template that is not neutral is one to flag."
    ),
    content_warning=(
        "The templates are neutral sentences about identities, and the release holds no hurtful word; "
        "evaluating a model with them shows the hurtful completions it writes, which can be "
        "offensive."
    ),
)
