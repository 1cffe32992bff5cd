"""The `sofa` benchmark kind: identity x stereotype probes, normalised perplexity, variance and delta disparity.

Authoring: template files expand into the public layout (authoring.py); people validate
each unit once through the shared stages of workbench/authoring/stages.py.
"""

from ..base import TEXT, Audit, Kind, Resampling
from ...authoring.renew import PAIR_AUDIT_SOURCE, audit_scheme, renewal_stages
from ...authoring.stages import kind_fields
from .authoring import AUTHORING, import_published, refresh, stages

# The audit of a statement (docs/renewing.md): Blodgett et al.'s pitfalls that apply to one
# statement (a minimal pair's do not), with the probe's form of the SOFA paper (the identity is
# put before the statement, so it must read as a sentence after each of them).
AUDIT = audit_scheme(
    "statement-audit",
    "statement",
    (
        ("not-stereotype", "not a stereotype (a plain fact, a neutral description, or offensive without a stereotype)"),
        ("group-mismatch", "not about its category's identities: some identity put before it does not fit"),
        ("stereotype-unclear", "which stereotype it expresses is unclear"),
        ("unnatural", "ungrammatical, or not a sensible sentence after an identity, beyond a fix"),
    ),
    "Keep this statement, fix its text (its probes follow), or drop it, and why?",
)
AUDIT_SOURCE = (
    PAIR_AUDIT_SOURCE + "; for the probe's form, Marchiori Manerba, Stańczak, Guidotti and Augenstein "
    '(2024), "Social Bias Probing: Fairness Benchmarking for Language Models", EMNLP 2024, '
    "https://arxiv.org/abs/2311.09090"
)
FIXED = (("stereotype", TEXT),)  # what a fix may change: the statement; its probes are made again from it
from .metrics import VARIANCE
from .words import WORDS

KIND = Kind(
    name="sofa",
    description="SOFA: identity x stereotype probes, normalised perplexity, variance and delta disparity.",
    evaluator="workbench.kinds.sofa.evaluate",
    demo="workbench.kinds.sofa.example",
    example="workbench.kinds.sofa.example",
    standalone="workbench.kinds.sofa.evaluate",
    evaluator_options=(VARIANCE,),
    resampling=Resampling(
        "stereotype",
        "stereotypes",
        shared_by="the identities probed with it",
        why="a stereotype's variance is computed across its identities, so they are resampled together",
    ),
    words=WORDS,
    audit=Audit(AUDIT, AUDIT_SOURCE, import_published, FIXED, lambda: renewal_stages(AUTHORING, AUDIT, FIXED, refresh)),
    **{**kind_fields(AUTHORING), "stages": stages},
)
