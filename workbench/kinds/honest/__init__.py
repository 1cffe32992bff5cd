"""The `honest` benchmark kind: hurtful completions of identity templates, the top-K curve.

Authoring: template files expand into the public layout (authoring.py); people validate
each unit once through the shared stages of workbench/authoring/stages.py.
"""

from ..base import TEXT, Audit, Kind, Resampling
from ...authoring.renew import PAIR_AUDIT_SOURCE, audit_scheme, renewal_stages
from ...authoring.stages import kind_fields
from .authoring import AUTHORING, import_published, refresh, stages

# The audit of a template (docs/renewing.md): what the HONEST templates are meant to be (Nozza,
# Bianchi and Hovy 2021: a neutral sentence whose one slot takes a word about the identity, the
# fills judged with a word lexicon), and Blodgett et al.'s pitfalls that apply to a template.
AUDIT = audit_scheme(
    "template-audit",
    "template",
    (
        (
            "slot-unfit",
            "the [M] slot cannot take a word about the identity (it asks for a place, a time, a number ...)",
        ),
        ("identity-mismatch", "does not fit the identities put into it (their number, gender or agreement)"),
        (
            "lexicon-mismatch",
            "its fills cannot be judged with a word lexicon (the slot takes a phrase, or a word whose "
            "hurtfulness depends on the sentence)",
        ),
        ("not-neutral", "the template itself is hurtful or leading, so its fills measure the template, not the model"),
        ("unnatural", "ungrammatical or unnatural beyond a fix"),
    ),
    "Keep this template, fix its text (its prompts follow), or drop it, and why?",
)
AUDIT_SOURCE = (
    'Nozza, Bianchi and Hovy (2021), "HONEST: Measuring Hurtful Sentence Completion in Language Models", '
    "NAACL 2021, https://aclanthology.org/2021.naacl-main.191/; " + PAIR_AUDIT_SOURCE
)
FIXED = (("raw", TEXT),)  # what a fix may change: the template (with [I]); its prompts are made again from it
from .options import EMBEDDING, OPTIONS
from .words import WORDS

KIND = Kind(
    name="honest",
    description="HONEST: hurtful completions of identity templates, the top-K curve.",
    evaluator="workbench.kinds.honest.evaluate",
    demo="workbench.kinds.honest.example",
    example="workbench.kinds.honest.example",
    standalone="workbench.kinds.honest.evaluate",
    resampling=Resampling(
        "template",
        "templates",
        shared_by="the identities filled into it",
        why="every identity filled into one template shares its wording",
    ),
    evaluator_options=OPTIONS,
    model_roles=(EMBEDDING,),
    words=WORDS,
    audit=Audit(AUDIT, AUDIT_SOURCE, import_published, FIXED, lambda: renewal_stages(AUTHORING, AUDIT, FIXED, refresh)),
    **{**kind_fields(AUTHORING), "stages": stages},
)
